// After a write of a few rows, a chart's points are the table's: the kept points with the
// written rows applied (src/views/chart-cache.ts, chart-query.ts applyChanges) equal the points
// computed from the whole table, after an insert, an update, a delete and an upsert of a row,
// for each aggregation, with a group-by; also when the write moves the x range or the largest
// groups (then the table is read again).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let editor: TestUser;

before(async () => {
  t = await startApp({ plugins: ['datastore', 'chart'] });
  ({
    users: { chart_changes_editor: editor },
  } = await organizationWithTeam(t, { name: 'chart-changes-org' }, { chart_changes_editor: 'editor' }));
  await t.ok('package_create', { name: 'chart-changes', owner_org: 'chart-changes-org' }, as(editor));
});
after(async () => {
  await t?.close();
});

const COUNTRIES = ['ar', 'br', 'ca', 'de', 'es', 'fr', 'gb', 'in', 'it', 'jp', 'mx', 'nz'];
const day = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);

test('a chart after writes of a row equals the chart computed from the whole table', async () => {
  // 12 countries of different sizes (the 10 largest shown), 90 days, some values missing.
  const records: Record<string, unknown>[] = [];
  let key = 0;
  COUNTRIES.forEach((country, c) => {
    for (let i = 0; i < 40 + c * 7; i++) {
      key++;
      records.push({ k: key, country, date: day((i * 13 + c * 5) % 90), confirmed: key % 11 === 0 ? null : (key * 37) % 1000, f: key / 8 });
    }
  });
  const fields = [
    { id: 'k', type: 'int' },
    { id: 'country', type: 'text' },
    { id: 'date', type: 'date' },
    { id: 'confirmed', type: 'int' },
    { id: 'f', type: 'float8' },
  ];
  const { resource_id: id } = await t.ok(
    'datastore_create',
    { resource: { package_id: 'chart-changes', name: 'cases' }, fields, primary_key: ['k'], records },
    as(editor),
  );
  const charts = [
    { aggregate: 'mean', y: 'confirmed' },
    { aggregate: 'sum', y: 'confirmed' },
    { aggregate: 'count', y: 'confirmed' },
    { aggregate: 'max', y: 'confirmed' },
    { aggregate: 'min', y: 'f' },
    // Wide intervals of a number: a point's smallest x is one of its rows.
    { aggregate: 'sum', y: 'confirmed', x: 'k' },
  ];
  const views: string[] = [];
  for (const c of charts) {
    const v = await t.ok(
      'resource_view_create',
      { resource_id: id, view_type: 'chart', title: c.aggregate, x: 'date', group_by: 'country', ...c },
      as(editor),
    );
    views.push(v.id);
  }
  const read = () => Promise.all(views.map((v) => t.ok('chart_view_data', { id: v })));
  await read();
  let added = 0;
  /** The charts now, then computed from the whole table (new columns: nothing kept for them), the same. */
  const same = async (what: string) => {
    const now = await read();
    fields.push({ id: `extra${++added}`, type: 'text' });
    await t.ok('datastore_create', { resource_id: id, fields }, as(editor));
    const fresh = await read();
    now.forEach((data, i) => assert.deepEqual(data, fresh[i], `${charts[i].aggregate} after ${what}`));
    assert.equal(now[0].series.length, 10);
    return now;
  };
  const write = (method: string, rows: Record<string, unknown>[]) =>
    t.ok('datastore_upsert', { resource_id: id, method, records: rows }, as(editor));

  await write('insert', [{ k: 10_001, country: 'nz', date: day(40), confirmed: 5, f: 0.1 }]);
  await same('an insert');
  await write('insert', [{ k: 10_002, country: 'ar', date: day(41), confirmed: 999_999, f: -3.5 }]);
  await same('an insert of a new extreme');
  await write('update', [{ k: 10_002, confirmed: 7 }]);
  await same('an update of y');
  await write('update', [{ k: 10_001, date: day(50) }]);
  await same('an update of x');
  await write('update', [{ k: 10_001, confirmed: null }]);
  await same('an update of y to nothing');
  await write('upsert', [
    { k: 3, country: 'ar', date: day(20), confirmed: 123, f: 2 },
    { k: 10_003, country: 'br', date: day(22), confirmed: 321, f: 3 },
  ]);
  await same('an upsert of an existing and a new key');
  await t.ok('datastore_delete', { resource_id: id, filters: { k: 10_002 } }, as(editor));
  await same('a delete');
  await t.ok('datastore_delete', { resource_id: id, filters: { k: 5 } }, as(editor));
  await same('a delete of an early row');
  // Rows that move a country among the 10 largest, then the x range.
  const moved = Array.from({ length: 30 }, (_, i) => ({ k: 20_000 + i, country: 'ar', date: day(30 + i), confirmed: i, f: i }));
  await write('insert', moved);
  await same('an insert that changes the largest groups');
  await write('insert', [{ k: 30_000, country: 'mx', date: day(200), confirmed: 1, f: 1 }]);
  await same('an insert beyond the last date');
  await t.ok('datastore_delete', { resource_id: id, filters: { k: 30_000 } }, as(editor));
  await same('a delete of the last date');
  // Several writes between two renders.
  await write('insert', [{ k: 40_000, country: 'fr', date: day(10), confirmed: 40, f: 1 }]);
  await write('update', [{ k: 40_000, confirmed: 41 }]);
  await t.ok('datastore_delete', { resource_id: id, filters: { k: 4 } }, as(editor));
  await same('three writes');
  // Writes that fail on a charted table fail as on any table: the bad record named, nothing written.
  const bad = await t.call(
    'datastore_upsert',
    {
      resource_id: id,
      method: 'insert',
      records: [
        { k: 50_000, country: 'fr', date: day(3) },
        { k: 50_001, date: 'not a date' },
      ],
    },
    as(editor),
  );
  assert.equal(bad.status, 409);
  assert.equal(bad.body.error?.records_row, 1);
  assert.match(JSON.stringify(bad.body.error?.records), /date/);
  const twice = await t.call('datastore_upsert', { resource_id: id, method: 'insert', records: [{ k: 3, country: 'fr' }] }, as(editor));
  assert.equal(twice.status, 409);
  assert.match(JSON.stringify(twice.body.error), /k/);
  await same('failed writes');
});
