// The thread side of PGliteWorkerDatabase (pglite-worker.ts): one PGlite on a data dir, running
// the requests the main thread posts, one at a time, in arrival order. It reports with every answer
// the session's statement_timeout, which the main thread enforces (PGlite has no timer signals).
import { parentPort, workerData } from 'node:worker_threads';
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pgliteParsers } from './database.ts';
import type { WorkerReply, WorkerRequest } from './pglite-worker.ts';

const { dataDir, template } = workerData as { dataDir: string; template?: string };
const port = parentPort!;

// Statements that may change the session's statement_timeout (SET, RESET, the end of a transaction
// that SET LOCAL it): the setting is read again after them.
const NAMES_TIMEOUT = /statement_timeout/i;
const ENDS_TRANSACTION = /\b(commit|rollback|abort|end|reset)\b/i;

async function main(): Promise<void> {
  const fresh = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  fs.mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create({
    dataDir, parsers: pgliteParsers,
    ...(fresh && template ? { loadDataDir: new Blob([fs.readFileSync(template)]) } : {}),
  });
  let timeoutMs = 0;
  const mayChangeTimeout = (sql: string) => NAMES_TIMEOUT.test(sql) || (timeoutMs !== 0 && ENDS_TRANSACTION.test(sql));
  const readTimeout = async () => {
    try {
      timeoutMs = Number((await db.query<{ ms: string }>(`SELECT setting AS ms FROM pg_settings WHERE name = 'statement_timeout'`)).rows[0]?.ms ?? 0);
    } catch {
      // An aborted transaction answers nothing but its end (which reads the setting again).
    }
  };
  const queue: WorkerRequest[] = [];
  let busy = false;
  const drain = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const req = queue.shift()!;
      let reply: WorkerReply;
      try {
        let result: WorkerReply['result'];
        if (req.op === 'close') {
          await db.close();
          result = { rows: [], affectedRows: 0, fields: [] };
        } else if (req.op === 'exec') {
          await db.exec(req.sql);
          result = { rows: [], affectedRows: 0, fields: [] };
        } else if (req.op === 'copyIn') {
          const r = await db.query(req.sql, [], { blob: new Blob((req.data ?? []) as Uint8Array<ArrayBuffer>[]) });
          result = { rows: [], affectedRows: r.affectedRows ?? 0, fields: [] };
        } else if (req.op === 'copyOut') {
          const r = await db.query(req.sql);
          result = { rows: [], affectedRows: r.affectedRows ?? 0, fields: [], ...(r.blob ? { blob: new Uint8Array(await r.blob.arrayBuffer()) } : {}) };
        } else {
          const r = await db.query(req.sql, req.params as any[]);
          result = { rows: r.rows, affectedRows: r.affectedRows ?? r.rows.length, fields: r.fields };
        }
        if (req.op !== 'close' && mayChangeTimeout(req.sql)) await readTimeout();
        reply = { id: req.id, result, timeoutMs };
      } catch (e) {
        if (mayChangeTimeout(req.sql)) await readTimeout();
        reply = { id: req.id, error: errorFields(e), timeoutMs };
      }
      port.postMessage(reply);
    }
    busy = false;
  };
  port.on('message', (req: WorkerRequest) => {
    queue.push(req);
    void drain();
  });
  port.postMessage({ id: 0, ready: true, timeoutMs } satisfies WorkerReply);
}

/** The error as a plain object: its message and the server's fields (code, detail, where, column...). */
function errorFields(e: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { message: e instanceof Error ? e.message : String(e) };
  if (e && typeof e === 'object') {
    for (const [k, v] of Object.entries(e)) if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  }
  return out;
}

main().catch((e) => port.postMessage({ id: 0, error: errorFields(e), timeoutMs: 0 } satisfies WorkerReply));
