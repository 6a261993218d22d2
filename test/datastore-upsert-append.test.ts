// A keyed upsert whose records are new rows in ascending key order is one COPY into the table
// (src/datastore/append.ts); any other batch is upserted as before. Both give the same table:
// later records win, existing rows are updated (fields left out keep their values), errors name
// the request's row and write nothing, the stored count and full-text search stay right, and
// parallel loads of overlapping keys all succeed. Runs on PGlite and (with SVC_TEST_DATABASE_URL)
// PostgreSQL.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let sys: string;
// Writes of more than 20 rows leave their vectors to the background filler (and may be appended).
const INLINE_MAX = 20;

before(async () => {
  t = await startApp({ config: { 'svc.datastore.fts_inline_max_rows': INLINE_MAX, 'svc.auth.create_unowned_dataset': true } });
  sys = t.sysadminToken;
  await t.ok('package_create', { name: 'append-ds' }, { token: sys });
});
after(async () => {
  await t?.close();
});

const FIELDS = [
  { id: 'k', type: 'int8' },
  { id: 'name', type: 'text' },
  { id: 'v', type: 'int' },
];

async function newTable(primaryKey = ['k']): Promise<string> {
  return (
    await t.ok(
      'datastore_create',
      { resource: { package_id: 'append-ds', name: 't' }, fields: FIELDS, primary_key: primaryKey },
      { token: sys },
    )
  ).resource_id;
}

const upsert = (id: string, records: unknown[], extra: Record<string, unknown> = {}) =>
  t.call('datastore_upsert', { resource_id: id, method: 'upsert', records, ...extra }, { token: sys });

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
const rec = (k: number, v = k) => ({ k, name: `row ${k} water`, v });

async function rows(id: string): Promise<{ total: number; records: { _id: number; k: number; name: string | null; v: number | null }[] }> {
  const r = await t.ok('datastore_search', { resource_id: id, sort: 'k', limit: 32000 }, { token: sys });
  return { total: r.total, records: r.records.map((x: any) => ({ ...x, k: Number(x.k) })) };
}

async function count(id: string): Promise<number> {
  return (await t.ok('datastore_info', { resource_id: id }, { token: sys })).meta.count;
}

test('new ascending keys, then batches with existing, repeated, unordered and partial records', async () => {
  const id = await newTable();
  // New keys in order (small and JSON-list sized bodies: the parsed list and the bytes).
  for (const batch of [range(1, 50), range(51, 2950)]) {
    const r = await upsert(
      id,
      batch.map((k) => rec(k)),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body.error));
  }
  let all = await rows(id);
  assert.equal(all.total, 3000);
  assert.deepEqual(
    all.records.map((x) => x.k),
    range(1, 3000),
  );
  assert.equal(new Set(all.records.map((x) => x._id)).size, 3000);
  assert.equal(await count(id), 3000);

  // Ascending, but the first ten keys exist: they are updated, the others new.
  assert.equal(
    (
      await upsert(
        id,
        range(2991, 40).map((k) => rec(k, -k)),
      )
    ).status,
    200,
  );
  // Ascending, but the last key exists.
  assert.equal(
    (
      await upsert(
        id,
        [...range(7001, 40), 3000].map((k) => rec(k, -k)),
      )
    ).status,
    200,
  );
  // Ascending with a repeated key: the later record wins.
  assert.equal(
    (
      await upsert(
        id,
        [...range(8001, 30), 8030, 8031].map((k, i) => rec(k, i)),
      )
    ).status,
    200,
  );
  // Descending new keys.
  assert.equal(
    (
      await upsert(
        id,
        range(9001, 30)
          .reverse()
          .map((k) => rec(k)),
      )
    ).status,
    200,
  );
  // Ascending new keys, but some records leave a field out (new rows: NULL), and existing rows keep theirs.
  assert.equal(
    (
      await upsert(
        id,
        [...range(10001, 30), 1, 2].map((k) => (k % 2 ? { k, v: 0 } : rec(k, 0))),
      )
    ).status,
    200,
  );

  all = await rows(id);
  const byKey = new Map(all.records.map((x) => [x.k, x]));
  assert.equal(all.total, 3000 + 30 + 40 + 31 + 30 + 30);
  assert.equal(await count(id), all.total);
  assert.equal(byKey.get(7001)!.v, -7001);
  assert.equal(byKey.get(3000)!.v, -3000);
  assert.equal(byKey.get(2991)!.v, -2991);
  assert.equal(byKey.get(3030)!.v, -3030);
  assert.equal(byKey.get(2990)!.v, 2990);
  assert.equal(byKey.get(8030)!.v, 30);
  assert.equal(byKey.get(9001)!.name, 'row 9001 water');
  assert.equal(byKey.get(10001)!.name, null);
  assert.equal(byKey.get(10002)!.name, 'row 10002 water');
  assert.deepEqual([byKey.get(1)!.name, byKey.get(1)!.v], ['row 1 water', 0]);
  assert.equal(new Set(all.records.map((x) => x._id)).size, all.total);

  // Full text finds appended rows (vectors computed by the filler, or at query time meanwhile).
  const found = await t.ok('datastore_search', { resource_id: id, q: 'water', limit: 0 }, { token: sys });
  assert.equal(found.total, all.total - 15);
});

test('a bad value or a null key in an appendable batch names its row and writes nothing', async () => {
  const id = await newTable();
  assert.equal(
    (
      await upsert(
        id,
        range(1, 30).map((k) => rec(k)),
      )
    ).status,
    200,
  );
  const bad = range(101, 40).map((k) => rec(k)) as Record<string, unknown>[];
  bad[33] = { ...bad[33], v: 'not a number' };
  const r = await upsert(id, bad);
  assert.equal(r.status, 409);
  assert.equal(r.body.error!.records_row, 33);
  assert.match(JSON.stringify(r.body.error!.records), /invalid input syntax for type integer/);
  const nullKey = range(201, 40).map((k) => rec(k)) as Record<string, unknown>[];
  nullKey[25] = { ...nullKey[25], k: null };
  const e = await upsert(id, nullKey);
  assert.equal(e.status, 409);
  assert.equal(e.body.error!.records_row, 25);
  assert.equal((await rows(id)).total, 30);
  assert.equal(await count(id), 30);
});

test('dry_run of an appendable batch writes nothing; keys too large for a double and text keys still upsert', async () => {
  const id = await newTable();
  assert.equal(
    (
      await upsert(
        id,
        range(1, 40).map((k) => rec(k)),
        { dry_run: true },
      )
    ).status,
    200,
  );
  assert.equal((await rows(id)).total, 0);
  const big = range(0, 30).map((i) => ({ k: String(9007199254740993n + BigInt(i)), v: i }));
  assert.equal((await upsert(id, big)).status, 200);
  assert.equal(
    (
      await upsert(
        id,
        big.map((r) => ({ ...r, v: -1 })),
      )
    ).status,
    200,
  );
  const all = await rows(id);
  assert.equal(all.total, 30);
  assert.ok(all.records.every((x) => x.v === -1));

  const named = await newTable(['name']);
  const recs = range(1, 30).map((k) => ({ name: `n${String(k).padStart(3, '0')}`, v: k }));
  assert.equal((await upsert(named, recs)).status, 200);
  assert.equal(
    (
      await upsert(
        named,
        recs.map((r) => ({ ...r, v: 0 })),
      )
    ).status,
    200,
  );
  assert.equal((await rows(named)).total, 30);
});

test('parallel loads of overlapping ascending keys all succeed and leave each key once', async () => {
  const id = await newTable();
  const CLIENTS = onPostgres ? 12 : 4;
  // Client c writes keys [20c, 20c + 60) in ascending order: most keys are written by three clients.
  const results = await Promise.all(
    range(0, CLIENTS).map((c) =>
      upsert(
        id,
        range(20 * c, 60).map((k) => rec(k, c)),
      ),
    ),
  );
  for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body.error));
  const all = await rows(id);
  const expected = range(0, 20 * (CLIENTS - 1) + 60);
  assert.deepEqual(
    all.records.map((x) => x.k),
    expected,
  );
  for (const x of all.records) assert.ok(x.k >= 20 * x.v! && x.k < 20 * x.v! + 60, `key ${x.k} written by client ${x.v}`);
  assert.equal(await count(id), expected.length);
});
