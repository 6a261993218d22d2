// Search semantics a CKAN user relies on (Solr with CKAN's schema), through HTTP: a dataset's
// name typed into the search box, words joined by - _ . / found by their parts and whole, tags of
// vocabularies as vocab_<name>, fuzzy terms, the "Popular" sort orders.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
const sys = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: [] });
  await t.ok('organization_create', { name: 'lab', title: 'Lab' }, sys());
  await t.ok('vocabulary_create', { name: 'genre', tags: [{ name: 'jazz' }, { name: 'rock' }] }, sys());
  const mk = (d: Record<string, unknown>) => t.ok('package_create', { owner_org: 'lab', ...d }, sys());
  await mk({ name: 'covid-cases', title: 'Daily infections', notes: 'Counted by the health office' });
  await mk({ name: 'vt-test', title: 'Vermont trial', notes: 'A trial run' });
  await mk({ name: 'covid-deaths', title: 'Deaths', notes: 'covid related' });
  await mk({ name: 'station-list', title: 'Stations', notes: 'Files in data_2020/stations.csv and sensor_id values' });
  await mk({ name: 'jazz-clubs', title: 'Clubs', tags: [{ name: 'jazz', vocabulary_id: 'genre' }, { name: 'music' }] });
  await mk({ name: 'rock-venues', title: 'Venues', tags: [{ name: 'rock', vocabulary_id: 'genre' }] });
});

after(() => t?.close());

const names = async (data: Record<string, unknown>) => {
  const r = await t.ok('package_search', { rows: 100, ...data });
  return r.results.map((d: any) => d.name).sort();
};

test("a dataset's name typed into the search box finds it", async () => {
  assert.deepEqual(await names({ q: 'covid-cases' }), ['covid-cases']);
  assert.deepEqual(await names({ q: 'vt-test' }), ['vt-test']);
  assert.deepEqual(await names({ q: 'vt-test OR covid' }), ['covid-cases', 'covid-deaths', 'vt-test']);
});

test('words joined by - _ . / are found by their parts and by the whole', async () => {
  for (const q of ['stations', 'stations.csv', 'data_2020', 'data_2020/stations.csv', 'sensor_id', 'sensor', '2020']) {
    assert.deepEqual(await names({ q }), ['station-list'], q);
  }
  assert.deepEqual(await names({ q: 'cases' }), ['covid-cases']);
});

test('tags of a vocabulary are the field vocab_<name>: filter and facet', async () => {
  assert.deepEqual(await names({ fq: 'vocab_genre:jazz' }), ['jazz-clubs']);
  assert.deepEqual(await names({ q: 'vocab_genre:rock' }), ['rock-venues']);
  assert.deepEqual(await names({ fq: 'vocab_genre:*' }), ['jazz-clubs', 'rock-venues']);
  // a vocabulary's tag is not a free tag
  assert.deepEqual(await names({ fq: 'tags:jazz' }), []);
  const r = await t.ok('package_search', { 'facet.field': JSON.stringify(['vocab_genre', 'tags']) });
  assert.deepEqual(r.facets.vocab_genre, { jazz: 1, rock: 1 });
  assert.deepEqual(r.facets.tags, { music: 1 });
});

test('a fuzzy term is refused with a Search Query Error, never a silent empty result', async () => {
  for (const q of ['covd~', 'covd~1', 'title:covd~2']) {
    const r = await t.call('package_search', { q });
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error!.__type, 'Search Query Error', q);
    assert.match(r.body.error!.message, /fuzzy/, q);
  }
  // a phrase's proximity stays accepted
  assert.deepEqual(await names({ q: '"daily infections"~2' }), ['covid-cases']);
});

test('the "Popular" sort orders are accepted: without page views they tie, before metadata_modified', async () => {
  const byModified = await t.ok('package_search', { sort: 'metadata_modified desc', rows: 100 });
  for (const sort of ['views_recent desc', 'views_total desc', 'views_recent desc, metadata_modified desc']) {
    const r = await t.ok('package_search', { sort, rows: 100 });
    assert.deepEqual(
      r.results.map((d: any) => d.name),
      byModified.results.map((d: any) => d.name),
      sort,
    );
  }
});

test('an index row written before word parts were indexed still finds its name', async () => {
  // the name's words as the index had them before (hyphens turned into spaces)
  await t.services.db.query(
    `UPDATE package_search_index SET doc = setweight(to_tsvector('english', replace(name, '-', ' ')), 'B') WHERE name = 'vt-test'`,
  );
  assert.deepEqual(await names({ q: 'vt-test' }), ['vt-test']);
  assert.deepEqual(await names({ q: 'vt' }), ['vt-test']);
  await t.ok('package_patch', { id: 'vt-test', notes: 'A trial run again' }, sys());
  assert.deepEqual(await names({ q: 'vt-test' }), ['vt-test']);
});
