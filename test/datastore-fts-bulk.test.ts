// A big table whose full-text vectors are mostly still to compute (a load's end) is filled in bulk
// on PostgreSQL: its full-text indexes dropped, the vectors computed by ranges, the indexes built
// again (src/datastore/fts.ts "bulk fill"). Searches stay right throughout, and a process that
// died with the indexes dropped has them made again by the next search.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import type { PostgresBackend } from '../src/datastore/postgres.ts';
import type { Database } from '../src/db/database.ts';
import { dropFullTextIndexes, fillRange, restoreFullTextIndexes, withBulkFillLock } from '../src/datastore/fts.ts';
import { recordingQueries } from './helpers/statements.ts';

let a: TestApp;
let sys: string;
let backend: PostgresBackend;
const ROWS = 600;

before(async () => {
  // Any write of over 10 rows is left to the filler; tables with 100+ such rows are filled in bulk.
  a = await startApp({ config: { 'svc.datastore.fts_inline_max_rows': 10, 'svc.datastore.fts_bulk_fill_min_rows': 100 } });
  sys = a.sysadminToken;
  backend = a.services.plugins.datastore as PostgresBackend;
  await a.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'bulk-org', 'B', 'organization', true)",
    [randomUUID()],
  );
  await a.ok('package_create', { name: 'bulk-ds', owner_org: 'bulk-org' }, { token: sys });
});
after(async () => {
  await a?.close();
});

const writeDb = () => (backend as any).sessions.write as Database;
const settle = () => (backend as any).sessions.filler.idle() as Promise<void>;
const records = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ k: from + i, a: `word${from + i} river`, b: i % 2 ? 'blue water' : 'green lagos' }));

/** The table's full-text indexes (not the pending one) by name, with their oids. */
async function fullTextIndexes(id: string): Promise<Map<string, number>> {
  const r = await writeDb().query<{ name: string; oid: number }>(
    `SELECT c.relname AS name, c.oid::int AS oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = to_regclass($1) AND c.relname LIKE '%\\_fts%' AND c.relname NOT LIKE '%\\_pending' ORDER BY 1`,
    [`"${id}"`],
  );
  return new Map(r.rows.map((x) => [x.name, Number(x.oid)]));
}

const pending = async (id: string) =>
  Number((await backend.readQuery(`SELECT count(*)::int AS n FROM "${id}" WHERE "_full_text" IS NULL`, { rowLimit: 1 })).records[0].n);

async function searchKeys(id: string, q: unknown): Promise<number[]> {
  const r = await a.ok('datastore_search', { resource_id: id, q, limit: 1000, fields: ['k'], sort: 'k' }, { token: sys });
  return r.records.map((x: { k: number }) => x.k);
}

/** A new table (k, a, b) of the dataset with these rows; its id. */
async function createTable(rows: Record<string, unknown>[]): Promise<string> {
  const fields = [
    { id: 'k', type: 'int' },
    { id: 'a', type: 'text' },
    { id: 'b', type: 'text' },
  ];
  return (await a.ok('datastore_create', { resource: { package_id: 'bulk-ds' }, fields, records: rows }, { token: sys })).resource_id;
}

/** Index names with the row vectors' index (ds_<oid>_fts) as its two halves, sorted. */
const splitNames = (indexes: Map<string, number>) =>
  [...indexes.keys()].flatMap((n) => (/_fts$/.test(n) ? [`${n}_hi`, `${n}_lo`] : [n])).sort();

test('a table loaded with its vectors to compute is filled in bulk, its indexes built again, and searches right before and after', async () => {
  const id = await createTable([]);
  const before = onPostgres ? await fullTextIndexes(id) : new Map();
  for (let i = 0; i < ROWS; i += 200)
    await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(i, 200) }, { token: sys });
  // Right while the vectors are being computed (whatever the filler has done so far).
  assert.deepEqual(await searchKeys(id, 'word337'), [337]);
  await settle();
  assert.equal(await pending(id), 0);
  assert.deepEqual(await searchKeys(id, 'word337'), [337]);
  assert.deepEqual(await searchKeys(id, { a: 'word42' }), [42]);
  assert.equal((await searchKeys(id, 'lagos')).length, ROWS / 2);
  if (onPostgres) {
    // The same indexes, made again (new oids), the row vectors' one as two halves: the bulk path ran and left nothing dropped.
    const now = await fullTextIndexes(id);
    assert.deepEqual([...now.keys()], splitNames(before));
    assert.ok(before.size >= 3, `full-text indexes: ${[...before.keys()]}`);
    for (const [name, oid] of now) assert.notEqual(oid, before.get(name), `${name} was built again`);
    const comment = await writeDb().query<{ c: string }>('SELECT obj_description(to_regclass($1), $2) AS c', [`"${id}"`, 'pg_class']);
    assert.ok(!comment.rows[0].c.includes('fts_rebuild'), comment.rows[0].c);
  }
});

test('indexes dropped by a process that died during a bulk fill are made again by the next search', { skip: !onPostgres }, async () => {
  const id = await createTable(records(0, 5));
  const before = await fullTextIndexes(id);
  // What a bulk fill does first; the process then "dies" (nothing makes them again).
  assert.ok(await dropFullTextIndexes(writeDb(), id));
  assert.equal((await fullTextIndexes(id)).size, 0);
  assert.deepEqual(await searchKeys(id, 'word3'), [3]);
  const deadline = Date.now() + 15_000;
  while ((await fullTextIndexes(id)).size < before.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual([...(await fullTextIndexes(id)).keys()], [...before.keys()]);
  assert.deepEqual(await searchKeys(id, 'word3'), [3]);
});

test("after a bulk fill no search reads the fill's dead row versions: the pending-rows index is made anew before the other indexes", {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(records(0, 300));
  await settle();
  // A bulk fill by hand (the filler knows nothing of it): indexes dropped, every vector computed again.
  const defs = await dropFullTextIndexes(writeDb(), id);
  assert.ok(defs);
  await writeDb().query(`UPDATE "${id}" SET "_full_text" = NULL`);
  assert.equal(await fillRange(writeDb(), id, 0, 1_000_000), 300);
  await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
  // The index of pending rows lists no row (the one of the fill lists the 300 dead versions, and a
  // search of a big table then reads all of it); a bitmap scan of an index does not skip dead entries.
  const plan = await writeDb().transaction(async (tx) => {
    for (const scan of ['seqscan', 'indexscan', 'indexonlyscan']) await tx.query(`SET LOCAL enable_${scan} = off`);
    const r = await tx.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT "_id" FROM "${id}" WHERE "_full_text" IS NULL`,
    );
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
  // Unless a transaction elsewhere in the cluster (another test, a bench) still sees those versions: a vacuum would keep them too.
  const others = await writeDb().query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)`,
  );
  if (!others.rows[0].n) assert.equal(/Bitmap Index Scan on \S+_pending \(actual rows=(\d+) /.exec(plan)?.[1], '0', plan);
  else assert.match(plan, /Bitmap Index Scan on \S+_pending/, plan);
  // The row vectors' index made again as two halves (two connections), the others as they were.
  assert.deepEqual(
    [...(await fullTextIndexes(id)).keys()],
    splitNames(new Map(defs.map((d) => [/INDEX IF NOT EXISTS (\S+)/.exec(d)![1], 0]))),
  );
  assert.deepEqual(await searchKeys(id, 'word123'), [123]);
  assert.equal((await searchKeys(id, { b: 'lagos' })).length, 150);
});

/** What the filler does to a table filled in bulk: indexes dropped, every vector computed again, indexes built on two connections. */
async function bulkFillByHand(id: string): Promise<void> {
  const defs = await dropFullTextIndexes(writeDb(), id);
  assert.ok(defs);
  await writeDb().query(`UPDATE "${id}" SET "_full_text" = NULL`);
  await fillRange(writeDb(), id, 0, 1_000_000);
  await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
}

/** Which of the table's full-text indexes a search's WHERE clause is planned with (sequential scans off). */
async function indexesPlanned(id: string, where: string): Promise<string[]> {
  return writeDb().transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    const r = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) SELECT "_id" FROM "${id}" WHERE ${where}`);
    return [...new Set(r.rows.flatMap((x) => /Index Scan on (\S+)/.exec(x['QUERY PLAN'])?.[1] ?? []))].sort();
  });
}

test('the row vectors index of a bulk fill is two halves split by _id: both searched, kept by writes, datastore_create and recovery', {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(records(0, ROWS));
  await settle();
  // A bulk fill by hand (whether the filler fills a table in bulk depends on timing).
  await bulkFillByHand(id);
  const halves = [...(await fullTextIndexes(id)).keys()].filter((n) => /_fts_(lo|hi)$/.test(n));
  assert.equal(halves.length, 2, `${[...(await fullTextIndexes(id)).keys()]}`);
  // The split is in the table comment, at the middle _id; a search condition as select.ts writes it plans both halves.
  const comment = await writeDb().query<{ c: string }>('SELECT obj_description(to_regclass($1), $2) AS c', [`"${id}"`, 'pg_class']);
  assert.equal(JSON.parse(comment.rows[0].c).fts_row_split, (1 + ROWS) >> 1);
  const matchSql = `("_full_text" @@ plainto_tsquery('english', 'lagos') AND "_id" <= 300) OR ("_full_text" @@ plainto_tsquery('english', 'lagos') AND "_id" > 300)`;
  assert.deepEqual(await indexesPlanned(id, matchSql), halves.sort());
  // Rows on both sides of the split, then later writes: new rows (past the split) and a row of the first half changed.
  assert.deepEqual(await searchKeys(id, 'word42'), [42]);
  assert.deepEqual(await searchKeys(id, 'word555'), [555]);
  await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(ROWS, 5) }, { token: sys });
  await a.ok('datastore_create', { resource_id: id, primary_key: ['k'], force: true }, { token: sys });
  await a.ok('datastore_upsert', { resource_id: id, records: [{ k: 7, a: 'moved kayak', b: 'x' }] }, { token: sys });
  await settle();
  assert.deepEqual(await searchKeys(id, `word${ROWS + 3}`), [ROWS + 3]);
  assert.deepEqual(await searchKeys(id, 'kayak'), [7]);
  assert.deepEqual(await searchKeys(id, 'word7'), []);
  // datastore_create changing the table's indexes keeps the halves as they are (no whole index made).
  const kept = await fullTextIndexes(id);
  const alias = `split-alias-${randomUUID().slice(0, 8)}`;
  await a.ok('datastore_create', { resource_id: id, indexes: ['a'], aliases: [alias], force: true }, { token: sys });
  assert.deepEqual(await fullTextIndexes(id), kept);
  assert.deepEqual(await searchKeys(alias, 'word555'), [555]);
  assert.deepEqual(await searchKeys(alias, 'word42'), [42]);
  // A process that dies during a later bulk fill: the halves are made again by a search (one that
  // reads the table's description after the mark: searches go on, as the cached one may be older).
  assert.ok(await dropFullTextIndexes(writeDb(), id));
  const deadline = Date.now() + 15_000;
  while ((await fullTextIndexes(id)).size < kept.size && Date.now() < deadline) {
    assert.deepEqual(await searchKeys(id, 'word555'), [555]);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual([...(await fullTextIndexes(id)).keys()], [...kept.keys()]);
  // Every row deleted and the table loaded again: a new bulk fill splits it at the new rows' middle.
  await a.ok('datastore_delete', { resource_id: id, filters: {}, force: true }, { token: sys });
  assert.deepEqual(await searchKeys(id, 'word555'), []);
  for (let i = 1000; i < 1000 + ROWS; i += 200)
    await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(i, 200) }, { token: sys });
  await settle();
  await bulkFillByHand(id);
  const again = await writeDb().query<{ c: string }>('SELECT obj_description(to_regclass($1), $2) AS c', [`"${id}"`, 'pg_class']);
  assert.ok(JSON.parse(again.rows[0].c).fts_row_split > ROWS + 5, again.rows[0].c);
  assert.deepEqual(await searchKeys(id, 'word1042'), [1042]);
  assert.deepEqual(await searchKeys(id, 'word1555'), [1555]);
  assert.equal((await searchKeys(id, 'lagos')).length, ROWS / 2);
});

test("searches during a bulk fill: a page shorter than asked for gives the exact total without the count's second scan", {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(records(0, 300));
  await settle();
  const sessions = (backend as any).sessions;
  const statements: string[] = [];
  const readSession = sessions.readSession.bind(sessions);
  sessions.readSession = (fn: (q: unknown) => Promise<unknown>) => readSession((q: any) => fn(recordingQueries(q, statements)));
  const search = async (q: string, limit: number, offset = 0) => {
    statements.length = 0;
    const r = await a.ok('datastore_search', { resource_id: id, q, limit, offset, fields: ['k'] }, { token: sys });
    return {
      keys: r.records.map((x: { k: number }) => x.k).sort((x: number, y: number) => x - y),
      total: r.total,
      counted: statements.some((x) => /count\(\*\)/.test(x)),
    };
  };
  try {
    // A bulk fill in progress (its lock held, as the filler's: no recovery makes the indexes meanwhile), half the rows still to fill.
    await withBulkFillLock(writeDb(), id, async () => {
      const defs = await dropFullTextIndexes(writeDb(), id);
      assert.ok(defs);
      await writeDb().query(`UPDATE "${id}" SET "_full_text" = NULL WHERE k % 2 = 0`);
      assert.deepEqual(await search('word137', 10), { keys: [137], total: 1, counted: false });
      assert.deepEqual(await search('word138', 10), { keys: [138], total: 1, counted: false });
      assert.deepEqual(await search('nowhere', 10), { keys: [], total: 0, counted: false });
      // 150 matches: a full page is counted; the last, short page is its own count; a page past the end is counted.
      const full = await search('lagos', 10);
      assert.deepEqual([full.keys.length, full.total, full.counted], [10, 150, true]);
      const last = await search('lagos', 100, 100);
      assert.deepEqual([last.keys.length, last.total, last.counted], [50, 150, false]);
      assert.deepEqual(await search('lagos', 10, 500), { keys: [], total: 150, counted: true });
      await fillRange(writeDb(), id, 0, 1_000_000);
      await restoreFullTextIndexes(writeDb(), id, defs, 2, 16);
    });
    // Indexes back: searches as before (a full-text total counted apart).
    assert.deepEqual(await search('word137', 10), { keys: [137], total: 1, counted: true });
  } finally {
    sessions.readSession = readSession;
  }
});
