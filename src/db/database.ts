// One interface over both drivers: PGlite (embedded, single connection) and pg (a pool).
// The SQL is the same on both; only connection handling differs.
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';
import fs from 'node:fs';
import { Mutex } from './mutex.ts';

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
  (typeof q === 'string' ? { text: q, values: params as any[] } : { name: q.name, text: q.text, values: params as any[] });

/** A connection held for one unit of work; exec runs several statements without parameters. */
export interface Connection extends Queryable {
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn in one transaction: commit when it resolves, rollback when it throws. */
  transaction<T>(fn: (tx: Connection) => Promise<T>): Promise<T>;
  /** Holds one connection for fn without opening a transaction. */
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /** The driver underneath, for COPY and streaming (datastore). */
  readonly raw: PGlite | pg.Pool;
}

// Timestamps are stored UTC without zone and returned as CKAN does: ISO 8601 without zone.
const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;
const DATE = 1082;
const INT8 = 20;
const NUMERIC = 1700;
export const isoTimestamp = (s: string) => s.replace(' ', 'T');

pg.types.setTypeParser(TIMESTAMP, isoTimestamp);
pg.types.setTypeParser(DATE, (s: string) => s);

/** How PGlite returns values (also used by the data store's worker thread, pglite-worker-thread.ts). */
export const pgliteParsers = {
  [TIMESTAMP]: isoTimestamp,
  [TIMESTAMPTZ]: (s: string) => s,
  [DATE]: (s: string) => s,
  [INT8]: (s: string) => s,
  [NUMERIC]: (s: string) => s,
};

function pgliteResult<R>(r: { rows: any[]; affectedRows?: number; fields: { name: string; dataTypeID: number }[] }): QueryResult<R> {
  return { rows: r.rows as R[], rowCount: r.affectedRows ?? r.rows.length, fields: r.fields };
}

export class PGliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  // PGlite runs one statement at a time on one connection; a query from another request
  // must never land inside an open transaction, so every use takes this lock.
  private readonly lock = new Mutex();
  constructor(readonly raw: PGlite) {}

  static async open(opts: { dataDir?: string; loadDataDir?: Blob | File }): Promise<PGliteDatabase> {
    if (opts.dataDir) fs.mkdirSync(opts.dataDir, { recursive: true });
    const db = await PGlite.create({ dataDir: opts.dataDir, loadDataDir: opts.loadDataDir, parsers: pgliteParsers });
    return new PGliteDatabase(db);
  }

  async query<R>(text: string | NamedSql, params?: unknown[]): Promise<QueryResult<R>> {
    return this.lock.run(async () => pgliteResult<R>(await this.raw.query(sqlText(text), params as any[])));
  }

  private connection(): Connection {
    return {
      query: async (t, p) => pgliteResult(await this.raw.query(sqlText(t), p as any[])),
      exec: async (sql) => { await this.raw.exec(sql); },
    };
  }

  async withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T> {
    return this.lock.run(() => fn(this.connection()));
  }

  async transaction<T>(fn: (tx: Connection) => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      await this.raw.exec('BEGIN');
      try {
        const out = await fn(this.connection());
        await this.raw.exec('COMMIT');
        return out;
      } catch (e) {
        await this.raw.exec('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  async exec(sql: string): Promise<void> {
    await this.lock.run(() => this.raw.exec(sql));
  }

  async close(): Promise<void> {
    await this.lock.run(() => this.raw.close());
  }
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  constructor(readonly raw: pg.Pool) {}

  /** statementTimeoutMs and timeZone become session settings of every connection of the pool. */
  static open(url: string, opts: { max?: number; statementTimeoutMs?: number; timeZone?: string } = {}): PostgresDatabase {
    const pool = new pg.Pool({
      connectionString: url, max: opts.max ?? 10,
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
      ...(opts.timeZone ? { options: `-c TimeZone=${opts.timeZone}` } : {}),
    });
    // An idle client that loses its server must not crash the process.
    pool.on('error', () => undefined);
    return new PostgresDatabase(pool);
  }

  async query<R>(text: string | NamedSql, params?: unknown[]): Promise<QueryResult<R>> {
    const r = await this.raw.query(pgQuery(text, params));
    return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length, fields: r.fields };
  }

  async withConnection<T>(fn: (conn: Connection, client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.raw.connect();
    let broken = false;
    try {
      return await fn(clientConnection(client), client);
    } catch (e) {
      // A failed statement inside a transaction the callback opened must not return to the pool half-done.
      await client.query('ROLLBACK').catch(() => { broken = true; });
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async transaction<T>(fn: (tx: Connection) => Promise<T>): Promise<T> {
    const client = await this.raw.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      try {
        const out = await fn(clientConnection(client));
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => { broken = true; });
        throw e;
      }
    } finally {
      client.release(broken);
    }
  }

  async exec(sql: string): Promise<void> {
    await this.raw.query(sql);
  }

  async close(): Promise<void> {
    await this.raw.end();
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

export { pgliteTypes };
