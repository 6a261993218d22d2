// Large datastore_upsert requests (from 64 KiB on): their records go from the request bytes to
// COPY without being parsed first. They must write what a small request writes, echo what was
// sent, refuse malformed JSON and bad rows whole, and read members after the records.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let token: string;

before(async () => {
  t = await startApp({ config: { 'svc.auth.create_unowned_dataset': true } });
  token = t.sysadminToken;
  await t.ok('package_create', { name: 'bulk' }, { token });
});
after(async () => {
  await t?.close();
});

const FIELDS = [
  { id: 't', type: 'text' },
  { id: 'n', type: 'int4' },
  { id: 'x', type: 'numeric' },
  { id: 'f', type: 'float8' },
  { id: 'b', type: 'bool' },
  { id: 'd', type: 'date' },
  { id: 'ts', type: 'timestamp' },
  { id: 'j', type: 'json' },
  { id: 'a', type: 'text[]' },
];

async function newTable(extra: Record<string, unknown> = {}): Promise<string> {
  const r = await t.ok('datastore_create', { resource: { package_id: 'bulk', name: 'bulk' }, fields: FIELDS, ...extra }, { token });
  return r.resource_id;
}

/** POSTs a body as written (not re-serialised), as a client's JSON library would send it. */
async function postRaw(action: string, body: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/3/action/${action}`,
    headers: { 'content-type': 'application/json', authorization: token },
    payload: body,
  });
  return { status: res.statusCode, body: JSON.parse(res.body), raw: res.body };
}

const rows = async (id: string) => (await t.ok('datastore_search', { resource_id: id, sort: '_id', limit: 32000 }, { token })).records;

// Records as JSON text, written the ways clients write values: escapes, exponents, trailing zeros,
// numbers for text, strings for numbers, nested values, empty strings, nulls.
const TRICKY = [
  String.raw`{"t": "tab\there \"quoted\" back\\slash \/ sl\u00e9 \ud83d\ude00 nl\nline cr\r", "n": 5.0, "x": 1.50, "f": 0.1, "b": true, "d": "2020-01-02", "ts": "2020-01-02T03:04:05", "j": {"k": [1, "two", null]}, "a": ["x", "y,z", "q\"uote"]}`,
  String.raw`{"t": "", "n": "", "x": "1.50", "f": 1e-7, "b": "false", "d": "", "ts": null, "j": "str", "a": []}`,
  String.raw`{"t": 12.50, "n": 1e3, "x": 2.5e+3, "f": 123456789012345678, "b": false, "j": 5, "a": null}`,
  String.raw`{"t": {"obj": [1, 2]}, "n": -0, "x": -0.5, "f": -1.5E-3, "j": true, "a": ["\u0009", ""]}`,
  String.raw`{"ts": "2021-06-07 08:09:10", "t": "Curaçao ünïcode 中文 \u0000"}`.replace(' \\u0000', ''),
  String.raw`{"t": true, "j": [[1, 2], {"deep": {"er": null}}], "a": ["\\N", "\\."]}`,
  '{}',
];
const filler = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `{"t": "filler row ${from + i} with some text", "n": ${from + i}, "f": ${(from + i) / 7}}`);
const body = (fields: Record<string, unknown>, records: string[], after: Record<string, unknown> = {}) => {
  const head = JSON.stringify(fields).slice(0, -1);
  const tail = JSON.stringify(after).slice(1);
  return `${head}${head.length > 1 ? ',' : ''} "records": [${records.join(',\n ')}]${tail.length > 1 ? ', ' + tail : '}'}`;
};

test('a large request writes exactly what small requests write', async () => {
  const small = await newTable();
  const large = await newTable();
  const records = [...TRICKY, ...filler(0, 2000)];
  const text = body({ resource_id: large, method: 'insert' }, records);
  assert.ok(Buffer.byteLength(text) > 64 * 1024, 'large enough for the lazy path');
  const r = await postRaw('datastore_upsert', text);
  assert.equal(r.status, 200, r.raw.slice(0, 500));
  // The same records parsed by the test and sent 100 at a time (small requests).
  const parsed = JSON.parse(`[${records.join(',')}]`);
  for (let i = 0; i < parsed.length; i += 100)
    await t.ok('datastore_upsert', { resource_id: small, method: 'insert', records: parsed.slice(i, i + 100) }, { token });
  const [a, b] = [await rows(small), await rows(large)];
  assert.equal(b.length, records.length);
  assert.deepEqual(b, a);
  assert.equal(b[0].t, 'tab\there "quoted" back\\slash / slé 😀 nl\nline cr\r');
  assert.equal(b[0].n, 5);
  assert.deepEqual(b[0].j, { k: [1, 'two', null] });
  assert.deepEqual(b[0].a, ['x', 'y,z', 'q"uote']);
  assert.equal(b[1].t, '');
  assert.equal(b[1].n, null);
  assert.equal(b[2].t, '12.5');
  assert.equal(b[2].n, 1000);
  assert.deepEqual(b[3].t, '{"obj":[1,2]}');
});

test('the answer echoes the records as they were sent', async () => {
  const id = await newTable();
  const records = [...TRICKY, ...filler(0, 1500)];
  const r = await postRaw('datastore_upsert', body({ resource_id: id, method: 'insert' }, records, { dry_run: false }));
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.result.records, JSON.parse(`[${records.join(',')}]`));
  assert.equal(r.body.result.resource_id, id);
  assert.equal(r.body.result.method, 'insert');
  // the bytes themselves: escapes as sent
  assert.ok(r.raw.includes(String.raw`"tab\there \"quoted\" back\\slash \/ sl\u00e9`));
});

test('members after the records are read; a list that is no list is refused', async () => {
  const id = await newTable();
  const r = await postRaw(
    'datastore_upsert',
    body({}, filler(0, 2000), { method: 'insert', resource_id: id, calculate_record_count: true }),
  );
  assert.equal(r.status, 200, r.raw.slice(0, 300));
  assert.equal((await t.ok('datastore_search', { resource_id: id, limit: 0 }, { token })).total, 2000);
  // A list-valued member after the records: the quick look at the end of the body guesses the
  // records' end wrong, and the request still does what it says.
  let r2 = await postRaw(
    'datastore_upsert',
    body({ resource_id: id }, filler(0, 2000), { method: 'insert', extra: [1, [2]], calculate_record_count: true }),
  );
  assert.equal(r2.status, 200, r2.raw.slice(0, 300));
  assert.equal(r2.body.result.method, 'insert');
  assert.equal(r2.body.result.records.length, 2000);
  r2 = await postRaw('datastore_upsert', body({}, filler(0, 2000), { resource_id: id, method: 'insert', extra: ['a'] }));
  assert.equal(r2.status, 200, r2.raw.slice(0, 300));
  assert.equal((await t.ok('datastore_search', { resource_id: id, limit: 0 }, { token })).total, 6000);
  const big = JSON.stringify({
    resource_id: id,
    method: 'insert',
    records: Object.fromEntries(filler(0, 2000).map((x, i) => [`k${i}`, JSON.parse(x)])),
  });
  const e = await postRaw('datastore_upsert', big);
  assert.equal(e.status, 409);
  assert.deepEqual(e.body.error.records, ['Must be a list']);
});

test('malformed JSON late in a large list is a JSON error and writes nothing', async () => {
  const id = await newTable({ primary_key: ['t'] });
  await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records: [{ t: 'kept' }] }, { token });
  const broken = [
    [...filler(0, 2000), '{"t": "x", "n": 1,}'],
    [...filler(0, 2000), '{"t": "unterminated}'],
    [...filler(0, 2000), '{"t": "raw \u0001 control"}'],
    [...filler(0, 1000), '{"n": 01}', ...filler(1000, 1000)],
  ];
  for (const records of broken) {
    for (const method of ['insert', 'upsert']) {
      const e = await postRaw('datastore_upsert', body({ resource_id: id, method }, records));
      assert.equal(e.status, 400, e.raw.slice(0, 300));
      assert.match(e.body.error.message, /^Bad request - JSON Error/);
    }
  }
  const trailing = body({ resource_id: id, method: 'insert' }, filler(0, 2000)).replace(/\]\}$/, ',]}');
  assert.equal((await postRaw('datastore_upsert', trailing)).status, 400);
  assert.deepEqual(
    (await rows(id)).map((r: any) => r.t),
    ['kept'],
  );
});

test('a bad row, an unknown field or a half-given _id late in a large list writes nothing and is named', async () => {
  const id = await newTable({ primary_key: ['t'] });
  const bad = filler(0, 3000);
  bad[2500] = '{"t": "bad", "n": "not a number"}';
  for (const method of ['insert', 'upsert']) {
    const e = await postRaw('datastore_upsert', body({ resource_id: id, method }, bad));
    assert.equal(e.status, 409, e.raw.slice(0, 600));
    assert.equal(e.body.error.records_row, 2500);
    assert.match(e.body.error.records[0], /integer/);
  }
  const unknown = filler(0, 3000);
  unknown[2999] = '{"t": "x", "nope": 1}';
  let e = await postRaw('datastore_upsert', body({ resource_id: id, method: 'insert' }, unknown));
  assert.equal(e.status, 409);
  assert.deepEqual(e.body.error.fields, ['fields "nope" do not exist']);
  const notObject = filler(0, 3000);
  notObject[1234] = '[1, 2]';
  e = await postRaw('datastore_upsert', body({ resource_id: id, method: 'insert' }, notObject));
  assert.deepEqual(e.body.error.records, ['row "1234" is not a json object']);
  const halfId = filler(0, 3000);
  halfId[2000] = '{"_id": 999999, "t": "x"}';
  e = await postRaw('datastore_upsert', body({ resource_id: id, method: 'insert' }, halfId));
  assert.equal(e.status, 409);
  assert.equal(e.body.error.records_row, 2000);
  assert.equal((await t.ok('datastore_search', { resource_id: id, limit: 0 }, { token })).total, 0);
});

test('a large keyed upsert: later records win, records with other keys update only those, nothing half-written', async () => {
  const id = await newTable({ primary_key: ['n'] });
  await t.ok(
    'datastore_upsert',
    {
      resource_id: id,
      method: 'insert',
      records: [
        { n: 1, t: 'one', f: 1 },
        { n: 2, t: 'two', f: 2 },
      ],
    },
    { token },
  );
  const records = [
    ...filler(10, 2000),
    '{"t": "first", "n": 5000, "f": 0}',
    '{"t": "second", "n": 5000, "f": 0}', // same key twice: the later wins
    '{"n": 1, "t": "one updated"}', // other keys: f stays
    '{"t": "two updated", "n": 2, "f": 22}',
  ];
  const r = await postRaw('datastore_upsert', body({ resource_id: id, method: 'upsert' }, records));
  assert.equal(r.status, 200, r.raw.slice(0, 300));
  const all = await rows(id);
  assert.equal(all.length, 2 + 2000 + 1);
  const byN = new Map(all.map((x: any) => [x.n, x]));
  assert.equal((byN.get(5000) as any).t, 'second');
  assert.deepEqual([(byN.get(1) as any).t, (byN.get(1) as any).f], ['one updated', 1]);
  assert.deepEqual([(byN.get(2) as any).t, (byN.get(2) as any).f], ['two updated', 22]);
  // a record without its key, and a bad value, late in the list: nothing changes
  const before = await rows(id);
  const noKey = [...filler(10, 2000), '{"t": "no key"}'];
  let e = await postRaw(
    'datastore_upsert',
    body(
      { resource_id: id, method: 'upsert' },
      noKey.map((x) => x.replace('"filler', '"changed')),
    ),
  );
  assert.equal(e.status, 409);
  assert.equal(e.body.error.records_row, 2000);
  const badValue = filler(10, 2000).map((x) => x.replace('"filler', '"changed'));
  badValue[1500] = '{"t": "bad", "n": 1510, "f": "not a float"}';
  e = await postRaw('datastore_upsert', body({ resource_id: id, method: 'upsert' }, badValue));
  assert.equal(e.status, 409);
  assert.equal(e.body.error.records_row, 1500);
  assert.deepEqual(await rows(id), before);
});
