// The PostgreSQL data store backend. One implementation for both drivers: PGlite (embedded; reads
// switch to the read-only role with SET LOCAL ROLE) and pg (writes on write_url, reads on read_url).
// Every identifier goes through quoteIdent, every value is bound; type names come from the catalog
// (format_type) or from the validated parser in types.ts.
//
// Layout of a data store table: "_id" serial primary key, then the user's columns. Field info is
// the column comment (JSON), the primary key list the table comment (JSON). Row counts are kept in
// "_svc_counts" (maintained on every write) so an unfiltered search never counts the table.
import { finished } from 'node:stream/promises';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { Connection, Database, Queryable } from '../db/database.ts';
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type {
  CreateInput, CreateResult, DatastoreBackend, DatastoreField, DeleteInput, DumpChunk, FunctionInput,
  ReadQueryOptions, ReadQueryResult, RecordInput, RecordSource, ResourceInfo, SearchInput, SearchResult, UpsertInput,
} from './backend.ts';
import { SCHEMA_CHANNEL, TableCache } from './table-cache.ts';
import { CopyWriter, JsonRecordReader } from './json-to-copy.ts';
import { JsonArrayText } from '../json/array-text.ts';
import { runBulk, type BulkSession } from './bulk.ts';
import { JSON_DOMAIN, csvCell, guessType, kindOf, outValue, parseTypeName, reportedType, type Kind } from './types.ts';

export const COUNTS_TABLE = '_svc_counts';
export const METADATA_VIEW = '_table_metadata';

/** The view of data store tables and aliases (datastore_search on _table_metadata). */
export const METADATA_VIEW_SQL = `CREATE OR REPLACE VIEW ${qi(METADATA_VIEW)} AS
  SELECT DISTINCT
    substr(md5(dependee.relname || COALESCE(dependent.relname, '')), 0, 17) AS "_id",
    dependee.relname AS name,
    dependee.oid AS oid,
    dependent.relname AS alias_of
  FROM pg_class AS dependee
    LEFT OUTER JOIN pg_rewrite AS r ON r.ev_class = dependee.oid
    LEFT OUTER JOIN pg_depend AS d ON d.objid = r.oid
    LEFT OUTER JOIN pg_class AS dependent ON d.refobjid = dependent.oid
  WHERE (dependee.oid != dependent.oid OR dependent.oid IS NULL)
    AND (dependee.relkind = 'r'::"char" OR dependee.relkind = 'v'::"char")
    AND dependee.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'public')
    AND left(dependee.relname, 1) <> '_';`;
const SEARCH_TIMEOUT_MS = 60000;

/** Session settings of a PostgreSQL read pool (see readSession). */
export const readPoolOptions = { statementTimeoutMs: SEARCH_TIMEOUT_MS, timeZone: 'UTC' };
const DUMP_CHUNK = 10000;

interface Column {
  id: string;
  typname: string;
  /** format_type() text: safe to use in DDL and casts. */
  ftype: string;
  kind: Kind;
  notnull: boolean;
  info?: Record<string, unknown>;
}

interface Table {
  name: string;
  oid: number;
  relkind: string;
  /** All columns in table order, `_id` included. */
  columns: Column[];
  meta: { primary_key?: string[] };
  /** For a view: the one table it is an alias of (null when it is not an alias of exactly one). */
  aliasOf: string | null;
}

interface WriteSession extends Connection {
  copyIn(sql: string, chunks: Iterable<Buffer>): Promise<number>;
  /** Rows added (or removed) to a table's stored count: written with the COMMIT (one round trip). */
  addCount(name: string, n: number): void;
  /** Writes the counts added so far (before a statement that reads or replaces them). */
  flushCounts(): Promise<void>;
  /** Tables or aliases change: cached descriptions go when this commits, here and in other processes. */
  schemaChanged(): Promise<void>;
}

type DbError = Error & { code?: string; where?: string; detail?: string; column?: string };
const isDbError = (e: unknown): e is DbError => e instanceof Error && typeof (e as DbError).code === 'string' && /^[0-9A-Z]{5}$/.test((e as DbError).code!);

/** The CKAN message for a uniqueness violation while writing records (sic: "indexbecause"). */
const UNIQUE_MSG = 'Cannot insert records or create indexbecause of uniqueness constraint';

export interface PostgresBackendOptions {
  write: Database;
  /** A separate read-only connection (server mode); when absent reads use `write` with readerRole. */
  read?: Database;
  /** Role switched to (SET LOCAL ROLE) for reads on the write database (embedded mode). */
  readerRole?: string;
  /** PostgreSQL: the write database's URL, to hear of schema changes made by other processes. */
  listenUrl?: string;
  /** Close these databases in close(). */
  owned?: Database[];
}

export class PostgresBackend implements DatastoreBackend {
  readonly kind: 'pglite' | 'postgres';
  private readonly write: Database;
  private readonly read: Database;
  private readonly readerRole?: string;
  private readonly typeNames = new Map<number, string>();
  private readonly tables: TableCache<Table>;

  constructor(private readonly opts: PostgresBackendOptions) {
    this.write = opts.write;
    this.read = opts.read ?? opts.write;
    this.readerRole = opts.read ? undefined : opts.readerRole;
    this.kind = opts.write.kind;
    this.tables = new TableCache(opts.write.kind === 'postgres' ? opts.listenUrl ?? null : null);
  }

  async init(): Promise<void> {
    await this.tables.start();
    await this.write.exec(`
      DO $$ BEGIN CREATE DOMAIN ${JSON_DOMAIN} AS jsonb; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
      CREATE TABLE IF NOT EXISTS ${COUNTS_TABLE} (id text PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
      ${METADATA_VIEW_SQL}`);
    if (this.readerRole) {
      const role = qi(this.readerRole);
      await this.write.exec(`
        DO $$ BEGIN CREATE ROLE ${role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
        GRANT USAGE ON SCHEMA public TO ${role};
        GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO ${role};`);
    }
  }

  async close(): Promise<void> {
    await this.tables.close();
    for (const db of this.opts.owned ?? []) await db.close().catch(() => undefined);
  }

  // --- sessions ---------------------------------------------------------------------------

  /** Bulk loads (src/loader): one write transaction with streamed COPY; cached table descriptions go when it commits. */
  async bulkWrite<T>(fn: (s: BulkSession) => Promise<T>): Promise<T> {
    return runBulk(this.write, () => this.tables.clear(), fn);
  }

  /** One write transaction on the write database; dryRun rolls it back. */
  private async writeTx<T>(fn: (s: WriteSession) => Promise<T>, dryRun = false): Promise<T> {
    const run = async (conn: Connection, copyIn: WriteSession['copyIn']) => {
      let changed = false;
      const schemaChanged = async () => {
        if (!changed && this.kind === 'postgres') await conn.exec(`NOTIFY ${SCHEMA_CHANNEL}`);
        changed = true;
      };
      const counts = new Map<string, number>();
      const addCount = (name: string, n: number) => { if (n) counts.set(name, (counts.get(name) ?? 0) + n); };
      const flushCounts = async () => {
        const sql = countsSql(counts);
        counts.clear();
        if (sql) await conn.exec(sql);
      };
      await conn.exec('BEGIN');
      try {
        const out = await fn({ ...conn, query: conn.query, exec: conn.exec, copyIn, schemaChanged, addCount, flushCounts });
        await conn.exec(dryRun ? 'ROLLBACK' : countsSql(counts) + 'COMMIT');
        if (changed) this.tables.clear();
        return out;
      } catch (e) {
        await conn.exec('ROLLBACK').catch(() => undefined);
        throw e;
      }
    };
    if (this.write.kind === 'pglite') {
      const raw = this.write.raw as PGlite;
      return this.write.withConnection((conn) => run(conn, async (sql, chunks) => {
        const parts: Buffer[] = [];
        for (const c of chunks) parts.push(c);
        const r = await raw.query(sql, [], { blob: new Blob(parts as Uint8Array<ArrayBuffer>[]) });
        return r.affectedRows ?? 0;
      }));
    }
    const withClient = this.write.withConnection as unknown as (f: (c: Connection, client: pg.PoolClient) => Promise<T>) => Promise<T>;
    return withClient.call(this.write, (conn, client) => run(conn, async (sql, chunks) => {
      const stream = client.query(copyFrom(sql));
      // The server may refuse a row while pieces are still coming: then no more are written.
      let refused = false;
      stream.once('error', () => { refused = true; });
      const settled = finished(stream);
      settled.catch(() => undefined);
      try {
        for (const piece of chunks) {
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
    }));
  }

  /** One read-only transaction as the read-only role. */
  private async readTx<T>(fn: (q: Connection) => Promise<T>, timeoutMs = SEARCH_TIMEOUT_MS): Promise<T> {
    return this.read.withConnection(async (conn) => {
      // One round trip to set the transaction up.
      await conn.exec([
        'BEGIN READ ONLY',
        this.readerRole ? `SET LOCAL ROLE ${qi(this.readerRole)}` : '',
        this.read.kind === 'postgres' ? `SET LOCAL statement_timeout = ${Math.max(0, Math.floor(timeoutMs))}` : '',
        `SET LOCAL TimeZone = 'UTC'`,
      ].filter(Boolean).join('; '));
      try {
        const out = await fn(conn);
        await conn.exec('COMMIT');
        return out;
      } catch (e) {
        await conn.exec('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  /**
   * Reads built by the backend itself (search, lookups). A separate PostgreSQL read pool already
   * connects as the read-only user with the search timeout and UTC (readPoolOptions), so its
   * statements need no transaction around them; otherwise a read-only transaction.
   */
  private async readSession<T>(fn: (q: Connection) => Promise<T>): Promise<T> {
    if (this.read !== this.write && this.read.kind === 'postgres') return this.read.withConnection(fn);
    return this.readTx(fn);
  }

  // --- catalog lookups ------------------------------------------------------------------------

  /** The table or view of that name with its columns (one round trip). */
  private async table(q: Queryable, name: string): Promise<Table | null> {
    type ColumnRow = { id: string; typname: string; ftype: string; notnull: boolean; comment: string | null };
    const rel = await q.query<{ oid: number; relkind: string; comment: string | null; cols: ColumnRow[] | string; alias_of: string | null }>({
      name: 'svc_ds_table',
      text: `SELECT c.oid::int AS oid, c.relkind::text AS relkind, obj_description(c.oid, 'pg_class') AS comment,
              CASE WHEN c.relkind <> 'r' THEN
                (SELECT CASE WHEN count(DISTINCT t.relname) = 1 THEN min(t.relname::text) END
                 FROM pg_rewrite w JOIN pg_depend d ON d.objid = w.oid
                 JOIN pg_class t ON t.oid = d.refobjid AND t.relkind = 'r'
                 WHERE w.ev_class = c.oid AND t.oid <> c.oid) END AS alias_of,
              COALESCE((SELECT json_agg(json_build_object('id', a.attname, 'typname', t.typname::text,
                          'ftype', format_type(a.atttypid, a.atttypmod), 'notnull', a.attnotnull,
                          'comment', col_description(a.attrelid, a.attnum)) ORDER BY a.attnum)
                        FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]'::json) AS cols
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relname = $1 AND c.relkind IN ('r', 'v', 'm', 'f')`,
    }, [name]);
    const r = rel.rows[0];
    if (!r) return null;
    const cols: ColumnRow[] = typeof r.cols === 'string' ? JSON.parse(r.cols) : r.cols;
    return {
      name, oid: Number(r.oid), relkind: r.relkind, aliasOf: r.alias_of,
      meta: parseJson(r.comment) ?? {},
      columns: cols.map((c) => ({
        id: c.id, typname: c.typname, ftype: c.ftype, kind: kindOf(c.typname), notnull: c.notnull,
        info: parseJson(c.comment) ?? undefined,
      })),
    };
  }

  /** table(), from the cache when it has it: for reads only (writes describe inside their transaction). */
  private async describe(q: Queryable, name: string): Promise<Table | null> {
    const hit = this.tables.get(name);
    if (hit) return hit;
    const generation = this.tables.generation;
    const t = await this.table(q, name);
    if (t) this.tables.set(name, t, generation);
    return t;
  }

  private async requireTable(q: Queryable, name: string): Promise<Table> {
    const t = await this.table(q, name);
    if (!t || t.relkind !== 'r') throw new NotFoundError(`Resource "${name}" was not found.`);
    return t;
  }

  private async aliasesOf(q: Queryable, oid: number): Promise<string[]> {
    const r = await q.query<{ name: string }>(
      `SELECT DISTINCT v.relname AS name FROM pg_class v
       JOIN pg_rewrite r ON r.ev_class = v.oid JOIN pg_depend d ON d.objid = r.oid
       WHERE d.refobjid = $1 AND v.relkind = 'v' AND v.oid <> $1 ORDER BY 1`, [oid]);
    return r.rows.map((x) => x.name);
  }

  async resource_exists(id: string): Promise<boolean> {
    return (await this.resource_id_from_alias(id)).exists;
  }

  async resource_id_from_alias(alias: string): Promise<{ exists: boolean; resource_id: string | null }> {
    const t = await this.readSession((q) => this.describe(q, alias));
    if (!t) return { exists: false, resource_id: null };
    return { exists: true, resource_id: t.relkind === 'r' ? t.name : t.aliasOf };
  }

  async get_all_ids(): Promise<string[]> {
    return this.readTx(async (q) => (await q.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r' AND left(c.relname, 1) <> '_' ORDER BY 1`)).rows.map((r) => r.name));
  }

  async resource_fields(id: string): Promise<DatastoreField[]> {
    return (await this.resource_info(id)).fields;
  }

  async resource_info(id: string): Promise<ResourceInfo> {
    return this.readTx(async (q) => {
      const t = await this.table(q, id);
      if (!t) throw new NotFoundError(`Resource/Alias "${id}" was not found.`);
      const base = t.relkind === 'v' ? t.aliasOf ?? id : id;
      const bt = base === id ? t : (await this.table(q, base)) ?? t;
      const sizes = (await q.query<{ size: string; idx: string; db: string }>(
        `SELECT pg_table_size($1::oid)::text AS size, pg_indexes_size($1::oid)::text AS idx, pg_database_size(current_database())::text AS db`,
        [bt.oid])).rows[0];
      const idx = (await q.query<{ name: string; uniq: boolean; cols: string[] }>(
        `SELECT ic.relname AS name, i.indisunique AS uniq,
                ARRAY(SELECT a.attname::text FROM unnest(i.indkey) k JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k) AS cols
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = $1`, [bt.oid])).rows;
      const count = await this.countRows(q, bt);
      const tableType = { r: 'BASE TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', f: 'FOREIGN TABLE' }[t.relkind] ?? 'BASE TABLE';
      const fields: DatastoreField[] = visibleColumns(t).filter((c) => c.id !== '_id').map((c) => {
        const own = idx.filter((i) => i.cols.length === 1 && i.cols[0] === c.id);
        const f: DatastoreField = { id: c.id, type: reportedType(c.typname) };
        if (c.info) f.info = c.info;
        f.schema = {
          native_type: c.ftype === JSON_DOMAIN ? 'json' : c.ftype,
          notnull: c.notnull,
          index_name: own[0]?.name ?? null,
          is_index: own.length > 0,
          uniquekey: own.some((i) => i.uniq),
        };
        return f;
      });
      return {
        meta: {
          id: base, count, table_type: tableType, size: Number(sizes.size), db_size: Number(sizes.db), idx_size: Number(sizes.idx),
          aliases: await this.aliasesOf(q, bt.oid),
        },
        fields,
      };
    });
  }

  private async countRows(q: Queryable, t: Table): Promise<number> {
    if (t.relkind === 'r') {
      const r = await q.query<{ n: string }>(`SELECT n::text AS n FROM ${COUNTS_TABLE} WHERE id = $1`, [t.name]);
      if (r.rows[0]) return Number(r.rows[0].n);
    }
    return Number((await q.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${qi(t.name)}`)).rows[0].n);
  }

  // --- writes -----------------------------------------------------------------------------------

  async create(input: CreateInput): Promise<CreateResult> {
    return this.writeTx(async (s) => {
      await s.schemaChanged();
      let t = await this.table(s, input.resource_id);
      if (t && t.relkind !== 'r') throw new ValidationError({ resource_id: [`"${input.resource_id}" is an alias, not a resource`] });
      const records = input.records ?? [];
      checkRecordObjects(records);
      const existing = new Set((t?.columns ?? []).map((c) => c.id));
      // Types of new fields: declared, else guessed from the first record.
      const first = records[0] ?? {};
      const sent = (input.fields ?? []).map((f) => ({ ...f }));
      const sentIds = new Set(sent.map((f) => f.id));
      const typeErrors: string[] = [];
      for (const f of sent) {
        if (f.type === undefined || f.type === null || f.type === '') {
          if (existing.has(f.id)) continue;
          if (!(f.id in first)) {
            typeErrors.push(`"${f.id}" type not guessable`);
            continue;
          }
          f.type = guessType(first[f.id]);
        }
      }
      // Undeclared keys of the first record become fields (on a new table, or when no fields were sent).
      for (const k of Object.keys(first)) {
        if (!sentIds.has(k) && !existing.has(k)) {
          if (input.fields && input.fields.length) continue; // reported as extra keys below
          sent.push({ id: k, type: guessType(first[k]) });
          sentIds.add(k);
        }
      }
      if (typeErrors.length) throw new ValidationError({ fields: typeErrors });
      const defs: { id: string; ddl: string }[] = [];
      for (const f of sent) {
        if (existing.has(f.id)) continue;
        const p = parseTypeName(String(f.type));
        if (!p || !(await validType(s, p.base))) throw new ValidationError({ fields: [`"${f.type}" is not a valid field type`] });
        defs.push({ id: f.id, ddl: p.ddl });
      }
      // Records may only use known fields.
      const known = new Set([...existing, ...sentIds]);
      records.forEach((r, i) => {
        const extra = Object.keys(r).filter((k) => !known.has(k));
        if (extra.length) throw new ValidationError({ records: [`row "${i + 1}" has extra keys "${extra.join(', ')}"`] });
      });

      let created = false;
      let aliasesToRestore: string[] = [];
      try {
        if (!t) {
          const cols = ['"_id" serial PRIMARY KEY', ...defs.map((d) => `${qi(d.id)} ${d.ddl}`)];
          await s.exec(`CREATE TABLE ${qi(input.resource_id)} (${cols.join(', ')})`);
          await s.query(`INSERT INTO ${COUNTS_TABLE} (id, n) VALUES ($1, 0) ON CONFLICT (id) DO UPDATE SET n = 0`, [input.resource_id]);
          created = true;
        } else {
          const drops = input.delete_fields && input.fields
            ? t.columns.filter((c) => !c.id.startsWith('_') && !sentIds.has(c.id)).map((c) => c.id) : [];
          if (defs.length || drops.length) {
            // Alias views freeze their column list: drop them now, recreate after the change.
            aliasesToRestore = await this.aliasesOf(s, t.oid);
            for (const a of aliasesToRestore) await s.exec(`DROP VIEW IF EXISTS ${qi(a)}`);
            const parts = [...drops.map((d) => `DROP COLUMN ${qi(d)}`), ...defs.map((d) => `ADD COLUMN ${qi(d.id)} ${d.ddl}`)];
            await s.exec(`ALTER TABLE ${qi(input.resource_id)} ${parts.join(', ')}`);
          }
        }
      } catch (e) {
        if (isDbError(e) && e.code !== '40001') throw new ValidationError({ fields: [e.message] });
        throw e;
      }
      t = (await this.table(s, input.resource_id))!;
      // Data dictionary: the info of each sent field, as the column comment.
      for (const f of sent) {
        if (f.info !== undefined && f.info !== null) {
          await s.exec(`COMMENT ON COLUMN ${qi(t.name)}.${qi(f.id)} IS ${quoteLiteral(JSON.stringify(f.info))}`);
        }
      }
      const columnIds = new Set(t.columns.map((c) => c.id));
      const checkFields = (key: string, names: string[]) => {
        const bad = names.filter((n) => !columnIds.has(n));
        if (bad.length) throw new ValidationError({ [key]: [`fields "${bad.join(', ')}" do not exist`] });
      };
      const prefix = `ds_${t.oid}_`;
      const ownIndexes = (await s.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1`, [t.name])).rows.map((r) => r.name);
      try {
        if (input.primary_key !== undefined) {
          checkFields('primary_key', input.primary_key);
          if (ownIndexes.includes(`${prefix}pk`)) await s.exec(`DROP INDEX ${qi(prefix + 'pk')}`);
          if (input.primary_key.length) {
            await s.exec(`CREATE UNIQUE INDEX ${qi(prefix + 'pk')} ON ${qi(t.name)} (${input.primary_key.map(qi).join(', ')})`);
          }
          t.meta = { ...t.meta, primary_key: input.primary_key };
          await s.exec(`COMMENT ON TABLE ${qi(t.name)} IS ${quoteLiteral(JSON.stringify(t.meta))}`);
        }
        if (input.indexes !== undefined) {
          for (const i of ownIndexes.filter((n) => n.startsWith(`${prefix}idx_`))) await s.exec(`DROP INDEX ${qi(i)}`);
          let n = 0;
          for (const spec of input.indexes) {
            const cols = spec.split(',').map((x) => x.trim()).filter(Boolean);
            checkFields('indexes', cols);
            await s.exec(`CREATE INDEX ${qi(`${prefix}idx_${n++}`)} ON ${qi(t.name)} (${cols.map(qi).join(', ')})`);
          }
        }
      } catch (e) {
        if (isDbError(e) && e.code === '23505') throw new ValidationError({ constraints: [UNIQUE_MSG], info: { orig: [e.message], pgcode: e.code } });
        throw e;
      }
      if (input.triggers !== undefined) {
        const trg = (await s.query<{ name: string }>(`SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1 AND NOT tgisinternal`, [t.oid])).rows;
        for (const x of trg.filter((r) => r.name.startsWith(`${prefix}trg_`))) await s.exec(`DROP TRIGGER ${qi(x.name)} ON ${qi(t.name)}`);
        let n = 0;
        for (const tr of input.triggers) {
          try {
            await s.exec(`CREATE TRIGGER ${qi(`${prefix}trg_${n++}`)} BEFORE INSERT OR UPDATE ON ${qi(t.name)} FOR EACH ROW EXECUTE PROCEDURE ${qi(tr.function)}()`);
          } catch (e) {
            if (isDbError(e)) throw new ValidationError({ triggers: [e.message] });
            throw e;
          }
        }
      }
      // Aliases: replaced when sent; otherwise the ones dropped for a column change come back.
      const aliasTarget = input.aliases ?? aliasesToRestore;
      if (input.aliases !== undefined || aliasesToRestore.length) {
        const current = await this.aliasesOf(s, t.oid);
        for (const a of aliasTarget) {
          const other = await this.table(s, a);
          if (other && !current.includes(a)) throw new ValidationError({ aliases: [`The alias "${a}" already exists.`] });
        }
        for (const a of current) await s.exec(`DROP VIEW IF EXISTS ${qi(a)}`);
        for (const a of aliasTarget) await s.exec(`CREATE VIEW ${qi(a)} AS SELECT * FROM ${qi(t.name)}`);
      }
      if (records.length) await this.insertRecords(s, t, records);
      if (input.calculate_record_count) await this.recount(s, t.name);
      return { fields: sent, created };
    });
  }

  async upsert(input: UpsertInput): Promise<void> {
    await this.writeTx(async (s) => {
      const t = await this.requireTable(s, input.resource_id);
      const pk = t.meta.primary_key?.length ? t.meta.primary_key : null;
      if (input.method === 'insert') {
        await this.insertRecords(s, t, input.records);
      } else if (input.method === 'upsert' && pk) {
        await this.upsertRecords(s, t, input.records, pk);
      } else {
        const records = checkedRecords(t, input.records);
        checkKeys(records, pk, input.method);
        await this.writeKeyed(s, t, records, input.method, pk);
      }
      if (input.calculate_record_count) await this.recount(s, t.name);
    }, input.dry_run);
  }

  async delete(input: DeleteInput): Promise<number> {
    return this.writeTx(async (s) => {
      const t = await this.requireTable(s, input.resource_id);
      if (input.filters === undefined) {
        await s.schemaChanged();
        await s.exec(`DROP TABLE ${qi(t.name)} CASCADE`);
        await s.flushCounts();
        await s.query(`DELETE FROM ${COUNTS_TABLE} WHERE id = $1`, [t.name]);
        return -1;
      }
      const params: unknown[] = [];
      const where = filterConditions(t, input.filters, params, 'filters');
      const r = await s.query(`DELETE FROM ${qi(t.name)}${where.length ? ' WHERE ' + where.join(' AND ') : ''}`, params).catch((e) => {
        throw isDbError(e) ? new ValidationError({ filters: [e.message] }) : e;
      });
      s.addCount(t.name, -r.rowCount);
      if (input.calculate_record_count) await this.recount(s, t.name);
      return r.rowCount;
    });
  }

  async run_triggers(id: string): Promise<number> {
    return this.writeTx(async (s) => {
      const t = await this.requireTable(s, id);
      try {
        return (await s.query(`UPDATE ${qi(t.name)} SET "_id" = "_id"`)).rowCount;
      } catch (e) {
        if (isDbError(e)) throw new ValidationError({ records: [e.message] });
        throw e;
      }
    });
  }

  async create_function(input: FunctionInput): Promise<void> {
    await this.writeTx(async (s) => {
      try {
        await s.exec(`CREATE ${input.or_replace ? 'OR REPLACE ' : ''}FUNCTION ${qi(input.name)}() RETURNS trigger LANGUAGE plpgsql AS ${quoteLiteral(input.definition)}`);
      } catch (e) {
        if (isDbError(e)) throw new ValidationError({ definition: [e.message] });
        throw e;
      }
    });
  }

  async drop_function(name: string, ifExists = false): Promise<void> {
    await this.writeTx(async (s) => {
      try {
        await s.exec(`DROP FUNCTION ${ifExists ? 'IF EXISTS ' : ''}${qi(name)}()`);
      } catch (e) {
        if (isDbError(e) && e.code === '42883') throw new NotFoundError(`function ${name} does not exist`);
        if (isDbError(e)) throw new ValidationError({ name: [e.message] });
        throw e;
      }
    });
  }

  private async recount(s: WriteSession, name: string): Promise<void> {
    await s.flushCounts();
    await s.query(`ANALYZE ${qi(name)}`);
    await s.query(`INSERT INTO ${COUNTS_TABLE} (id, n) SELECT $1, count(*) FROM ${qi(name)} ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n`, [name]);
  }

  /**
   * Appends records in one COPY, written straight from their JSON (json-to-copy.ts) a piece at a
   * time: on PostgreSQL the server takes in a piece while the next is made. Missing keys are NULL.
   */
  private async insertRecords(s: WriteSession, t: Table, records: RecordInput): Promise<void> {
    const reader = recordReader(t, records);
    if (!nextChecked(reader)) return;
    // _id is written only when the records give it (then all must: a serial cannot be half given).
    const idCol = t.columns.findIndex((c) => c.id === '_id');
    const withId = reader.has(idCol);
    const cols = t.columns.map((_, i) => i).filter((i) => i !== idCol || withId);
    const pieces = () => copyPieces(reader, cols, () => {
      if (!withId && reader.has(idCol)) throw new ValidationError({ records: ['"_id" must be given in every record or in none'], records_row: reader.index });
      return true;
    });
    let inserted: number;
    if (!cols.length) {
      // A table without columns of its own: every record (checked as read) is a row of defaults.
      for (const _ of pieces()) continue;
      inserted = (await s.query(`INSERT INTO ${qi(t.name)} SELECT FROM generate_series(1, $1::int)`, [reader.index + 1])).rowCount;
    } else {
      try {
        inserted = await s.copyIn(copySql(t.name, cols.map((i) => t.columns[i]), this.kind), pieces());
      } catch (e) {
        throw recordError(e);
      }
    }
    s.addCount(t.name, inserted);
  }

  /**
   * upsert on a table with a primary key. The records with the keys of the first one (a loader's
   * usual batch: all of them) go by one COPY into a scratch table while they are read, then in one
   * INSERT ... ON CONFLICT into the table; records with other keys follow, grouped (writeKeyed).
   */
  private async upsertRecords(s: WriteSession, t: Table, records: RecordInput, pk: string[]): Promise<void> {
    const reader = recordReader(t, records);
    if (!nextChecked(reader)) return;
    const cols = t.columns.map((_, i) => i).filter((i) => reader.has(i));
    const keyCols = pk.map((k) => t.columns.findIndex((c) => c.id === k));
    const missing = pk.filter((_, j) => !reader.has(keyCols[j]));
    if (missing.length) throw new ValidationError({ key: [`fields "${missing.join(', ')}" are missing but needed as key`], records_row: 0 });
    // Records of the main group by their place in the request (for error rows), the others aside.
    const mainRows: number[] = [];
    const others: Record<string, unknown>[] = [];
    const otherRows: number[] = [];
    const seen = new Set<string>();
    let duplicates = false;
    const pieces = () => copyPieces(reader, cols, () => {
      if (reader.count !== cols.length || !cols.every((c) => reader.has(c))) {
        others.push(reader.value() as Record<string, unknown>);
        otherRows.push(reader.index);
        return false;
      }
      const absent = pk.filter((_, j) => reader.isNull(keyCols[j]));
      if (absent.length) throw new ValidationError({ key: [`fields "${absent.join(', ')}" are missing but needed as key`], records_row: reader.index });
      const key = keyCols.length === 1 ? reader.copyText(keyCols[0]) : keyCols.map((c) => reader.copyText(c)).join('\t');
      if (seen.has(key)) duplicates = true;
      else seen.add(key);
      mainRows.push(reader.index);
      return true;
    });
    const columns = cols.map((i) => t.columns[i]);
    const names = columns.map((c) => qi(c.id)).join(', ');
    const nonKey = columns.filter((c) => !pk.includes(c.id));
    const scratch = 'svc_upsert';
    await s.exec(`CREATE TEMP TABLE ${qi(scratch)} (${columnDefs(columns)}) ON COMMIT DROP`);
    try {
      await s.copyIn(copySql(scratch, columns, this.kind), pieces());
    } catch (e) {
      const err = recordError(e);
      if (err instanceof ValidationError && isDbError(e) && typeof err.errors.records_row === 'number') {
        err.errors.records_row = mainRows[err.errors.records_row] ?? err.errors.records_row;
      }
      throw err;
    }
    // Later records win over earlier ones with the same key (as sequential writes would); the
    // scratch table is new, so its physical order is the order of the request.
    const keyList = pk.map(qi).join(', ');
    const source = duplicates
      ? `SELECT DISTINCT ON (${keyList}) ${names} FROM ${qi(scratch)} ORDER BY ${keyList}, ctid DESC`
      : `SELECT ${names} FROM ${qi(scratch)}`;
    const conflict = nonKey.length ? `DO UPDATE SET ${nonKey.map((c) => `${qi(c.id)} = EXCLUDED.${qi(c.id)}`).join(', ')}` : 'DO NOTHING';
    const r = await s.query<{ inserted: number }>(`WITH w AS (
        INSERT INTO ${qi(t.name)} (${names}) ${source}
        ON CONFLICT (${keyList}) ${conflict} RETURNING (xmax = 0) AS ins)
      SELECT count(*) FILTER (WHERE ins)::int AS inserted FROM w`).catch((e) => {
      if (isDbError(e) && e.code === '42P10') return Promise.reject(new ValidationError({ table: ['unique key must be passed for update/upsert'] }));
      if (isDbError(e) && e.code === '21000') return Promise.reject(new ValidationError({ key: ['two records have the same key, written differently'] }));
      throw recordError(e);
    });
    await s.exec(`DROP TABLE ${qi(scratch)}`);
    s.addCount(t.name, Number(r.rows[0]?.inserted ?? 0));
    if (others.length) {
      try {
        checkKeys(others, pk, 'upsert');
        await this.writeKeyed(s, t, others, 'upsert', pk);
      } catch (e) {
        if (e instanceof ValidationError && typeof e.errors.records_row === 'number') e.errors.records_row = otherRows[e.errors.records_row];
        throw e;
      }
    }
  }

  /** update / upsert, one statement per group of records with the same keys. */
  private async writeKeyed(s: WriteSession, t: Table, records: Record<string, unknown>[], method: 'upsert' | 'update', pk: string[] | null): Promise<void> {
    // Without a primary key the key is _id: records with _id update, the others are inserted.
    const plain: Record<string, unknown>[] = [];
    const groups = new Map<string, { cols: Column[]; rows: Record<string, unknown>[]; first: number }>();
    records.forEach((r, i) => {
      if (!pk && (r._id === undefined || r._id === null)) {
        plain.push(r);
        return;
      }
      const sig = Object.keys(r).sort().join('\u0000');
      let g = groups.get(sig);
      if (!g) groups.set(sig, (g = { cols: usedColumns(t, [r]), rows: [], first: i }));
      g.rows.push(r);
    });
    const key = pk ?? ['_id'];
    const byId = new Map(t.columns.map((c) => [c.id, c]));
    let groupNo = 0;
    for (const g of groups.values()) {
      // Later records win over earlier ones with the same key (as sequential writes would).
      const seen = new Map<string, Record<string, unknown>>();
      for (const r of g.rows) seen.set(JSON.stringify(key.map((k) => r[k])), r);
      const rows = [...seen.values()];
      const names = g.cols.map((c) => qi(c.id)).join(', ');
      const nonKey = g.cols.filter((c) => !key.includes(c.id));
      const keyCols = key.map((k) => byId.get(k)!);
      if (method === 'update' || !pk) {
        prepareForJson(rows, g.cols);
        const set = (nonKey.length ? nonKey : [keyCols[0]]).map((c) => `${qi(c.id)} = x.${qi(c.id)}`).join(', ');
        const cond = keyCols.map((c) => `t.${qi(c.id)} = x.${qi(c.id)}`).join(' AND ');
        const r = await s.query<{ ord: string }>(`UPDATE ${qi(t.name)} AS t SET ${set}
          FROM ROWS FROM (json_to_recordset($1::json) AS (${columnDefs(g.cols)})) WITH ORDINALITY AS x(${names}, "__ord")
          WHERE ${cond} RETURNING x."__ord"::text AS ord`, [JSON.stringify(rows)]).catch((e) => { throw recordError(e); });
        if (r.rowCount < rows.length) {
          const done = new Set(r.rows.map((x) => Number(x.ord) - 1));
          const miss = rows.findIndex((_, i) => !done.has(i));
          const vals = key.map((k) => rows[miss][k]);
          throw new ValidationError({ key: [`key "${JSON.stringify(vals)}" not found`] });
        }
      } else {
        const conflict = nonKey.length
          ? `DO UPDATE SET ${nonKey.map((c) => `${qi(c.id)} = EXCLUDED.${qi(c.id)}`).join(', ')}`
          : 'DO NOTHING';
        // The batch goes in by COPY (the fast parser) to a scratch table, then in one statement to the table.
        const scratch = `svc_upsert_${groupNo++}`;
        await s.exec(`CREATE TEMP TABLE ${qi(scratch)} (${columnDefs(g.cols)}) ON COMMIT DROP`);
        try {
          const reader = recordReader(t, rows);
          nextChecked(reader);
          await s.copyIn(copySql(scratch, g.cols, this.kind), copyPieces(reader, g.cols.map((c) => t.columns.indexOf(c)), () => true));
        } catch (e) {
          const err = recordError(e, g.cols);
          // The row number is the record's place in the request.
          if (err instanceof ValidationError && typeof err.errors.records_row === 'number') {
            err.errors.records_row = records.indexOf(rows[err.errors.records_row]);
          }
          throw err;
        }
        const r = await s.query<{ inserted: number }>(`WITH w AS (
            INSERT INTO ${qi(t.name)} (${names}) SELECT ${names} FROM ${qi(scratch)}
            ON CONFLICT (${key.map(qi).join(', ')}) ${conflict} RETURNING (xmax = 0) AS ins)
          SELECT count(*) FILTER (WHERE ins)::int AS inserted FROM w`).catch((e) => {
          if (isDbError(e) && e.code === '42P10') return Promise.reject(new ValidationError({ table: ['unique key must be passed for update/upsert'] }));
          throw recordError(e);
        });
        s.addCount(t.name, Number(r.rows[0]?.inserted ?? 0));
      }
    }
    if (plain.length) {
      if (method === 'update') throw new ValidationError({ table: ['unique key must be passed for update/upsert'] });
      await this.insertRecords(s, t, plain);
    }
  }

  // --- reads ----------------------------------------------------------------------------------

  async search(input: SearchInput): Promise<SearchResult> {
    try {
      return await this.searchOnce(input);
    } catch (e) {
      // A description cached before another process changed the table: read it afresh, once.
      const cause = (e as { cause?: unknown }).cause;
      const stale = isDbError(cause) && ['42703', '42P01', '42804'].includes(cause.code!);
      if (!stale || !this.tables.get(input.resource_id)) throw e;
      this.tables.clear();
      return this.searchOnce(input);
    }
  }

  private async searchOnce(input: SearchInput): Promise<SearchResult> {
    return this.readSession(async (q) => {
      const t = await this.describe(q, input.resource_id);
      if (!t) throw new NotFoundError(`Resource "${input.resource_id}" was not found.`);
      const textFormat = input.records_format === 'csv' || input.records_format === 'tsv';
      const plan = await buildSelect(q, t, input, textFormat);
      const out: SearchResult = { fields: plan.fields, records: [] };
      const unfiltered = !plan.filtered && !input.distinct;
      // A filtered count comes with the page (one scan) when the page has rows.
      const totalWithPage = input.include_total !== false && !unfiltered ? plan.sqlWithTotal : null;
      let counted: number | null = null;
      if (input.limit > 0) {
        const p = [...plan.params, input.limit, input.offset ?? 0];
        const r = await q.query<Record<string, unknown>>(
          `${totalWithPage ?? plan.sql} LIMIT $${p.length - 1} OFFSET $${p.length}`, p).catch((e) => { throw queryError(e); });
        if (totalWithPage && r.rows.length) counted = Number(r.rows[0].__total);
        out.records = formatRows(r.rows, plan, input.records_format ?? 'objects');
      } else {
        out.records = textFormat ? '' : [];
      }
      if (counted !== null) {
        out.total = counted;
        out.total_was_estimated = false;
      } else if (input.include_total !== false) {
        if (unfiltered && input.total_estimation_threshold !== undefined && input.total_estimation_threshold !== null) {
          const base = t.relkind === 'v' ? t.aliasOf ?? t.name : t.name;
          const est = await q.query<{ n: number }>(
            `SELECT c.reltuples::float8 AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'public' AND c.relname = $1`, [base]);
          const n = Number(est.rows[0]?.n ?? -1);
          if (n >= 0 && n >= input.total_estimation_threshold) {
            out.total = Math.round(n);
            out.total_was_estimated = true;
            return out;
          }
        }
        if (unfiltered) {
          const base = t.relkind === 'v' ? t.aliasOf : t.name;
          const bt = base && base !== t.name ? await this.table(q, base) : t;
          out.total = await this.countRows(q, bt ?? t);
        } else {
          const r = await q.query<{ n: string }>(plan.countSql, plan.params).catch((e) => { throw queryError(e); });
          out.total = Number(r.rows[0].n);
        }
        out.total_was_estimated = false;
      }
      return out;
    });
  }

  async *dump(input: SearchInput & { limit: number | null }): AsyncGenerator<DumpChunk> {
    const text = input.records_format === 'csv' || input.records_format === 'tsv';
    // Plan once (and check the table) in a short read transaction.
    const { t, plan } = await this.readSession(async (q) => {
      const t = await this.describe(q, input.resource_id);
      if (!t) throw new NotFoundError(`Resource "${input.resource_id}" was not found.`);
      return { t, plan: await buildSelect(q, t, { ...input, limit: 0 }, text, true) };
    });
    const shape = (rows: Record<string, unknown>[]): unknown[][] => (text
      ? rows.map((r) => plan.fields.map((_, i) => r[`f${i}`] ?? null))
      : formatRows(rows, plan, 'lists') as unknown[][]);
    let yielded = false;
    let remaining = input.limit ?? Infinity;
    let offset = input.offset ?? 0;
    const keyset = plan.defaultOrder && t.columns.some((c) => c.id === '_id');
    if (this.read.kind === 'postgres' && text) {
      yield* this.copyDump(plan, input);
      return;
    }
    if (this.read.kind === 'postgres') {
      // A server-side cursor in one read-only transaction: constant memory, one snapshot.
      const pool = this.read.raw as pg.Pool;
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN READ ONLY');
        await client.query(`SET LOCAL TimeZone = 'UTC'`);
        const lim = input.limit === null ? '' : ` LIMIT ${Math.max(0, Math.floor(input.limit))}`;
        await client.query(`DECLARE ds_dump NO SCROLL CURSOR FOR ${plan.sql}${lim} OFFSET ${Math.max(0, Math.floor(offset))}`, plan.params);
        for (;;) {
          const r = await client.query(`FETCH ${DUMP_CHUNK} FROM ds_dump`);
          if (!r.rows.length) break;
          yielded = true;
          yield { fields: plan.fields, rows: shape(r.rows) };
          if (r.rows.length < DUMP_CHUNK) break;
        }
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => { broken = true; });
        throw queryError(e);
      } finally {
        client.release(broken);
      }
    } else {
      // PGlite: pages in short transactions (the one connection is not held while the client reads).
      let last: number | null = null;
      while (remaining > 0) {
        const n = Math.min(DUMP_CHUNK, remaining);
        const page = (): { sql: string; p: unknown[] } => {
          const p = [...plan.params];
          if (keyset && last !== null) {
            p.push(last);
            return { sql: `${plan.sqlKeyset(`$${p.length}`)} LIMIT ${n}`, p };
          }
          return { sql: `${plan.sql} LIMIT ${n} OFFSET ${offset}`, p };
        };
        if (text) {
          // CSV/TSV pages written inside the database (one value per page, not one object per row).
          const got = await this.readTx(async (q) => {
            const { sql, p } = page();
            return (await q.query<{ n: number; k: string | null; text: string | null }>(
              `SELECT count(*)::int AS n, ${keyset ? 'max("__k")' : 'NULL'}::text AS k, string_agg(${csvLineExpr(plan, input.records_format)}, '') AS text
               FROM (${sql}) AS d`, p).catch((e) => { throw queryError(e); })).rows[0];
          });
          if (!got.n) break;
          if (keyset) last = Number(got.k);
          offset += got.n;
          remaining -= got.n;
          yielded = true;
          yield { fields: plan.fields, rows: [], text: Buffer.from(got.text ?? '') };
          if (got.n < n) break;
          continue;
        }
        const rows = await this.readTx(async (q) => {
          const { sql, p } = page();
          return (await q.query<Record<string, unknown>>(sql, p).catch((e) => { throw queryError(e); })).rows;
        });
        if (!rows.length) break;
        if (keyset) last = Number(rows[rows.length - 1].__k);
        offset += rows.length;
        remaining -= rows.length;
        yielded = true;
        yield { fields: plan.fields, rows: shape(rows) };
        if (rows.length < n) break;
      }
    }
    if (!yielded) yield { fields: plan.fields, rows: [] };
  }

  /**
   * CSV/TSV dumps on PostgreSQL: COPY (query) TO STDOUT streams rows as fast as the server writes
   * them, with backpressure. Its quoting is what csvCell writes (empty string quoted, NULL empty).
   */
  private async *copyDump(plan: Plan, input: SearchInput & { limit: number | null }): AsyncGenerator<DumpChunk> {
    const client = await (this.read.raw as pg.Pool).connect();
    let broken = true;
    try {
      // COPY takes no bound parameters: the values go in as literals, which needs standard strings.
      await client.query(`BEGIN READ ONLY; SET LOCAL TimeZone = 'UTC'; SET LOCAL standard_conforming_strings = on; SET LOCAL statement_timeout = 0`);
      const lim = input.limit === null ? '' : ` LIMIT ${Math.max(0, Math.floor(input.limit))}`;
      const query = copyQuery(plan, `${inlineParams(plan.sql, plan.params)}${lim} OFFSET ${Math.max(0, Math.floor(input.offset ?? 0))}`);
      yield { fields: plan.fields, rows: [] };
      const stream = client.query(copyTo(`COPY (${query}) TO STDOUT ${copyCsvOptions(input.records_format)}`));
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) yield { fields: plan.fields, rows: [], text: chunk };
      } catch (e) {
        throw queryError(e);
      }
      await client.query('COMMIT');
      broken = false;
    } finally {
      // A dump abandoned half-way (client gone) leaves COPY running: that connection is not reused.
      client.release(broken);
    }
  }

  async search_sql(sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult> {
    return this.readQuery(sql, opts);
  }

  async readQuery(sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult> {
    const limit = Math.max(0, Math.floor(opts.rowLimit));
    return this.readTx(async (q) => {
      await q.query(`DECLARE ds_read NO SCROLL CURSOR FOR ${sql}`, opts.params ?? []);
      const r = await q.query<Record<string, unknown>>(`FETCH ${limit + 1} FROM ds_read`);
      await q.exec('CLOSE ds_read');
      const truncated = r.rows.length > limit;
      const fields: { id: string; type: string }[] = [];
      for (const f of r.fields) fields.push({ id: f.name, type: reportedType(await this.typeName(q, f.dataTypeID)) });
      const kinds = fields.map((f) => kindOf(f.type));
      const records = r.rows.slice(0, limit).map((row) => {
        const o: Record<string, unknown> = {};
        fields.forEach((f, i) => { o[f.id] = readValue(row[f.id], kinds[i]); });
        return o;
      });
      return { fields, records, truncated };
    }, opts.timeoutMs ?? SEARCH_TIMEOUT_MS);
  }

  private async typeName(q: Queryable, oid: number): Promise<string> {
    let n = this.typeNames.get(oid);
    if (n === undefined) {
      n = (await q.query<{ typname: string }>('SELECT typname::text AS typname FROM pg_type WHERE oid = $1', [oid])).rows[0]?.typname ?? 'text';
      this.typeNames.set(oid, n);
    }
    return n;
  }
}

// --- helpers ------------------------------------------------------------------------------------

function parseJson(s: string | null | undefined): any {
  if (!s) return null;
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

async function validType(q: Queryable, base: string): Promise<boolean> {
  try {
    const r = await q.query<{ t: string | null; typtype: string | null }>(
      `SELECT to_regtype($1)::text AS t, (SELECT typtype::text FROM pg_type WHERE oid = to_regtype($1)) AS typtype`, [base]);
    return !!r.rows[0]?.t && r.rows[0].typtype !== 'p';
  } catch {
    return false;
  }
}

/** The records, parsed and checked: objects, with known keys. */
function checkedRecords(t: Table, records: RecordInput): Record<string, unknown>[] {
  const list = (Array.isArray(records) ? records : new JsonArrayText(records.bytes).toArray()) as Record<string, unknown>[];
  if (!Array.isArray(list)) throw new ValidationError({ records: ['records must be a list of objects'] });
  checkRecordObjects(list);
  const cols = new Set(t.columns.map((c) => c.id));
  const unknown = new Set<string>();
  for (const r of list) for (const k in r) if (!cols.has(k)) unknown.add(k);
  if (unknown.size) throw new ValidationError({ fields: [`fields "${[...unknown].join(', ')}" do not exist`] });
  return list;
}

/** COPY text pieces: the first small (the server starts at once), then up to PIECE bytes. */
const FIRST_PIECE = 8 * 1024;
const PIECE = 32 * 1024;

/** COPY text of the records the reader is at and after, in pieces; take() says whether the current one goes in. */
function* copyPieces(reader: JsonRecordReader, cols: number[], take: () => boolean): Generator<Buffer> {
  const out = new CopyWriter();
  let size = FIRST_PIECE;
  do {
    if (!take()) continue;
    reader.writeLine(out, cols);
    if (out.pending >= size) {
      yield out.take();
      size = Math.min(size * 2, PIECE);
    }
  } while (nextChecked(reader));
  if (out.pending) yield out.take();
}

/** A reader of the records' JSON over the table's columns (a parsed list is written as JSON first). */
function recordReader(t: Table, records: RecordInput): JsonRecordReader {
  if (!Array.isArray(records) && !Buffer.isBuffer((records as RecordSource)?.bytes)) {
    throw new ValidationError({ records: ['records must be a list of objects'] });
  }
  const bytes = Array.isArray(records) ? Buffer.from(JSON.stringify(records)) : records.bytes;
  return new JsonRecordReader(bytes, t.columns.map((c) => ({ id: c.id, kind: c.kind, float8: c.typname === 'float8' })));
}

/** The next record, checked to be an object with known keys; false after the last. */
function nextChecked(reader: JsonRecordReader): boolean {
  if (!reader.next()) return false;
  if (!reader.isObject) throw new ValidationError({ records: [`row "${reader.index}" is not a json object`] });
  if (reader.unknown.length) throw new ValidationError({ fields: [`fields "${reader.unknown.join(', ')}" do not exist`] });
  return true;
}

/** update, and upsert keyed by _id: every record names its key (upsert may leave _id out: an insert). */
function checkKeys(records: Record<string, unknown>[], pk: string[] | null, method: 'upsert' | 'update'): void {
  const key = pk ?? ['_id'];
  records.forEach((r, i) => {
    const missing = key.filter((k) => r[k] === null || r[k] === undefined);
    if (missing.length === key.length && !pk) {
      if (method === 'update') throw new ValidationError({ table: ['unique key must be passed for update/upsert'] });
    } else if (missing.length) {
      throw new ValidationError({ key: [`fields "${missing.join(', ')}" are missing but needed as key`], records_row: i });
    }
  });
}

function checkRecordObjects(records: unknown[]): void {
  if (!Array.isArray(records)) throw new ValidationError({ records: ['records must be a list of objects'] });
  records.forEach((r, i) => {
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw new ValidationError({ records: [`row "${i}" is not a json object`] });
  });
}

/** Visible columns: `_id` first, then the user's (other `_` columns are hidden), except in `_table_metadata`. */
function visibleColumns(t: Table): Column[] {
  return t.columns.filter((c) => c.id === '_id' || !c.id.startsWith('_'));
}

/** Table columns that appear in any record, in table order. */
function usedColumns(t: Table, records: Record<string, unknown>[]): Column[] {
  const keys = new Set<string>();
  for (const r of records) for (const k in r) keys.add(k);
  return t.columns.filter((c) => keys.has(c.id));
}

function columnDefs(cols: Column[]): string {
  return cols.map((c) => `${qi(c.id)} ${c.ftype}`).join(', ');
}

function copySql(table: string, cols: Column[], kind: 'pglite' | 'postgres'): string {
  return `COPY ${qi(table)} (${cols.map((c) => qi(c.id)).join(', ')}) FROM ${kind === 'pglite' ? "'/dev/blob'" : 'STDIN'}`;
}

/** "" is NULL for non-text columns (reference §7.2); objects in text columns become their JSON. */
function prepareForJson(records: Record<string, unknown>[], cols: Column[]): void {
  const targets = cols.filter((c) => c.kind !== 'text' && c.kind !== 'json');
  if (!targets.length) return;
  for (const r of records) for (const c of targets) if (r[c.id] === '') r[c.id] = null;
}

/** Statements adding to stored row counts (names quoted as literals, counts are integers). */
function countsSql(counts: Map<string, number>): string {
  let sql = '';
  for (const [name, n] of counts) {
    if (!Number.isSafeInteger(n)) throw new Error(`bad row count ${n}`);
    if (n) sql += `INSERT INTO ${COUNTS_TABLE} (id, n) VALUES (${quoteLiteral(name)}, ${n}) ON CONFLICT (id) DO UPDATE SET n = ${COUNTS_TABLE}.n + EXCLUDED.n; `;
  }
  return sql;
}

/** A database error while writing records -> Validation Error naming the row (0-based) and field. */
function recordError(e: unknown, cols?: Column[]): unknown {
  if (!isDbError(e)) return e;
  if (e.code === '23505') return new ValidationError({ constraints: [UNIQUE_MSG], info: { orig: [e.message], pgcode: e.code } });
  const m = /COPY .*?, line (\d+)(?:, column ([^:]+))?/.exec(e.where ?? '');
  if (m) {
    const field = m[2] ?? (cols && e.column) ?? undefined;
    const msg = field && !e.message.includes(`"${field}"`) ? `${e.message} (field "${field}")` : e.message;
    return new ValidationError({ records: [msg], records_row: Number(m[1]) - 1 });
  }
  return new ValidationError({ records: [e.message] });
}

function queryError(e: unknown): unknown {
  if (!isDbError(e)) return e;
  if (e.code === '57014') return new ValidationError({ query: ['Query took too long'] });
  return Object.assign(new ValidationError({ query: [e.message] }), { cause: e });
}

// --- search SQL -----------------------------------------------------------------------------------

interface Plan {
  sql: string;
  /** The same query continuing after a given _id (dumps on PGlite). */
  sqlKeyset: (param: string) => string;
  /** sql with a "__total" column counting every matching row (null when it cannot be had so). */
  sqlWithTotal: string | null;
  countSql: string;
  params: unknown[];
  fields: DatastoreField[];
  kinds: Kind[];
  filtered: boolean;
  defaultOrder: boolean;
}

const invalid = (key: string, value: string) => new ValidationError({ [key]: [`invalid value "${value}"`] });

/** WHERE conditions for a filters object; values are bound. */
function filterConditions(t: Table, filters: Record<string, unknown>, params: unknown[], key: string): string[] {
  const byId = new Map(t.columns.map((c) => [c.id, c]));
  const out: string[] = [];
  const bind = (v: unknown) => { params.push(v); return `$${params.length}`; };
  for (const [k, v] of Object.entries(filters)) {
    const c = byId.get(k);
    if (!c) throw invalid(key, k);
    const col = qi(c.id);
    if (v === null) {
      out.push(`${col} IS NULL`);
    } else if (c.kind === 'array') {
      out.push(`to_jsonb(${col}) = ${bind(JSON.stringify(v))}::jsonb`);
    } else if (c.kind === 'json') {
      if (Array.isArray(v)) out.push(`${col}::jsonb IN (SELECT e FROM jsonb_array_elements(${bind(JSON.stringify(v))}::jsonb) AS e)`);
      else out.push(`${col}::jsonb = ${bind(JSON.stringify(v))}::jsonb`);
    } else if (Array.isArray(v)) {
      const cast = c.kind === 'text' ? '' : `::${c.ftype}`;
      const col2 = c.kind === 'text' ? `${col}::text` : col;
      out.push(`${col2} IN (SELECT v${cast} FROM json_array_elements_text(${bind(JSON.stringify(v.map((x) => (x !== null && typeof x === 'object' ? JSON.stringify(x) : x))))}::json) AS v)`);
    } else {
      const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
      if (c.kind === 'text') out.push(`${col}::text = ${bind(s)}`);
      else out.push(`${col} = CAST(${bind(s)} AS ${c.ftype})`);
    }
  }
  return out;
}

const SORT_RE = /^\s*("(?:[^"]|"")+"|[^\s"]+)(?:\s+(asc|desc))?(?:\s+nulls\s+(first|last))?\s*$/i;

async function buildSelect(q: Queryable, t: Table, input: SearchInput, textFormat: boolean, withKey = false): Promise<Plan> {
  const params: unknown[] = [];
  const bind = (v: unknown) => { params.push(v); return `$${params.length}`; };
  const visible = visibleColumns(t);
  const byId = new Map(visible.map((c) => [c.id, c]));
  const userCols = visible.filter((c) => c.id !== '_id');

  let selected: Column[];
  if (input.fields && input.fields.length) {
    selected = input.fields.map((f) => {
      const c = byId.get(f);
      if (!c) throw invalid('fields', f);
      return c;
    });
  } else selected = visible;

  const where = input.filters ? filterConditions(t, input.filters, params, 'filters') : [];

  // Full text: q (string or per-field object) and full_text, computed from the row at query time.
  const ranks: { name: string; expr: string }[] = [];
  const hasText = input.q !== undefined && input.q !== '' || !!input.full_text;
  let langP = '';
  if (hasText) {
    const lang = input.language ?? 'english';
    const ok = await q.query('SELECT 1 FROM pg_ts_config WHERE cfgname = $1', [lang]);
    if (!ok.rows.length) throw invalid('language', lang);
    langP = `${bind(lang)}::regconfig`;
  }
  const tsq = (text: string) => `${input.plain === false ? 'to_tsquery' : 'plainto_tsquery'}(${langP}, ${bind(text)})`;
  const rowText = userCols.length ? `concat_ws(' ', ${userCols.map((c) => `${qi(c.id)}::text`).join(', ')})` : `''`;
  const fullText = (text: string, name: string) => {
    const query = tsq(text);
    const vec = `to_tsvector(${langP}, ${rowText})`;
    where.push(`${vec} @@ ${query}`);
    ranks.push({ name, expr: `ts_rank(${vec}, ${query})` });
  };
  if (typeof input.q === 'string' && input.q !== '') fullText(input.q, 'rank');
  else if (input.q && typeof input.q === 'object') {
    for (const [k, v] of Object.entries(input.q)) {
      const c = byId.get(k);
      if (!c || c.id === '_id') throw invalid('q', k);
      const query = tsq(String(v));
      const vec = `to_tsvector(${langP}, ${qi(c.id)}::text)`;
      where.push(`${vec} @@ ${query}`);
      ranks.push({ name: `rank ${k}`, expr: `ts_rank(${vec}, ${query})` });
    }
  }
  if (input.full_text) fullText(input.full_text, ranks.some((r) => r.name === 'rank') ? 'rank full_text' : 'rank');

  // Sort.
  const order: string[] = [];
  for (const clause of input.sort ?? []) {
    if (!clause.trim()) continue;
    const m = SORT_RE.exec(clause);
    const name = m ? (m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1]) : clause.trim();
    const rank = ranks.find((r) => r.name === name);
    if (!m || (!byId.has(name) && !rank)) throw invalid('sort', name);
    const dir = m[2] ? ` ${m[2].toUpperCase()}` : '';
    const nulls = m[3] ? ` NULLS ${m[3].toUpperCase()}` : '';
    order.push(`${rank ? `(${rank.expr})` : qi(name)}${dir}${nulls}`);
  }
  let defaultOrder = false;
  if (!order.length && !input.distinct) {
    if (ranks.length) order.push(`${ranks[0].expr} DESC`);
    if (byId.has('_id')) {
      order.push('"_id"');
      defaultOrder = !ranks.length;
    }
  }

  const exprs = selected.map((c) => selectExpr(c, textFormat));
  const select = [...exprs, ...ranks.map((r) => r.expr)].map((e, i) => `${e} AS "f${i}"`);
  if (withKey && defaultOrder) select.push('"_id" AS "__k"');
  const from = qi(t.name);
  const whereSql = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const orderSql = order.length ? ` ORDER BY ${order.join(', ')}` : '';
  const distinct = input.distinct ? 'DISTINCT ' : '';
  const sql = `SELECT ${distinct}${select.join(', ')} FROM ${from}${whereSql}${orderSql}`;
  const fields: DatastoreField[] = [
    ...selected.map((c) => {
      const f: DatastoreField = { id: c.id, type: c.id === '_id' && c.typname === 'int4' ? 'int' : reportedType(c.typname) };
      if (c.info) f.info = c.info;
      return f;
    }),
    ...ranks.map((r) => ({ id: r.name, type: 'float' })),
  ];
  const countSql = input.distinct
    ? `SELECT count(*)::text AS n FROM (SELECT DISTINCT ${exprs.map((e, i) => `${e} AS "f${i}"`).join(', ')} FROM ${from}${whereSql}) AS d`
    : `SELECT count(*)::text AS n FROM ${from}${whereSql}`;
  // The page with the number of all matching rows, in one scan (not for DISTINCT: the window counts before it).
  const sqlWithTotal = input.distinct ? null : `SELECT ${select.join(', ')}, count(*) OVER () AS "__total" FROM ${from}${whereSql}${orderSql}`;
  return {
    sql, sqlWithTotal, countSql, params, fields,
    sqlKeyset: (p) => `SELECT ${select.join(', ')} FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')} AND` : ' WHERE'} "_id" > ${p} ORDER BY "_id"`,
    kinds: [...selected.map((c) => c.kind), ...ranks.map(() => 'number' as Kind)],
    filtered: where.length > 0,
    defaultOrder,
  };
}

function selectExpr(c: Column, textFormat: boolean): string {
  const col = qi(c.id);
  if (c.kind === 'timestamp') return `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SS')`;
  if (textFormat && c.kind === 'bool') return `CASE WHEN ${col} THEN 't' WHEN NOT ${col} THEN 'f' END`;
  if (textFormat) return `${col}::text`;
  if (c.kind === 'array') return `to_json(${col})`;
  if (c.kind === 'json' && c.typname === JSON_DOMAIN) return `${col}::jsonb`;
  if (c.kind === 'other') return `${col}::text`;
  return col;
}

function formatRows(rows: Record<string, unknown>[], plan: Plan, format: string): unknown[] | string {
  const n = plan.fields.length;
  if (format === 'csv' || format === 'tsv') {
    const d = format === 'csv' ? ',' : '\t';
    let out = '';
    for (const r of rows) {
      const cells: string[] = [];
      for (let i = 0; i < n; i++) cells.push(csvCell(r[`f${i}`], d));
      out += cells.join(d) + '\n';
    }
    return out;
  }
  if (format === 'lists') {
    return rows.map((r) => {
      const a = new Array(n);
      for (let i = 0; i < n; i++) a[i] = readValue(r[`f${i}`], plan.kinds[i]);
      return a;
    });
  }
  return rows.map((r) => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) o[plan.fields[i].id] = readValue(r[`f${i}`], plan.kinds[i]);
    return o;
  });
}

function readValue(v: unknown, kind: Kind): unknown {
  if (v instanceof Date) return v.toISOString().slice(0, 19);
  return outValue(v, kind);
}

/** The plan's fields (not its sort key) from a select that has its values inlined. */
function copyQuery(plan: Plan, inlinedSql: string): string {
  return `SELECT ${plan.fields.map((_, i) => qi(`f${i}`)).join(', ')} FROM (${inlinedSql}) AS d`;
}

/**
 * One row of the plan as a CSV/TSV line, built by the database the way csvCell writes it (quoted
 * when empty, `\.` or holding the delimiter, a quote or a line break; NULL empty).
 */
function csvLineExpr(plan: Plan, format: SearchInput['records_format']): string {
  const d = csvDelimiter(format);
  const cell = (v: string) => `CASE WHEN ${v} IS NULL THEN '' WHEN ${v} = '' OR ${v} = E'\\\\.' OR strpos(${v}, ${d}) > 0 OR strpos(${v}, '"') > 0
    OR strpos(${v}, E'\\n') > 0 OR strpos(${v}, E'\\r') > 0 THEN '"' || replace(${v}, '"', '""') || '"' ELSE ${v} END`;
  const expr = (i: number) => (NEVER_QUOTED.has(plan.kinds[i]) ? `coalesce(${qi(`f${i}`)}::text, '')` : cell(`${qi(`f${i}`)}::text`));
  return `concat_ws(${d}, ${plan.fields.map((_, i) => expr(i)).join(', ')}) || E'\\n'`;
}

/** Numbers, booleans and timestamps never need quoting in CSV: no test per value for them. */
const NEVER_QUOTED = new Set<Kind>(['number', 'bool', 'timestamp']);

/** The delimiter of a CSV or TSV dump as an SQL literal. */
function csvDelimiter(format: SearchInput['records_format']): string {
  return format === 'tsv' ? "E'\\t'" : "','";
}

function copyCsvOptions(format: SearchInput['records_format']): string {
  return `WITH (FORMAT csv, DELIMITER ${csvDelimiter(format)})`;
}

/** The driver's conversion of a bound value to its text form. */
const { prepareValue } = (pg as unknown as { utils: { prepareValue: (v: unknown) => string | Buffer | null } }).utils;

/**
 * The statement with its $n parameters written as literals, for COPY (which takes no parameters).
 * Each value becomes the text the driver would have sent, as an untyped literal, so it is read
 * exactly as the bound parameter was. Only SQL built here comes in: it holds "identifiers" and
 * 'literals' (doubled quotes inside), and $n outside them are parameters.
 */
function inlineParams(sql: string, params: unknown[]): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      for (;;) {
        j = sql.indexOf(ch, j);
        if (j < 0) throw new Error('unterminated quote in generated SQL');
        if (sql[j + 1] === ch) j += 2;
        else break;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const m = ch === '$' ? /^\$(\d+)/.exec(sql.slice(i, i + 12)) : null;
    if (m) {
      const v = prepareValue(params[Number(m[1]) - 1]);
      out += v === null || v === undefined ? 'NULL' : quoteLiteral(typeof v === 'string' ? v : v.toString('utf8'));
      i += m[0].length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
