// Atom feeds through HTTP: well-formed Atom 1.0 read with an XML parser, CKAN's addresses and
// paging links, entries (page link, id, dates, author, summary, categories), private datasets never
// in a feed whoever asks, 404 for unknown organizations, groups and tags, 400 for a bad page, and
// the feed links in the heads of the home, search, organization and group pages.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { SaxesParser } from 'saxes';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';
import { atomId } from '../src/web/feeds/atom.ts';

interface Node {
  name: string;
  attrs: Record<string, string>;
  children: Node[];
  text: string;
}

/** The document as a tree; saxes throws on anything not well-formed. */
function parseXml(xml: string): Node {
  const parser = new SaxesParser({ xmlns: false });
  const root: Node = { name: '#document', attrs: {}, children: [], text: '' };
  const stack = [root];
  parser.on('opentag', (tag) => {
    const node: Node = { name: tag.name, attrs: tag.attributes as Record<string, string>, children: [], text: '' };
    stack.at(-1)!.children.push(node);
    stack.push(node);
  });
  parser.on('text', (text) => {
    stack.at(-1)!.text += text;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.write(xml).close();
  assert.equal(root.children.length, 1);
  return root.children[0]!;
}

const kids = (n: Node, name: string) => n.children.filter((c) => c.name === name);
const kid = (n: Node, name: string) => kids(n, name)[0];
const link = (n: Node, rel: string) => kids(n, 'link').find((l) => l.attrs.rel === rel)?.attrs.href;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

let t: TestApp;
const BASE = 'http://test.local';

async function feed(url: string, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ method: 'GET', url, headers });
  assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/atom\+xml/);
  const root = parseXml(res.body);
  assert.equal(root.name, 'feed');
  assert.equal(root.attrs.xmlns, 'http://www.w3.org/2005/Atom');
  return root;
}

/** Every entry of a feed, following its next links. */
async function allEntries(url: string, headers: Record<string, string> = {}): Promise<Node[]> {
  const out: Node[] = [];
  let next: string | undefined = url;
  for (let pages = 0; next && pages < 20; pages++) {
    const root = await feed(next.replace(BASE, ''), headers);
    out.push(...kids(root, 'entry'));
    next = link(root, 'next');
  }
  return out;
}
const titles = (entries: Node[]) => entries.map((e) => kid(e, 'title')!.text).sort();

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.feeds.limit': 2, 'svc.site_title': 'Open & Co' } });
  const as = asSysadmin(t);
  await t.ok('organization_create', { name: 'alpha', title: 'Alpha <Office>' }, as);
  await t.ok('organization_create', { name: 'beta', title: 'Beta' }, as);
  await t.ok('group_create', { name: 'env', title: 'Environment' }, as);
  const make = (name: string, extra: Record<string, unknown>) => t.ok('package_create', { name, title: name.toUpperCase(), ...extra }, as);
  await make('water', {
    owner_org: 'alpha',
    notes: 'Rivers & <lakes>\u0001 "quoted"',
    author: 'Ann Author',
    author_email: 'ann@example.org',
    tags: [{ name: 'water' }, { name: 'env data' }],
    groups: [{ name: 'env' }],
  });
  await make('air', { owner_org: 'alpha', tags: [{ name: 'air' }] });
  await make('soil', { owner_org: 'alpha', tags: [{ name: 'water' }], groups: [{ name: 'env' }] });
  await make('budget', { owner_org: 'beta', tags: [{ name: 'finance' }] });
  await make('secret', { owner_org: 'alpha', private: true, tags: [{ name: 'water' }], groups: [{ name: 'env' }] });
});
after(() => t?.close());

test('/feeds/dataset.atom: Atom 1.0 with id, title, author, dates, and paging links as CKAN', async () => {
  const root = await feed('/feeds/dataset.atom');
  assert.equal(kid(root, 'title')!.text, 'Open & Co');
  assert.equal(kid(root, 'id')!.text, `${BASE}/feeds/dataset.atom`);
  assert.match(kid(root, 'updated')!.text, RFC3339);
  assert.ok(kid(kid(root, 'author')!, 'name')!.text);
  assert.equal(kids(root, 'entry').length, 2, 'svc.feeds.limit entries a page');
  assert.equal(link(root, 'self'), `${BASE}/feeds/dataset.atom`);
  assert.equal(link(root, 'alternate'), `${BASE}/dataset`);
  assert.equal(link(root, 'first'), `${BASE}/feeds/dataset.atom`);
  assert.equal(link(root, 'last'), `${BASE}/feeds/dataset.atom?page=2`);
  assert.equal(link(root, 'next'), `${BASE}/feeds/dataset.atom?page=2`);
  assert.equal(link(root, 'prev'), undefined);
  const second = await feed('/feeds/dataset.atom?page=2');
  assert.equal(link(second, 'self'), `${BASE}/feeds/dataset.atom?page=2`);
  assert.equal(link(second, 'prev'), `${BASE}/feeds/dataset.atom`);
  assert.equal(link(second, 'next'), undefined);
  // Newest first: the last created is on the first page.
  assert.deepEqual(
    kids(root, 'entry').map((e) => kid(e, 'title')!.text),
    ['BUDGET', 'SOIL'],
  );
});

test('private datasets are in no feed, even for a sysadmin', async () => {
  const sysadmin = { authorization: t.sysadminToken };
  assert.deepEqual(titles(await allEntries('/feeds/dataset.atom', sysadmin)), ['AIR', 'BUDGET', 'SOIL', 'WATER']);
  assert.deepEqual(titles(await allEntries('/feeds/organization/alpha.atom', sysadmin)), ['AIR', 'SOIL', 'WATER']);
  assert.deepEqual(titles(await allEntries('/feeds/group/env.atom', sysadmin)), ['SOIL', 'WATER']);
  assert.deepEqual(titles(await allEntries('/feeds/tag/water.atom', sysadmin)), ['SOIL', 'WATER']);
  assert.deepEqual(titles(await allEntries('/feeds/custom.atom?q=secret', sysadmin)), []);
});

test('an entry: the dataset page, a stable id, dates, author, the notes as summary, tags as categories', async () => {
  const entries = await allEntries('/feeds/tag/water.atom');
  const water = entries.find((e) => kid(e, 'title')!.text === 'WATER')!;
  const pkg = await t.ok('package_show', { id: 'water' });
  assert.equal(link(water, 'alternate'), `${BASE}/dataset/water`);
  assert.equal(link(water, 'enclosure'), `${BASE}/api/3/action/package_show?id=${pkg.id}`);
  assert.equal(kid(water, 'id')!.text, `${BASE}/dataset/${pkg.id}`);
  assert.match(kid(water, 'updated')!.text, RFC3339);
  assert.match(kid(water, 'published')!.text, RFC3339);
  assert.equal(kid(kid(water, 'author')!, 'name')!.text, 'Ann Author');
  assert.equal(kid(kid(water, 'author')!, 'email')!.text, 'ann@example.org');
  // The control character dropped (XML cannot carry it), the markup kept as text.
  assert.equal(kid(water, 'summary')!.text, 'Rivers & <lakes> "quoted"');
  assert.deepEqual(
    kids(water, 'category')
      .map((c) => c.attrs.term)
      .sort(),
    ['env data', 'water'],
  );
});

test('organization, group, tag and custom feeds: titles, links to the search page, paging that keeps the query', async () => {
  const org = await feed('/feeds/organization/alpha.atom');
  assert.equal(kid(org, 'title')!.text, 'Open & Co - Organization: "Alpha <Office>"');
  assert.equal(link(org, 'alternate'), `${BASE}/dataset?organization=alpha`);
  assert.equal(link(org, 'next'), `${BASE}/feeds/organization/alpha.atom?page=2`);
  // By id too; the links name it.
  const byId = await feed(`/feeds/organization/${(await t.ok('organization_show', { id: 'alpha' })).id}.atom`);
  assert.equal(link(byId, 'self'), `${BASE}/feeds/organization/alpha.atom`);
  const group = await feed('/feeds/group/env.atom');
  assert.equal(link(group, 'alternate'), `${BASE}/dataset?groups=env`);
  const tag = await feed('/feeds/tag/env%20data.atom');
  assert.deepEqual(titles(kids(tag, 'entry')), ['WATER']);
  assert.equal(kid(tag, 'title')!.text, 'Open & Co - Tag: "env data"');
  const custom = await feed('/feeds/custom.atom?q=Rivers&tags=water&_ignored=1');
  assert.deepEqual(titles(kids(custom, 'entry')), ['WATER']);
  assert.equal(link(custom, 'self'), `${BASE}/feeds/custom.atom?q=Rivers&tags=water`);
  assert.equal(link(custom, 'alternate'), `${BASE}/dataset?q=Rivers&tags=water`);
  const paged = await feed('/feeds/custom.atom?organization=alpha&page=2');
  assert.equal(link(paged, 'prev'), `${BASE}/feeds/custom.atom?organization=alpha`);
  assert.equal(kids(paged, 'entry').length, 1);
  // The feed in French.
  const fr = await feed('/fr/feeds/group/env.atom');
  assert.equal(fr.attrs['xml:lang'], 'fr');
  assert.match(kid(fr, 'title')!.text, /Groupe/);
  assert.equal(link(fr, 'self'), `${BASE}/fr/feeds/group/env.atom`);
  assert.equal(link(fr, 'alternate'), `${BASE}/fr/dataset?groups=env`);
  assert.equal(kid(fr, 'id')!.text, `${BASE}/feeds/group/env.atom`);
});

test('unknown organizations, groups and tags are 404; a bad page or field is 400', async () => {
  for (const url of [
    '/feeds/organization/nope.atom',
    '/feeds/group/nope.atom',
    '/feeds/tag/nope.atom',
    '/feeds/group/env.rss',
    '/feeds/organization/env.atom',
  ]) {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
  }
  for (const url of ['/feeds/dataset.atom?page=abc', '/feeds/dataset.atom?page=0', '/feeds/custom.atom?bad%20field=x']) {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 400, url);
    assert.match(res.body, /page|field/);
  }
});

test('ids are tag: URIs once svc.feeds.date is set', () => {
  const config = { str: (k: string) => ({ 'svc.feeds.date': '2012-03-22', 'svc.feeds.authority_name': '' })[k] ?? '' } as any;
  assert.equal(atomId(config, 'https://data.example.org', '/dataset/1'), 'tag:data.example.org,2012-03-22:/dataset/1');
});

test('home, search, organization and group pages link their feed', async () => {
  const head = async (url: string) => {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 200);
    return [...res.body.matchAll(/<link rel="alternate" type="application\/atom\+xml" title="[^"]+" href="([^"]+)">/g)].map((m) => m[1]);
  };
  assert.deepEqual(await head('/'), [`${BASE}/feeds/dataset.atom`]);
  assert.deepEqual(await head('/dataset'), [`${BASE}/feeds/dataset.atom`]);
  assert.deepEqual(await head('/dataset?q=water&tags=air&page=2'), [`${BASE}/feeds/custom.atom?q=water&amp;tags=air`]);
  assert.deepEqual(await head('/organization/alpha'), [`${BASE}/feeds/organization/alpha.atom`]);
  assert.deepEqual(await head('/group/env'), [`${BASE}/feeds/group/env.atom`]);
  assert.deepEqual(await head('/about'), []);
});
