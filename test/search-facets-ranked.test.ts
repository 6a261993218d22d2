// A ranked query whose count and facets must be scanned (several words, a caller whose view is
// not a counted class) gets its count, its facets (a choice list, tags, the organization, an
// extra) and its page from one reading of the matches: the same counts and order as each alone.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U;
const as = (u: U) => ({ token: u.token });

before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'scheming-search-catalog.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
    },
  });
  alice = await t.user('alice');
  await t.ok('organization_create', { name: 'acme' }, as(alice));
  await t.ok('organization_create', { name: 'globex' }, as(alice));
  const datasets: Record<string, unknown>[] = [
    { name: 'river-gauges', notes: 'river water levels, water water', theme: ['environment', 'health'], tags: [{ name: 'hydro' }] },
    { name: 'river-fish', notes: 'fish counts in the river water', theme: ['environment'], tags: [{ name: 'hydro' }, { name: 'bio' }] },
    { name: 'river-private', notes: 'river water', theme: ['health'], private: true, tags: [{ name: 'bio' }] },
    { name: 'river-globex', owner_org: 'globex', notes: 'river water quality', theme: ['economy', 'health'] },
    { name: 'river-dry', notes: 'a dry river bed' },
    { name: 'lake-water', notes: 'lake water', theme: ['environment'] },
  ];
  for (const d of datasets)
    await t.ok('package_create', { owner_org: 'acme', extras: [{ key: 'region', value: 'north' }], ...d }, as(alice));
});
after(async () => {
  await t.close();
});

test('two words with facets, private datasets included for their reader: count, facets and page of the matches', async () => {
  const params = {
    q: 'river water',
    include_private: true,
    'facet.field': ['theme', 'tags', 'organization', 'extras_region'],
  };
  const r = await t.ok('package_search', { ...params, rows: 10 }, as(alice));
  assert.equal(r.count, 4);
  const names = r.results.map((d: { name: string }) => d.name);
  assert.deepEqual([...names].sort(), ['river-fish', 'river-gauges', 'river-globex', 'river-private']);
  // the most mentions of water first
  assert.equal(names[0], 'river-gauges');
  assert.deepEqual(r.facets.theme, { health: 3, environment: 2, economy: 1 });
  assert.deepEqual(r.facets.tags, { bio: 2, hydro: 2 });
  assert.deepEqual(r.facets.organization, { acme: 3, globex: 1 });
  assert.deepEqual(r.facets.extras_region, { north: 4 });
  // a page of one inside the score window: the same order, the same count and facets
  for (let start = 0; start < 4; start++) {
    const page = await t.ok('package_search', { ...params, rows: 1, start }, as(alice));
    assert.deepEqual(
      page.results.map((d: { name: string }) => d.name),
      [names[start]],
    );
    assert.equal(page.count, 4);
    assert.deepEqual(page.facets, r.facets);
  }
  // limit and mincount
  const few = await t.ok('package_search', { ...params, 'facet.limit': 1, 'facet.mincount': 2 }, as(alice));
  assert.deepEqual(few.facets.theme, { health: 3 });
  assert.deepEqual(few.facets.organization, { acme: 3 });
  // anonymous: the private dataset is neither found nor counted
  const anonymous = await t.ok('package_search', { ...params, include_private: false, fq: 'num_resources:[0 TO *]' });
  assert.equal(anonymous.count, 3);
  assert.deepEqual(anonymous.facets.theme, { environment: 2, health: 2, economy: 1 });
});
