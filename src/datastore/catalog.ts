// What the data store knows of its tables from the database catalog: a table's columns, field info
// (column comments, JSON), primary key (table comment, JSON), aliases (views) and stored row count.
//
// Layout of a data store table: "_id" serial primary key, then the user's columns. Row counts are
// kept in "_svc_counts" (maintained on every write) so an unfiltered search never counts the table.
import type { Queryable } from '../db/database.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import type { DatastoreField, ResourceInfo } from './backend.ts';
import { JSON_DOMAIN, kindOf, reportedType, type Kind } from './types.ts';

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

export interface Column {
  id: string;
  typname: string;
  /** format_type() text: safe to use in DDL and casts. */
  ftype: string;
  kind: Kind;
  notnull: boolean;
  info?: Record<string, unknown>;
}

export interface Table {
  name: string;
  oid: number;
  relkind: string;
  /** All columns in table order, `_id` included. */
  columns: Column[];
  /** The table comment: primary key, language of the stored full-text vectors (fts.ts). */
  meta: { primary_key?: string[]; fts_language?: string };
  /** For a view: the one table it is an alias of (null when it is not an alias of exactly one). */
  aliasOf: string | null;
}

/** The table or view of that name with its columns (one round trip). */
export async function readTable(q: Queryable, name: string): Promise<Table | null> {
  type ColumnRow = { id: string; typname: string; ftype: string; notnull: boolean; comment: string | null };
  const rel = await q.query<{ oid: number; relkind: string; comment: string | null; cols: ColumnRow[] | string; alias_of: string | null }>(
    {
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
    },
    [name],
  );
  const r = rel.rows[0];
  if (!r) return null;
  const cols: ColumnRow[] = typeof r.cols === 'string' ? JSON.parse(r.cols) : r.cols;
  return {
    name,
    oid: Number(r.oid),
    relkind: r.relkind,
    aliasOf: r.alias_of,
    meta: parseJson(r.comment) ?? {},
    columns: cols.map((c) => ({
      id: c.id,
      typname: c.typname,
      ftype: c.ftype,
      kind: kindOf(c.typname),
      notnull: c.notnull,
      info: parseJson(c.comment) ?? undefined,
    })),
  };
}

/**
 * Serializes the changes of one table's definition (its key, indexes, aliases, its drop) until
 * the transaction ends: two at once would each drop and create the same index.
 */
export async function lockTableName(q: Queryable, name: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('svc.datastore_table:' || $1, 0))", [name]);
}

/** A table (not an alias) of that name, else Not Found. */
export async function requireTable(q: Queryable, name: string): Promise<Table> {
  const t = await readTable(q, name);
  if (!t || t.relkind !== 'r') throw new NotFoundError(`Resource "${name}" was not found.`);
  return t;
}

export async function aliasesOf(q: Queryable, oid: number): Promise<string[]> {
  const r = await q.query<{ name: string }>(
    `SELECT DISTINCT v.relname AS name FROM pg_class v
     JOIN pg_rewrite r ON r.ev_class = v.oid JOIN pg_depend d ON d.objid = r.oid
     WHERE d.refobjid = $1 AND v.relkind = 'v' AND v.oid <> $1 ORDER BY 1`,
    [oid],
  );
  return r.rows.map((x) => x.name);
}

/** The stored row count of a table (counted when there is none, or for a view). */
export async function countRows(q: Queryable, t: Table): Promise<number> {
  if (t.relkind === 'r') {
    const r = await q.query<{ n: string }>(`SELECT n::text AS n FROM ${COUNTS_TABLE} WHERE id = $1`, [t.name]);
    if (r.rows[0]) return Number(r.rows[0].n);
  }
  return Number((await q.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${qi(t.name)}`)).rows[0].n);
}

/**
 * A marker that changes with every committed write to the table: the transaction id that last
 * wrote its row in the counts table, which every write touches (sessions.ts countsSql).
 */
export async function writeMarker(q: Queryable, name: string): Promise<string | null> {
  const r = await q.query<{ v: string }>(`SELECT xmin::text AS v FROM ${COUNTS_TABLE} WHERE id = $1`, [name]);
  return r.rows[0]?.v ?? null;
}

/** Visible columns: `_id` first, then the user's (other `_` columns are hidden), except in `_table_metadata`. */
export function visibleColumns(t: Table): Column[] {
  return t.columns.filter((c) => c.id === '_id' || !c.id.startsWith('_'));
}

/** datastore_info: sizes, indexes per field, count and aliases of a table or alias. */
export async function resourceInfo(q: Queryable, id: string): Promise<ResourceInfo> {
  const t = await readTable(q, id);
  if (!t) throw new NotFoundError(`Resource/Alias "${id}" was not found.`);
  const base = t.relkind === 'v' ? (t.aliasOf ?? id) : id;
  const bt = base === id ? t : ((await readTable(q, base)) ?? t);
  const sizes = (
    await q.query<{ size: string; idx: string; db: string }>(
      `SELECT pg_table_size($1::oid)::text AS size, pg_indexes_size($1::oid)::text AS idx, pg_database_size(current_database())::text AS db`,
      [bt.oid],
    )
  ).rows[0];
  const idx = (
    await q.query<{ name: string; uniq: boolean; cols: string[] }>(
      `SELECT ic.relname AS name, i.indisunique AS uniq,
            ARRAY(SELECT a.attname::text FROM unnest(i.indkey) k JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k) AS cols
     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = $1`,
      [bt.oid],
    )
  ).rows;
  const count = await countRows(q, bt);
  const tableType = { r: 'BASE TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', f: 'FOREIGN TABLE' }[t.relkind] ?? 'BASE TABLE';
  const fields: DatastoreField[] = visibleColumns(t)
    .filter((c) => c.id !== '_id')
    .map((c) => {
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
      id: base,
      count,
      table_type: tableType,
      size: Number(sizes.size),
      db_size: Number(sizes.db),
      idx_size: Number(sizes.idx),
      aliases: await aliasesOf(q, bt.oid),
    },
    fields,
  };
}

/** Whether a type name (already validated by parseTypeName) is a type of this database. */
export async function validType(q: Queryable, base: string): Promise<boolean> {
  try {
    const r = await q.query<{ t: string | null; typtype: string | null }>(
      `SELECT to_regtype($1)::text AS t, (SELECT typtype::text FROM pg_type WHERE oid = to_regtype($1)) AS typtype`,
      [base],
    );
    return !!r.rows[0]?.t && r.rows[0].typtype !== 'p';
  } catch {
    return false;
  }
}

/** A JSON object from a comment (null when it is none). */
function parseJson(s: string | null | undefined): any {
  if (!s) return null;
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
