// The DCAT catalog through HTTP: /catalog.{format} pages with hydra paging, modified_since, q, fq,
// profiles; the dcat_catalog_show / dcat_catalog_search actions; private datasets left out;
// content negotiation on /catalog and /; bad parameters; the options (page size, base URI under
// ckanext-dcat's name, a custom endpoint path, endpoints off).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { instances, NS, parseRdf, values } from './helpers/rdf.ts';

let t: TestApp;
let editor: TestUser;
const ids: Record<string, string> = {};

before(async () => {
  t = await startApp({ config: { 'svc.dcat.datasets_per_page': 2, 'ckanext.dcat.base_uri': 'https://data.example.org/' } });
  editor = (await organizationWithTeam(t, { name: 'cat-org' }, { cat_editor: 'editor' })).users.cat_editor;
  for (const [name, tag] of [
    ['lake-a', 'lakes'],
    ['lake-b', 'lakes'],
    ['road-c', 'roads'],
    ['road-d', 'roads'],
    ['road-e', 'roads'],
  ]) {
    const d = await t.ok('package_create', { name, title: name, owner_org: 'cat-org', tags: [{ name: tag }] }, { token: editor.token });
    ids[name] = d.id;
  }
  ids.hidden = (await t.ok('package_create', { name: 'hidden-f', owner_org: 'cat-org', private: true }, { token: editor.token })).id;
});
after(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
const uri = (name: string) => `https://data.example.org/dataset/${ids[name]}`;
const CATALOG = 'https://data.example.org/';

async function page(url: string, ext = 'ttl') {
  const r = await get(url);
  assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
  const store = await parseRdf(r.body, ext);
  const datasets = values(store, CATALOG, `${NS.dcat}dataset`);
  const [view] = values(store, CATALOG, `${NS.hydra}view`);
  const hydra = (p: string) => (view ? values(store, view, `${NS.hydra}${p}`) : []);
  return { store, datasets, view, hydra };
}

describe('catalog pages', () => {
  test('the catalog is paged newest first with hydra links; private datasets are left out', async () => {
    const seen: string[] = [];
    const p1 = await page('/catalog.ttl');
    assert.deepEqual(instances(p1.store, `${NS.dcat}Catalog`), [CATALOG]);
    assert.equal(p1.datasets.length, 2);
    assert.deepEqual(p1.hydra('totalItems'), ['5']);
    assert.deepEqual(p1.hydra('itemsPerPage'), ['2']);
    assert.deepEqual(p1.hydra('next'), ['http://test.local/catalog.ttl?page=2']);
    assert.deepEqual(p1.hydra('last'), ['http://test.local/catalog.ttl?page=3']);
    assert.deepEqual(p1.hydra('previous'), []);
    assert.ok(instances(p1.store, `${NS.hydra}PartialCollectionView`).includes(p1.view));
    seen.push(...p1.datasets);
    const p3 = await page('/catalog.jsonld?page=3', 'jsonld');
    assert.equal(p3.datasets.length, 1);
    assert.deepEqual(p3.hydra('next'), []);
    assert.deepEqual(p3.hydra('previous'), ['http://test.local/catalog.jsonld?page=2']);
    seen.push(...(await page('/catalog.xml?page=2', 'xml')).datasets, ...p3.datasets);
    // every public dataset once, newest first; the private one never
    assert.deepEqual(seen, ['road-e', 'road-d', 'road-c', 'lake-b', 'lake-a'].map(uri));
    assert.ok(!seen.includes(uri('hidden')));
    // not even for its editor: the catalog is what the portal publishes
    const asEditor = await get('/catalog.nt?page=1', { authorization: editor.token });
    assert.ok(!asEditor.body.includes(ids.hidden));
  });

  test('q, fq and modified_since filter; the paging links keep them', async () => {
    const roads = await page('/catalog.ttl?fq=tags:roads');
    assert.deepEqual(roads.hydra('totalItems'), ['3']);
    assert.deepEqual(roads.hydra('next'), ['http://test.local/catalog.ttl?fq=tags%3Aroads&page=2']);
    const lakes = await page('/catalog.n3?q=lake', 'n3');
    assert.deepEqual(lakes.datasets.sort(), [uri('lake-a'), uri('lake-b')].sort());
    const future = await page('/catalog.ttl?modified_since=2999-01-01');
    assert.deepEqual(future.datasets, []);
    const past = await page('/catalog.ttl?modified_since=2000-01-01T00:00:00');
    assert.deepEqual(past.hydra('totalItems'), ['5']);
    const us = await page('/catalog.ttl?profiles=dcat_us_3&fq=tags:lakes');
    assert.equal(us.datasets.length, 2);
    assert.match(String(us.view), /profiles=dcat_us_3/);
  });

  test('bad parameters are 400 naming the parameter; the actions answer 409 Validation Errors', async () => {
    const cases: [string, RegExp][] = [
      ['/catalog.ttl?page=4', /^page: Page 4 is past the last page \(3\)/],
      ['/catalog.ttl?page=0', /^page: /],
      ['/catalog.ttl?page=abc', /^page: /],
      ['/catalog.ttl?modified_since=yesterday', /^modified_since: /],
      ['/catalog.ttl?profiles=euro_dcat_ap_9', /^profiles: Unknown RDF profile "euro_dcat_ap_9"/],
      ['/catalog.ttl?q=title:(unclosed', /./],
    ];
    for (const [url, message] of cases) {
      const r = await get(url);
      assert.equal(r.statusCode, 400, url);
      assert.match(r.body, message, url);
    }
    const unknown = await get('/catalog.csv');
    assert.equal(unknown.statusCode, 404);
    for (const action of ['dcat_catalog_show', 'dcat_catalog_search']) {
      const past = await t.call(action, { format: 'ttl', page: 9 });
      assert.equal(past.status, 409);
      assert.equal(past.body.error?.__type, 'Validation Error');
      assert.match(past.body.error?.page[0], /past the last page/);
      const since = await t.call(action, { modified_since: 'nope' });
      assert.ok(since.body.error?.modified_since, action);
    }
  });

  test('dcat_catalog_search returns the matching page as text', async () => {
    const text = await t.ok('dcat_catalog_search', { format: 'jsonld', q: 'road', fq: 'tags:roads', page: 2 });
    const store = await parseRdf(text, 'jsonld');
    assert.equal(values(store, CATALOG, `${NS.dcat}dataset`).length, 1);
  });
});

describe('content negotiation', () => {
  test('/catalog and / answer the RDF format the Accept header prefers', async () => {
    const jsonld = await get('/catalog', { accept: 'application/ld+json' });
    assert.equal(jsonld.headers['content-type'], 'application/ld+json; charset=utf-8');
    assert.equal(values(await parseRdf(jsonld.body, 'jsonld'), CATALOG, `${NS.dcat}dataset`).length, 2);
    const plain = await get('/catalog');
    assert.equal(plain.headers['content-type'], 'text/turtle; charset=utf-8');
    const home = await get('/', { accept: 'application/rdf+xml' });
    assert.equal(home.headers['content-type'], 'application/rdf+xml; charset=utf-8');
    assert.deepEqual(instances(await parseRdf(home.body, 'xml'), `${NS.dcat}Catalog`), [CATALOG]);
    const browser = await get('/', { accept: 'text/html,*/*;q=0.8' });
    assert.match(String(browser.headers['content-type']), /^text\/html/);
  });
});

describe('options', () => {
  test('a custom catalog path; endpoints and content negotiation off', async () => {
    const custom = await startApp({ config: { 'svc.dcat.catalog_endpoint': '/dcat/catalog/{_format}' } });
    try {
      await custom.ok('organization_create', { name: 'one-org' }, { token: custom.sysadminToken });
      await custom.ok('package_create', { name: 'one-dataset', owner_org: 'one-org' }, { token: custom.sysadminToken });
      const r = await custom.app.inject({ url: '/dcat/catalog/ttl' });
      assert.equal(r.statusCode, 200);
      const store = await parseRdf(r.body, 'ttl');
      assert.equal(values(store, 'http://test.local/', `${NS.dcat}dataset`).length, 1);
      assert.equal((await custom.app.inject({ url: '/catalog.ttl' })).statusCode, 404);
    } finally {
      await custom.close();
    }
    const off = await startApp({ config: { 'ckanext.dcat.enable_rdf_endpoints': 'false', 'svc.dcat.enable_content_negotiation': false } });
    try {
      await off.ok('organization_create', { name: 'one-org' }, { token: off.sysadminToken });
      await off.ok('package_create', { name: 'one-dataset', owner_org: 'one-org' }, { token: off.sysadminToken });
      assert.equal((await off.app.inject({ url: '/catalog.ttl' })).statusCode, 404);
      assert.equal((await off.app.inject({ url: '/dataset/one-dataset.ttl' })).statusCode, 404);
      const page = await off.app.inject({ url: '/dataset/one-dataset', headers: { accept: 'text/turtle' } });
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.ok(!page.body.includes('rel="alternate" type="text/turtle"'));
      // the actions stay
      assert.match(await off.ok('dcat_dataset_show', { id: 'one-dataset', format: 'nt' }), /dcat#Dataset/);
    } finally {
      await off.close();
    }
  });
});
