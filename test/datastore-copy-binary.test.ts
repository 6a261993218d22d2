// Records of tables whose column types all have a binary writing go by COPY's binary format
// (src/datastore/json-to-copy.ts writeBinaryLine) until a value whose binary form is not certain,
// then as text. Every value must mean what its text means: the same records written into a table
// that goes as text (one more column, numeric, never given) give the same rows, the same errors
// and the same failing row. Runs on PGlite and (with SVC_TEST_DATABASE_URL) PostgreSQL.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let sys: string;

before(async () => {
  t = await startApp({ config: { 'svc.auth.create_unowned_dataset': true } });
  sys = t.sysadminToken;
  await t.ok('package_create', { name: 'copy-binary' }, { token: sys });
});
after(async () => {
  await t?.close();
});

const FIELDS = [
  { id: 'i2', type: 'int2' },
  { id: 'i4', type: 'int4' },
  { id: 'i8', type: 'int8' },
  { id: 'f8', type: 'float8' },
  { id: 'b', type: 'bool' },
  { id: 's', type: 'text' },
  { id: 'd', type: 'date' },
  { id: 'ts', type: 'timestamp' },
];

async function table(extra: { id: string; type: string }[]): Promise<string> {
  return (
    await t.ok('datastore_create', { resource: { package_id: 'copy-binary', name: 'b' }, fields: [...FIELDS, ...extra] }, { token: sys })
  ).resource_id;
}

/** The outcome of inserting records: the error, or the rows as stored. */
async function outcome(id: string, records: unknown[]): Promise<unknown> {
  const r = await t.call('datastore_upsert', { resource_id: id, method: 'insert', records }, { token: sys });
  if (r.status !== 200) return { status: r.status, error: r.body.error };
  const found = await t.ok('datastore_search', { resource_id: id, sort: '_id', limit: 1000 }, { token: sys });
  await t.ok('datastore_delete', { resource_id: id, filters: {} }, { token: sys });
  return found.records.map(({ _id, z, ...rest }: Record<string, unknown>) => rest);
}

// Each case: records written both ways (the first records of a case go binary, a later one may end it).
const CASES: Record<string, Record<string, unknown>[]> = {
  plain: [
    { i2: 1, i4: 2, i8: 3, f8: 0.1, b: true, s: 'a', d: '2024-02-29', ts: '2024-02-29T12:34:56' },
    {
      i2: -32768,
      i4: -2147483648,
      i8: '-999999999999999',
      f8: -1.5e300,
      b: false,
      s: '',
      d: '0001-01-01',
      ts: '9999-12-31 23:59:59.999999',
    },
    { i2: 32767, i4: 2147483647, i8: 999999999999999, f8: 5e-324, s: 'ünï ✓ 💧', d: '9999-12-31', ts: '2000-01-01' },
    {
      i2: '007',
      i4: '-42',
      i8: '',
      f8: 123456789012345680000,
      s: 'tab\there\nline \\ back "q" \u00e9 \ud83d\udca7',
      ts: '1999-12-31T23:59',
    },
    { f8: 0.30000000000000004, s: 1.5, ts: '2020-01-01T00:00:00.1' },
    { f8: -0, s: 10, ts: '2020-01-01T00:00:00.12345' },
    { f8: 1e21, s: true, ts: '1900-02-28T01:02:03.000001' },
    { f8: 0.0, i8: 1.0, s: -0 },
    {},
  ],
  'values only text can say': [
    { i4: 1, d: '2024-02-29' },
    { i4: 1.0, f8: '1.5', b: 'yes', ts: '2020-01-01T24:00:00' },
    { i4: ' 3 ', f8: 'NaN', b: 't', d: 'Jan 5 2020', ts: '2020-01-01T10:00:00Z' },
    { i4: 4, f8: 5e-324, ts: '2020-01-01 10:00:00.1234567' },
    { i8: '12345678901234567', f8: '-0', ts: '2020-01-01T10:00' },
    { i4: 5, s: { nested: ['x'] } },
  ],
  'out of range int2': [{ i2: 1 }, { i2: 32768 }],
  'out of range int4': [{ i4: 1 }, { i4: 2147483648 }, { i4: 3 }],
  'bad date': [{ d: '2024-02-28' }, { d: '2023-02-29' }],
  'bad timestamp': [{ ts: '2024-02-28T00:00:00' }, { ts: '2024-13-01T00:00:00' }],
  'smallest double': [{ f8: 1.5 }, { f8: Number.MIN_VALUE }],
  'bool as a number': [{ b: true }, { b: 1 }],
  'text with a NUL': [{ s: 'a' }, { s: 'a\u0000b' }],
  'a late bad value': [...Array.from({ length: 50 }, (_, i) => ({ i4: i })), { i4: 'x' }],
  'a bad value after a text-only one': [{ i4: 1 }, { i4: 1.0 }, { i4: 2 }, { i4: 'x' }],
};

test('binary and text COPY of the same records give the same rows and errors', async () => {
  const binary = await table([]);
  const text = await table([{ id: 'z', type: 'numeric' }]);
  for (const [name, records] of Object.entries(CASES)) {
    const a = await outcome(binary, records);
    const b = await outcome(text, records);
    assert.deepEqual(a, b, name);
  }
  // A decimal below a double's smallest (a small request's JSON is parsed: it is 0).
  const tiny = `[{"f8": 0.${'0'.repeat(400)}1}]`;
  const raw = (id: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/3/action/datastore_upsert',
      headers: { authorization: sys, 'content-type': 'application/json' },
      payload: `{"resource_id": "${id}", "method": "insert", "records": ${tiny}}`,
    });
  const [r1, r2] = [await raw(binary), await raw(text)];
  assert.equal(r1.statusCode, r2.statusCode);
  assert.deepEqual(r1.json().error, r2.json().error);
});

test('a large request goes binary and keeps every value', async () => {
  const binary = await table([]);
  const text = await table([{ id: 'z', type: 'numeric' }]);
  const records = Array.from({ length: 3000 }, (_, i) => ({
    i2: i % 30000,
    i4: i * 7919,
    i8: i * 1e9,
    f8: i % 2 ? i / 7 : -Number((i / 7).toFixed(i % 13)),
    b: i % 2 === 0,
    s: `row ${i} "quoted" \\ ${'é'.repeat(i % 5)}`,
    d: `20${String(10 + (i % 20))}-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`,
    ts: `${1900 + (i % 200)}-03-17T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07.${String(i).padStart(6, '0').slice(0, 6)}`,
  }));
  assert.deepEqual(await outcome(binary, records), await outcome(text, records));
});

test('in a large request (its JSON read as sent) decimals past a double and a late bad value fail alike', async () => {
  const binary = await table([]);
  const text = await table([{ id: 'z', type: 'numeric' }]);
  const rows = Array.from({ length: 3000 }, (_, i) => `{"i4": ${i}, "f8": ${i}.25, "s": "r${i}"}`);
  for (const [at, value] of [
    [2500, `{"f8": 0.${'0'.repeat(400)}1}`],
    [2999, `{"i4": "x"}`],
    [10, `{"i2": 40000}`],
    [20, `{"f8": 1${'0'.repeat(309)}.5}`],
  ] as const) {
    const records = [...rows.slice(0, at), value, ...rows.slice(at + 1)].join(',');
    const raw = (id: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/3/action/datastore_upsert',
        headers: { authorization: sys, 'content-type': 'application/json' },
        payload: `{"resource_id": "${id}", "method": "insert", "records": [${records}]}`,
      });
    const [r1, r2] = [await raw(binary), await raw(text)];
    assert.equal(r1.statusCode, 409, r1.body);
    assert.deepEqual(r1.json().error, r2.json().error);
    assert.equal(r1.json().error.records_row, at);
  }
  assert.equal((await t.ok('datastore_search', { resource_id: binary, limit: 0 }, { token: sys })).total, 0);
});
