// The embedded data store's database in a worker thread (src/db/pglite-worker.ts): a statement
// past its statement_timeout is stopped with PostgreSQL's error, committed data stays, the stopped
// transaction leaves nothing, and the server's thread keeps running meanwhile.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshPGlite, onPostgres } from './helpers/app.ts';
import { PGliteWorkerDatabase } from '../src/db/pglite-worker.ts';

// The same on both passes: it runs once, in the PGlite pass.
const skip = onPostgres;
const SLOW = `SELECT count(*) FROM generate_series(1,25000) g WHERE md5(repeat(g::text,100000))=''`;
let dir: string;
let template: string;
let db: PGliteWorkerDatabase;

before(async () => {
  if (skip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-worker-'));
  await (await freshPGlite()).close(); // makes the template when missing
  template = process.env.SVC_TEST_TEMPLATE ?? path.join(process.cwd(), '.cache', 'pglite-template.tar.gz');
  db = await PGliteWorkerDatabase.open({ dataDir: path.join(dir, 'data'), template });
  await db.exec('CREATE TABLE t (n int)');
});
after(async () => {
  await db?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0].n;

test('a statement past its timeout is stopped; committed rows stay, the stopped transaction leaves nothing', { skip }, async () => {
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO t SELECT generate_series(1, 100)');
  });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 50);
  const started = Date.now();
  const err = await db
    .transaction(
      async (tx) => {
        await tx.query('INSERT INTO t VALUES (-1)');
        await tx.query(SLOW);
      },
      { statementTimeoutMs: 500 },
    )
    .then(
      () => null,
      (e) => e,
    );
  clearInterval(timer);
  assert.equal(err?.code, '57014');
  assert.equal(err?.message, 'canceling statement due to statement timeout');
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  assert.ok(ticks >= 5, `the server's thread was held (${ticks} ticks)`);
  assert.equal(await count(), 100);
  assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t WHERE n = -1')).rows[0].n, 0);
  // No timeout is left behind: a later transaction without one runs as long as it takes.
  const r = await db.transaction(
    async (tx) => (await tx.query<{ s: string }>(`SELECT setting AS s FROM pg_settings WHERE name = 'statement_timeout'`)).rows[0].s,
  );
  assert.equal(r, '0');
});

test('after a stop, writes and COPY work, and the data dir opens again with everything committed', { skip }, async () => {
  await db
    .transaction(
      async (tx) => {
        await tx.query(SLOW);
      },
      { readOnly: true, statementTimeoutMs: 300 },
    )
    .catch(() => undefined);
  const copied = await db.transaction((tx) => tx.copyIn('t (n)', [Buffer.from('1000\n1001\n')]));
  assert.equal(copied, 2);
  const before = await count();
  await db.close();
  db = await PGliteWorkerDatabase.open({ dataDir: path.join(dir, 'data') });
  assert.equal(await count(), before);
});

test('a thread whose memory passed maxMemoryBytes is replaced once its transaction is done; nothing is lost', { skip }, async () => {
  const rows = await count();
  const recycled = db.recycled;
  db.maxMemoryBytes = 1;
  try {
    // Several statements of one transaction run on one thread: it is replaced only after the commit.
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t VALUES (7)');
      await tx.query('INSERT INTO t VALUES (8)');
    });
    assert.equal(db.recycled, recycled + 1);
    assert.equal(await count(), rows + 2);
    assert.equal(db.recycled, recycled + 2);
  } finally {
    db.maxMemoryBytes = 0;
  }
  assert.equal(await count(), rows + 2);
  assert.ok(db.heapBytes > 0, 'the thread reports its memory');
  assert.equal(db.recycled, recycled + 2);
});

test('a yielding transaction is stopped when another request waits, after yieldAfterMs', { skip }, async () => {
  const started = Date.now();
  const slow = db
    .transaction((tx) => tx.query(SLOW), { readOnly: true, yieldAfterMs: 300 })
    .then(
      () => null,
      (e) => e,
    );
  await new Promise((resolve) => setTimeout(resolve, 50));
  const n = await count();
  const err = await slow;
  assert.equal(err?.code, '57014');
  assert.equal(err?.yielded, true);
  assert.ok(n > 0);
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
});
