// package_search answers some queries from per-value counts kept by triggers (migrations 011 and
// 012): the count and facets of queries without words or filters, the count of a single word, the
// facets of a frequent single word (here every word is frequent: svc.search.counted_word_min 1),
// and the values a list wildcard expands to. Through HTTP, after every kind of write, these must give what
// a scan of the index gives, and never count what the caller may not read.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { rebuildSearchIndex } from '../src/search/service.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U; // admin of acme
const sys = () => ({ token: t.sysadminToken });
const as = (u: U) => ({ token: u.token });
const FACETS = ['organization', 'owner_org', 'tags', 'groups', 'res_format', 'res_type', 'license_id', 'dataset_type'];
// always true, but a filter: the count and the facets come from a scan of the index
const SCAN = 'num_resources:[0 TO *]';

const search = (data: Record<string, unknown>, who: { token?: string } = {}) => t.ok('package_search', data, who);

/** Counts and facets answered from the counts equal those of a scan, for everyone, members and sysadmins. */
async function assertCountsMatchScan(words: string[] = ['water', 'budget', 'nothingatall']): Promise<void> {
  const callers: [string, Record<string, unknown>, { token?: string }][] = [
    ['anonymous', {}, {}],
    ['alice without include_private', {}, as(alice)],
    ['sysadmin', {}, sys()],
    ['sysadmin with include_private', { include_private: true }, sys()],
    ['alice with include_private', { include_private: true }, as(alice)],
  ];
  for (const [who, extra, token] of callers) {
    const opts = { 'facet.field': FACETS, 'facet.limit': -1, rows: 0, ...extra };
    const counted = await search(opts, token);
    const scanned = await search({ ...opts, fq: SCAN }, token);
    assert.equal(counted.count, scanned.count, `${who}: count`);
    assert.deepEqual(counted.facets, scanned.facets, `${who}: facets`);
    for (const q of words) {
      const c = await search({ q, ...opts }, token);
      const s = await search({ q, ...opts, fq: SCAN }, token);
      assert.equal(c.count, s.count, `${who}: count of q=${q}`);
      assert.deepEqual(c.facets, s.facets, `${who}: facets of q=${q}`);
    }
  }
  // the counts are exactly what the index holds
  const diff = await t.services.db.query(`
    (SELECT t.class, t.field, t.value, count(*) AS n FROM package_search_index r,
       package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
     GROUP BY 1, 2, 3
     EXCEPT SELECT class, field, value, n FROM package_search_value_counts_now WHERE n > 0)
    UNION ALL
    (SELECT class, field, value, n FROM package_search_value_counts_now WHERE n <> 0
     EXCEPT SELECT t.class, t.field, t.value, count(*) FROM package_search_index r,
       package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
     GROUP BY 1, 2, 3)`);
  assert.deepEqual(diff.rows, []);
}

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.search.counted_word_min': 1 } });
  alice = await t.user('alice');
  await t.ok('organization_create', { name: 'acme', title: 'Acme Works' }, as(alice));
  await t.ok('organization_create', { name: 'beta', title: 'Beta Institute' }, sys());
  await t.ok('group_create', { name: 'geo', title: 'Geography' }, sys());
  await t.ok(
    'package_create',
    {
      name: 'river',
      title: 'River water',
      owner_org: 'acme',
      license_id: 'cc-by',
      tags: [{ name: 'water' }, { name: 'waterways' }],
      groups: [{ name: 'geo' }],
      resources: [{ url: 'http://x/r.csv', format: 'CSV', resource_type: 'file' }],
    },
    sys(),
  );
  await t.ok('package_create', { name: 'budget', title: 'City budget', owner_org: 'beta', tags: [{ name: 'finance' }] }, sys());
  await t.ok(
    'package_create',
    {
      name: 'secret',
      title: 'Secret water plans',
      owner_org: 'acme',
      private: true,
      tags: [{ name: 'water' }, { name: 'watertight' }],
      resources: [{ url: 'http://x/s.geojson', format: 'GeoJSON' }],
    },
    as(alice),
  );
  await t.ok(
    'package_create',
    { name: 'draft', title: 'Draft water', owner_org: 'acme', state: 'draft', tags: [{ name: 'water' }] },
    sys(),
  );
});
after(async () => {
  await t?.close();
});

describe('counts kept by the index triggers', () => {
  test('a frequent word has its facets counted after its first faceted query, only what everyone may read', async () => {
    const counted = async () =>
      (await t.services.db.query<{ word: string }>('SELECT word FROM package_search_counted_words ORDER BY word')).rows.map((r) => r.word);
    assert.deepEqual(await counted(), []);
    await search({ q: 'Water' }); // no facets: nothing to count
    assert.deepEqual(await counted(), []);
    const r = await search({ q: 'Water', 'facet.field': ['tags', 'organization'] });
    assert.deepEqual(await counted(), ['water']);
    // the private and the draft dataset with the word are not counted
    assert.equal(r.count, 1);
    assert.deepEqual(r.facets, { tags: { water: 1, waterways: 1 }, organization: { acme: 1 } });
    const s = await search({ q: 'water', 'facet.field': ['tags'], include_private: true }, sys());
    assert.deepEqual(s.facets.tags, { water: 2, waterways: 1, watertight: 1 });
  });

  test('a word is not counted while a write holds the index: the query scans instead, and counts it once the write ends', {
    skip: !onPostgres && 'PGlite runs one transaction at a time',
  }, async () => {
    await t.ok('package_create', { name: 'beacon', title: 'Lighthouse beacon', owner_org: 'beta', tags: [{ name: 'sea' }] }, sys());
    const listed = async () =>
      (await t.services.db.query('SELECT 1 FROM package_search_counted_words WHERE word = $1 AND ready', ['lighthous'])).rows.length === 1;
    const query = { q: 'lighthouse', 'facet.field': ['tags'] };
    await t.services.db.transaction(async (tx) => {
      // an index write in flight (it has a transaction id; its triggers ran before the word was listed)
      await tx.query("UPDATE package_search_index SET title = title WHERE name = 'beacon'");
      const r = await search(query);
      assert.equal(r.count, 1);
      assert.deepEqual(r.facets.tags, { sea: 1 });
      assert.equal(await listed(), false);
    });
    assert.deepEqual((await search(query)).facets.tags, { sea: 1 });
    assert.equal(await listed(), true);
    await t.ok('dataset_purge', { id: 'beacon' }, sys());
  });

  test('queries without words, and single words, give the counts and facets of a scan', async () => {
    await assertCountsMatchScan();
    const r = await search({ 'facet.field': ['tags', 'res_format'] });
    assert.equal(r.count, 2);
    assert.deepEqual(r.facets.tags, { water: 1, waterways: 1, finance: 1 });
    assert.deepEqual(r.facets.res_format, { CSV: 1 });
    const s = await search({ 'facet.field': ['tags'], include_private: true }, sys());
    assert.equal(s.count, 3);
    assert.deepEqual(s.facets.tags, { water: 2, waterways: 1, watertight: 1, finance: 1 });
    assert.equal((await search({ q: 'water' })).count, 1);
    assert.equal((await search({ q: 'water', include_private: true }, sys())).count, 2);
    // facet.limit and facet.mincount apply to counted facets too
    assert.deepEqual((await search({ 'facet.field': ['tags'], 'facet.limit': 1 }, sys())).facets.tags, { finance: 1 });
    assert.deepEqual((await search({ 'facet.field': ['tags'], 'facet.mincount': 2, include_private: true }, sys())).facets.tags, {
      water: 2,
    });
  });

  test('counts follow updates, permission changes, resources, groups, renames, deletes and purges', async () => {
    await t.ok('package_patch', { id: 'budget', tags: [{ name: 'finance' }, { name: 'money' }], license_id: 'odc-odbl' }, sys());
    await assertCountsMatchScan();
    await t.ok('package_patch', { id: 'secret', private: false }, sys());
    assert.equal((await search({ 'facet.field': ['tags'] })).facets.tags.watertight, 1);
    await assertCountsMatchScan();
    await t.ok('package_patch', { id: 'secret', private: true }, sys());
    assert.equal((await search({ 'facet.field': ['tags'] })).facets.tags.watertight, undefined);
    await t.ok('resource_create', { package_id: 'budget', url: 'http://x/b.xlsx', format: 'XLSX' }, sys());
    await t.ok('member_create', { id: 'geo', object: 'budget', object_type: 'package', capacity: 'public' }, sys());
    await assertCountsMatchScan();
    await t.ok('organization_patch', { id: 'beta', name: 'gamma' }, sys());
    assert.deepEqual((await search({ 'facet.field': ['organization'] })).facets.organization, { acme: 1, gamma: 1 });
    await assertCountsMatchScan();
    await t.ok('package_patch', { id: 'draft', state: 'active' }, sys());
    await assertCountsMatchScan();
    await t.ok('package_delete', { id: 'draft' }, sys());
    await assertCountsMatchScan();
    await t.ok('package_create', { name: 'doomed', title: 'Doomed water', owner_org: 'acme', tags: [{ name: 'gone' }] }, sys());
    await t.ok('dataset_purge', { id: 'doomed' }, sys());
    assert.equal((await search({ 'facet.field': ['tags'] })).facets.tags.gone, undefined);
    await assertCountsMatchScan();
    // a rebuild of an emptied index restores the counts
    await t.services.db.query('DELETE FROM package_search_index');
    await rebuildSearchIndex(t.services, { batchSize: 2 });
    await assertCountsMatchScan();
  });

  test('wildcards on lists match the values that exist, only in datasets the caller may read', async () => {
    assert.deepEqual(
      (await search({ q: 'tags:water*' })).results.map((d: any) => d.name),
      ['river'],
    );
    assert.equal((await search({ q: 'tags:watert?ght' })).count, 0);
    assert.equal((await search({ q: 'tags:watert?ght', include_private: true }, as(alice))).count, 1);
    assert.equal((await search({ q: 'res_format:Geo*', include_private: true }, sys())).count, 1);
    assert.equal((await search({ q: 'tags:*ways' })).count, 1);
    await t.ok('package_patch', { id: 'river', tags: [{ name: 'water' }] }, sys());
    assert.equal((await search({ q: 'tags:*ways' })).count, 0);
    assert.equal((await search({ q: 'tags:nothing*' })).count, 0);
  });
});
