// The search counts without shared row locks (migration 023): writers append their count changes,
// reads sum kept and pending ones, a merge folds them in. Through HTTP: a write is not held up by
// another transaction's uncommitted index change, many writers at once never fail, and the counts
// and facets equal a recount (and a scan) after every kind of write, before and after merges.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { mergeCounts } from '../src/search/count-merge.ts';
import { searchEngine } from '../src/search/service.ts';

let t: TestApp;
const sys = () => ({ token: t.sysadminToken });
const FACETS = ['organization', 'tags', 'groups', 'res_format', 'license_id'];
const SCAN = 'num_resources:[0 TO *]';
const search = (data: Record<string, unknown>) => t.ok('package_search', data, sys());

/** The counts read (kept + pending) are what the index holds, and the counted facets are a scan's. */
async function assertExact(): Promise<void> {
  const diff = await t.services.db.query(`
    WITH recount AS (SELECT t.class, t.field, t.value, count(*) AS n FROM package_search_index r,
       package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
     GROUP BY 1, 2, 3)
    (SELECT * FROM recount EXCEPT SELECT class, field, value, n FROM package_search_value_counts_now WHERE n > 0)
    UNION ALL
    (SELECT class, field, value, n FROM package_search_value_counts_now WHERE n <> 0 EXCEPT SELECT * FROM recount)`);
  assert.deepEqual(diff.rows, []);
  for (const extra of [{}, { include_private: true }]) {
    const opts = { 'facet.field': FACETS, 'facet.limit': -1, rows: 0, ...extra };
    const counted = await search(opts);
    const scanned = await search({ ...opts, fq: SCAN });
    assert.equal(counted.count, scanned.count);
    assert.deepEqual(counted.facets, scanned.facets);
    for (const q of ['shared', 'parallel']) {
      assert.equal((await search({ ...opts, q })).count, (await search({ ...opts, q, fq: SCAN })).count, `count of q=${q}`);
    }
  }
}

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.search.counted_word_min': 1 } });
  await t.ok('organization_create', { name: 'cd-org' }, sys());
  await t.ok('organization_create', { name: 'cd-other' }, sys());
  await t.ok('group_create', { name: 'cd-group' }, sys());
  await t.ok('package_create', { name: 'cd-first', title: 'Shared first', owner_org: 'cd-org', tags: [{ name: 'shared' }] }, sys());
  // the word's facets are counted from now on (class public:share)
  await search({ q: 'shared', 'facet.field': ['tags'] });
});
after(async () => {
  await t?.close();
});

describe('search counts as pending changes', () => {
  test('a dataset is created while another transaction holds an uncommitted change of the shared counts', {
    skip: !onPostgres && 'PGlite runs one transaction at a time',
  }, async () => {
    await t.ok('package_create', { name: 'cd-held', title: 'Shared held', owner_org: 'cd-org', tags: [{ name: 'shared' }] }, sys());
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let changed!: () => void;
    const holding = new Promise<void>((resolve) => (changed = resolve));
    // the index row of a public dataset gone, uncommitted: its count changes touch the class totals and the word 'shared'
    const tx = t.services.db.transaction(async (q) => {
      await q.query("DELETE FROM package_search_index WHERE name = 'cd-held'");
      changed();
      await released;
    });
    await holding;
    try {
      const created = await Promise.race([
        t.ok('package_create', { name: 'cd-while', title: 'Shared while', owner_org: 'cd-org', tags: [{ name: 'shared' }] }, sys()),
        new Promise((_, reject) => setTimeout(() => reject(new Error('package_create waited for the other transaction')), 5000)),
      ]);
      assert.equal((created as { name: string }).name, 'cd-while');
      // what that transaction has not committed is not counted; what committed is
      assert.equal((await search({ q: 'shared' })).count, 3);
    } finally {
      release();
      await tx;
      // (a direct write of the index: the result cache is told as the app's writes tell it)
      await searchEngine(t.services).changed(t.services.db);
    }
    assert.equal((await search({ q: 'shared' })).count, 2);
    await t.ok('package_create', { name: 'cd-held-again', title: 'Shared held', owner_org: 'cd-org' }, sys());
    await t.services.db.query("DELETE FROM package_search_index WHERE name = 'cd-held-again'");
    await searchEngine(t.services).changed(t.services.db);
    await t.ok('dataset_purge', { id: 'cd-held' }, sys());
    await t.ok('dataset_purge', { id: 'cd-held-again' }, sys());
    await assertExact();
  });

  test('many writers at once: every call succeeds, and the counts equal a recount before and after the merge', async () => {
    const writers = onPostgres ? 20 : 4;
    const failures: string[] = [];
    const call = async (action: string, data: Record<string, unknown>) => {
      const r = await t.call(action, data, sys());
      if (r.status !== 200) failures.push(`${action} ${r.status} ${JSON.stringify(r.body.error)}`);
      return r.body.result;
    };
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < 3; i++) {
          const name = `cd-p-${w}-${i}`;
          await call('package_create', {
            name,
            title: `Parallel shared ${w} ${i}`,
            notes: `word${w % 5} parallel`,
            owner_org: w % 2 ? 'cd-org' : 'cd-other',
            license_id: w % 3 ? 'cc-by' : 'odc-odbl',
            private: i === 2,
            tags: [{ name: 'shared' }, { name: `tag${(w + i) % 4}` }],
            groups: w % 4 === 0 ? [{ name: 'cd-group' }] : [],
            resources: [{ url: `http://x/${name}.csv`, format: i ? 'CSV' : 'JSON' }],
          });
        }
        await call('package_patch', { id: `cd-p-${w}-0`, tags: [{ name: `tag${w % 3}` }], license_id: 'cc-zero' });
        await call('package_patch', { id: `cd-p-${w}-2`, private: false });
        await call('package_patch', { id: `cd-p-${w}-1`, private: true });
        if (w % 3 === 0) await call('package_delete', { id: `cd-p-${w}-1` });
        if (w % 4 === 1) await call('dataset_purge', { id: `cd-p-${w}-2` });
      }),
    );
    assert.deepEqual(failures, []);
    await assertExact();
    await mergeCounts(t.services.db);
    const pending = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM package_search_value_deltas');
    assert.equal(pending.rows[0].n, 0);
    await assertExact();
  });
});
