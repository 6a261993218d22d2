// Bookkeeping of a bulk full-text fill (src/datastore/fts.ts "bulk fill") on PostgreSQL: indexes
// dropped by a process that died are made again at the next start or the next write (not only by
// a search), and the table comment, which the filler and datastore_create both write, keeps the
// keys of each when they write it at once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import type { PostgresBackend } from '../src/datastore/postgres.ts';
import type { Database } from '../src/db/database.ts';
import { defaultFtsSettings, dropFullTextIndexes, rebuildDroppedIndexes } from '../src/datastore/fts.ts';

let a: TestApp;
let sys: string;

before(async () => {
  a = await startApp();
  sys = a.sysadminToken;
  await a.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'fts-rec-org', 'R', 'organization', true)",
    [randomUUID()],
  );
  await a.ok('package_create', { name: 'fts-rec', owner_org: 'fts-rec-org' }, { token: sys });
});
after(async () => {
  await a?.close();
});

const backendOf = (app: TestApp) => app.services.plugins.datastore as PostgresBackend;
const writeDb = (app: TestApp = a) => (backendOf(app) as any).sessions.write as Database;
const writeUrl = () => String(a.services.config.str('svc.datastore.write_url'));
const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ k: from + i, a: `word${from + i} river`, b: 'lagos' }));

async function createTable(n: number): Promise<string> {
  const fields = [
    { id: 'k', type: 'int' },
    { id: 'a', type: 'text' },
    { id: 'b', type: 'text' },
  ];
  return (await a.ok('datastore_create', { resource: { package_id: 'fts-rec' }, fields, records: records(0, n) }, { token: sys }))
    .resource_id;
}

/** The table's full-text indexes (not the pending one), sorted. */
async function fullTextIndexes(id: string): Promise<string[]> {
  const r = await writeDb().query<{ name: string }>(
    `SELECT indexname AS name FROM pg_indexes WHERE tablename = $1 AND indexname LIKE '%\\_fts%' AND indexname NOT LIKE '%\\_pending' ORDER BY 1`,
    [id],
  );
  return r.rows.map((x) => x.name);
}

/** Waits (without searching the table) until it has these full-text indexes again, or 30 s (a loaded machine). */
async function indexesBack(id: string, want: string[]): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  let now = await fullTextIndexes(id);
  while (now.join() !== want.join() && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    now = await fullTextIndexes(id);
  }
  return now;
}

const comment = async (id: string) =>
  JSON.parse((await writeDb().query<{ c: string }>('SELECT obj_description(to_regclass($1), $2) AS c', [`"${id}"`, 'pg_class'])).rows[0].c);

async function searchKeys(id: string, q: string): Promise<number[]> {
  const r = await a.ok('datastore_search', { resource_id: id, q, fields: ['k'], sort: 'k' }, { token: sys });
  return r.records.map((x: { k: number }) => x.k);
}

test('indexes dropped by a process that died during a bulk fill are made again by the next write, with no search', {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(5);
  const before = await fullTextIndexes(id);
  assert.ok(before.length >= 3, `${before}`);
  // What a bulk fill does first; its process then "dies" (no lock held, nothing makes them again).
  assert.ok(await dropFullTextIndexes(writeDb(), id));
  assert.deepEqual(await fullTextIndexes(id), []);
  await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(5, 1) }, { token: sys });
  assert.deepEqual(await indexesBack(id, before), before);
  assert.ok(!('fts_rebuild_since' in (await comment(id))));
  assert.deepEqual(await searchKeys(id, 'word5'), [5]);
});

test('indexes dropped by a process that died during a bulk fill are made again when a process starts', { skip: !onPostgres }, async () => {
  const id = await createTable(5);
  const before = await fullTextIndexes(id);
  assert.ok(await dropFullTextIndexes(writeDb(), id));
  // Another process starts on the same data store; nobody searches or writes the table.
  const url = new URL(writeUrl());
  const read = String(a.services.config.str('svc.datastore.read_url'));
  const b = await startApp({ config: { 'svc.datastore.write_url': url.toString(), 'svc.datastore.read_url': read } });
  try {
    assert.deepEqual(await indexesBack(id, before), before);
  } finally {
    await b.close();
  }
  assert.deepEqual(await searchKeys(id, 'word3'), [3]);
});

/** A transaction of its own on the data store, holding what a concurrent writer of the table comment holds. */
async function commentWriter(id: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: writeUrl() });
  await c.connect();
  await c.query('BEGIN');
  await c.query(`LOCK TABLE "${id}" IN SHARE UPDATE EXCLUSIVE MODE`);
  return c;
}

/** Waits until some other transaction waits for a lock on the table (at least `n` of them). */
async function waitersOn(id: string, n = 1): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await writeDb().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE relation = to_regclass($1) AND NOT granted`,
      [`"${id}"`],
    );
    if (r.rows[0].n >= n) return;
    if (Date.now() > deadline) throw new Error(`no transaction waits for ${id}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("datastore_create with a primary key while the filler records its split keeps the filler's keys", { skip: !onPostgres }, async () => {
  const id = await createTable(20);
  // The filler's transaction that records where the row vectors' index is split (and that its indexes are dropped).
  const filler = await commentWriter(id);
  const create = a.call('datastore_create', { resource_id: id, primary_key: ['k'], force: true }, { token: sys });
  try {
    await waitersOn(id);
    const meta = { ...(await comment(id)), fts_row_split: 10, fts_rebuild_since: new Date().toISOString() };
    await filler.query(`COMMENT ON TABLE "${id}" IS '${JSON.stringify(meta).replace(/'/g, "''")}'`);
    await filler.query('COMMIT');
  } finally {
    await filler.end();
  }
  assert.equal((await create).status, 200);
  const meta = await comment(id);
  assert.deepEqual(meta.primary_key, ['k']);
  assert.equal(meta.fts_row_split, 10, JSON.stringify(meta));
  assert.ok(meta.fts_rebuild_since, JSON.stringify(meta));
});

test("the filler's recovery while datastore_create sets a primary key keeps the key: upserts by it work", {
  skip: !onPostgres,
}, async () => {
  const id = await createTable(20);
  assert.ok(await dropFullTextIndexes(writeDb(), id));
  // datastore_create's transaction setting the primary key, and the recovery of the dropped indexes beside it.
  const creator = await commentWriter(id);
  const recovery = writeDb().transaction((tx) => rebuildDroppedIndexes(tx, id, defaultFtsSettings));
  try {
    await waitersOn(id);
    const meta = { ...(await comment(id)), primary_key: ['k'] };
    await creator.query(`CREATE UNIQUE INDEX "${id}_test_pk" ON "${id}" ("k")`);
    await creator.query(`COMMENT ON TABLE "${id}" IS '${JSON.stringify(meta).replace(/'/g, "''")}'`);
    await creator.query('COMMIT');
  } finally {
    await creator.end();
  }
  await recovery;
  const meta = await comment(id);
  assert.deepEqual(meta.primary_key, ['k'], JSON.stringify(meta));
  assert.ok(!('fts_rebuild_since' in meta), JSON.stringify(meta));
  await a.ok('datastore_upsert', { resource_id: id, method: 'upsert', records: [{ k: 3, a: 'kayak', b: 'x' }] }, { token: sys });
  assert.deepEqual(await searchKeys(id, 'kayak'), [3]);
  assert.deepEqual(await searchKeys(id, 'word3'), []);
});
