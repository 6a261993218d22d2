// The thread side of PGliteWorkerDatabase (pglite-worker.ts): one PGlite on a data dir, running
// the requests the main thread posts (WorkerRequest), one at a time, in arrival order. It reports
// with every answer (WorkerReply) the session's statement_timeout, which the main thread enforces
// (PGlite has no timer signals). Plain JavaScript: a thread starts without a TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import { openPGlite } from './pglite-open.mjs';

/** @type {{ dataDir: string, template?: string }} */
const { dataDir, template } = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

// Statements that may change the session's statement_timeout (SET, RESET, the end of a transaction
// that SET LOCAL it): the setting is read again after them.
const NAMES_TIMEOUT = /statement_timeout/i;
const ENDS_TRANSACTION = /\b(commit|rollback|abort|end|reset)\b/i;
const EMPTY = { rows: [], affectedRows: 0, fields: [] };

async function main() {
  const db = await openPGlite({ dataDir, template });
  let timeoutMs = 0;
  /** @param {string} sql */
  const mayChangeTimeout = (sql) => NAMES_TIMEOUT.test(sql) || (timeoutMs !== 0 && ENDS_TRANSACTION.test(sql));
  const readTimeout = async () => {
    try {
      const r = await db.query(`SELECT setting AS ms FROM pg_settings WHERE name = 'statement_timeout'`);
      timeoutMs = Number(/** @type {any} */ (r.rows[0])?.ms ?? 0);
    } catch {
      // An aborted transaction answers nothing but its end (which reads the setting again).
    }
  };
  /** @param {import('./pglite-worker.ts').WorkerRequest} req */
  const run = async (req) => {
    switch (req.op) {
      case 'close':
        await db.close();
        return EMPTY;
      case 'exec':
        await db.exec(req.sql);
        return EMPTY;
      case 'copyIn': {
        const r = await db.query(req.sql, [], { blob: new Blob(req.data ?? []) });
        return { ...EMPTY, affectedRows: r.affectedRows ?? 0 };
      }
      case 'copyOut': {
        const r = await db.query(req.sql);
        return { ...EMPTY, affectedRows: r.affectedRows ?? 0, ...(r.blob ? { blob: new Uint8Array(await r.blob.arrayBuffer()) } : {}) };
      }
      default: {
        const r = await db.query(req.sql, req.params);
        return { rows: r.rows, affectedRows: r.affectedRows ?? r.rows.length, fields: r.fields };
      }
    }
  };
  // PGlite's WebAssembly memory (grown by a statement that held much at once; it never shrinks).
  const heapBytes = () => /** @type {any} */ (db).mod?.HEAPU8?.byteLength ?? 0;
  /** @type {import('./pglite-worker.ts').WorkerRequest[]} */
  const queue = [];
  let busy = false;
  const drain = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const req = /** @type {import('./pglite-worker.ts').WorkerRequest} */ (queue.shift());
      /** @type {import('./pglite-worker.ts').WorkerReply} */
      let reply;
      try {
        const result = await run(req);
        if (req.op !== 'close' && mayChangeTimeout(req.sql)) await readTimeout();
        reply = { id: req.id, result, timeoutMs, heapBytes: heapBytes() };
      } catch (e) {
        if (mayChangeTimeout(req.sql)) await readTimeout();
        reply = { id: req.id, error: errorFields(e), timeoutMs, heapBytes: heapBytes() };
      }
      port.postMessage(reply);
    }
    busy = false;
  };
  port.on('message', (req) => {
    queue.push(req);
    void drain();
  });
  port.postMessage({ id: 0, ready: true, timeoutMs });
}

/** The error as a plain object: its message and the server's fields (code, detail, where, column...). @param {unknown} e */
function errorFields(e) {
  /** @type {Record<string, unknown>} */
  const out = { message: e instanceof Error ? e.message : String(e) };
  if (e && typeof e === 'object') {
    for (const [k, v] of Object.entries(e)) if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  }
  return out;
}

main().catch((e) => port.postMessage({ id: 0, error: errorFields(e), timeoutMs: 0 }));
