// schema.org JSON-LD in the pages (plugin structured_data): a Dataset in every dataset page with
// what Google's Dataset rich results require and recommend, read from the core fields, the legacy
// DCAT extras and the scheming shape, and a DataCatalog on the home page; valid JSON-LD whose
// expansion (jsonld.expand) has those properties. Private datasets stay out of others' pages.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import jsonld from 'jsonld';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

const S = 'https://schema.org/';
type Node = Record<string, any>;

/** The one JSON-LD script of a page, parsed (undefined when there is none). */
function pageJsonLd(body: string): any {
  const scripts = [...body.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)];
  assert.ok(scripts.length <= 1, 'one JSON-LD script at most');
  return scripts.length ? JSON.parse(scripts[0][1]) : undefined;
}

/** The expanded node of a type (jsonld.expand, no remote context: everything is inline). */
async function expandedNode(doc: unknown, type: string): Promise<Node> {
  const expanded = (await jsonld.expand(doc as jsonld.JsonLdDocument)) as Node[];
  const node = expanded.find((n) => (n['@type'] ?? []).includes(S + type));
  assert.ok(node, `an expanded ${type} node in ${JSON.stringify(expanded).slice(0, 300)}`);
  return node;
}

const values = (node: Node, property: string): any[] => node[S + property] ?? [];
const literal = (node: Node, property: string): unknown => values(node, property)[0]?.['@value'];
const literals = (node: Node, property: string): unknown[] => values(node, property).map((v) => v['@value']);
const idOf = (node: Node, property: string): unknown => values(node, property)[0]?.['@id'];

let t: TestApp;
let admin: { token: string };
let outsider: { name: string; token: string };
let member: { name: string; token: string };

before(async () => {
  t = await startApp({ plugins: ['structured_data'], config: { 'svc.site_title': 'Open Rivers', 'svc.site_description': 'River data' } });
  admin = { token: t.sysadminToken };
  member = await t.user('so_member');
  outsider = await t.user('so_outsider');
  await t.ok('organization_create', { name: 'river-office', title: 'River Office' }, admin);
  await t.ok('organization_member_create', { id: 'river-office', username: member.name, role: 'member' }, admin);
  await t.ok(
    'package_create',
    {
      name: 'gauges',
      title: 'River gauges',
      notes: 'Water levels of **every gauge** on the river, measured each hour since 2010 by the river office.',
      owner_org: 'river-office',
      license_id: 'cc-by',
      author: 'Ann Author',
      author_email: 'ann@example.org',
      maintainer: 'Max Maintainer',
      maintainer_email: 'max@example.org',
      version: '2.1',
      tags: [{ name: 'water' }, { name: 'hydrology' }],
      extras: [
        { key: 'temporal_start', value: '2010-01-01' },
        { key: 'temporal_end', value: '2020-12-31' },
        { key: 'spatial_uri', value: 'http://sws.geonames.org/2658434/' },
        { key: 'spatial_text', value: 'Upper Rhine' },
        { key: 'spatial', value: '{"type":"Polygon","coordinates":[[[7.5,47.5],[8.5,47.5],[8.5,48.0],[7.5,48.0],[7.5,47.5]]]}' },
        { key: 'contact_name', value: 'Gauge desk' },
        { key: 'contact_email', value: 'gauges@example.org' },
        { key: 'language', value: '["en","de"]' },
      ],
      resources: [
        { name: 'Levels', url: 'https://example.org/levels.csv', format: 'CSV', mimetype: 'text/csv', size: 2048 },
        { name: 'Unsafe link', url: 'javascript:alert(1)', format: 'HTML' },
      ],
    },
    admin,
  );
  await t.ok('package_create', { name: 'secret-gauges', title: 'Secret gauges', private: true, owner_org: 'river-office' }, admin);
});
after(async () => {
  await t?.close();
});

test('a dataset page has a schema.org Dataset whose expansion has what Google Dataset Search requires and recommends', async () => {
  const res = await new WebClient(t.app).get('/dataset/gauges');
  assert.equal(res.statusCode, 200);
  const doc = pageJsonLd(res.body);
  assert.equal(doc['@type'], 'Dataset');
  const ds = await expandedNode(doc, 'Dataset');
  assert.equal(ds['@id'], 'http://test.local/dataset/gauges');
  assert.equal(literal(ds, 'name'), 'River gauges');
  assert.match(String(literal(ds, 'description')), /^Water levels of every gauge on the river/, 'plain text, no markdown');
  assert.equal(idOf(ds, 'url'), 'http://test.local/dataset/gauges');
  assert.match(String(literal(ds, 'identifier')), /^[0-9a-f-]{36}$/);
  assert.deepEqual(literals(ds, 'keywords').sort(), ['hydrology', 'water']);
  assert.equal(literal(ds, 'license'), 'http://www.opendefinition.org/licenses/cc-by');
  assert.equal(literal(ds, 'version'), '2.1');
  assert.deepEqual(literals(ds, 'inLanguage').sort(), ['de', 'en']);
  assert.equal(literal(ds, 'temporalCoverage'), '2010-01-01/2020-12-31');
  assert.equal(literal(ds, 'isAccessibleForFree'), true);
  assert.match(String(literal(ds, 'dateModified')), /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);

  const [creator] = values(ds, 'creator');
  assert.deepEqual(creator['@type'], [`${S}Person`]);
  assert.equal(literal(creator, 'name'), 'Ann Author');
  const [publisher] = values(ds, 'publisher');
  assert.deepEqual(publisher['@type'], [`${S}Organization`]);
  assert.equal(literal(publisher, 'name'), 'River Office');
  const [contact] = values(publisher, 'contactPoint');
  assert.equal(literal(contact, 'name'), 'Gauge desk');
  assert.equal(literal(contact, 'email'), 'gauges@example.org');

  const [place] = values(ds, 'spatialCoverage');
  assert.equal(place['@id'], 'http://sws.geonames.org/2658434/');
  assert.equal(literal(place, 'name'), 'Upper Rhine');
  const [shape] = values(place, 'geo');
  assert.deepEqual(shape['@type'], [`${S}GeoShape`]);
  assert.equal(literal(shape, 'box'), '47.5 7.5 48 8.5', 'south west north east');

  const [catalog] = values(ds, 'includedInDataCatalog');
  assert.deepEqual(catalog['@type'], [`${S}DataCatalog`]);
  assert.equal(literal(catalog, 'name'), 'Open Rivers');

  // Only the resource with a downloadable address is a DataDownload (Google requires contentUrl).
  const downloads = values(ds, 'distribution');
  assert.equal(downloads.length, 1);
  assert.deepEqual(downloads[0]['@type'], [`${S}DataDownload`]);
  assert.equal(idOf(downloads[0], 'contentUrl'), 'https://example.org/levels.csv');
  assert.equal(literal(downloads[0], 'encodingFormat'), 'text/csv');
  assert.equal(literal(downloads[0], 'contentSize'), '2048');
});

test('the home page has a DataCatalog listing the datasets the visitor sees, never a private one', async () => {
  const anonymous = pageJsonLd((await new WebClient(t.app).get('/')).body);
  const catalog = await expandedNode(anonymous, 'DataCatalog');
  assert.equal(catalog['@id'], 'http://test.local/');
  assert.equal(literal(catalog, 'name'), 'Open Rivers');
  assert.equal(literal(catalog, 'description'), 'River data');
  const listed = (doc: any) => (doc.dataset ?? []).map((d: any) => d.url);
  assert.deepEqual(listed(anonymous), ['http://test.local/dataset/gauges']);
  assert.ok(!JSON.stringify(anonymous).includes('Secret'), 'nothing of the private dataset');
  const [entry] = values(catalog, 'dataset');
  assert.equal(literal(entry, 'name'), 'River gauges');
});

test('a private dataset: no page and no JSON-LD for outsiders; its members get both', async () => {
  const outsiderPage = await new WebClient(t.app).get('/dataset/secret-gauges', { Authorization: outsider.token });
  assert.equal(outsiderPage.statusCode, 404);
  assert.equal(pageJsonLd(outsiderPage.body), undefined);
  assert.ok(!outsiderPage.body.includes('Secret gauges'));
  const anonymous = await new WebClient(t.app).get('/dataset/secret-gauges');
  assert.notEqual(anonymous.statusCode, 200);
  assert.equal(pageJsonLd(anonymous.body), undefined);

  const memberPage = await new WebClient(t.app).get('/dataset/secret-gauges', { Authorization: member.token });
  assert.equal(memberPage.statusCode, 200);
  assert.equal(pageJsonLd(memberPage.body).name, 'Secret gauges');
});

test('unsafe values stay inert: a title cannot close the script, a bad geometry gives no shape, a javascript: link no download', async () => {
  const title = 'Gauge </script><script>alert(1)</script> & <!-- x';
  await t.ok(
    'package_create',
    {
      name: 'odd-gauge',
      title,
      owner_org: 'river-office',
      extras: [{ key: 'spatial_bbox', value: 'not a geometry {' }],
      resources: [{ url: 'javascript:alert(2)', format: 'CSV' }],
    },
    admin,
  );
  const body = (await new WebClient(t.app).get('/dataset/odd-gauge')).body;
  assert.ok(!body.includes('<script>alert(1)'));
  const doc = pageJsonLd(body);
  assert.equal(doc.name, title);
  assert.equal(doc.spatialCoverage, undefined);
  assert.equal(doc.distribution, undefined);
  assert.equal(doc.description, title, 'a dataset without notes is described by its title');
  await expandedNode(doc, 'Dataset');
});

describe('the scheming shape', () => {
  let s: TestApp;
  before(async () => {
    s = await startApp({
      plugins: ['structured_data'],
      config: { 'svc.scheming.dataset_schemas': path.join(import.meta.dirname, 'fixtures', 'dcat-schemaorg-schema.yaml') },
    });
    await s.ok('organization_create', { name: 'survey' }, { token: s.sysadminToken });
    await s.ok(
      'package_create',
      {
        type: 'dataset',
        name: 'lake-survey',
        title: 'Lake survey',
        notes: 'Depth soundings of the lake, with the positions of every sounding and the instrument used.',
        owner_org: 'survey',
        identifier: 'https://doi.org/10.1234/lake',
        alternate_identifier: ['LAKE-2024'],
        language: ['http://publications.europa.eu/resource/authority/language/FRA'],
        access_rights: 'http://publications.europa.eu/resource/authority/access-right/PUBLIC',
        issued: '2024-03-01',
        modified: '2024-05-02',
        creator: [
          {
            name: 'Lake Institute',
            type: 'http://purl.org/adms/publishertype/Academia-ScientificOrganisation',
            uri: 'https://ror.org/000lake',
          },
          { name: 'Dana Diver', email: 'dana@example.org', type: 'http://xmlns.com/foaf/0.1/Person' },
        ],
        publisher: [{ name: 'Survey Agency', url: 'https://survey.example.org' }],
        contact: [{ name: 'Survey desk', email: 'desk@example.org' }],
        temporal_coverage: [{ start: '2024-01-01', end: '2024-02-01' }, { start: '2024-06-01' }],
        spatial_coverage: [{ text: 'Lake Geneva', bbox: 'POLYGON((6.1 46.2, 6.9 46.2, 6.9 46.5, 6.1 46.5, 6.1 46.2))' }],
        cite_as: 'Lake Institute (2024). Lake survey.',
        resources: [{ name: 'Soundings', url: 'https://example.org/soundings.json', format: 'JSON', language: ['fr'] }],
      },
      { token: s.sysadminToken },
    );
  });
  after(async () => {
    await s?.close();
  });

  test('creator, publisher, contact, coverage, identifiers, language and dates come from the schema fields', async () => {
    const doc = pageJsonLd((await new WebClient(s.app).get('/dataset/lake-survey')).body);
    const ds = await expandedNode(doc, 'Dataset');
    assert.deepEqual(literals(ds, 'identifier'), ['https://doi.org/10.1234/lake', 'LAKE-2024']);
    assert.deepEqual(literals(ds, 'inLanguage'), ['fra']);
    assert.equal(literal(ds, 'conditionsOfAccess'), 'http://publications.europa.eu/resource/authority/access-right/PUBLIC');
    assert.equal(literal(ds, 'datePublished'), '2024-03-01');
    assert.equal(literal(ds, 'dateModified'), '2024-05-02');
    assert.equal(literal(ds, 'citation'), 'Lake Institute (2024). Lake survey.');
    assert.deepEqual(literals(ds, 'temporalCoverage').sort(), ['2024-01-01/2024-02-01', '2024-06-01/..']);

    const creators = values(ds, 'creator');
    assert.deepEqual(
      creators.map((c) => [c['@type'][0], c['@id'], literal(c, 'name')]),
      [
        [`${S}Organization`, 'https://ror.org/000lake', 'Lake Institute'],
        [`${S}Person`, undefined, 'Dana Diver'],
      ],
    );
    const [publisher] = values(ds, 'publisher');
    assert.equal(literal(publisher, 'name'), 'Survey Agency');
    assert.equal(idOf(publisher, 'url'), 'https://survey.example.org');
    assert.equal(literal(values(publisher, 'contactPoint')[0], 'email'), 'desk@example.org');

    const [place] = values(ds, 'spatialCoverage');
    assert.equal(literal(place, 'name'), 'Lake Geneva');
    assert.equal(literal(values(place, 'geo')[0], 'box'), '46.2 6.1 46.5 6.9');

    const [download] = values(ds, 'distribution');
    assert.equal(literal(download, 'encodingFormat'), 'JSON');
    assert.deepEqual(literals(download, 'inLanguage'), ['fr']);
  });
});

test('without the structured_data plugin the pages have no JSON-LD', async () => {
  const plain = await startApp({ plugins: [] });
  try {
    await plain.ok('organization_create', { name: 'plain-office' }, { token: plain.sysadminToken });
    await plain.ok('package_create', { name: 'bare', owner_org: 'plain-office' }, { token: plain.sysadminToken });
    const web = new WebClient(plain.app);
    assert.equal(pageJsonLd((await web.get('/dataset/bare')).body), undefined);
    assert.equal(pageJsonLd((await web.get('/')).body), undefined);
  } finally {
    await plain.close();
  }
});
