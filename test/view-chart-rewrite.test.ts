// A chart computed again after a write guesses that its largest groups and x range did not change
// (one scan of the table instead of two: src/views/chart-query.ts chartPoints). Whatever the write
// did (a row inside the range, a later or earlier x, a small group grown among the largest, a
// null group, rows deleted), the points are those of the table as it is now: each render is
// compared with the points worked out here from the rows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let editor: TestUser;

before(async () => {
  t = await startApp({ plugins: ['datastore', 'chart'] });
  ({
    users: { views_chart_rewrite_editor: editor },
  } = await organizationWithTeam(t, { name: 'views-chart-rewrite-org' }, { views_chart_rewrite_editor: 'editor' }));
  await t.ok('package_create', { name: 'views-chart-rewrite', owner_org: 'views-chart-rewrite-org' }, as(editor));
});
after(async () => {
  await t?.close();
});

interface Row {
  id: number;
  day: string;
  region: string | null;
  v: number;
}

const day = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
const dayNumber = (d: string) => Date.parse(`${d}T00:00:00Z`) / 86_400_000;

/**
 * The chart of mean v by day grouped by region, from the rows: the 10 largest regions (then by
 * name, no value last), each in 2000 / 10 equal intervals of days between the first and last day
 * of those regions, each point at its interval's first day.
 */
function expected(rows: Row[]): { series: Record<string, [string, number][]>; groupsLeftOut: number } {
  const byRegion = new Map<string | null, Row[]>();
  for (const r of rows) byRegion.set(r.region, [...(byRegion.get(r.region) ?? []), r]);
  const order = [...byRegion.entries()].sort(
    ([a, ra], [b, rb]) => rb.length - ra.length || (a === null ? 1 : b === null ? -1 : a < b ? -1 : a > b ? 1 : 0),
  );
  const top = order.slice(0, 10);
  const days = top.flatMap(([, rs]) => rs.map((r) => dayNumber(r.day)));
  const [lo, hi] = [Math.min(...days), Math.max(...days)];
  const n = Math.floor(2000 / top.length);
  const series: Record<string, [string, number][]> = {};
  for (const [region, rs] of top) {
    const buckets = new Map<number, { first: number; vs: number[] }>();
    for (const r of rs) {
      const d = dayNumber(r.day);
      const k = Math.floor(((d - lo) * n) / (hi - lo + 1));
      const b = buckets.get(k) ?? { first: d, vs: [] };
      b.first = Math.min(b.first, d);
      b.vs.push(r.v);
      buckets.set(k, b);
    }
    series[region ?? '(no value)'] = [...buckets.values()]
      .sort((a, b) => a.first - b.first)
      .map((b) => [day(b.first - dayNumber(day(0))), b.vs.reduce((s, v) => s + v, 0) / b.vs.length]);
  }
  return { series, groupsLeftOut: Math.max(0, order.length - 10) };
}

async function rendered(viewId: string): Promise<{ series: Record<string, [string, number][]>; groupsLeftOut: number }> {
  const data = await t.ok('chart_view_data', { id: viewId });
  const series: Record<string, [string, number][]> = {};
  for (const s of data.series) series[s.name] = s.points.map((p: { x: string; y: number }) => [p.x, p.y]);
  return { series, groupsLeftOut: data.groupsLeftOut };
}

function assertSame(got: Awaited<ReturnType<typeof rendered>>, want: ReturnType<typeof expected>, what: string) {
  assert.deepEqual(Object.keys(got.series), Object.keys(want.series), `${what}: the series, largest first`);
  for (const [name, points] of Object.entries(want.series)) {
    const mine = got.series[name];
    assert.deepEqual(
      mine.map(([d]) => d),
      points.map(([d]) => d),
      `${what}: the days of ${name}`,
    );
    mine.forEach(([d, y], i) => assert.ok(Math.abs(y - points[i][1]) < 1e-9, `${what}: ${name} on ${d}: ${y}, not ${points[i][1]}`));
  }
  assert.equal(got.groupsLeftOut, want.groupsLeftOut, `${what}: groups left out`);
}

test('after every kind of write, a grouped chart by date shows the points of the table as it is now', async () => {
  // Twelve regions over twenty days; region r01 has the most rows, r12 the fewest.
  const rows: Row[] = [];
  let id = 0;
  for (let d = 0; d < 20; d++)
    for (let r = 1; r <= 12; r++)
      for (let k = 0; k < 13 - r; k++)
        rows.push({ id: ++id, day: day(d + (r % 3)), region: `r${String(r).padStart(2, '0')}`, v: (d * 7 + r * 3 + k) % 50 });
  const { resource_id: table } = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'views-chart-rewrite', name: 'regions' },
      fields: [
        { id: 'id', type: 'int' },
        { id: 'day', type: 'date' },
        { id: 'region', type: 'text' },
        { id: 'v', type: 'int' },
      ],
      primary_key: ['id'],
      records: rows,
    },
    as(editor),
  );
  const view = await t.ok(
    'resource_view_create',
    { resource_id: table, view_type: 'chart', title: 'Mean v', x: 'day', y: 'v', group_by: 'region', aggregate: 'mean' },
    as(editor),
  );
  assertSame(await rendered(view.id), expected(rows), 'as created');
  const insert = async (what: string, added: Omit<Row, 'id'>[]) => {
    const records = added.map((r) => ({ ...r, id: ++id }));
    rows.push(...records);
    await t.ok('datastore_upsert', { resource_id: table, method: 'insert', records }, as(editor));
    assertSame(await rendered(view.id), expected(rows), what);
  };
  await insert('a row inside the range', [{ day: day(5), region: 'r01', v: 1000 }]);
  await insert('a row of a region left out', [{ day: day(30), region: 'r12', v: 7 }]);
  await insert('a later day (intervals of two days)', [{ day: day(400), region: 'r02', v: 3 }]);
  await insert('an earlier day', [{ day: day(-3), region: 'r05', v: 4 }]);
  await insert(
    'a small region grown among the largest',
    Array.from({ length: 25 }, (_, i) => ({ day: day(i % 20), region: 'r11', v: i })),
  );
  await insert(
    'rows of no region, among the largest',
    Array.from({ length: 300 }, (_, i) => ({ day: day(i % 20), region: null, v: i % 9 })),
  );
  const update = rows.find((r) => r.region === 'r01' && r.day === day(5))!;
  update.v = -50;
  await t.ok('datastore_upsert', { resource_id: table, method: 'update', records: [{ id: update.id, v: -50 }] }, as(editor));
  assertSame(await rendered(view.id), expected(rows), 'after an update');
  await t.ok('datastore_delete', { resource_id: table, filters: { day: day(400) } }, as(editor));
  rows.splice(
    rows.findIndex((r) => r.day === day(400)),
    1,
  );
  assertSame(await rendered(view.id), expected(rows), 'the last day deleted');
});

test('a chart with no group-by, by number: a value beyond the range and rows deleted show at once', async () => {
  const rows = Array.from({ length: 3000 }, (_, i) => ({ n: i, v: i % 10 }));
  const { resource_id: table } = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'views-chart-rewrite', name: 'numbers' },
      fields: [
        { id: 'n', type: 'int' },
        { id: 'v', type: 'int' },
      ],
      records: rows,
    },
    as(editor),
  );
  const view = await t.ok('resource_view_create', { resource_id: table, view_type: 'chart', title: 'Sum v', x: 'n', y: 'v' }, as(editor));
  const total = async () => {
    const data = await t.ok('chart_view_data', { id: view.id });
    const pts: { x: number; y: number }[] = data.series[0].points;
    return { first: pts[0].x, sum: pts.reduce((s, p) => s + p.y, 0), count: pts.length };
  };
  const initial = await total();
  assert.deepEqual({ first: initial.first, sum: initial.sum }, { first: 0, sum: 13500 });
  assert.ok(initial.count >= 2000 && initial.count <= 2001, `${initial.count} points`);
  await t.ok('datastore_upsert', { resource_id: table, method: 'insert', records: [{ n: 5, v: 1 }] }, as(editor));
  assert.deepEqual(await total(), { ...initial, sum: 13501 }, 'a row inside the range');
  await t.ok('datastore_upsert', { resource_id: table, method: 'insert', records: [{ n: 9000, v: 100 }] }, as(editor));
  const wider = await total();
  assert.equal(wider.sum, 13601, 'a value beyond the range');
  assert.ok(wider.count < 2000, `the intervals are wider: ${wider.count} points`);
  for (const n of [0, 1, 2, 9000]) await t.ok('datastore_delete', { resource_id: table, filters: { n } }, as(editor));
  const narrower = await total();
  assert.deepEqual({ first: narrower.first, sum: narrower.sum }, { first: 3, sum: 13498 }, 'the smallest values deleted');
});
