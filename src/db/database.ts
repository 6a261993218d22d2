// One interface over both drivers: PGlite (embedded, single connection) and pg (a pool).
// The SQL is the same on both; only connection handling differs.
import { type PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { finished } from 'node:stream/promises';
import { Mutex } from './mutex.ts';
import { DATE, TIMESTAMP, isoTimestamp } from './pglite-parsers.mjs';
import { openPGlite } from './pglite-open.mjs';
import { quoteIdent, quoteLiteral } from './sql.ts';

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
  fields: { name: string; dataTypeID: number }[];
}

/**
 * SQL with a name: on PostgreSQL it is prepared once per connection and its plan kept (for the
 * statements every request runs: the token check, the data store's table description).
 */
export interface NamedSql {
  name: string;
  text: string;
}

export interface Queryable {
  query<R = any>(text: string | NamedSql, params?: unknown[]): Promise<QueryResult<R>>;
}

const sqlText = (q: string | NamedSql) => (typeof q === 'string' ? q : q.text);

/** The pg form of a query: a named statement when it has a name. */
const pgQuery = (q: string | NamedSql, params?: unknown[]) =>
  typeof q === 'string' ? { text: q, values: params as any[] } : { name: q.name, text: q.text, values: params as any[] };

/** A connection held for one unit of work; exec runs several statements without parameters. */
export interface Connection extends Queryable {
  exec(sql: string): Promise<void>;
}

/** How a transaction is opened and closed (Database.transaction). */
export interface TransactionOptions {
  readOnly?: boolean;
  /** A role switched to for the transaction (SET LOCAL ROLE). */
  role?: string;
  /**
   * Statement timeout in ms (0: none). PGlite in this thread has no timer to stop a statement (it
   * ignores the setting); PGliteWorkerDatabase (pglite-worker.ts) holds it by ending its thread.
   */
  statementTimeoutMs?: number;
  /**
   * The embedded database in a worker thread only (PGliteWorkerDatabase): when other requests wait
   * for the database, a statement of this transaction that has run this long is stopped (57014,
   * with `yielded: true`), so that a long query never holds the only connection for long.
   */
  yieldAfterMs?: number;
  /** Further SET LOCAL settings: name -> value (sent as a literal). */
  settings?: Record<string, string>;
  /** Roll back even when fn resolves (dry runs, reads that must leave nothing). */
  rollback?: boolean;
  /** Statements sent in the same round trip as the COMMIT (not on rollback). */
  beforeCommit?: () => string;
}

/** A connection inside a transaction, with COPY in both directions. */
export interface Transaction extends Connection {
  /**
   * COPY target ("table (col, ...)") FROM the pieces, in COPY text format unless options say
   * otherwise ("WITH (FORMAT csv, ...)"); returns the rows copied.
   */
  copyIn(target: string, pieces: Iterable<Buffer>, options?: string): Promise<number>;
  /** COPY source ("table" or "(query)") TO the caller, with options ("WITH (FORMAT csv)"), as it comes. */
  copyOut(source: string, options: string): AsyncIterable<Buffer>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs fn in one transaction on one connection: commit when it resolves (unless opts.rollback),
   * rollback when it throws. The one place where transactions are opened and closed.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>, opts?: TransactionOptions): Promise<T>;
  /** Holds one connection for fn without opening a transaction. */
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /** The same database with its statements stopped after ms (see withStatementTimeout); default: boundedDatabase. */
  withStatementTimeout?(ms: number): Database;
}

/** The database itself, not a transaction's connection: it can open transactions of its own. */
export const isDatabase = (db: Queryable): db is Database => typeof (db as Partial<Database>).transaction === 'function';

/** A PostgreSQL pool (not a transaction's connection): statements can run side by side. */
export const isPool = (db: Queryable) => isDatabase(db) && db.kind === 'postgres';

/**
 * Runs the reads side by side on a PostgreSQL pool (each on a connection of its own), one after the
 * other otherwise (a transaction's single connection, or PGlite's one).
 */
export async function sideBySide<T extends unknown[]>(db: Queryable, fns: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  if (isPool(db)) return (await Promise.all(fns.map((f) => f()))) as T;
  const out: unknown[] = [];
  for (const f of fns) out.push(await f());
  return out as T;
}

/**
 * A view of the database whose statements end with PostgreSQL's statement timeout error (57014)
 * after ms: each query() in a transaction of its own, each transaction() with SET LOCAL
 * statement_timeout. withConnection() and exec() are not bounded; closing the view closes nothing.
 */
export function boundedDatabase(db: Database, ms: number): Database {
  const bounded = (opts: TransactionOptions): TransactionOptions => ({
    ...opts,
    statementTimeoutMs: opts.statementTimeoutMs ? Math.min(opts.statementTimeoutMs, ms) : ms,
  });
  return {
    kind: db.kind,
    query: (text, params) => db.transaction((tx) => tx.query(text, params), { statementTimeoutMs: ms }),
    transaction: (fn, opts = {}) => db.transaction(fn, bounded(opts)),
    withConnection: (fn) => db.withConnection(fn),
    exec: (sql) => db.exec(sql),
    close: async () => undefined,
  };
}

/**
 * Reads bounded in time: the database with its statements stopped after ms (ms <= 0: not
 * bounded). A transaction's connection is returned as it is: its statements belong to its
 * transaction, whose bound is its own. The main-thread PGlite (PGliteDatabase) cannot stop a
 * statement and is returned as it is; the server runs the embedded catalog in a worker thread.
 */
export function withStatementTimeout(db: Queryable, ms: number): Queryable {
  if (!isDatabase(db) || !(ms > 0)) return db;
  return db.withStatementTimeout ? db.withStatementTimeout(ms) : boundedDatabase(db, ms);
}

/** The statements opening a transaction, in one round trip. */
export function beginSql(opts: TransactionOptions): string {
  const parts = [opts.readOnly ? 'BEGIN READ ONLY' : 'BEGIN'];
  if (opts.role) parts.push(`SET LOCAL ROLE ${quoteIdent(opts.role)}`);
  if (opts.statementTimeoutMs !== undefined) {
    parts.push(`SET LOCAL statement_timeout = ${Math.max(0, Math.floor(opts.statementTimeoutMs))}`);
  }
  for (const [name, value] of Object.entries(opts.settings ?? {})) {
    if (!/^[a-z_][a-z0-9_.]*$/i.test(name)) throw new Error(`bad setting name ${name}`);
    parts.push(`SET LOCAL ${name} = ${quoteLiteral(value)}`);
  }
  return parts.join('; ');
}

export const endSql = (opts: TransactionOptions) => (opts.rollback ? 'ROLLBACK' : (opts.beforeCommit?.() ?? '') + 'COMMIT');

/** How a failed transaction's connection is left: rolled back, or dropped (its server then rolls back). */
export interface RollbackHandling {
  /** When true at the failure, no ROLLBACK is sent (a COPY out left unread still holds the connection). */
  abandon?: () => boolean;
  /** The connection could not be rolled back (or was abandoned): it must not be used again. */
  onBroken?: () => void;
}

/**
 * The one begin/commit/rollback of every Database: opens the transaction on conn (beginSql), runs
 * fn, commits (endSql: or rolls back for opts.rollback) when it resolves, rolls back when it throws.
 */
export async function runTransaction<T, C extends Connection>(
  conn: C,
  opts: TransactionOptions,
  fn: (conn: C) => Promise<T>,
  handling: RollbackHandling = {},
): Promise<T> {
  await conn.exec(beginSql(opts));
  try {
    const out = await fn(conn);
    await conn.exec(endSql(opts));
    return out;
  } catch (e) {
    if (handling.abandon?.()) handling.onBroken?.();
    else await conn.exec('ROLLBACK').catch(() => handling.onBroken?.());
    throw e;
  }
}

/** A savepoint inside a transaction: undo what followed it, or keep it. */
export interface Savepoint {
  /** Undoes everything since the savepoint (the transaction goes on) and ends it. */
  rollback(): Promise<void>;
  /** Keeps everything since the savepoint and ends it. */
  release(): Promise<void>;
}

let savepointCount = 0;

/** Sets a savepoint on a transaction's connection; end it with rollback() or release(). */
export async function savepoint(conn: Connection): Promise<Savepoint> {
  const name = `svc_savepoint_${++savepointCount}`;
  await conn.exec(`SAVEPOINT ${name}`);
  return {
    rollback: () => conn.exec(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`),
    release: () => conn.exec(`RELEASE SAVEPOINT ${name}`),
  };
}

/**
 * Runs fn inside a savepoint: kept when fn resolves (undone instead with opts.rollback: a statement
 * tried for its error only), undone when fn throws (its error passed on, the transaction usable).
 */
export async function inSavepoint<T>(conn: Connection, fn: () => Promise<T>, opts: { rollback?: boolean } = {}): Promise<T> {
  const sp = await savepoint(conn);
  let out: T;
  try {
    out = await fn();
  } catch (e) {
    await sp.rollback();
    throw e;
  }
  await (opts.rollback ? sp.rollback() : sp.release());
  return out;
}

// Timestamps are stored UTC without zone and returned as CKAN does: ISO 8601 without zone
// (pglite-parsers.mjs: plain JavaScript, so that the data store's worker thread needs no compiler).
export { isoTimestamp };

pg.types.setTypeParser(TIMESTAMP, isoTimestamp);
pg.types.setTypeParser(DATE, (s: string) => s);

function pgliteResult<R>(r: { rows: any[]; affectedRows?: number; fields: { name: string; dataTypeID: number }[] }): QueryResult<R> {
  return { rows: r.rows as R[], rowCount: r.affectedRows ?? r.rows.length, fields: r.fields };
}

export class PGliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  // PGlite runs one statement at a time on one connection; a query from another request
  // must never land inside an open transaction, so every use takes this lock.
  private readonly lock = new Mutex();
  constructor(readonly raw: PGlite) {}

  /** Opens a data dir (a new one made from the template when given), or an in-memory database. */
  static async open(opts: { dataDir?: string; template?: string; loadDataDir?: Blob }): Promise<PGliteDatabase> {
    return new PGliteDatabase(await openPGlite(opts));
  }

  async query<R>(text: string | NamedSql, params?: unknown[]): Promise<QueryResult<R>> {
    return this.lock.run(async () => pgliteResult<R>(await this.raw.query(sqlText(text), params as any[])));
  }

  private connection(): Transaction {
    const raw = this.raw;
    return {
      query: async (t, p) => pgliteResult(await raw.query(sqlText(t), p as any[])),
      exec: async (sql) => {
        await raw.exec(sql);
      },
      async copyIn(target, pieces, options) {
        const parts: Buffer[] = [];
        for (const c of pieces) parts.push(c);
        const r = await raw.query(`COPY ${target} FROM '/dev/blob'${options ? ` ${options}` : ''}`, [], {
          blob: new Blob(parts as Uint8Array<ArrayBuffer>[]),
        });
        return r.affectedRows ?? 0;
      },
      async *copyOut(source, options) {
        const r = await raw.query(`COPY ${source} TO '/dev/blob' ${options}`);
        if (r.blob) yield Buffer.from(await r.blob.arrayBuffer());
      },
    };
  }

  async withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T> {
    return this.lock.run(() => fn(this.connection()));
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    return this.lock.run(() => runTransaction(this.connection(), opts, fn));
  }

  async exec(sql: string): Promise<void> {
    await this.lock.run(() => this.raw.exec(sql));
  }

  async close(): Promise<void> {
    await this.lock.run(() => this.raw.close());
  }

  /** PGlite in this thread has no way to stop a statement: the database as it is (tests use this class). */
  withStatementTimeout(): Database {
    return this;
  }
}

/**
 * Run once on each new connection. A backend's malloc (glibc) hands every block over 128 kB to the
 * kernel and back (mmap, munmap), and returns freed memory above 128 kB at the top of its heap: a
 * query that sorts a megabyte takes fresh pages from the kernel on every call, and on a virtual
 * machine whose host reclaims freed pages each fresh page costs tens of microseconds (a search
 * whose sort needs 2 MB: 17 ms instead of 5). Freeing one 4 MB block raises both limits (to 4 MB
 * and 8 MB, glibc's dynamic threshold), so the backend keeps and reuses its memory from then on.
 */
const PRIME_ALLOCATOR_SQL = "SELECT length(repeat('x', 4 * 1024 * 1024))";

/**
 * A server that stops or restarts ends its connections. An idle one reports it to the pool; one lent
 * out (between two statements of a request) emits 'error' on itself, where pg-pool does not listen
 * while it is lent, and an unheard 'error' ends the process. Its statements fail instead, and the
 * pool drops the connection when it comes back.
 */
export function absorbConnectionLoss(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  constructor(readonly raw: pg.Pool) {}

  /** statementTimeoutMs, timeZone and settings (name -> value) become session settings of every connection of the pool. */
  static open(
    url: string,
    opts: { max?: number; statementTimeoutMs?: number; timeZone?: string; settings?: Record<string, string> } = {},
  ): PostgresDatabase {
    const settings = { ...(opts.timeZone ? { TimeZone: opts.timeZone } : {}), ...opts.settings };
    for (const [name, value] of Object.entries(settings))
      if (!/^[a-z_][a-z0-9_.]*$/i.test(name) || !/^[A-Za-z0-9_./+-]+$/.test(value)) throw new Error(`bad setting ${name}=${value}`);
    const options = Object.entries(settings)
      .map(([name, value]) => `-c ${name}=${value}`)
      .join(' ');
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      // Two connections stay open however long the server is idle: a request after a lull would
      // otherwise wait for a new backend and its empty catalog caches (pg-pool closes every idle
      // connection after 10 s by default).
      min: Math.min(2, opts.max ?? 10),
      // awaited before the new connection is handed out; a failure leaves the connection usable
      onConnect: (client: pg.ClientBase) =>
        client.query(PRIME_ALLOCATOR_SQL).then(
          () => undefined,
          () => undefined,
        ),
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
      ...(options ? { options } : {}),
    });
    absorbConnectionLoss(pool);
    const db = new PostgresDatabase(pool);
    db.openBounded = (ms) => PostgresDatabase.open(url, { ...opts, statementTimeoutMs: ms });
    return db;
  }

  /** Opens a pool like this one whose sessions stop each statement after ms (set by open()). */
  private openBounded?: (ms: number) => PostgresDatabase;
  private readonly boundedPools = new Map<number, PostgresDatabase>();

  /**
   * Statements stopped after ms. A query() runs on a pool of its own whose sessions carry that
   * statement_timeout, opened on first use: one round trip, where a transaction of its own with
   * SET LOCAL (boundedDatabase) takes three (a search runs two to four such statements).
   */
  withStatementTimeout(ms: number): Database {
    const view = boundedDatabase(this, ms);
    if (!this.openBounded) return view;
    let bounded = this.boundedPools.get(ms);
    if (!bounded) {
      bounded = this.openBounded(ms);
      this.boundedPools.set(ms, bounded);
    }
    const pool = bounded;
    return { ...view, query: (text, params) => pool.query(text, params) };
  }

  async query<R>(text: string | NamedSql, params?: unknown[]): Promise<QueryResult<R>> {
    const r = await this.raw.query(pgQuery(text, params));
    return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length, fields: r.fields };
  }

  async withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T> {
    const client = await this.raw.connect();
    let broken = false;
    try {
      return await fn(clientConnection(client));
    } catch (e) {
      // A failed statement inside a transaction the callback opened must not return to the pool half-done.
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    const client = await this.raw.connect();
    const tx = clientTransaction(client);
    let broken = false;
    try {
      // A COPY out left unread (its reader gone) still holds the connection: drop it, the server rolls back.
      return await runTransaction(tx, opts, fn, {
        abandon: () => tx.copying(),
        onBroken: () => {
          broken = true;
        },
      });
    } finally {
      client.release(broken);
    }
  }

  async exec(sql: string): Promise<void> {
    await this.raw.query(sql);
  }

  async close(): Promise<void> {
    await Promise.all([this.raw.end(), ...[...this.boundedPools.values()].map((b) => b.close())]);
    this.boundedPools.clear();
  }
}

export function clientConnection(client: pg.PoolClient | pg.Client): Connection {
  return {
    async query(text, params) {
      const r = await client.query(pgQuery(text, params));
      return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length, fields: r.fields };
    },
    async exec(sql) {
      await client.query(sql);
    },
  };
}

/** A pg client in a transaction; copying() tells whether a COPY out is unfinished. */
function clientTransaction(client: pg.PoolClient): Transaction & { copying(): boolean } {
  let openCopies = 0;
  return {
    ...clientConnection(client),
    copying: () => openCopies > 0,
    async copyIn(target, pieces, options) {
      const stream = client.query(copyFrom(`COPY ${target} FROM STDIN${options ? ` ${options}` : ''}`));
      // The server may refuse a row while pieces are still coming: then no more are written.
      let refused = false;
      stream.once('error', () => {
        refused = true;
      });
      const settled = finished(stream);
      settled.catch(() => undefined);
      try {
        for (const piece of pieces) {
          if (refused || stream.destroyed) break;
          // No waiting for the server to read: the pieces of one request are held anyway. The
          // pause lets the socket send this piece while the next is made (the server parses it
          // meanwhile, on its own core).
          stream.write(piece);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (e) {
        stream.destroy(e as Error);
        await settled.catch(() => undefined);
        throw e;
      }
      if (!refused) stream.end();
      await settled;
      return Number(stream.rowCount ?? 0);
    },
    async *copyOut(source, options) {
      openCopies++;
      const stream = client.query(copyTo(`COPY ${source} TO STDOUT ${options}`));
      for await (const chunk of stream as AsyncIterable<Buffer>) yield chunk;
      openCopies--;
    },
  };
}

export { pgliteTypes };
