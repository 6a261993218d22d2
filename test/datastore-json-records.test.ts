// datastore_search answers records (objects) with the JSON text PostgreSQL makes of the page, a fast
// path; records_format=lists takes the general path (rows read into JavaScript, then converted).
// Every query here is asked both ways and the two must give the same records, over every column
// type, names that need quoting, values JSON cannot hold, full-text ranks, empty pages.
// Runs on PGlite and (with SVC_TEST_DATABASE_URL) PostgreSQL.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let resourceId: string;

const FIELDS = [
  { id: 'n', type: 'int' },
  { id: 'big', type: 'int8' },
  { id: 'num', type: 'numeric' },
  { id: 'f8', type: 'float8' },
  { id: 'f4', type: 'float4' },
  { id: 'txt', type: 'text' },
  { id: 'ok', type: 'bool' },
  { id: 'day', type: 'date' },
  { id: 'at', type: 'timestamp' },
  { id: 'doc', type: 'json' },
  { id: 'words', type: '_text' },
  { id: 'nums', type: '_int4' },
  { id: 'with space', type: 'text' },
  { id: "it's.a-b", type: 'text' },
  { id: 'ünï', type: 'text' },
  { id: 'rank', type: 'int' },
];

const RECORDS = [
  {
    n: 1,
    big: '9007199254740991',
    num: '1.10',
    f8: 0.1,
    f4: 1.5,
    txt: 'water "quality"\nline two \\ back',
    ok: true,
    day: '2024-02-29',
    at: '2024-02-29T12:34:56.789',
    doc: { b: 1, a: [1, 'x'], nested: { k: null } },
    words: ['water', 'ä"b'],
    nums: [1, 2, 3],
    'with space': 'a b',
    "it's.a-b": 'q',
    ünï: 'ünïcode ✓ 💧',
    rank: 7,
  },
  { n: 2, big: '-42', num: 'NaN', f8: 'NaN', f4: 'Infinity', txt: 'water station', ok: false, day: '0001-01-01', rank: 1 },
  { n: 3, num: '-0.000001', f8: '-Infinity', f4: '-1e-7', txt: '', words: [], nums: [], doc: [], rank: 3 },
  { n: 4, big: '1', num: '123456789012345678901234567890.5', f8: 1e300, txt: 'rainfall water', at: '1999-12-31T23:59:59' },
  { n: 5 },
];

before(async () => {
  t = await startApp({ config: { 'svc.auth.create_unowned_dataset': true } });
  await t.ok('package_create', { name: 'json-records' }, { token: t.sysadminToken });
  const r = await t.ok(
    'datastore_create',
    { resource: { package_id: 'json-records', name: 'types' }, fields: FIELDS, records: RECORDS },
    { token: t.sysadminToken },
  );
  resourceId = r.resource_id;
});
after(async () => {
  await t?.close();
});

/** The records of a search as objects (the fast path) and as lists turned into objects (the general path). */
async function bothWays(query: Record<string, unknown>) {
  const objects = await t.ok('datastore_search', { resource_id: resourceId, ...query });
  const lists = await t.ok('datastore_search', { resource_id: resourceId, ...query, records_format: 'lists' });
  assert.deepEqual(lists.fields, objects.fields);
  const fromLists = (lists.records as unknown[][]).map((row) => {
    const o: Record<string, unknown> = {};
    lists.fields.forEach((f: { id: string }, i: number) => {
      o[f.id] = row[i];
    });
    return o;
  });
  assert.deepEqual(objects.records, fromLists, JSON.stringify(query));
  assert.equal(objects.total, lists.total);
  return objects;
}

test('objects records equal the general path for every column type, name and value', async () => {
  const all = await bothWays({ sort: 'n' });
  assert.equal(all.records.length, 5);
  assert.equal(all.total, 5);
  const [one, two, three, four, five] = all.records;
  // values JSON cannot hold: a float that is not finite is null, a numeric NaN the string
  assert.equal(two.f8, null);
  assert.equal(two.f4, null);
  assert.equal(three.f8, null);
  assert.equal(two.num, 'NaN');
  assert.equal(one.num, 1.1);
  assert.equal(one.big, 9007199254740991);
  assert.equal(four.f8, 1e300);
  assert.equal(one.txt, 'water "quality"\nline two \\ back');
  assert.equal(one["it's.a-b"], 'q');
  assert.equal(one['ünï'], 'ünïcode ✓ 💧');
  assert.deepEqual(one.doc, { b: 1, a: [1, 'x'], nested: { k: null } });
  assert.deepEqual(one.words, ['water', 'ä"b']);
  assert.equal(one.day, '2024-02-29');
  assert.equal(one.at, '2024-02-29T12:34:56');
  assert.equal(five.txt, null);
  assert.deepEqual(three.nums, []);
  assert.deepEqual(
    all.records.map((r: { _id: number }) => r._id),
    [1, 2, 3, 4, 5],
  );
});

test('objects records equal the general path for filters, sorts, fields, full text, distinct and paging', async () => {
  await bothWays({ filters: { ok: true } });
  await bothWays({ sort: 'f8 desc nulls last, n', limit: 3, offset: 1 });
  await bothWays({ fields: ['ünï', 'n', "it's.a-b"], sort: `"it's.a-b" desc, n` });
  const ranked = await bothWays({ q: 'water' });
  assert.equal(ranked.total, 3);
  // the rank column shares its name with a field: the rank comes last, as in the general path
  assert.equal(ranked.fields.at(-1).id, 'rank');
  assert.equal(typeof ranked.records[0].rank, 'number');
  await bothWays({ q: { txt: 'station' }, fields: ['n', 'txt'] });
  await bothWays({ full_text: 'rainfall', sort: 'n' });
  await bothWays({ distinct: true, fields: ['ok'], sort: 'ok' });
  const past = await bothWays({ offset: 10 });
  assert.deepEqual(past.records, []);
  assert.equal(past.total, 5);
  const none = await bothWays({ filters: { n: 99 } });
  assert.deepEqual(none.records, []);
  assert.equal(none.total, 0);
  const noTotal = await bothWays({ include_total: false, limit: 2 });
  assert.equal(noTotal.records.length, 2);
  assert.equal(noTotal.total, undefined);
});

test('a JSONP answer carries the records written by PostgreSQL', async () => {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/3/action/datastore_search?resource_id=${resourceId}&sort=n&limit=1&callback=cb`,
  });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /^cb\(/);
  const body = JSON.parse(res.body.slice(3, -2));
  assert.equal(body.result.records[0].n, 1);
  assert.equal(body.result.records[0]['ünï'], 'ünïcode ✓ 💧');
});
