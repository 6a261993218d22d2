// Full-text search over a stored, indexed representation of each row.
//
// Every data store table has a hidden "_full_text" tsvector column: to_tsvector(<language>, the
// row's user columns as text), with an index on it (GIN by default) and, for text columns, one
// index per column on to_tsvector(<language>, column). NULL means "not computed yet": writes
// never compute it (a COPY stays a plain COPY). Small writes fill their own rows before they
// commit; larger ones leave them to the filler below, which computes them in batches once writes
// pause. Searches read the stored vector where it is there and compute it for the rows still
// NULL (found through a partial index), so they are right at every moment. All full-text indexes
// are partial (WHERE "_full_text" IS NOT NULL): a load maintains none of them; the filler's
// UPDATE does, in bulk. The trade-off is written down in docs/internals.md.
import { createHash } from 'node:crypto';
import { type Connection, type Database, inSavepoint, type Queryable } from '../db/database.ts';
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { aliasesOf, readTable, type Column, type Table } from './catalog.ts';
import { SCHEMA_CHANNEL } from './table-cache.ts';

export const FTS_COLUMN = '_full_text';
const FTS = qi(FTS_COLUMN);

export interface FtsSettings {
  /** Language of the stored vectors of new tables (svc.datastore.default_fts_lang). */
  language: string;
  /** Index method of the full-text indexes (gin or gist). */
  method: 'gin' | 'gist';
  /** Column types that get an index of their own, for `q` as a per-column dict. */
  fieldTypes: string[];
  /** A write of at most this many rows fills their vectors before it commits; larger ones leave them to the filler. */
  inlineMaxRows: number;
  /** Pages ranked by default (q or full_text without sort) rank at most this many matches (0: all). */
  rankWindow: number;
  /** PostgreSQL: a table with at least this many rows to fill (and at least half its rows) is filled in bulk (0: never). */
  bulkFillMinRows: number;
  /** maintenance_work_mem of each full-text index build after a bulk fill, in MB. */
  indexBuildMemoryMb: number;
}

export const defaultFtsSettings: FtsSettings = {
  language: 'english',
  method: 'gin',
  fieldTypes: ['text', 'tsvector'],
  inlineMaxRows: 5000,
  rankWindow: 1000,
  bulkFillMinRows: 50_000,
  indexBuildMemoryMb: 256,
};

/** The language the table's stored vectors are in; null when the table has none (not migrated yet). */
export function storedLanguage(t: Table): string | null {
  const lang = t.meta.fts_language;
  return typeof lang === 'string' && t.columns.some((c) => c.id === FTS_COLUMN) ? lang : null;
}

export const regconfig = (lang: string) => `${quoteLiteral(lang)}::regconfig`;

/** The user's columns, whose text makes a row's vector. */
export const textColumns = (t: Table): Column[] => t.columns.filter((c) => !c.id.startsWith('_'));

/** The row's text (NULLs left out), as the query-time search always computed it. */
export function rowText(t: Table): string {
  const cols = textColumns(t);
  return cols.length ? `concat_ws(' ', ${cols.map((c) => `${qi(c.id)}::text`).join(', ')})` : `''`;
}

export const rowVector = (t: Table, langSql: string) => `to_tsvector(${langSql}, ${rowText(t)})`;
export const columnVector = (c: Column, langSql: string) => `to_tsvector(${langSql}, ${qi(c.id)}::text)`;

// --- a cheap filter for rows whose vector is not computed yet ---------------------------------------
// A search of a table whose vectors are being filled (a load's end) computes the vector of every
// row still NULL, about 10 µs a row: a search a second takes a core from the filler. A lexeme with
// a digit (a number, code, version, host, ...) comes from the `simple` dictionary in the built-in
// configurations: the token lower-cased, so a row whose vector has it has it in its lower-cased
// text. Such rows are found first with LIKE on that text (a few µs less per row), and only those
// have their vector computed. Words (stemmed: 'happy' -> 'happi') get no such filter.

/** Token types of the default parser whose tokens may hold digits. */
const DIGIT_TOKEN_TYPES = [
  'email',
  'url',
  'host',
  'sfloat',
  'version',
  'url_path',
  'file',
  'float',
  'int',
  'uint',
  'numword',
  'numhword',
  'hword_numpart',
];
const digitsVerbatimByLanguage = new Map<string, boolean>();

/** Whether the language's tokens with digits become lexemes only lower-cased (default parser, the simple dictionary alone). */
export async function digitsVerbatim(q: Queryable, lang: string): Promise<boolean> {
  const known = digitsVerbatimByLanguage.get(lang);
  if (known !== undefined) return known;
  const r = await q.query<{ ok: boolean | null }>(
    `SELECT p.prsname = 'default' AND p.prsnamespace = 'pg_catalog'::regnamespace AND NOT EXISTS (
       SELECT 1 FROM pg_ts_config_map m JOIN ts_token_type('default') tt ON tt.tokid = m.maptokentype
       WHERE m.mapcfg = c.oid AND tt.alias = ANY($1::text[]) AND m.mapdict <> 'pg_catalog.simple'::regdictionary) AS ok
     FROM pg_ts_config c JOIN pg_ts_parser p ON p.oid = c.cfgparser WHERE c.oid = ${regconfig(lang)}`,
    [DIGIT_TOKEN_TYPES],
  );
  const ok = r.rows[0]?.ok === true;
  if (digitsVerbatimByLanguage.size < 1000) digitsVerbatimByLanguage.set(lang, ok);
  return ok;
}

/**
 * A condition every row matching plainto_tsquery(lang, text) meets, cheap to test on a row's text
 * (`text` a bound parameter; only where digitsVerbatim(lang)): its lower-cased text holds each of
 * the query's lexemes that have a digit (none: true). A lexeme of ASCII digits and punctuation
 * alone (a number, date, code) is looked for in the text as it is: lower() changes no such
 * character and makes none from another (letters stay letters), and it is a third of the cost.
 * The patterns are computed once per statement.
 */
export function digitLexemeFilter(t: Table, langSql: string, text: string): string {
  const pattern = `'%' || replace(replace(replace(l, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`;
  const lexemes = (which: string) =>
    `ARRAY(SELECT ${pattern} FROM unnest(tsvector_to_array(to_tsvector(${langSql}, ${text}))) AS l WHERE l ~ '[0-9]' AND ${which})`;
  const asIs = `l ~ '^[!-~]+$' AND l !~ '[A-Za-z]'`;
  const lowered = lexemes(`NOT (${asIs})`);
  const verbatim = lexemes(asIs);
  const row = rowText(t);
  return `(CASE WHEN cardinality(${lowered}) = 0 THEN true ELSE lower(${row}) LIKE ALL (${lowered}) END) AND (CASE WHEN cardinality(${verbatim}) = 0 THEN true ELSE ${row} LIKE ALL (${verbatim}) END)`;
}

/** Columns with an index of their own (by type, svc.datastore.default_fts_index_field_types). */
export function indexedColumns(t: Table, settings: FtsSettings): Column[] {
  const types = new Set(settings.fieldTypes.map((x) => x.toLowerCase()));
  return textColumns(t).filter((c) => types.has(c.typname) || types.has(c.ftype));
}

const columnIndexName = (t: Table, c: Column) => `ds_${t.oid}_fts_c_${createHash('sha1').update(c.id).digest('hex').slice(0, 10)}`;

/**
 * Gives a table its stored vector (column, language, indexes) or brings its per-column indexes up
 * to date with its columns; idempotent. User triggers get `WHEN (NEW._full_text IS NULL)`, so the
 * filler's UPDATE (which only sets the vector) does not run them again. Without indexes (a load's
 * own transaction) the indexes are left to a later call. Returns true when the column was added
 * (every row is then to be filled); false also when the table is gone.
 */
export async function setUpFullText(q: Queryable, name: string, settings: FtsSettings, indexes = true): Promise<boolean> {
  let t = await readTable(q, name);
  if (!t) return false;
  const added = !t.columns.some((c) => c.id === FTS_COLUMN);
  if (added) {
    // Alias views freeze their column list: they are made again with the new column.
    const aliases = await aliasesOf(q, t.oid);
    for (const a of aliases) await q.query(`DROP VIEW IF EXISTS ${qi(a)}`);
    await q.query(`ALTER TABLE ${qi(name)} ADD COLUMN ${FTS} tsvector`);
    for (const a of aliases) await q.query(`CREATE VIEW ${qi(a)} AS SELECT * FROM ${qi(name)}`);
  }
  if (typeof t.meta.fts_language !== 'string') {
    t.meta = { ...t.meta, fts_language: settings.language };
    await q.query(`COMMENT ON TABLE ${qi(name)} IS ${quoteLiteral(JSON.stringify(t.meta))}`);
  }
  t = (await readTable(q, name))!;
  const lang = regconfig(storedLanguage(t)!);
  const method = settings.method === 'gist' ? 'gist' : 'gin';
  const prefix = `ds_${t.oid}_`;
  const existing = new Set(
    (
      await q.query<{ name: string }>(`SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1`, [name])
    ).rows.map((r) => r.name),
  );
  const wanted = rowIndexes(t.oid, method, rowIndexSplit(t));
  wanted.set(`${prefix}fts_pending`, `("_id") WHERE ${FTS} IS NULL`);
  for (const c of indexedColumns(t, settings))
    wanted.set(columnIndexName(t, c), `USING ${method} (${columnVector(c, lang)}) WHERE ${FTS} IS NOT NULL`);
  // A bulk fill has dropped them and makes them again when it is done (see "bulk fill" below).
  if (indexes && !rebuildPendingSince(t)) {
    const ours = (ix: string) => ix.startsWith(`${prefix}fts_c_`) || ROW_INDEX_NAME.test(ix);
    for (const ix of existing) if (ours(ix) && !wanted.has(ix)) await q.query(`DROP INDEX ${qi(ix)}`);
    for (const [ix, def] of wanted) if (!existing.has(ix)) await q.query(`CREATE INDEX ${qi(ix)} ON ${qi(name)} ${def}`);
  }
  // Triggers made before the column existed: again, with the condition.
  const triggers = (
    await q.query<{ name: string; fn: string }>(
      `SELECT tg.tgname AS name, p.proname AS fn FROM pg_trigger tg JOIN pg_proc p ON p.oid = tg.tgfoid
     WHERE tg.tgrelid = $1 AND NOT tg.tgisinternal AND tg.tgqual IS NULL AND tg.tgname LIKE $2 ORDER BY tg.tgname`,
      [t.oid, `${prefix}trg\\_%`],
    )
  ).rows;
  for (const tr of triggers) {
    await q.query(`DROP TRIGGER ${qi(tr.name)} ON ${qi(name)}`);
    await q.query(userTriggerSql(tr.name, name, tr.fn, true));
  }
  return added;
}

// --- the row vectors' index, whole or in two halves ----------------------------------------------
// A bulk fill builds the row vectors' GIN index as two partial indexes split at an `_id` (the
// table comment's `fts_row_split`), one per connection at once: PostgreSQL 15 builds a GIN index
// in one process, and that build was most of a bulk fill. Searches name both halves
// (rowVectorMatch) so that the planner, which uses a partial index only for a query implying its
// predicate, ORs the two index scans. Any other table has the one index.

const ROW_SPLIT = 'fts_row_split';
/** The names of the row vectors' index (ds_<oid>_fts) and of its halves (_lo, _hi). */
const ROW_INDEX_NAME = /^ds_\d+_fts(_lo|_hi)?$/;

/** The `_id` the table's row vectors' index is split at (null: one index). */
export function rowIndexSplit(t: Table): number | null {
  const v = (t.meta as Record<string, unknown>)[ROW_SPLIT];
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
}

/** The row vectors' index (or its two halves, split at `_id` = split) by name, as CREATE INDEX ... ON <table> wants them. */
function rowIndexes(oid: number, method: string, split: number | null): Map<string, string> {
  const on = `USING ${method} (${FTS}) WHERE ${FTS} IS NOT NULL`;
  if (split === null) return new Map([[`ds_${oid}_fts`, on]]);
  return new Map([
    [`ds_${oid}_fts_lo`, `${on} AND "_id" <= ${split}`],
    [`ds_${oid}_fts_hi`, `${on} AND "_id" > ${split}`],
  ]);
}

/**
 * The condition that a row's stored vector matches `query` (SQL), written so that it can use the
 * row vectors' index, whole or split at `split`.
 */
export function rowVectorMatch(query: string, split: number | null): string {
  const match = `${FTS} @@ ${query}`;
  return split === null ? match : `(${match} AND "_id" <= ${split}) OR (${match} AND "_id" > ${split})`;
}

/** A user trigger (datastore_create triggers); with the stored vector it skips the filler's updates. */
export function userTriggerSql(trigger: string, table: string, fn: string, stored: boolean): string {
  return `CREATE TRIGGER ${qi(trigger)} BEFORE INSERT OR UPDATE ON ${qi(table)} FOR EACH ROW${stored ? ` WHEN (NEW.${FTS} IS NULL)` : ''} EXECUTE PROCEDURE ${qi(fn)}()`;
}

/** Fills the vectors of the rows this transaction wrote (a small write, before it commits); false when it could not. */
export async function fillOwnRows(q: Connection, t: Table): Promise<boolean> {
  const lang = storedLanguage(t);
  if (!lang) return true;
  // A row whose text makes no vector (over tsvector's 1 MB) must not fail the write: its rows
  // are then left to the filler.
  try {
    await inSavepoint(q, () =>
      q.query(`UPDATE ${qi(t.name)} SET ${FTS} = ${rowVector(t, regconfig(lang))}
      WHERE ${FTS} IS NULL AND xmin = pg_current_xact_id()::xid`),
    );
    return true;
  } catch {
    return false;
  }
}

/** Marks every row to be filled again (the row's text changed for all rows: a column was dropped). */
export async function unfillAll(q: Queryable, t: Table): Promise<void> {
  if (!storedLanguage(t)) return;
  await q.query(`ALTER TABLE ${qi(t.name)} DISABLE TRIGGER USER`);
  await q.query(`UPDATE ${qi(t.name)} SET ${FTS} = NULL WHERE ${FTS} IS NOT NULL`);
  await q.query(`ALTER TABLE ${qi(t.name)} ENABLE TRIGGER USER`);
}

/** The filler's transactions do not wait for their commit's flush: a vector lost to a crash is NULL again, filled again. */
const FILL_TX = { settings: { synchronous_commit: 'off' } };

/**
 * Fills up to `batch` rows still NULL, in one transaction; returns how many it took and the ids of
 * rows whose text makes no vector (over tsvector's 1 MB: they stay NULL, and searches computing
 * them fail as they always did; `skip` keeps them out of later batches). Rows another transaction
 * holds are skipped (its commit schedules the table again), so this never waits.
 */
export async function fillBatch(
  db: Database,
  name: string,
  batch: number,
  skip: number[] = [],
): Promise<{ taken: number; failed: number[] }> {
  return db.transaction(async (tx) => {
    const t = await readTable(tx, name);
    const lang = t && t.relkind === 'r' ? storedLanguage(t) : null;
    if (!t || !lang) return { taken: 0, failed: [] };
    const pick = `SELECT "_id" FROM ${qi(name)} WHERE ${FTS} IS NULL AND "_id" <> ALL($2::int8[]) LIMIT $1 FOR UPDATE SKIP LOCKED`;
    const vector = rowVector(t, regconfig(lang));
    try {
      return {
        taken: (await inSavepoint(tx, () => tx.query(`UPDATE ${qi(name)} SET ${FTS} = ${vector} WHERE "_id" IN (${pick})`, [batch, skip])))
          .rowCount,
        failed: [],
      };
    } catch {
      // Row by row, to find the rows that fail.
      const ids = (await tx.query<{ _id: number }>(pick, [batch, skip])).rows.map((r) => Number(r._id));
      const failed: number[] = [];
      for (const id of ids) {
        try {
          await inSavepoint(tx, () => tx.query(`UPDATE ${qi(name)} SET ${FTS} = ${vector} WHERE "_id" = $1`, [id]));
        } catch {
          failed.push(id);
        }
      }
      return { taken: ids.length, failed };
    }
  }, FILL_TX);
}

/** Rows whose vector is still to be computed. */
export async function pendingRows(q: Queryable, name: string): Promise<number> {
  const r = await q.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${qi(name)} WHERE ${FTS} IS NULL`);
  return Number(r.rows[0].n);
}

// --- bulk fill ------------------------------------------------------------------------------------
// Filling most of a big table row by row keeps every full-text index up to date per row (GIN's
// pending list merged again and again: about 5,000 rows/s for 1,000,000 rows here). Dropping the
// full-text indexes, filling by ranges of `_id` and building the indexes afterwards (one sorted GIN
// build) is several times faster. The table comment says the indexes are being rebuilt, so a
// process that dies in between has them made again (rebuildDroppedIndexes) by the next search.

/** Rows still NULL, and about how many rows the table has (the planner's count). */
export async function fillPlan(q: Queryable, name: string): Promise<{ pending: number; rows: number; minId: number; maxId: number }> {
  const r = await q.query<{ pending: string; rows: string; min: string | null; max: string | null }>(
    `SELECT count(*)::text AS pending, min("_id")::text AS min, max("_id")::text AS max,
       (SELECT greatest(reltuples, 0)::int8::text FROM pg_class WHERE oid = ${quoteLiteral(qi(name))}::regclass) AS rows
     FROM ${qi(name)} WHERE ${FTS} IS NULL`,
  );
  const row = r.rows[0];
  return { pending: Number(row.pending), rows: Number(row.rows), minId: Number(row.min ?? 0), maxId: Number(row.max ?? -1) };
}

const REBUILD_FLAG = 'fts_rebuild_since';

/** Marks (or unmarks) the table's indexes as dropped for a bulk fill; cached descriptions of it go at commit, in every process. */
async function setRebuildFlag(q: Queryable, name: string, on: boolean): Promise<void> {
  await setMeta(q, name, (meta) => {
    if (on) meta[REBUILD_FLAG] = new Date().toISOString();
    else delete meta[REBUILD_FLAG];
  });
}

/**
 * Takes the lock that every writer of a table's comment (its keys: fts_*, primary_key) holds from
 * reading the comment until its commit: SHARE UPDATE EXCLUSIVE, which COMMENT ON TABLE takes anyway
 * and which conflicts with itself. Without it a writer that read the comment before another one
 * committed writes the old keys back (datastore_create losing the filler's fts_row_split, or the
 * filler losing datastore_create's primary_key). A table gone: false.
 */
export async function lockTableComment(q: Queryable, name: string): Promise<boolean> {
  const exists = await q.query<{ ok: boolean }>(`SELECT to_regclass(${quoteLiteral(qi(name))}) IS NOT NULL AS ok`);
  if (!exists.rows[0].ok) return false;
  await q.query(`LOCK TABLE ${qi(name)} IN SHARE UPDATE EXCLUSIVE MODE`);
  return true;
}

/** Changes the table comment's keys (read under lockTableComment); cached descriptions of the table go at commit, in every process. */
async function setMeta(q: Queryable, name: string, change: (meta: Record<string, unknown>) => void): Promise<void> {
  if (!(await lockTableComment(q, name))) return;
  const t = await readTable(q, name);
  if (!t) return;
  const meta: Record<string, unknown> = { ...t.meta };
  change(meta);
  await q.query(`COMMENT ON TABLE ${qi(name)} IS ${quoteLiteral(JSON.stringify(meta))}`);
  await q.query(`NOTIFY ${SCHEMA_CHANNEL}`);
}

/** When the table's full-text indexes were dropped for a bulk fill that has not made them again (null: they are there). */
export const rebuildPendingSince = (t: Table): string | null => {
  const v = (t.meta as Record<string, unknown>)[REBUILD_FLAG];
  return typeof v === 'string' ? v : null;
};

/** Tables whose comment says a bulk fill dropped their full-text indexes (some may still be being filled by a live process). */
export async function tablesMarkedForRebuild(q: Queryable): Promise<string[]> {
  const r = await q.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'r' AND obj_description(c.oid, 'pg_class') LIKE $1 ORDER BY 1`,
    [`%"${REBUILD_FLAG}"%`],
  );
  return r.rows.map((x) => x.name);
}

/**
 * Drops the table's full-text indexes but the pending one, marking the table, and returns their
 * definitions; null when the table is not a filled-vector table or is busy (its lock not had
 * within 2 s). The pending-rows index stays through the fill: as an index on `_full_text` it keeps the
 * fill's updates from being HOT ones, whose chains, broken for the indexes built after, would keep
 * those from being used until every older transaction has ended (indcheckxmin).
 */
export async function dropFullTextIndexes(db: Database, name: string): Promise<string[] | null> {
  try {
    return await db.transaction(
      async (tx) => {
        const t = await readTable(tx, name);
        if (!t || t.relkind !== 'r' || !storedLanguage(t)) return null;
        const prefix = `ds_${t.oid}_fts`;
        const found = (
          await tx.query<{ name: string; def: string }>(
            `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 ORDER BY indexname`,
            [name],
          )
        ).rows.filter((r) => r.name.startsWith(prefix) && r.name !== `${prefix}_pending`);
        await setRebuildFlag(tx, name, true);
        for (const ix of found) await tx.query(`DROP INDEX ${qi(ix.name)}`);
        return found.map((ix) => ix.def.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS '));
      },
      { settings: { lock_timeout: '2000' } },
    );
  } catch (e) {
    if ((e as { code?: string }).code === '55P03') return null;
    throw e;
  }
}

/** Fills the NULL vectors of rows with fromId <= _id < toId in one statement; the rows filled. */
export async function fillRange(db: Database, name: string, fromId: number, toId: number): Promise<number> {
  return db.transaction(async (tx) => {
    const t = await readTable(tx, name);
    const lang = t && t.relkind === 'r' ? storedLanguage(t) : null;
    if (!t || !lang) return 0;
    const r = await tx.query(
      `UPDATE ${qi(name)} SET ${FTS} = ${rowVector(t, regconfig(lang))} WHERE "_id" >= $1 AND "_id" < $2 AND ${FTS} IS NULL`,
      [fromId, toId],
    );
    return r.rowCount;
  }, FILL_TX);
}

/**
 * Makes the dropped indexes again (each a sorted build with `memoryMb` of maintenance_work_mem),
 * then clears the table's mark. First the pending-rows index is made anew: the fill left a dead
 * version of every row, all still in it, and a search reads them all through it until a vacuum
 * (10 s and more for 1,000,000 rows; built again, empty, in about one heap scan). Then ANALYZE
 * (statistics with vectors: with those of a table without them every search is planned as a
 * sequential scan). The dead versions are left to autovacuum: no other index a search reads has
 * them. The row vectors' index is most of the work (one process builds a GIN index; more memory
 * does not make it faster): with two connections or more it is built as two halves split at the
 * middle `_id` (rowIndexSplit), one per connection at once, then the per-column indexes on
 * whichever connection is free.
 */
export async function restoreFullTextIndexes(
  db: Database,
  name: string,
  defs: string[],
  parallel: number,
  memoryMb: number,
): Promise<void> {
  const create = (sql: string) => db.transaction((tx) => tx.query(sql), { settings: { maintenance_work_mem: `${memoryMb}MB` } });
  await renewPendingIndex(db, name);
  await db.exec(`ANALYZE ${qi(name)}`);
  const rowDef = defs.find((d) => ROW_INDEX_DEF.test(d));
  const queue = defs.filter((d) => !ROW_INDEX_DEF.test(d));
  // The row vectors' index (whole or halves, as dropped) is made anew: split again at the table's middle.
  const rowDefs = rowDef ? await splitRowIndex(db, name, /\bUSING (\w+) /.exec(rowDef)?.[1] ?? 'gin', parallel > 1) : [];
  const buildOthers = async () => {
    for (let def = queue.shift(); def; def = queue.shift()) await create(def);
  };
  // Each connection starts with a half of the row vectors' index (one connection: the whole
  // index), then takes per-column ones. All builds over before a failure is reported: none goes
  // on beside a recovery's.
  const done = await Promise.allSettled(
    Array.from({ length: Math.max(1, parallel) }, async (_, i) => {
      if (rowDefs[i]) await create(rowDefs[i]);
      await buildOthers();
    }),
  );
  for (const r of done) if (r.status === 'rejected') throw r.reason;
  await db.transaction((tx) => setRebuildFlag(tx, name, false));
}

/**
 * Records where the row vectors' index is split (the middle of the table's `_id`s; not split when
 * `split` is false or the table is empty) and returns the CREATE INDEX statements of the index or
 * its halves.
 */
async function splitRowIndex(db: Database, name: string, method: string, split: boolean): Promise<string[]> {
  return db.transaction(async (tx) => {
    const t = await readTable(tx, name);
    if (!t) return [];
    const mid = split
      ? (await tx.query<{ mid: string | null }>(`SELECT ((min("_id")::int8 + max("_id")) / 2)::text AS mid FROM ${qi(name)}`)).rows[0].mid
      : null;
    const at = mid === null ? null : Number(mid);
    await setMeta(tx, name, (meta) => {
      if (at === null) delete meta[ROW_SPLIT];
      else meta[ROW_SPLIT] = at;
    });
    return [...rowIndexes(t.oid, method, at)].map(([ix, def]) => `CREATE INDEX IF NOT EXISTS ${qi(ix)} ON ${qi(name)} ${def}`);
  });
}

/** The definition (dropFullTextIndexes) of the row vectors' index, ds_<oid>_fts, or of one of its halves. */
const ROW_INDEX_DEF = /^CREATE INDEX IF NOT EXISTS "?ds_\d+_fts(_lo|_hi)?"? ON /;

/** The pending-rows index made again (in one transaction: no search finds it missing); none: nothing done. */
async function renewPendingIndex(db: Database, name: string): Promise<void> {
  await db.transaction(async (tx) => {
    const r = await tx.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 AND indexname LIKE 'ds\\_%\\_fts\\_pending'`,
      [name],
    );
    for (const ix of r.rows) {
      await tx.query(`DROP INDEX ${qi(ix.name)}`);
      await tx.query(ix.def);
    }
  });
}

const BULK_LOCK = `hashtextextended('svc.fts_bulk_fill:' || $1, 0)`;

/**
 * Runs fn while holding the table's bulk-fill lock (a session advisory lock on a connection of its
 * own, so that no other process takes the dropped indexes for a dead process's); null when another
 * process holds it.
 */
export function withBulkFillLock<T>(db: Database, name: string, fn: () => Promise<T>): Promise<T | null> {
  return db.withConnection(async (conn) => {
    const got = (await conn.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${BULK_LOCK}) AS ok`, [name])).rows[0].ok;
    if (!got) return null;
    try {
      return await fn();
    } finally {
      await conn.query(`SELECT pg_advisory_unlock(${BULK_LOCK})`, [name]);
    }
  });
}

/**
 * After a process died during a bulk fill: the table's full-text indexes made again from the
 * settings; false (nothing done) when a bulk fill of it is still going on somewhere.
 */
export async function rebuildDroppedIndexes(q: Queryable, name: string, settings: FtsSettings): Promise<boolean> {
  if (!(await q.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${BULK_LOCK}) AS ok`, [name])).rows[0].ok) return false;
  await setRebuildFlag(q, name, false);
  await setUpFullText(q, name, settings);
  return true;
}
