// A chart's points are kept between renders (src/views/chart-cache.ts) until the table is
// written: every kind of write (insert, upsert, update of existing rows, delete) shows in the
// next render. Timestamps along x are put in equal intervals by the database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let editor: TestUser;

before(async () => {
  t = await startApp({ plugins: ['datastore', 'chart'] });
  ({
    users: { views_chart_cache_editor: editor },
  } = await organizationWithTeam(t, { name: 'views-chart-cache-org' }, { views_chart_cache_editor: 'editor' }));
  await t.ok('package_create', { name: 'views-chart-cache', owner_org: 'views-chart-cache-org' }, as(editor));
});
after(async () => {
  await t?.close();
});

/** The y values of the chart's one series, by x. */
async function points(viewId: string): Promise<Record<string, number | null>> {
  const data = await t.ok('chart_view_data', { id: viewId });
  return Object.fromEntries(data.series[0].points.map((p: { x: string; y: number | null }) => [p.x, p.y]));
}

test('every write to the table shows in the next render of its chart', async () => {
  const { resource_id: id } = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'views-chart-cache', name: 'counts' },
      fields: [
        { id: 'k', type: 'text' },
        { id: 'n', type: 'int' },
      ],
      primary_key: ['k'],
      records: [
        { k: 'a', n: 1 },
        { k: 'b', n: 2 },
      ],
    },
    as(editor),
  );
  const view = await t.ok('resource_view_create', { resource_id: id, view_type: 'chart', title: 'N', x: 'k', y: 'n' }, as(editor));
  assert.deepEqual(await points(view.id), { a: 1, b: 2 });
  assert.deepEqual(await points(view.id), { a: 1, b: 2 }, 'the same points again');
  await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records: [{ k: 'c', n: 3 }] }, as(editor));
  assert.deepEqual(await points(view.id), { a: 1, b: 2, c: 3 }, 'after an insert');
  // No row added: the stored row count does not change, the marker must.
  await t.ok('datastore_upsert', { resource_id: id, method: 'update', records: [{ k: 'a', n: 10 }] }, as(editor));
  assert.deepEqual(await points(view.id), { a: 10, b: 2, c: 3 }, 'after an update');
  await t.ok('datastore_upsert', { resource_id: id, method: 'upsert', records: [{ k: 'b', n: 20 }] }, as(editor));
  assert.deepEqual(await points(view.id), { a: 10, b: 20, c: 3 }, 'after an upsert of an existing key');
  await t.ok('datastore_delete', { resource_id: id, filters: { k: 'c' } }, as(editor));
  assert.deepEqual(await points(view.id), { a: 10, b: 20 }, 'after a delete');
  // Another configuration of the same table is computed on its own.
  const max = await t.ok(
    'resource_view_create',
    { resource_id: id, view_type: 'chart', title: 'Max', x: 'k', y: 'n', aggregate: 'count' },
    as(editor),
  );
  assert.deepEqual(await points(max.id), { a: 1, b: 1 });
});

test('timestamps along x: equal intervals whose sums add up to the total, in x order', async () => {
  const start = Date.parse('2024-01-01T00:00:00Z');
  const records = Array.from({ length: 5000 }, (_, i) => ({
    at: new Date(start + i * 61_000).toISOString().slice(0, 19),
    v: i % 7,
  }));
  const { resource_id: id } = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'views-chart-cache', name: 'times' },
      fields: [
        { id: 'at', type: 'timestamp' },
        { id: 'v', type: 'int' },
      ],
      records,
    },
    as(editor),
  );
  const view = await t.ok('resource_view_create', { resource_id: id, view_type: 'chart', title: 'T', x: 'at', y: 'v' }, as(editor));
  const data = await t.ok('chart_view_data', { id: view.id });
  assert.equal(data.xKind, 'time');
  assert.equal(data.bucketed, true);
  const pts: { x: string; y: number }[] = data.series[0].points;
  assert.ok(pts.length <= 2001 && pts.length >= 1900, `${pts.length} points`);
  assert.equal(
    pts.reduce((n, p) => n + p.y, 0),
    records.reduce((n, r) => n + r.v, 0),
  );
  assert.equal(pts[0].x, records[0].at, 'the first interval starts at the first timestamp');
  const xs = pts.map((p) => Date.parse(`${p.x}Z`));
  assert.deepEqual(
    xs,
    [...xs].sort((a, b) => a - b),
  );
});
