// package_search (query language, filters, sorting, paging, facets, permissions, index updates),
// resource_search, tag_search/tag_autocomplete, format_autocomplete, through HTTP.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { rebuildSearchIndex } from '../src/search/service.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U; // admin of acme
let eve: U; // belongs to no organization
const as = (u: U) => ({ token: u.token });
const sys = () => ({ token: t.sysadminToken });

async function search(data: Record<string, unknown> = {}, opts: { token?: string; method?: 'GET' | 'POST' } = {}) {
  return t.ok('package_search', data, opts);
}
const names = (r: any) => r.results.map((d: any) => d.name).sort();

before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('alice');
  eve = await t.user('eve');
  await t.ok('organization_create', { name: 'acme', title: 'Acme Works' }, as(alice));
  await t.ok('organization_create', { name: 'beta', title: 'Beta Institute' }, sys());
  await t.ok('group_create', { name: 'geo', title: 'Geography' }, sys());
  const mk = (d: Record<string, unknown>, who = sys()) => t.ok('package_create', d, who);
  await mk({
    name: 'river-levels',
    title: 'River water levels',
    owner_org: 'acme',
    notes: 'Daily measurements of river data',
    tags: [{ name: 'water' }, { name: 'hydrology' }],
    extras: [{ key: 'region', value: 'north' }],
    groups: [{ name: 'geo' }],
    resources: [{ url: 'http://x/levels.csv', format: 'CSV', name: 'Levels table', hash: 'abcdef123' }],
  });
  await mk({
    name: 'air-quality',
    title: 'Air quality index',
    owner_org: 'beta',
    notes: 'Hourly pollution data',
    license_id: 'cc-by',
    tags: [{ name: 'air' }, { name: 'health' }],
    resources: [
      { url: 'http://x/air.json', format: 'JSON', name: 'Air feed' },
      { url: 'http://x/air.csv', format: 'CSV', name: 'Air table' },
    ],
  });
  await mk({
    name: 'city-budget',
    title: 'City budget 2020',
    owner_org: 'acme',
    notes: 'The budget of the city',
    tags: [{ name: 'finance' }],
    resources: [{ url: 'http://x/b.xlsx', format: 'XLSX' }],
  });
  await mk({
    name: 'old-rainfall',
    title: 'Rainfall records',
    owner_org: 'beta',
    notes: 'Historic rainfall data, rainfall per day',
    tags: [{ name: 'water' }, { name: 'climate' }],
    extras: [{ key: 'region', value: 'south' }],
  });
  await mk({ name: 'weather', title: 'Weather stations', owner_org: 'beta', notes: 'Stations that measure rainfall' });
  await mk(
    {
      name: 'secret-plans',
      title: 'Secret water plans',
      owner_org: 'acme',
      private: true,
      tags: [{ name: 'water' }, { name: 'classified' }],
      resources: [{ url: 'http://x/s.geojson', format: 'GeoJSON' }],
    },
    as(alice),
  );
  await mk({ name: 'draft-ds', title: 'Draft about water', owner_org: 'acme', state: 'draft', tags: [{ name: 'water' }] });
  // a draft of alice's own (sysadmins set state; alice creates one and the draft is kept by state patching through sysadmin)
  const own = await mk({ name: 'alice-draft', title: 'Alice water draft', owner_org: 'acme', tags: [{ name: 'water' }] }, as(alice));
  await t.ok('package_patch', { id: own.id, state: 'draft' }, sys());
});
after(async () => {
  await t?.close();
});

const PUBLIC = ['air-quality', 'city-budget', 'old-rainfall', 'river-levels', 'weather'];

describe('query language', () => {
  test('default q is *:* and results are package_show dicts', async () => {
    const r = await search();
    assert.equal(r.count, 5);
    assert.deepEqual(names(r), PUBLIC);
    for (const found of r.results) assert.deepEqual(found, await t.ok('package_show', { id: found.name }));
    assert.deepEqual(r.search_facets, {});
    assert.deepEqual(r.facets, {});
    assert.equal(r.sort, 'score desc, metadata_modified desc');
    assert.equal((await search({ q: '*:*' })).count, 5);
    assert.equal((await search({ q: '' })).count, 5);
  });

  test('free text over text fields, name and title weighted higher', async () => {
    assert.deepEqual(names(await search({ q: 'water' })), ['old-rainfall', 'river-levels']);
    const r = await search({ q: 'rainfall' });
    assert.deepEqual(
      r.results.map((d: any) => d.name),
      ['old-rainfall', 'weather'],
    );
    assert.deepEqual(names(await search({ q: 'measurements' })), ['river-levels', 'weather']); // stemmed: measure
    assert.deepEqual(names(await search({ q: 'the budget' })), ['city-budget']); // stop word dropped
    assert.deepEqual(names(await search({ q: 'Acme' })), ['city-budget', 'river-levels']); // organization title
    assert.deepEqual(names(await search({ q: 'text:hydrology' })), ['river-levels']);
    assert.deepEqual(names(await search({ q: 'title:rainfall' })), ['old-rainfall']);
    assert.deepEqual(names(await search({ q: 'notes:rainfall' })), ['old-rainfall', 'weather']);
  });

  test('field:value on exact fields and extras', async () => {
    assert.deepEqual(names(await search({ q: 'tags:water' })), ['old-rainfall', 'river-levels']);
    assert.deepEqual(names(await search({ q: 'organization:beta' })), ['air-quality', 'old-rainfall', 'weather']);
    assert.deepEqual(names(await search({ q: 'res_format:CSV' })), ['air-quality', 'river-levels']);
    assert.deepEqual(names(await search({ q: 'name:city-budget' })), ['city-budget']);
    assert.deepEqual(names(await search({ q: 'groups:geo' })), ['river-levels']);
    assert.deepEqual(names(await search({ q: 'license_id:cc-by' })), ['air-quality']);
    assert.deepEqual(names(await search({ q: 'extras_region:north' })), ['river-levels']);
    assert.deepEqual(names(await search({ q: 'region:south' })), ['old-rainfall']);
    assert.deepEqual(names(await search({ q: 'capacity:public AND res_name:feed' })), ['air-quality']);
    assert.equal((await search({ q: 'tags:Water' })).count, 0); // exact strings are case-sensitive
  });

  test('quoted phrases', async () => {
    assert.deepEqual(names(await search({ q: '"water levels"' })), ['river-levels']);
    assert.equal((await search({ q: '"levels water"' })).count, 0);
    assert.deepEqual(names(await search({ q: 'title:"quality index"' })), ['air-quality']);
  });

  test('AND, OR, NOT, +, - and parentheses', async () => {
    assert.deepEqual(names(await search({ q: 'tags:water AND organization:acme' })), ['river-levels']);
    assert.deepEqual(names(await search({ q: 'tags:water && organization:acme' })), ['river-levels']);
    assert.deepEqual(names(await search({ q: 'tags:water OR tags:finance' })), ['city-budget', 'old-rainfall', 'river-levels']);
    assert.deepEqual(names(await search({ q: 'tags:water -organization:acme' })), ['old-rainfall']);
    assert.deepEqual(names(await search({ q: 'NOT tags:water' })), ['air-quality', 'city-budget', 'weather']);
    assert.deepEqual(names(await search({ q: '-tags:water' })), ['air-quality', 'city-budget', 'weather']);
    assert.deepEqual(names(await search({ q: '+tags:water +organization:beta' })), ['old-rainfall']);
    assert.deepEqual(names(await search({ q: '(tags:air OR tags:finance) AND organization:beta' })), ['air-quality']);
    assert.deepEqual(names(await search({ q: 'tags:(air OR finance)' })), ['air-quality', 'city-budget']);
    assert.deepEqual(names(await search({ q: 'water rainfall' })), ['old-rainfall']); // default operator AND
    assert.deepEqual(names(await search({ q: 'NOT version:1.0 AND organization:acme' })), ['city-budget', 'river-levels']);
  });

  test('* and ? wildcards', async () => {
    assert.deepEqual(names(await search({ q: 'name:city-*' })), ['city-budget']);
    assert.deepEqual(names(await search({ q: 'name:air-qualit?' })), ['air-quality']);
    assert.deepEqual(names(await search({ q: 'tags:hydro*' })), ['river-levels']);
    assert.deepEqual(names(await search({ q: 'rainf*' })), ['old-rainfall', 'weather']);
    assert.deepEqual(names(await search({ q: 'extras_region:*' })), ['old-rainfall', 'river-levels']);
    assert.deepEqual(names(await search({ q: 'region:no*' })), ['river-levels']);
  });

  test('ranges on numbers, dates and strings', async () => {
    assert.deepEqual(names(await search({ q: 'num_resources:[2 TO *]' })), ['air-quality']);
    assert.deepEqual(names(await search({ q: 'num_resources:{0 TO 2}' })), ['city-budget', 'river-levels']);
    assert.equal((await search({ q: 'metadata_modified:[NOW-1DAY TO NOW+1DAY]' })).count, 5);
    assert.equal((await search({ q: 'metadata_created:[* TO 2000-01-01T00:00:00Z]' })).count, 0);
    assert.equal((await search({ q: 'metadata_modified:[2000-01-01 TO *]' })).count, 5);
    assert.deepEqual(names(await search({ q: 'name:[a TO c]' })), ['air-quality']);
    assert.deepEqual(names(await search({ q: 'name:{air-quality TO old-rainfall}' })), ['city-budget']);
  });

  test('malformed queries are a Search Query Error naming the problem', async () => {
    for (const q of [
      '(water',
      'water AND',
      'name:',
      '"unclosed',
      'num_resources:[1 TO',
      'num_resources:abc',
      'metadata_modified:[bad TO *]',
      'a)',
      'title:[a TO b]',
      '^2',
      'metadata_modified:[NOW-1FORTNIGHT TO *]',
      'AND water',
      '()',
      'tags:(a name:b)',
      '('.repeat(5000) + 'x' + ')'.repeat(5000),
      '-'.repeat(5000) + 'x',
      'foo\\',
    ]) {
      const r = await t.call('package_search', { q });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error!.__type, 'Search Query Error', q);
      assert.match(r.body.error!.message, /^Search Query is invalid: /, q);
    }
    const r = await t.call('package_search', { q: '(water' });
    assert.match(r.body.error!.message, /expected "\)"/);
    const f = await t.call('package_search', { fq: 'tags:(water' });
    assert.equal(f.body.error!.__type, 'Search Query Error');
  });

  test('fq and fq_list filter without changing the score', async () => {
    assert.deepEqual(names(await search({ q: 'water', fq: 'organization:beta' })), ['old-rainfall']);
    assert.deepEqual(names(await search({ fq: 'tags:water', fq_list: ['organization:acme'] })), ['river-levels']);
    assert.deepEqual(names(await search({ fq_list: ['organization:beta', '-tags:climate'] }, { method: 'GET' })), [
      'air-quality',
      'weather',
    ]);
    const r = await search({ q: 'rainfall', fq: 'rainfall' });
    assert.deepEqual(
      r.results.map((d: any) => d.name),
      ['old-rainfall', 'weather'],
    );
  });
});

describe('sorting and paging', () => {
  test('sort by name, title_string, metadata_modified; unknown fields and directions are errors', async () => {
    assert.deepEqual(
      (await search({ sort: 'name asc' })).results.map((d: any) => d.name),
      PUBLIC,
    );
    assert.deepEqual(
      (await search({ sort: 'name desc' })).results.map((d: any) => d.name),
      [...PUBLIC].reverse(),
    );
    const byModified = (await search({ sort: 'metadata_modified desc' })).results.map((d: any) => d.metadata_modified);
    assert.deepEqual(byModified, [...byModified].sort().reverse());
    assert.equal((await search({ sort: 'title_string asc' })).results[0].name, 'air-quality');
    assert.equal((await search({ sort: 'num_resources desc, name asc' })).results[0].name, 'air-quality');
    // score first, then keys the matches carry (an extra, the capacity expression): same results
    const matching = names(await search({ q: 'rainfall OR river OR stations' }));
    for (const sort of ['score desc, extras_region desc', 'score desc, capacity asc, name desc', 'score desc, title_string asc']) {
      const r = await search({ q: 'rainfall OR river OR stations', sort });
      assert.equal(r.count, 3, sort);
      assert.deepEqual(names(r), matching, sort);
    }
    for (const sort of ['nosuchfield asc', 'name', 'name upward', 'tags asc', '']) {
      const r = await t.call('package_search', { sort: sort || ' , ' });
      assert.equal(r.status, 400, sort);
      assert.equal(r.body.error!.__type, 'Search Query Error', sort);
    }
  });

  test('rows and start page through everything; rows is clamped to svc.search.rows_max', async () => {
    const seen: string[] = [];
    for (let start = 0; ; start += 2) {
      const r = await search({ rows: 2, start, sort: 'name asc' }, { method: 'GET' });
      if (!r.results.length) break;
      assert.equal(r.count, 5);
      seen.push(...r.results.map((d: any) => d.name));
    }
    assert.deepEqual(seen, PUBLIC);
    t.services.config.set('svc.search.rows_max', 3);
    try {
      assert.equal((await search({ rows: 100 })).results.length, 3);
    } finally {
      t.services.config.set('svc.search.rows_max', 1000);
    }
    assert.equal((await search({ rows: 0 })).results.length, 0);
    assert.equal((await search({ rows: 0 })).count, 5);
    const neg = await t.call('package_search', { rows: -1 });
    assert.equal(neg.body.error!.__type, 'Validation Error');
  });

  test('ckanapi paging (start/rows=1000 until an empty page) over GET returns every dataset once', async () => {
    const all: string[] = [];
    for (let start = 0; ; start += 1000) {
      const r = await search({ q: '*:*', fq: '', rows: 1000, start }, { method: 'GET', token: t.sysadminToken });
      if (!r.results.length) break;
      all.push(...r.results.map((d: any) => d.name));
    }
    assert.deepEqual(all.sort(), PUBLIC);
  });

  test('paging a ranked broad query beyond the score window repeats and skips nothing', async () => {
    t.services.config.set('svc.search.rank_window', 2);
    try {
      const full = (await search({ q: 'data OR rainfall OR budget OR stations OR quality', rows: 100 })).results.map((d: any) => d.name);
      const paged: string[] = [];
      const counts = new Set<number>();
      for (let start = 0; start < full.length + 1; start++) {
        const page = await search({ q: 'data OR rainfall OR budget OR stations OR quality', rows: 1, start });
        paged.push(...page.results.map((d: any) => d.name));
        counts.add(page.count);
      }
      assert.deepEqual(paged, full);
      // pages inside the window (count and page in one statement) and beyond it count the same
      assert.deepEqual([...counts], [5]);
      assert.equal(new Set(full).size, full.length);
      assert.equal(full.length, 5);
    } finally {
      t.services.config.set('svc.search.rank_window', 1000);
    }
  });
});

describe('facets', () => {
  test('facet.field on tags, organization, res_format, license_id, groups, extras', async () => {
    const r = await search({ 'facet.field': ['tags', 'organization', 'res_format', 'license_id', 'groups', 'extras_region'] });
    assert.deepEqual(r.facets.tags, { water: 2, hydrology: 1, air: 1, health: 1, finance: 1, climate: 1 });
    assert.deepEqual(r.facets.organization, { beta: 3, acme: 2 });
    assert.deepEqual(r.facets.res_format, { CSV: 2, JSON: 1, XLSX: 1 });
    assert.deepEqual(r.facets.extras_region, { north: 1, south: 1 });
    const org = r.search_facets.organization;
    assert.equal(org.title, 'organization');
    assert.deepEqual(
      org.items,
      [
        { count: 2, display_name: 'Acme Works', name: 'acme' },
        { count: 3, display_name: 'Beta Institute', name: 'beta' },
      ].sort((a, b) => (a.display_name < b.display_name ? 1 : -1)),
    );
    assert.deepEqual(r.search_facets.groups.items, [{ count: 1, display_name: 'Geography', name: 'geo' }]);
    assert.equal(r.search_facets.license_id.items[0].display_name, 'Creative Commons Attribution');
    // the facet counts follow q and fq
    const f = await search({ q: 'tags:water', 'facet.field': '["organization"]' }, { method: 'GET' });
    assert.deepEqual(f.facets.organization, { acme: 1, beta: 1 });
  });

  test('facet.limit (default search.facets.limit, negative: all) and facet.mincount', async () => {
    assert.equal(Object.keys((await search({ 'facet.field': ['tags'], 'facet.limit': 1 })).facets.tags).length, 1);
    assert.deepEqual((await search({ 'facet.field': ['tags'], 'facet.limit': 1 })).facets.tags, { water: 2 });
    assert.equal(Object.keys((await search({ 'facet.field': ['tags'], 'facet.limit': -1 })).facets.tags).length, 6);
    assert.deepEqual((await search({ 'facet.field': ['tags'], 'facet.mincount': 2 })).facets.tags, { water: 2 });
    t.services.config.set('search.facets.limit', 2);
    try {
      assert.equal(Object.keys((await search({ 'facet.field': ['tags'] })).facets.tags).length, 2);
    } finally {
      t.services.config.set('search.facets.limit', 50);
    }
    assert.deepEqual((await search({ 'facet.field': ['tags'], facet: 'false' })).facets, {});
    const bad = await t.call('package_search', { 'facet.field': 'tags' });
    assert.equal(bad.body.error!.__type, 'Validation Error');
  });
});

describe('permissions', () => {
  test('private datasets: only for members with include_private; never counted or faceted for others', async () => {
    const facet = { 'facet.field': ['tags', 'res_format', 'organization'], include_private: true };
    for (const who of [undefined, as(eve)]) {
      const r = await search({ q: 'water', ...facet }, who ?? {});
      assert.deepEqual(names(r), ['old-rainfall', 'river-levels']);
      assert.equal(r.facets.tags.classified, undefined);
      assert.equal(r.facets.res_format.GeoJSON, undefined);
      assert.equal(r.facets.tags.water, 2);
    }
    const a = await search({ q: 'water', ...facet }, as(alice));
    assert.deepEqual(names(a), ['old-rainfall', 'river-levels', 'secret-plans']);
    assert.equal(a.facets.tags.water, 3);
    assert.equal(a.facets.tags.classified, 1);
    assert.equal((await search({ q: 'water' }, as(alice))).count, 2); // not without include_private
    assert.equal((await search({ q: 'water', include_private: true }, sys())).count, 3);
    assert.equal((await search({ q: 'capacity:private', include_private: true }, as(eve))).count, 0);
  });

  test('collaborators find the private datasets they collaborate on (while collaborators are enabled)', async () => {
    t.services.config.set('svc.auth.allow_dataset_collaborators', true);
    try {
      await t.ok('package_collaborator_create', { id: 'secret-plans', user_id: 'eve', capacity: 'member' }, as(alice));
      assert.deepEqual(names(await search({ q: 'tags:classified', include_private: true }, as(eve))), ['secret-plans']);
      assert.equal((await search({ q: 'tags:classified' }, as(eve))).count, 0);
    } finally {
      t.services.config.set('svc.auth.allow_dataset_collaborators', false);
    }
    assert.equal((await search({ q: 'tags:classified', include_private: true }, as(eve))).count, 0);
  });

  test("drafts: only the caller's own with include_drafts, all for sysadmins", async () => {
    assert.deepEqual(names(await search({ q: 'tags:water', include_drafts: true }, as(alice))), [
      'alice-draft',
      'old-rainfall',
      'river-levels',
    ]);
    assert.deepEqual(names(await search({ q: 'tags:water', include_drafts: true }, as(eve))), ['old-rainfall', 'river-levels']);
    assert.deepEqual(names(await search({ q: 'tags:water', include_drafts: true })), ['old-rainfall', 'river-levels']);
    assert.deepEqual(names(await search({ q: 'tags:water', include_drafts: true }, sys())), [
      'alice-draft',
      'draft-ds',
      'old-rainfall',
      'river-levels',
    ]);
    const f = await search({ 'facet.field': ['tags'], include_drafts: true, include_private: true }, as(eve));
    assert.equal(f.facets.tags.water, 2);
    // a filter on state does not open other people's drafts
    assert.equal((await search({ fq: '+state:draft', include_drafts: true }, as(eve))).count, 0);
  });

  test('deleted datasets leave the index; include_deleted finds them when svc.search.remove_deleted_packages is false', async () => {
    await t.ok('package_create', { name: 'to-delete', title: 'Doomed water', owner_org: 'acme' }, sys());
    assert.equal((await search({ q: 'doomed' })).count, 1);
    await t.ok('package_delete', { id: 'to-delete' }, sys());
    assert.equal((await search({ q: 'doomed', include_deleted: true }, sys())).count, 0);
    t.services.config.set('svc.search.remove_deleted_packages', false);
    try {
      await t.ok('package_patch', { id: 'to-delete', notes: 'still deleted' }, sys());
      assert.equal((await search({ q: 'doomed' }, sys())).count, 0);
      assert.equal((await search({ q: 'doomed', include_deleted: true }, sys())).count, 1);
      assert.equal((await search({ q: 'doomed', include_deleted: true }, as(eve))).count, 0);
    } finally {
      t.services.config.set('svc.search.remove_deleted_packages', true);
    }
    await t.ok('dataset_purge', { id: 'to-delete' }, sys());
    assert.equal((await search({ q: 'doomed', include_deleted: true }, sys())).count, 0);
  });
});

describe('parameters', () => {
  test('unknown parameters are a Validation Error naming them; ext_* and Solr tuning parameters are accepted', async () => {
    const r = await t.call('package_search', { q: 'water', bogus: 1, other: 'x' });
    assert.equal(r.status, 409);
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.match(r.body.error!.message, /bogus/);
    assert.ok(r.body.error!.bogus);
    assert.ok(r.body.error!.other);
    await search({ q: 'water', ext_bbox: '1,2,3,4', defType: 'dismax', qf: 'name^4', mm: '1', wt: 'json' });
  });

  test('fl returns only the named fields', async () => {
    const r = await search({ q: 'name:river-levels', fl: 'name,extras_region' });
    assert.deepEqual(r.results, [{ name: 'river-levels', region: 'north' }]);
    const ids = await search({ q: 'name:river-levels', fl: ['id'] });
    assert.deepEqual(Object.keys(ids.results[0]), ['id']);
  });
});

describe('index follows every write', () => {
  test('update, patch, resources, group membership', async () => {
    await t.ok('package_create', { name: 'moving', title: 'Moving target', owner_org: 'beta' }, sys());
    await t.ok('package_patch', { id: 'moving', title: 'Glacier melt' }, sys());
    assert.deepEqual(names(await search({ q: 'glacier' })), ['moving']);
    assert.equal((await search({ q: 'title:moving' })).count, 0);
    await t.ok('resource_create', { package_id: 'moving', url: 'http://x/m.parquet', format: 'Parquet' }, sys());
    assert.deepEqual(names(await search({ q: 'res_format:Parquet' })), ['moving']);
    await t.ok('member_create', { id: 'geo', object: 'moving', object_type: 'package', capacity: 'public' }, sys());
    assert.deepEqual(names(await search({ q: 'groups:geo' })), ['moving', 'river-levels']);
    await t.ok('package_update', { name: 'moving', title: 'Glacier melt', owner_org: 'beta', private: true }, sys());
    assert.equal((await search({ q: 'glacier' })).count, 0);
    assert.equal((await search({ q: 'glacier', include_private: true }, sys())).count, 1);
    await t.ok('dataset_purge', { id: 'moving' }, sys());
    assert.equal((await search({ q: 'glacier', include_private: true }, sys())).count, 0);
  });

  test('renaming or retitling an organization or group reindexes its datasets', async () => {
    await t.ok('organization_create', { name: 'gamma', title: 'Gamma' }, sys());
    await t.ok('group_create', { name: 'grp-x', title: 'Group X' }, sys());
    await t.ok('package_create', { name: 'gamma-ds', owner_org: 'gamma', groups: [{ name: 'grp-x' }] }, sys());
    await t.ok('organization_patch', { id: 'gamma', name: 'delta', title: 'Zeppelin Office' }, sys());
    assert.deepEqual(names(await search({ q: 'organization:delta' })), ['gamma-ds']);
    assert.deepEqual(names(await search({ q: 'zeppelin' })), ['gamma-ds']);
    await t.ok('group_patch', { id: 'grp-x', title: 'Quasar Club' }, sys());
    assert.deepEqual(names(await search({ q: 'quasar' })), ['gamma-ds']);
    await t.ok('dataset_purge', { id: 'gamma-ds' }, sys());
  });

  test('rebuild (all, or only the missing rows) restores the index', async () => {
    await t.services.db.query("DELETE FROM package_search_index WHERE name IN ('weather', 'city-budget')");
    await t.services.db.query("SELECT nextval('package_search_generation')"); // a change the engine did not make itself
    assert.equal((await search()).count, 3);
    assert.equal(await rebuildSearchIndex(t.services, { onlyMissing: true }), 2);
    assert.equal((await search()).count, 5);
    await t.services.db.query('DELETE FROM package_search_index');
    await t.services.db.query("SELECT nextval('package_search_generation')");
    await rebuildSearchIndex(t.services, { batchSize: 3 });
    assert.equal((await search()).count, 5);
    assert.deepEqual(names(await search({ q: 'tags:water', include_private: true }, as(alice))), [
      'old-rainfall',
      'river-levels',
      'secret-plans',
    ]);
  });
});

describe('resource_search, tag_search, autocompletes', () => {
  test('resource_search: field:term substrings, hash prefix, AND, public datasets only, order and paging', async () => {
    let r = await t.ok('resource_search', { query: 'format:csv' });
    assert.equal(r.count, 2);
    r = await t.ok('resource_search', { query: ['format:csv', 'name:LEVELS'] });
    assert.deepEqual(
      r.results.map((x: any) => x.name),
      ['Levels table'],
    );
    assert.equal((await t.ok('resource_search', { query: 'hash:abc' })).count, 1);
    assert.equal((await t.ok('resource_search', { query: 'hash:bcd' })).count, 0);
    assert.equal((await t.ok('resource_search', { query: 'format:geojson' }, sys())).count, 0); // private dataset
    r = await t.ok('resource_search', { query: 'url:http', order_by: 'name', limit: 1, offset: 1 });
    assert.equal(r.count, 4);
    assert.equal(r.results.length, 1);
    assert.equal(r.results[0].name, 'Air table');
    const bad = await t.call('resource_search', { query: 'nosuch:x' });
    assert.equal(bad.status, 409);
    assert.match(JSON.stringify(bad.body.error), /Field \\"nosuch\\" not recognised in resource_search\./);
    assert.match(JSON.stringify((await t.call('resource_search', { query: 'nocolon' })).body.error), /Must be <field>:<value> pair/);
  });

  test('resource_search on svc.extra_resource_fields', async () => {
    await t.ok('resource_create', { package_id: 'weather', url: 'http://x/w.csv', station_code: 'WX-17' }, sys());
    assert.equal((await t.call('resource_search', { query: 'station_code:wx' })).status, 409);
    t.services.config.set('svc.extra_resource_fields', ['station_code']);
    try {
      assert.equal((await t.ok('resource_search', { query: 'station_code:wx-1' })).count, 1);
    } finally {
      t.services.config.set('svc.extra_resource_fields', []);
    }
  });

  test('tag_search and tag_autocomplete: only tags of datasets the caller may read', async () => {
    let r = await t.ok('tag_search', { query: 'at' });
    assert.deepEqual(
      r.results.map((x: any) => x.name),
      ['climate', 'water'],
    );
    assert.equal(r.count, 2);
    assert.deepEqual(Object.keys(r.results[0]).sort(), ['id', 'name', 'vocabulary_id']);
    assert.equal((await t.ok('tag_search', { query: 'classif' })).count, 0);
    assert.equal((await t.ok('tag_search', { query: 'classif' }, as(alice))).count, 1);
    r = await t.ok('tag_search', { query: 'at', limit: 1, offset: 1 });
    assert.deepEqual(
      r.results.map((x: any) => x.name),
      ['water'],
    );
    assert.equal(r.count, 2);
    assert.deepEqual(await t.ok('tag_autocomplete', { query: 'WAT' }), ['water']);
    assert.deepEqual(await t.ok('tag_autocomplete', { q: 'hydro' }, { method: 'GET' }), ['hydrology']);
  });

  test('format_autocomplete counts only public datasets; package and group autocompletes', async () => {
    assert.deepEqual(await t.ok('format_autocomplete', { q: 'geoj' }), []);
    assert.deepEqual(await t.ok('format_autocomplete', { q: 'cs' }), ['csv']);
    const p = await t.ok('package_autocomplete', { q: 'secret' });
    assert.deepEqual(p, []);
    assert.equal((await t.ok('package_autocomplete', { q: 'river' }))[0].name, 'river-levels');
    assert.equal((await t.ok('organization_autocomplete', { q: 'acm' }))[0].name, 'acme');
    assert.equal((await t.ok('group_autocomplete', { q: 'geo' }))[0].name, 'geo');
  });
});

test('a search on a new site before its first dataset does not hide that dataset afterwards', async () => {
  const fresh = await startApp({ plugins: [], config: { 'svc.auth.create_unowned_dataset': true } });
  try {
    assert.equal((await fresh.ok('package_search', { q: 'first' })).count, 0);
    await fresh.ok('package_create', { name: 'first-one', title: 'The first' }, { token: fresh.sysadminToken });
    assert.deepEqual(
      (await fresh.ok('package_search', { q: 'first' })).results.map((d: { name: string }) => d.name),
      ['first-one'],
    );
  } finally {
    await fresh.close();
  }
});
