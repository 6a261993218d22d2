// A bulk fill (src/datastore/fts.ts "bulk fill") on PostgreSQL without a vacuum before its index
// builds: the pending-rows index is made anew (no search reads the fill's dead row versions
// through it), the indexes built are usable at once, rows written meanwhile are found afterwards,
// and while the indexes are being made searches of the table run without parallel workers (each
// search one process, not every core taken from the fill), the read connection's setting restored.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { recordingQueries } from './helpers/statements.ts';
import type { PostgresBackend } from '../src/datastore/postgres.ts';
import type { Connection, Database } from '../src/db/database.ts';
import { dropFullTextIndexes, fillRange, restoreFullTextIndexes, withBulkFillLock } from '../src/datastore/fts.ts';

let a: TestApp;
let sys: string;
let backend: PostgresBackend;

before(async () => {
  // Writes of over 10 rows leave their vectors to the filler; no bulk fill of its own (the tests make one by hand).
  a = await startApp({ config: { 'svc.datastore.fts_inline_max_rows': 10, 'svc.datastore.fts_bulk_fill_min_rows': 0 } });
  sys = a.sysadminToken;
  backend = a.services.plugins.datastore as PostgresBackend;
  await a.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'rebuild-org', 'R', 'organization', true)",
    [randomUUID()],
  );
  await a.ok('package_create', { name: 'rebuild-ds', owner_org: 'rebuild-org' }, { token: sys });
});
after(async () => {
  await a?.close();
});

const writeDb = () => (backend as any).sessions.write as Database;
const readDb = () => (backend as any).sessions.read as Database;
const settle = () => (backend as any).sessions.filler.idle() as Promise<void>;
const records = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ k: from + i, a: `word${from + i} river`, b: i % 2 ? 'blue water' : 'green lagos' }));

async function createTable(rows: Record<string, unknown>[]): Promise<string> {
  const fields = [
    { id: 'k', type: 'int' },
    { id: 'a', type: 'text' },
    { id: 'b', type: 'text' },
  ];
  return (await a.ok('datastore_create', { resource: { package_id: 'rebuild-ds' }, fields, records: rows }, { token: sys })).resource_id;
}

async function searchKeys(id: string, q: unknown): Promise<number[]> {
  const r = await a.ok('datastore_search', { resource_id: id, q, limit: 1000, fields: ['k'], sort: 'k' }, { token: sys });
  return r.records.map((x: { k: number }) => x.k);
}

/** The rows the pending-rows index lists (dead versions included: a bitmap scan of an index does not skip them), or the plan. */
async function pendingIndexEntries(id: string): Promise<string> {
  const plan = await writeDb().transaction(async (tx) => {
    for (const scan of ['seqscan', 'indexscan', 'indexonlyscan']) await tx.query(`SET LOCAL enable_${scan} = off`);
    const r = await tx.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT "_id" FROM "${id}" WHERE "_full_text" IS NULL`,
    );
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
  return /Bitmap Index Scan on \S+_pending \(actual rows=(\d+) /.exec(plan)?.[1] ?? plan;
}

/** Whether a transaction of the cluster holds back the removal of dead row versions now (another test, another bench). */
async function olderTransactionRunning(): Promise<boolean> {
  const r = await writeDb().query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)`,
  );
  return r.rows[0].n > 0;
}

/** Runs fn noting the statements of the data store's read connections and transactions. */
async function notingReads<T>(into: string[], fn: () => Promise<T>): Promise<T> {
  const db = readDb();
  const note = <C extends Connection>(c: C): C => recordingQueries(c, into);
  const { withConnection, transaction } = db;
  db.withConnection = ((f: (c: Connection) => Promise<unknown>) =>
    withConnection.call(db, (c) => f(note(c)))) as Database['withConnection'];
  db.transaction = ((f: (c: Connection) => Promise<unknown>, opts?: unknown) =>
    transaction.call(db, (c) => f(note(c)), opts as never)) as Database['transaction'];
  try {
    return await fn();
  } finally {
    db.withConnection = withConnection;
    db.transaction = transaction;
  }
}

test('after a bulk fill the pending-rows index lists no row; rows written meanwhile are found', { skip: !onPostgres }, async () => {
  const id = await createTable(records(0, 300));
  await settle();
  const pendingOid = () =>
    writeDb().query<{ oid: number }>(
      `SELECT indexrelid::int AS oid FROM pg_index WHERE indrelid = to_regclass($1) AND indexrelid::regclass::text LIKE '%\\_pending'`,
      [`"${id}"`],
    );
  const before = (await pendingOid()).rows;
  assert.equal(before.length, 1);
  // A bulk fill by hand, the bulk-fill lock held as the filler holds it (no recovery meanwhile).
  await withBulkFillLock(writeDb(), id, async () => {
    const defs = await dropFullTextIndexes(writeDb(), id);
    assert.ok(defs);
    // The pending-rows index stays through the fill (the fill's updates are no HOT ones: see the next test).
    assert.deepEqual((await pendingOid()).rows, before);
    await writeDb().query(`UPDATE "${id}" SET "_full_text" = NULL`);
    // Written while the indexes are dropped: a write too big to fill its own rows, and a small one.
    await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(300, 50) }, { token: sys });
    await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(350, 2) }, { token: sys });
    assert.deepEqual(await searchKeys(id, 'word123'), [123]);
    assert.deepEqual(await searchKeys(id, 'word320'), [320]);
    assert.equal(await fillRange(writeDb(), id, 0, 1_000_000), 350);
    await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
  });
  // Made anew after the fill, without the fill's dead versions (600: the UPDATE above and the fill),
  // as far as no older transaction in the cluster still sees them (then a vacuum would keep them too).
  const after = (await pendingOid()).rows;
  assert.equal(after.length, 1);
  assert.notEqual(after[0].oid, before[0].oid);
  if (!(await olderTransactionRunning())) assert.equal(await pendingIndexEntries(id), '0');
  assert.deepEqual(await searchKeys(id, 'word320'), [320]);
  assert.deepEqual(await searchKeys(id, 'word351'), [351]);
  assert.equal((await searchKeys(id, { b: 'lagos' })).length, 176);
  // Later writes are pending through it again, then filled.
  await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(400, 20) }, { token: sys });
  assert.deepEqual(await searchKeys(id, 'word410'), [410]);
  await settle();
  assert.deepEqual(await searchKeys(id, 'word410'), [410]);
});

test('the indexes a bulk fill builds are usable at once while a transaction older than the fill is open', {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(records(0, 300));
  await settle();
  // Were the fill's updates HOT ones (no index on _full_text during the fill), the chains would be
  // broken for the indexes built after it, which then are not used until such a transaction ends (indcheckxmin).
  const old = new pg.Client({ connectionString: String(a.services.config.str('svc.datastore.write_url')) });
  await old.connect();
  try {
    await old.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await old.query('SELECT 1'); // its snapshot (no lock on the table: the fill drops indexes)
    await withBulkFillLock(writeDb(), id, async () => {
      const defs = await dropFullTextIndexes(writeDb(), id);
      assert.ok(defs);
      await writeDb().query(`UPDATE "${id}" SET "_full_text" = NULL`);
      assert.equal(await fillRange(writeDb(), id, 0, 1_000_000), 300);
      await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
    });
    const planned = await writeDb().transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const r = await tx.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (COSTS OFF) SELECT "_id" FROM "${id}" WHERE ("_full_text" @@ plainto_tsquery('english', 'lagos') AND "_id" <= 150) OR ("_full_text" @@ plainto_tsquery('english', 'lagos') AND "_id" > 150)`,
      );
      return r.rows.map((x) => x['QUERY PLAN']).join('\n');
    });
    assert.match(planned, /Bitmap Index Scan on \S+_fts_lo[\s\S]*Bitmap Index Scan on \S+_fts_hi/, planned);
    assert.deepEqual(await searchKeys(id, 'word123'), [123]);
  } finally {
    await old.end();
  }
});

test('searches of a table whose indexes a bulk fill is making again run without parallel workers, and only those', {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(records(0, 200));
  await settle();
  const during: string[] = [];
  await withBulkFillLock(writeDb(), id, async () => {
    const defs = await dropFullTextIndexes(writeDb(), id);
    assert.ok(defs);
    await notingReads(during, async () => {
      assert.deepEqual(await searchKeys(id, 'word42'), [42]);
      assert.equal((await searchKeys(id, 'lagos')).length, 100);
    });
    await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
  });
  const sets = during.filter((s) => /max_parallel_workers_per_gather/.test(s));
  assert.deepEqual(sets, [
    'SET max_parallel_workers_per_gather = 0',
    'RESET max_parallel_workers_per_gather',
    'SET max_parallel_workers_per_gather = 0',
    'RESET max_parallel_workers_per_gather',
  ]);
  // Each search's statements between its SET and its RESET.
  assert.ok(during.indexOf('RESET max_parallel_workers_per_gather') > during.indexOf('SET max_parallel_workers_per_gather = 0') + 1);
  // Once the indexes are back (the mark gone), searches leave the setting alone.
  const later: string[] = [];
  await notingReads(later, async () => assert.deepEqual(await searchKeys(id, 'word42'), [42]));
  assert.deepEqual(
    later.filter((s) => /max_parallel/.test(s)),
    [],
  );
  // A failed search of a marked table restores it too: the next search on the pool plans with parallel workers allowed.
  await withBulkFillLock(writeDb(), id, async () => {
    const defs = await dropFullTextIndexes(writeDb(), id);
    assert.ok(defs);
    // The database fails it (a malformed tsquery), after the SET.
    const failed = await a.call('datastore_search', { resource_id: id, q: 'river & & lagos', plain: false }, { token: sys });
    assert.equal(failed.body.success, false, JSON.stringify(failed.body));
    await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
  });
  const shown = await readDb().withConnection((c) =>
    c.query<{ v: string }>('SELECT current_setting($1) AS v', ['max_parallel_workers_per_gather']),
  );
  assert.notEqual(shown.rows[0].v, '0');
});
