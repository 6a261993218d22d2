// PGlite in a worker thread (node:worker_threads), for the embedded catalog and data store: their
// queries run off the server's thread, so a slow one blocks no other request (and no answer that
// needs no database), and a statement_timeout set in the session holds as on PostgreSQL. PGlite cannot cancel a running statement: when the time is
// up, the thread is terminated and the data dir opened again in a new one. Committed data is in
// the data dir's files at COMMIT (synchronous_commit is on; the files outlive the thread); what
// the killed statement's transaction did is undone by recovery when the data dir opens.
import { Worker } from 'node:worker_threads';
import {
  runTransaction,
  type Connection,
  type Database,
  type NamedSql,
  type QueryResult,
  type Transaction,
  type TransactionOptions,
} from './database.ts';
import { Mutex } from './mutex.ts';

export interface WorkerRequest {
  id: number;
  op: 'query' | 'exec' | 'copyIn' | 'copyOut' | 'close';
  sql: string;
  params?: unknown[];
  /** copyIn: the COPY text, in pieces. */
  data?: Uint8Array[];
}

export interface WorkerReply {
  id: number;
  ready?: true;
  result?: { rows: any[]; affectedRows: number; fields: { name: string; dataTypeID: number }[]; blob?: Uint8Array };
  error?: Record<string, unknown>;
  /** The session's statement_timeout after the request (0: none). */
  timeoutMs: number;
  /** The thread's WebAssembly memory after the request, in bytes (it never shrinks while the thread lives). */
  heapBytes?: number;
}

interface Pending {
  resolve: (r: WorkerReply) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

const THREAD = new URL('./pglite-worker-thread.mjs', import.meta.url);

/** An error with PostgreSQL's fields, as the drivers throw them. */
function dbError(fields: Record<string, unknown>): Error {
  return Object.assign(new Error(String(fields.message ?? 'database error')), fields);
}

const timeoutError = () => dbError({ message: 'canceling statement due to statement timeout', code: '57014', severity: 'ERROR' });
/** A statement stopped so that other requests waiting for the database go ahead (TransactionOptions.yieldAfterMs). */
const yieldError = (ms: number) =>
  dbError({
    message: `canceling statement after ${ms} ms: other requests were waiting for the embedded database`,
    code: '57014',
    severity: 'ERROR',
    yielded: true,
  });
const resetError = () => dbError({ message: 'the connection was reset after a statement timeout', code: '08006', severity: 'ERROR' });
const ENDS_TRANSACTION = /^\s*(rollback|abort)\s*;?\s*$/i;

export class PGliteWorkerDatabase implements Database {
  readonly kind = 'pglite' as const;
  // One statement at a time on one session: a query of another request never lands inside an open transaction.
  private readonly lock = new Mutex();
  private worker!: Worker;
  private ready!: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private timeoutMs = 0;
  /** Bumped when the thread is replaced: connections of an older one are gone. */
  private generation = 0;
  private closed = false;
  /** Whether the current thread opened the data dir (one that could not is not started again and again). */
  private opened = false;
  /**
   * A thread whose WebAssembly memory passed this many bytes (a statement that aggregated a big
   * table) is closed and started again once its work is done: its memory never shrinks otherwise.
   * 0: no limit.
   */
  maxMemoryBytes = 0;
  /** The memory of the current thread after its last answer, in bytes. */
  heapBytes = 0;
  /** How many times a thread was replaced to give its memory back. */
  recycled = 0;
  /** Requests waiting for the session (the lock). */
  private waiting = 0;
  /** The yieldAfterMs of the transaction holding the session (0: it does not yield). */
  private yieldAfterMs = 0;
  /** The statement of a yielding transaction that runs now. */
  private yieldable: { id: number; started: number; timer?: NodeJS.Timeout } | null = null;

  private constructor(
    private readonly dataDir: string,
    private readonly template?: string,
  ) {}

  /** Opens the data dir (made from the template, a PGlite data dir dump, when it is new). */
  static async open(opts: { dataDir: string; template?: string }): Promise<PGliteWorkerDatabase> {
    const db = new PGliteWorkerDatabase(opts.dataDir, opts.template);
    db.start();
    await db.ready;
    return db;
  }

  private start(): void {
    // The thread is plain JavaScript: no loader (tsx) is passed on to it.
    const worker = new Worker(THREAD, { execArgv: [], workerData: { dataDir: this.dataDir, template: this.template } });
    this.worker = worker;
    this.timeoutMs = 0;
    this.opened = false;
    this.ready = new Promise((resolve, reject) => {
      const first = (m: WorkerReply) => {
        if (m.id !== 0) return;
        worker.off('message', first);
        if (m.error) reject(dbError(m.error));
        else {
          this.opened = true;
          resolve();
        }
      };
      worker.on('message', first);
      worker.once('exit', (code) => reject(new Error(`the embedded database thread stopped (exit code ${code})`)));
    });
    this.ready.catch(() => undefined);
    worker.on('message', (m: WorkerReply) => this.answer(m));
    // An uncaught error ends the thread: it is handled once the thread is gone (its data dir closed).
    let failure: Error | undefined;
    worker.on('error', (e) => {
      failure = e;
    });
    worker.on('exit', () => this.lost(worker, failure ?? new Error('the embedded database thread stopped')));
  }

  private answer(m: WorkerReply): void {
    if (m.id === 0) return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (this.yieldable?.id === m.id) this.stopYieldWatch();
    this.timeoutMs = m.timeoutMs;
    if (m.heapBytes) this.heapBytes = m.heapBytes;
    if (m.error) p.reject(dbError(m.error));
    else p.resolve(m);
  }

  /** The thread ended (crash, or killed): what was waiting fails; the next request starts a new one. */
  private lost(worker: Worker, e: Error): void {
    if (worker !== this.worker) return;
    this.generation++;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
    if (!this.closed && this.opened) this.start();
  }

  /** A statement ran past the session's statement_timeout: stop the thread, open the data dir again. */
  private kill(id: number, error: Error = timeoutError()): void {
    const p = this.pending.get(id);
    if (!p) return;
    const old = this.worker;
    this.generation++;
    this.stopYieldWatch();
    this.pending.delete(id);
    p.reject(error);
    for (const other of this.pending.values()) {
      clearTimeout(other.timer);
      other.reject(resetError());
    }
    this.pending.clear();
    // Replaced before the old thread is gone (its exit is then not a loss), opened once it is.
    const stopped = old.terminate();
    this.worker = null as unknown as Worker;
    this.timeoutMs = 0;
    this.ready = stopped.then(() => {
      if (this.closed) return;
      this.start();
      return this.ready;
    });
    this.ready.catch(() => undefined);
  }

  /** Sends one request; limitMs bounds it (besides the session's statement_timeout). */
  private async send(req: Omit<WorkerRequest, 'id'>, transfer: ArrayBuffer[] = [], limitMs = 0): Promise<WorkerReply> {
    // A thread being replaced has none yet: wait for the new one. One that could not open the data
    // dir is tried again, once per request.
    try {
      do await this.ready;
      while (!this.worker);
    } catch (e) {
      if (this.closed || this.opened) throw e;
      this.start();
      await this.ready;
    }
    const id = this.nextId++;
    return new Promise<WorkerReply>((resolve, reject) => {
      const p: Pending = { resolve, reject };
      const limit = this.timeoutMs > 0 && limitMs > 0 ? Math.min(this.timeoutMs, limitMs) : this.timeoutMs || limitMs;
      if (limit > 0 && req.op !== 'close') {
        p.timer = setTimeout(() => this.kill(id), limit);
      }
      this.pending.set(id, p);
      if (this.yieldAfterMs > 0 && req.op !== 'close') {
        this.yieldable = { id, started: Date.now() };
        this.watchYield();
      }
      this.worker.postMessage({ ...req, id }, transfer);
    });
  }

  private async run<R>(text: string | NamedSql, params?: unknown[], limitMs = 0): Promise<QueryResult<R>> {
    const sql = typeof text === 'string' ? text : text.text;
    const r = (await this.send({ op: 'query', sql, params }, [], limitMs)).result!;
    return { rows: r.rows as R[], rowCount: r.affectedRows, fields: r.fields };
  }

  /** A connection valid until the thread is replaced (then only its ROLLBACK is accepted, as a no-op). */
  private connection(): Transaction {
    const generation = this.generation;
    const send = (req: Omit<WorkerRequest, 'id'>) => this.send(req);
    const live = (sql: string) => {
      if (generation === this.generation) return true;
      if (ENDS_TRANSACTION.test(sql)) return false;
      throw resetError();
    };
    return {
      query: async <R>(t: string | NamedSql, p?: unknown[]) => {
        if (!live(typeof t === 'string' ? t : t.text)) return { rows: [], rowCount: 0, fields: [] } as QueryResult<R>;
        return this.run<R>(t, p);
      },
      exec: async (sql) => {
        if (live(sql)) await this.send({ op: 'exec', sql });
      },
      copyIn: async (target, pieces, options) => {
        const sql = `COPY ${target} FROM '/dev/blob'${options ? ` ${options}` : ''}`;
        live(sql);
        // Copied into one buffer that moves to the thread (the pieces may share memory with other Buffers).
        const list = [...pieces];
        const all = new Uint8Array(list.reduce((n, p) => n + p.byteLength, 0));
        let at = 0;
        for (const p of list) {
          all.set(p, at);
          at += p.byteLength;
        }
        const data = [all];
        const transfer = [all.buffer];
        return (await this.send({ op: 'copyIn', sql, data }, transfer)).result!.affectedRows;
      },
      copyOut: async function* (this: void, source: string, options: string) {
        const sql = `COPY ${source} TO '/dev/blob' ${options}`;
        live(sql);
        const blob = (await send({ op: 'copyOut', sql })).result!.blob;
        if (blob) yield Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
      },
    };
  }

  /**
   * A statement of a yielding transaction while requests wait: stopped once it has run the
   * transaction's yieldAfterMs (they would otherwise wait for its end, up to its timeout).
   */
  private watchYield(): void {
    const y = this.yieldable;
    if (!y || y.timer || this.waiting === 0) return;
    const ms = this.yieldAfterMs;
    y.timer = setTimeout(
      () => {
        if (this.yieldable === y && this.waiting > 0) this.kill(y.id, yieldError(ms));
      },
      Math.max(0, y.started + ms - Date.now()),
    );
  }

  private stopYieldWatch(): void {
    clearTimeout(this.yieldable?.timer);
    this.yieldable = null;
  }

  /** Runs fn holding the session; a thread grown past maxMemoryBytes is replaced before the next use. */
  private exclusive<T>(fn: () => Promise<T>, yieldAfterMs = 0): Promise<T> {
    this.waiting++;
    this.watchYield();
    return this.lock.run(async () => {
      this.waiting--;
      this.yieldAfterMs = yieldAfterMs;
      try {
        return await fn();
      } finally {
        this.yieldAfterMs = 0;
        this.stopYieldWatch();
        if (this.maxMemoryBytes > 0 && this.heapBytes > this.maxMemoryBytes && !this.closed) await this.recycle();
      }
    });
  }

  /** Closes the thread (a clean shut-down: nothing to recover) and opens the data dir in a new one. */
  private async recycle(): Promise<void> {
    const old = this.worker;
    this.heapBytes = 0;
    this.recycled++;
    try {
      await this.send({ op: 'close', sql: '' });
    } catch {
      /* replaced anyway */
    }
    this.generation++;
    this.worker = null as unknown as Worker;
    await old?.terminate();
    if (this.closed) return;
    this.start();
    await this.ready.catch(() => undefined);
  }

  async query<R>(text: string | NamedSql, params?: unknown[]): Promise<QueryResult<R>> {
    return this.exclusive(() => this.run<R>(text, params));
  }

  async withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T> {
    return this.exclusive(() => fn(this.connection()));
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    return this.exclusive(() => runTransaction(this.connection(), opts, fn), opts.yieldAfterMs);
  }

  async exec(sql: string): Promise<void> {
    await this.exclusive(() => this.send({ op: 'exec', sql }));
  }

  /**
   * The same database, with every statement of query() and of transaction() stopped after ms (the
   * thread is ended and the data dir opened again: see kill()).
   */
  withStatementTimeout(ms: number): Database {
    const bounded = (opts: TransactionOptions) => ({
      ...opts,
      statementTimeoutMs: opts.statementTimeoutMs ? Math.min(opts.statementTimeoutMs, ms) : ms,
    });
    return {
      kind: this.kind,
      query: <R>(text: string | NamedSql, params?: unknown[]) => this.exclusive(() => this.run<R>(text, params, ms)),
      transaction: (fn, opts = {}) => this.transaction(fn, bounded(opts)),
      withConnection: (fn) => this.withConnection(fn),
      exec: (sql) => this.exec(sql),
      // The view does not own the database: closing it closes nothing.
      close: async () => undefined,
    };
  }

  async close(): Promise<void> {
    await this.lock.run(async () => {
      this.closed = true;
      const worker = this.worker;
      try {
        await this.ready;
        // No thread when closed while one was being replaced (after a timeout): none is started.
        if (this.worker) await this.send({ op: 'close', sql: '' });
      } catch {
        /* closing anyway */
      }
      await worker?.terminate();
    });
  }
}
