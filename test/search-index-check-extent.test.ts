// `svc search-index check` compares each index row's copy of the dataset's spatial extent (migration
// 022) with the dataset's own: a row whose box differs (moved, even with the same area), is missing
// or is left over is reported stale, and a rebuild makes ext_bbox find the dataset again.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { runCliIn } from './helpers/cli.ts';

let t: TestApp;
const sys = () => ({ token: t.sysadminToken });

const polygon = (minx: number, miny: number, maxx: number, maxy: number) =>
  JSON.stringify({
    type: 'Polygon',
    coordinates: [
      [
        [minx, miny],
        [maxx, miny],
        [maxx, maxy],
        [minx, maxy],
        [minx, miny],
      ],
    ],
  });

before(async () => {
  t = await startApp();
  await t.ok('organization_create', { name: 'extent-org' }, sys());
  const datasets: [string, string | null][] = [
    ['extent-lake', polygon(6.1, 46.2, 6.9, 46.5)],
    ['extent-alps', polygon(5.9, 45.8, 10.5, 47.8)],
    ['extent-none', null],
    ['extent-plain', polygon(1, 1, 2, 2)],
  ];
  for (const [name, spatial] of datasets)
    await t.ok('package_create', { name, owner_org: 'extent-org', extras: spatial ? [{ key: 'spatial', value: spatial }] : [] }, sys());
});
after(async () => {
  await t.close();
});

const cli = (...argv: string[]) => runCliIn(t, argv);
const inBox = async (box: string) =>
  (await t.ok('package_search', { ext_bbox: box, rows: 100 })).results.map((d: { name: string }) => d.name).sort();

test('search-index check reports index rows whose extent differs from the dataset, and a rebuild repairs them', async () => {
  assert.equal((await cli('search-index', 'check')).out, 'the search index is up to date\n');
  // the lake's box moved east with its area unchanged (a box's = compares areas only), the Alps'
  // box lost, a box on a dataset that has none
  await t.services.db.query(
    "UPDATE package_search_index SET extent = box(point(16.1, 46.2), point(16.9, 46.5)) WHERE name = 'extent-lake'",
  );
  await t.services.db.query("UPDATE package_search_index SET extent = NULL WHERE name = 'extent-alps'");
  await t.services.db.query("UPDATE package_search_index SET extent = box(point(0, 0), point(1, 1)) WHERE name = 'extent-none'");
  assert.deepEqual(await inBox('6.2,46.3,6.4,46.4'), []);
  const r = await cli('search-index', 'check');
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    'stale\textent-alps\nstale\textent-lake\nstale\textent-none\n0 missing, 3 stale, 0 of purged datasets: run svc search-index rebuild\n',
  );
  assert.equal((await cli('search-index', 'rebuild')).code, 0);
  assert.equal((await cli('search-index', 'check')).out, 'the search index is up to date\n');
  assert.deepEqual(await inBox('6.2,46.3,6.4,46.4'), ['extent-alps', 'extent-lake']);
  assert.deepEqual(await inBox('0.1,0.1,0.5,0.5'), []);
});
