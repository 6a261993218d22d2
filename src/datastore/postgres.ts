// The PostgreSQL data store backend. One implementation for both drivers: PGlite (embedded; reads
// switch to the read-only role with SET LOCAL ROLE) and pg (writes on write_url, reads on read_url);
// what differs between them is behind the Database interface (src/db/database.ts).
// Every identifier goes through quoteIdent, every value is bound; type names come from the catalog
// (format_type) or from the validated parser in types.ts.
//
// The pieces: catalog.ts (table descriptions), sessions.ts (transactions), create.ts (DDL),
// write.ts (insert/upsert/update/delete), select.ts (search SQL), search.ts, dump.ts.
import type { Database } from '../db/database.ts';
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type {
  CreateInput,
  CreateResult,
  DatastoreBackend,
  DatastoreField,
  DeleteInput,
  DumpChunk,
  FunctionInput,
  ReadQueryOptions,
  ReadQueryResult,
  ResourceInfo,
  SearchInput,
  SearchResult,
  UpsertInput,
} from './backend.ts';
import { COUNTS_TABLE, METADATA_VIEW_SQL, resourceInfo, writeMarker } from './catalog.ts';
import { createTable } from './create.ts';
import { isDbError, isRace } from './db-errors.ts';
import { fillBatch, pendingRows, setUpFullText } from './fts.ts';
import { dumpRows } from './dump.ts';
import { readQuery, searchRows } from './search.ts';
import { Sessions, type SessionsOptions } from './sessions.ts';
import { JSON_DOMAIN } from './types.ts';
import { deleteRecords, runTriggers, writeRecords } from './write.ts';
import { runBulk, type BulkSession } from './bulk.ts';

export { COUNTS_TABLE, METADATA_VIEW, METADATA_VIEW_SQL } from './catalog.ts';
export { readPoolOptions } from './sessions.ts';

export interface PostgresBackendOptions extends SessionsOptions {
  /** Close these databases in close(). */
  owned?: Database[];
}

export class PostgresBackend implements DatastoreBackend {
  readonly kind: 'pglite' | 'postgres';
  private readonly sessions: Sessions;
  private readonly readerRole?: string;

  constructor(private readonly opts: PostgresBackendOptions) {
    this.kind = opts.write.kind;
    this.sessions = new Sessions(opts);
    this.readerRole = opts.read ? undefined : opts.readerRole;
  }

  async init(): Promise<void> {
    await this.sessions.tables.start();
    const write = this.sessions.write;
    await write.exec(`
      DO $$ BEGIN CREATE DOMAIN ${JSON_DOMAIN} AS jsonb; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
      CREATE TABLE IF NOT EXISTS ${COUNTS_TABLE} (id text PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
      ${METADATA_VIEW_SQL}`);
    if (this.readerRole) {
      const role = qi(this.readerRole);
      await write.exec(`
        DO $$ BEGIN CREATE ROLE ${role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
        GRANT USAGE ON SCHEMA public TO ${role};
        GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO ${role};`);
    }
    // Full-text indexes a bulk fill dropped before its process died: made again now (fts.ts).
    this.sessions.recoverInterruptedFills();
  }

  /**
   * Why the separate read user (svc.datastore.read_url) is not read-only, if it is not: a
   * superuser, or the owner of the tables, may write whatever datastore_search_sql is tricked into.
   */
  async readUserProblem(): Promise<string | undefined> {
    if (this.sessions.read === this.sessions.write) return undefined;
    const read = await this.sessions.read.query<{ name: string; superuser: boolean }>(
      'SELECT current_user::text AS name, rolsuper AS superuser FROM pg_catalog.pg_roles WHERE rolname = current_user',
    );
    const write = await this.sessions.write.query<{ name: string }>('SELECT current_user::text AS name');
    const user = read.rows[0];
    if (user?.superuser) return `the read user "${user.name}" is a superuser`;
    if (user && user.name === write.rows[0]?.name) return `the read user "${user.name}" is the write user (the owner of the tables)`;
    return undefined;
  }

  /** Bulk loads (src/loader): one write transaction fed by streamed COPY; cached table descriptions go when it commits. */
  bulkWrite<T>(fn: (s: BulkSession) => Promise<T>): Promise<T> {
    return runBulk(this.sessions.write, () => this.sessions.tables.clear(), fn);
  }

  /**
   * A loaded table gets its full-text column after the data (nothing per row while copying); its
   * indexes (each a scan of the table: the `_id` key, full-text) are made in the background once
   * the load commits, then its vectors are filled, and searches meanwhile compute the rows not
   * filled yet.
   */
  async indexLoadedTable(s: BulkSession, table: string): Promise<void> {
    await setUpFullText(s, table, this.sessions.fts, false);
    s.afterCommit(() => this.sessions.indexLater(table));
  }

  async close(): Promise<void> {
    await this.sessions.filler.close();
    await this.sessions.tables.close();
    for (const db of this.opts.owned ?? []) await db.close().catch(() => undefined);
  }

  // --- writes -----------------------------------------------------------------------------------

  create(input: CreateInput): Promise<CreateResult> {
    return this.sessions.writeTx((s) => createTable(s, input));
  }

  upsert(input: UpsertInput): Promise<void> {
    return this.sessions.writeTx((s) => writeRecords(s, input), input.dry_run);
  }

  delete(input: DeleteInput): Promise<number> {
    return this.sessions.writeTx((s) => deleteRecords(s, input));
  }

  run_triggers(id: string): Promise<number> {
    return this.sessions.writeTx((s) => runTriggers(s, id));
  }

  async create_function(input: FunctionInput): Promise<void> {
    if (input.definition.includes('\u0000')) throw new ValidationError({ definition: ['invalid byte sequence for encoding "UTF8": 0x00'] });
    await this.sessions.writeTx(async (s) => {
      try {
        await s.exec(
          `CREATE ${input.or_replace ? 'OR REPLACE ' : ''}FUNCTION ${qi(input.name)}() RETURNS trigger LANGUAGE plpgsql AS ${quoteLiteral(input.definition)}`,
        );
      } catch (e) {
        if (isDbError(e) && !isRace(e)) throw new ValidationError({ definition: [e.message] });
        throw e;
      }
    });
  }

  async drop_function(name: string, ifExists = false): Promise<void> {
    await this.sessions.writeTx(async (s) => {
      try {
        await s.exec(`DROP FUNCTION ${ifExists ? 'IF EXISTS ' : ''}${qi(name)}()`);
      } catch (e) {
        if (isDbError(e) && e.code === '42883') throw new NotFoundError(`function ${name} does not exist`);
        if (isDbError(e)) throw new ValidationError({ name: [e.message] });
        throw e;
      }
    });
  }

  /**
   * Gives every table stored full-text vectors (tables made before them) and fills every vector
   * still missing, now, reporting progress; returns the number of tables.
   */
  async upgradeFullText(progress: (table: string, done: number, total: number) => void = () => undefined): Promise<number> {
    const ids = await this.get_all_ids();
    for (const name of ids) {
      await this.sessions.writeTx(async (s) => {
        await s.schemaChanged();
        await setUpFullText(s, name, this.sessions.fts);
      });
      const total = await pendingRows(this.sessions.write, name);
      let done = 0;
      progress(name, done, total);
      const unfillable: number[] = [];
      for (;;) {
        const r = await fillBatch(this.sessions.write, name, 10_000, unfillable);
        unfillable.push(...r.failed);
        done += r.taken;
        progress(name, Math.min(done, total), total);
        if (r.taken < 10_000) break;
      }
      if (done) await this.sessions.write.exec(`VACUUM (ANALYZE) ${qi(name)}`);
    }
    return ids.length;
  }

  // --- reads ----------------------------------------------------------------------------------

  search(input: SearchInput): Promise<SearchResult> {
    return searchRows(this.sessions, input);
  }

  dump(input: SearchInput & { limit: number | null }): AsyncGenerator<DumpChunk> {
    return dumpRows(this.sessions, input);
  }

  search_sql(sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult> {
    return readQuery(this.sessions, sql, opts);
  }

  readQuery(sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult> {
    return readQuery(this.sessions, sql, opts);
  }

  writeMarker(id: string): Promise<string | null> {
    return this.sessions.readSession(async (q) => writeMarker(q, id));
  }

  async resource_exists(id: string): Promise<boolean> {
    return (await this.resource_id_from_alias(id)).exists;
  }

  async resource_id_from_alias(alias: string): Promise<{ exists: boolean; resource_id: string | null }> {
    const t = await this.sessions.readSession((q) => this.sessions.describe(q, alias));
    if (!t) return { exists: false, resource_id: null };
    return { exists: true, resource_id: t.relkind === 'r' ? t.name : t.aliasOf };
  }

  async get_all_ids(): Promise<string[]> {
    return this.sessions.readTx(async (q) =>
      (
        await q.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r' AND left(c.relname, 1) <> '_' ORDER BY 1`,
        )
      ).rows.map((r) => r.name),
    );
  }

  async resource_fields(id: string): Promise<DatastoreField[]> {
    return (await this.resource_info(id)).fields;
  }

  resource_info(id: string): Promise<ResourceInfo> {
    return this.sessions.readTx((q) => resourceInfo(q, id));
  }
}
