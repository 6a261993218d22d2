// The chart view (view_type chart) over HTTP: options checked against the data store table at
// resource_view_create (errors naming the option), columns picked when none are named, points
// aggregated in the database (chart_view_data, at most 2,000), the chart drawn as SVG with its
// data table on the resource page, and that page axe-clean in Chromium.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { axeViolations, browserMissing, describeViolations, startBrowserApp, type BrowserApp } from './helpers/browser.ts';

const PLUGINS = ['datastore', 'datatables_view', 'chart'];
const REGIONS = ['north', 'south', 'east'];
/** Ten days × three regions; amount and visits follow from the day and region. */
const RECORDS = Array.from({ length: 10 }, (_, d) =>
  REGIONS.map((region, r) => ({
    day: `2024-03-${String(d + 1).padStart(2, '0')}`,
    region,
    amount: (d + 1) * (r + 1) * 1.5,
    visits: d * 10 + r,
    note: `n${d}`,
  })),
).flat();

let t: TestApp;
let editor: TestUser;
let outsider: TestUser;

/** A data store resource of the dataset with these fields and records. */
async function table(pkg: string, fields: { id: string; type: string }[], records: Record<string, unknown>[]): Promise<string> {
  const r = await t.ok('datastore_create', { resource: { package_id: pkg, name: 'sales' }, fields, records }, as(editor));
  return r.resource_id;
}
const SALES_FIELDS = [
  { id: 'day', type: 'date' },
  { id: 'region', type: 'text' },
  { id: 'amount', type: 'numeric' },
  { id: 'visits', type: 'int' },
  { id: 'note', type: 'text' },
];

let sales: string;

before(async () => {
  t = await startApp({ plugins: PLUGINS, config: { 'svc.views.default_views': ['datatables_view', 'chart'] } });
  ({
    users: { views_chart_editor: editor },
  } = await organizationWithTeam(t, { name: 'views-chart-org' }, { views_chart_editor: 'editor' }));
  outsider = await t.user('views_chart_outsider');
  await t.ok('package_create', { name: 'views-chart-public', owner_org: 'views-chart-org' }, as(editor));
  await t.ok('package_create', { name: 'views-chart-private', owner_org: 'views-chart-org', private: true }, as(editor));
  sales = await table('views-chart-public', SALES_FIELDS, RECORDS);
});
after(async () => {
  await t?.close();
});

test('a grouped, aggregated chart: its options kept, its points summed by the database per day and region', async () => {
  const view = await t.ok(
    'resource_view_create',
    {
      resource_id: sales,
      view_type: 'chart',
      title: 'Sales by region',
      x: 'day',
      y: 'amount',
      group_by: 'region',
      aggregate: 'sum',
      chart: 'bar',
    },
    as(editor),
  );
  assert.deepEqual(
    { x: view.x, y: view.y, group_by: view.group_by, aggregate: view.aggregate, chart: view.chart, view_type: view.view_type },
    { x: 'day', y: ['amount'], group_by: 'region', aggregate: 'sum', chart: 'bar', view_type: 'chart' },
  );
  const data = await t.ok('chart_view_data', { id: view.id }, { method: 'GET' });
  assert.equal(data.xKind, 'time');
  // Series in the order of their size, then name (all groups have ten rows).
  assert.deepEqual(
    data.series.map((s: any) => s.name),
    ['east', 'north', 'south'],
  );
  const north = data.series.find((s: any) => s.name === 'north');
  assert.equal(north.points.length, 10);
  assert.deepEqual(north.points[0], { x: '2024-03-01', y: 1.5 });
  assert.deepEqual(north.points[9], { x: '2024-03-10', y: 15 });
  const east = data.series.find((s: any) => s.name === 'east');
  assert.equal(
    east.points.reduce((n: number, p: any) => n + p.y, 0),
    RECORDS.filter((r) => r.region === 'east').reduce((n, r) => n + r.amount, 0),
  );
});

test('mean, count, min and max of several columns by a category', async () => {
  for (const [aggregate, expect] of [
    ['mean', (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length],
    ['count', (xs: number[]) => xs.length],
    ['min', (xs: number[]) => Math.min(...xs)],
    ['max', (xs: number[]) => Math.max(...xs)],
  ] as const) {
    const view = await t.ok(
      'resource_view_create',
      { resource_id: sales, view_type: 'chart', title: aggregate, x: 'region', y: ['amount', 'visits'], aggregate },
      as(editor),
    );
    const data = await t.ok('chart_view_data', { id: view.id });
    assert.equal(data.xKind, 'category');
    assert.deepEqual(
      data.series.map((s: any) => s.name),
      ['amount', 'visits'],
    );
    for (const s of data.series) {
      assert.deepEqual(
        s.points.map((p: any) => p.x),
        ['east', 'north', 'south'],
      );
      for (const p of s.points) {
        const xs = RECORDS.filter((r) => r.region === p.x).map((r) => (r as any)[s.name] as number);
        assert.ok(Math.abs(p.y - expect(xs)) < 1e-9, `${aggregate} of ${s.name} for ${p.x}: ${p.y}`);
      }
    }
  }
  // A count needs no y column: the rows are counted.
  const view = await t.ok(
    'resource_view_create',
    { resource_id: sales, view_type: 'chart', title: 'n', x: 'note', aggregate: 'count' },
    as(editor),
  );
  const data = await t.ok('chart_view_data', { id: view.id });
  assert.deepEqual(data.series[0].points[0], { x: 'n0', y: 3 });
});

test('a chart view with only resource_id, view_type and title picks a date x and a numeric y', async () => {
  const view = await t.ok('resource_view_create', { resource_id: sales, view_type: 'chart', title: 'Picked' }, as(editor));
  assert.equal(view.x, 'day');
  assert.deepEqual(view.y, ['amount']);
  assert.equal(view.aggregate, 'sum');
  assert.equal(view.chart, 'line');
  assert.equal('group_by' in view, false);
  const numeric = await table(
    'views-chart-public',
    [
      { id: 'label', type: 'text' },
      { id: 'year', type: 'int' },
      { id: 'population', type: 'float8' },
    ],
    [{ label: 'a', year: 2000, population: 12.5 }],
  );
  const v2 = await t.ok('resource_view_create', { resource_id: numeric, view_type: 'chart', title: 'Picked' }, as(editor));
  assert.deepEqual([v2.x, v2.y], ['year', ['population']]);
  const words = await table('views-chart-public', [{ id: 'word', type: 'text' }], [{ word: 'x' }]);
  const r = await t.call('resource_view_create', { resource_id: words, view_type: 'chart', title: 'Nothing' }, as(editor));
  assert.equal(r.status, 409);
  assert.match(r.body.error!.x[0], /no date or numeric column/);
});

test('as a default view (svc.views.default_views), a table worth plotting gets a chart, one without numbers does not', async () => {
  const fresh = await table('views-chart-public', SALES_FIELDS, RECORDS.slice(0, 6));
  const made = await t.ok('resource_create_default_resource_views', { resource: { id: fresh }, create_datastore_views: true }, as(editor));
  assert.deepEqual(
    made.map((v: any) => v.view_type),
    ['datatables_view', 'chart'],
  );
  const chart = made.find((v: any) => v.view_type === 'chart');
  assert.deepEqual([chart.title, chart.x, chart.y, chart.aggregate, chart.chart], ['Chart', 'day', ['amount'], 'sum', 'line']);
  assert.equal((await t.ok('chart_view_data', { id: chart.id })).series[0].points.length, 2);
  const words = await table('views-chart-public', [{ id: 'word', type: 'text' }], [{ word: 'x' }]);
  const none = await t.ok('resource_create_default_resource_views', { resource: { id: words }, create_datastore_views: true }, as(editor));
  assert.deepEqual(
    none.map((v: any) => v.view_type),
    ['datatables_view'],
  );
});

test('options that do not fit the table are Validation Errors naming the option, and no view is made', async () => {
  const before = (await t.ok('resource_view_list', { id: sales })).length;
  const bad = async (options: Record<string, unknown>) => {
    const r = await t.call('resource_view_create', { resource_id: sales, view_type: 'chart', title: 'Bad', ...options }, as(editor));
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.error!.__type, 'Validation Error');
    return r.body.error!;
  };
  let e = await bad({ x: 'nope', y: 'amount' });
  assert.match(e.x[0], /^Column "nope" is not in the table \(its columns: "day", "region", "amount", "visits", "note"\)$/);
  e = await bad({ x: 'day', y: ['amount', 'region'] });
  assert.deepEqual(e.y, ['Column "region" is not numeric (text): only a count can be taken of it']);
  e = await bad({ x: 'day', y: ['amount', 'visits'], group_by: 'region' });
  assert.deepEqual(e.group_by, ['A grouped chart shows one y column']);
  e = await bad({ x: 'day', y: 'amount', group_by: 'missing' });
  assert.match(e.group_by[0], /^Column "missing" is not in the table/);
  e = await bad({ x: 'day', y: 'amount', aggregate: 'median' });
  assert.ok(e.aggregate, JSON.stringify(e));
  e = await bad({ x: 'day', y: 'amount', chart: 'pie' });
  assert.ok(e.chart, JSON.stringify(e));
  e = await bad({ x: 'day' });
  assert.match(e.y[0], /^Missing value/);
  assert.equal((await t.ok('resource_view_list', { id: sales })).length, before);
  // The same checks on update.
  const view = await t.ok(
    'resource_view_create',
    { resource_id: sales, view_type: 'chart', title: 'Ok', x: 'day', y: 'visits' },
    as(editor),
  );
  const r = await t.call('resource_view_update', { id: view.id, title: 'Ok', x: 'day', y: 'gone' }, as(editor));
  assert.equal(r.status, 409);
  assert.match(r.body.error!.y[0], /^Column "gone" is not in the table/);
  assert.deepEqual((await t.ok('resource_view_show', { id: view.id })).y, ['visits']);
  // A resource without a data store table.
  const plain = await t.ok(
    'resource_create',
    { package_id: 'views-chart-public', url: 'http://example.org/a.csv', format: 'CSV' },
    as(editor),
  );
  const r2 = await t.call('resource_view_create', { resource_id: plain.id, view_type: 'chart', title: 'No table' }, as(editor));
  assert.equal(r2.status, 409);
  assert.deepEqual(r2.body.error!.resource_id, ['The resource has no data store table to chart']);
});

test('a large table: at most 2,000 points, x values in intervals whose sums add up to the total', async () => {
  const big = await table(
    'views-chart-public',
    [
      { id: 'x', type: 'int' },
      { id: 'v', type: 'int' },
    ],
    [],
  );
  const records = Array.from({ length: 6000 }, (_, i) => ({ x: i * 7, v: i % 13 }));
  for (let i = 0; i < records.length; i += 3000)
    await t.ok('datastore_upsert', { resource_id: big, method: 'insert', records: records.slice(i, i + 3000) }, as(editor));
  const view = await t.ok('resource_view_create', { resource_id: big, view_type: 'chart', title: 'Big', x: 'x', y: 'v' }, as(editor));
  const data = await t.ok('chart_view_data', { id: view.id });
  const points = data.series[0].points;
  assert.ok(points.length <= 2001 && points.length >= 1900, `${points.length} points`);
  assert.equal(data.bucketed, true);
  assert.equal(
    points.reduce((n: number, p: any) => n + p.y, 0),
    records.reduce((n, r) => n + r.v, 0),
  );
  assert.deepEqual(
    points.map((p: any) => p.x),
    [...points.map((p: any) => p.x)].sort((a: number, b: number) => a - b),
    'in x order',
  );
  // Grouped: the 10 largest groups, 2,000 points in all.
  const grouped = await table(
    'views-chart-public',
    [
      { id: 'x', type: 'int' },
      { id: 'g', type: 'text' },
      { id: 'v', type: 'int' },
    ],
    [],
  );
  const rows = Array.from({ length: 6000 }, (_, i) => ({ x: i, g: `g${i % 12}`, v: 1 }));
  await t.ok('datastore_upsert', { resource_id: grouped, method: 'insert', records: rows }, as(editor));
  const gv = await t.ok(
    'resource_view_create',
    { resource_id: grouped, view_type: 'chart', title: 'G', x: 'x', y: 'v', group_by: 'g' },
    as(editor),
  );
  const gd = await t.ok('chart_view_data', { id: gv.id });
  assert.equal(gd.series.length, 10);
  assert.equal(gd.groupsLeftOut, 2);
  assert.ok(gd.series.reduce((n: number, s: any) => n + s.points.length, 0) <= 2010);
});

test('who may read a chart: the readers of its dataset', async () => {
  const secret = await table('views-chart-private', SALES_FIELDS, RECORDS.slice(0, 3));
  const view = await t.ok('resource_view_create', { resource_id: secret, view_type: 'chart', title: 'Secret' }, as(editor));
  assert.equal((await t.call('chart_view_data', { id: view.id }, as(outsider))).status, 403);
  assert.equal((await t.call('chart_view_data', { id: view.id })).status, 403);
  assert.equal((await t.call('chart_view_data', { id: view.id }, as(editor))).status, 200);
  assert.equal((await t.call('chart_view_data', { id: 'no-such-view' })).status, 404);
});

test('the resource page draws the chart as SVG with a title, axis titles and the data as a table', async () => {
  const view = await t.ok(
    'resource_view_create',
    {
      resource_id: sales,
      view_type: 'chart',
      title: 'Visits <by> day',
      x: 'day',
      y: 'visits',
      group_by: 'region',
      aggregate: 'max',
      chart: 'line',
    },
    as(editor),
  );
  const page = await t.app.inject({ method: 'GET', url: `/dataset/views-chart-public/resource/${sales}?view_id=${view.id}` });
  assert.equal(page.statusCode, 200);
  const body = page.body;
  assert.match(body, /<svg [^>]*role="img" aria-labelledby="chart-[^"]+-title chart-[^"]+-desc"/);
  assert.match(body, /<title id="chart-[^"]+-title">Visits &lt;by&gt; day<\/title>/);
  assert.match(
    body,
    /<desc id="[^"]+">Line chart of the maximum of visits by day, grouped by region; 30 points in 3 series \(east, north, south\)\.<\/desc>/,
  );
  assert.match(body, />maximum of visits<\/text>/);
  assert.match(body, />day<\/text>/);
  assert.equal((body.match(/<path d="M/g) ?? []).length, 3, 'one line per region');
  assert.match(body, /<th scope="col">day<\/th><th scope="col">east<\/th><th scope="col">north<\/th><th scope="col">south<\/th>/);
  assert.match(
    body,
    /<tr><th scope="row">2024-03-02<\/th><td class="cell-num">12<\/td><td class="cell-num">10<\/td><td class="cell-num">11<\/td><\/tr>/,
  );
});

describe('the resource page with a chart in Chromium', { skip: browserMissing }, () => {
  let b: BrowserApp;
  before(async () => {
    b = await startBrowserApp('views-chart', { plugins: PLUGINS });
    const { users } = await organizationWithTeam(b.t, { name: 'views-chart-org' }, { views_chart_editor: 'editor' });
    const token = { token: users.views_chart_editor.token };
    await b.t.ok('package_create', { name: 'views-chart-page', title: 'Regional sales', owner_org: 'views-chart-org' }, token);
    const r = await b.t.ok(
      'datastore_create',
      { resource: { package_id: 'views-chart-page', name: 'Sales' }, fields: SALES_FIELDS, records: RECORDS },
      token,
    );
    for (const chart of ['line', 'bar', 'scatter', 'area'])
      await b.t.ok(
        'resource_view_create',
        { resource_id: r.resource_id, view_type: 'chart', title: `Sales (${chart})`, x: 'day', y: 'amount', group_by: 'region', chart },
        token,
      );
  });
  after(async () => {
    await b?.close();
  });

  test('each kind of chart is axe-clean and shows its data table', async () => {
    const page = await b.visitor();
    const pkg = await b.t.ok('package_show', { id: 'views-chart-page' });
    const resourceId = pkg.resources[0].id;
    const views = await b.t.ok('resource_view_list', { id: resourceId });
    for (const v of views.filter((x: any) => x.view_type === 'chart')) {
      const url = `/dataset/views-chart-page/resource/${resourceId}?view_id=${v.id}`;
      const res = await page.goto(url);
      assert.equal(res?.status(), 200);
      const chart = page.getByRole('img', { name: v.title });
      assert.equal(await chart.count(), 1, `${v.chart}: the chart is an image named by its title`);
      await page.getByText(/The chart's data as a table/).click();
      assert.ok(await page.getByRole('table').filter({ hasText: '2024-03-01' }).isVisible());
      await b.shot(page, `chart-${v.chart}`);
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
    }
  });
});
