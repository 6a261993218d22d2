// The data store's read URL (svc.datastore.read_url) as a streaming replica of the write URL's
// server. Its server is checked every second like the catalog's replicas (src/db/replicas.ts):
// in recovery or not, its replayed WAL position, its lag. Reads go to it while it serves; when it
// is down or too far behind, and when a caller's own data store write is not replayed there within
// svc.database_replica_wait, they go to the primary, still as the read-only user: read_url's user
// and password on write_url's server and database.
import type { Database, Transaction } from '../../db/database.ts';
import { PostgresDatabase } from '../../db/database.ts';
import { ReadReplicas } from '../../db/replicas.ts';
import { currentRequest } from '../../metrics/request-context.ts';
import type { Services } from '../../actions/context.ts';

/** A read URL that does not answer within this is down for this check (and its reads go to the primary). */
const CONNECT_TIMEOUT_MS = 2_000;

/** read_url's user and password on write_url's server and database: the primary, read as the read-only user. */
export function primaryReadUrl(readUrl: string, writeUrl: string): string {
  const read = new URL(readUrl);
  const url = new URL(writeUrl);
  url.username = read.username;
  url.password = read.password;
  return url.toString();
}

type PoolOptions = Parameters<typeof PostgresDatabase.open>[1];

function openPool(url: string, opts: PoolOptions): PostgresDatabase {
  const db = PostgresDatabase.open(url, opts);
  // pg-pool reads this option at each connect: a read URL that does not answer costs 2 s, not a hang
  (db.raw.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis = CONNECT_TIMEOUT_MS;
  return db;
}

/**
 * A pool (or two: SQL searches have their own) on the read URL and the same on the primary, seen as
 * one database: each read runs on whichever the request may read (ReadReplicas.readWith).
 */
function routedDatabase(reads: ReadReplicas, pools: { primary: Database; replicas: Database[] }): Database {
  const run = <T>(fn: (db: Database) => Promise<T>, mayRetry?: () => boolean): Promise<T> => {
    const scope = currentRequest();
    // Outside a request (jobs, background work) there is no caller's write to wait for.
    const consistency = scope && reads.mayLag() ? (scope.datastore ??= {}) : undefined;
    return reads.readWith(consistency, pools, fn, mayRetry);
  };
  return {
    kind: 'postgres',
    query: (text, params) => run((db) => db.query(text, params)),
    transaction: (fn, opts) => {
      // a dump hands rows on as it reads them (a cursor, COPY): run again elsewhere, it would repeat them
      let streamed = false;
      const streaming = (tx: Transaction): Transaction => ({
        ...tx,
        query: (text, params) => {
          if (/^\s*FETCH\b/i.test(typeof text === 'string' ? text : text.text)) streamed = true;
          return tx.query(text, params);
        },
        copyOut: (source, options) => {
          streamed = true;
          return tx.copyOut(source, options);
        },
      });
      return run(
        (db) => db.transaction((tx) => fn(streaming(tx)), opts),
        () => !streamed,
      );
    },
    withConnection: (fn) => run((db) => db.withConnection(fn)),
    exec: (sql) => run((db) => db.exec(sql)),
    close: async () => undefined,
  };
}

/**
 * The write database, telling the request's scope when a write transaction of the data store
 * committed: the rest of the request reads on the primary (an action that reads what it has just
 * written), and its answer carries the primary's position (registry.ts).
 */
export function noticingWrites(db: Database): Database {
  const wrote = () => {
    const scope = currentRequest();
    if (!scope) return;
    scope.datastore ??= {};
    scope.datastore.wrote = true;
    scope.datastore.primaryOnly = true;
  };
  return {
    kind: db.kind,
    query: (text, params) => db.query(text, params),
    transaction: async (fn, opts) => {
      const out = await db.transaction(fn, opts);
      if (!opts?.rollback && !opts?.readOnly) wrote();
      return out;
    },
    withConnection: (fn) => db.withConnection(fn),
    exec: async (sql) => {
      await db.exec(sql);
      wrote();
    },
    close: () => db.close(),
  };
}

export interface DatastoreReadPools {
  /** Searches, dumps, lookups. */
  read: Database;
  /** datastore_search_sql (its own connections: searches never wait behind it). */
  sqlSearch: Database;
  reads: ReadReplicas;
  close(): Promise<void>;
}

/** Opens the read pools of the data store (sqlSearchMax: null when SQL search is off) and starts checking the read URL. */
export async function openDatastoreReads(
  services: Services,
  urls: { read: string; write: string },
  pool: PoolOptions & { max: number },
  sqlSearchMax: number | null,
): Promise<DatastoreReadPools> {
  const { config, logger } = services;
  const primaryUrl = primaryReadUrl(urls.read, urls.write);
  const primary = openPool(primaryUrl, pool);
  const replica = openPool(urls.read, pool);
  const reads = new ReadReplicas(primary, [urls.read], {
    maxLagSeconds: config.get<number>('svc.database_replica_max_lag'),
    waitMs: config.int('svc.database_replica_wait'),
    poolSize: pool.max,
    logger,
    label: 'data store read URL (svc.datastore.read_url)',
    open: () => replica,
  });
  const sql =
    sqlSearchMax === null
      ? null
      : { primary: openPool(primaryUrl, { ...pool, max: sqlSearchMax }), replicas: [openPool(urls.read, { ...pool, max: sqlSearchMax })] };
  await reads.start();
  const read = routedDatabase(reads, { primary, replicas: [replica] });
  return {
    read,
    sqlSearch: sql ? routedDatabase(reads, sql) : read,
    reads,
    async close() {
      await reads.close();
      for (const db of [primary, ...(sql ? [sql.primary, ...sql.replicas] : [])]) await db.close().catch(() => undefined);
    },
  };
}
