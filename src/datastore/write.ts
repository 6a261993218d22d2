// The write paths of data store records: insert (COPY), upsert and update (keyed), delete.
// Each runs inside the caller's write transaction (sessions.ts) and keeps the stored row count.
import { inSavepoint } from '../db/database.ts';
import { appendNewKeys } from './append.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import type { DeleteInput, RecordInput, UpsertInput } from './backend.ts';
import { COUNTS_TABLE, lockTableName, requireTable, type Column, type Table } from './catalog.ts';
import { isDbError, isRace, recordError } from './db-errors.ts';
import { FTS_COLUMN, storedLanguage } from './fts.ts';
import {
  checkedRecords,
  checkKeys,
  columnDefs,
  copyPieces,
  copyRecords,
  copyTarget,
  moreRecordsThan,
  nextChecked,
  recordReader,
  usedColumns,
  writableColumns,
} from './records.ts';
import { filterConditions } from './select.ts';
import {
  type Capture,
  captureWritten,
  keyJson,
  MAX_REPORTED_ROWS,
  oldRows,
  rowJson,
  startCapture,
  upsertReturning,
  type WrittenRow,
  writtenCounts,
} from './row-changes.ts';
import type { WriteSession } from './sessions.ts';

/** The ON CONFLICT action of an upsert: the row's vector is computed again (fts.ts). */
function onConflict(t: Table, nonKey: Column[]): string {
  return nonKey.length ? `DO UPDATE SET ${nonKey.map((c) => `${qi(c.id)} = EXCLUDED.${qi(c.id)}`).join(', ')}${unfill(t)}` : 'DO NOTHING';
}

/** An updated row's vector is to be computed again. */
const unfill = (t: Table) => (storedLanguage(t) ? `, ${qi(FTS_COLUMN)} = NULL` : '');

const noUniqueKey = () => new ValidationError({ table: ['unique key must be passed for update/upsert'] });

/**
 * datastore_upsert: insert, or update / upsert keyed by the primary key. Rows are written in key
 * order, so that parallel writes of overlapping keys lock them in the same order (no deadlock).
 */
export async function writeRecords(s: WriteSession, input: UpsertInput): Promise<void> {
  const t = await requireTable(s, input.resource_id);
  const pk = t.meta.primary_key?.length ? t.meta.primary_key : null;
  if (input.method !== 'insert' && !pk) throw new ValidationError({ table: ['table does not have a unique key defined'] });
  // A large write is not reported: its rows are not gathered, and other writes are not held up.
  const capture = small(input.records) ? await startCapture(s, t) : null;
  if (input.method === 'insert') {
    await insertRecords(s, t, input.records, capture);
  } else if (input.method === 'upsert') {
    await upsertRecords(s, t, input.records, pk!, capture);
  } else {
    const records = checkedRecords(t, input.records);
    checkKeys(records, pk!);
    await updateRecords(s, t, records, pk!, capture);
  }
  if (input.calculate_record_count) await recount(s, t.name);
  capture?.report();
}

/** datastore_delete / datastore_records_delete: drops the table (no filters) or deletes matching rows. */
export async function deleteRecords(s: WriteSession, input: DeleteInput): Promise<number> {
  if (input.filters === undefined) await lockTableName(s, input.resource_id);
  const t = await requireTable(s, input.resource_id);
  if (input.filters === undefined) {
    await s.schemaChanged();
    await s.exec(`DROP TABLE ${qi(t.name)} CASCADE`);
    await s.flushCounts();
    await s.query(`DELETE FROM ${COUNTS_TABLE} WHERE id = $1`, [t.name]);
    return -1;
  }
  const params: unknown[] = [];
  const where = filterConditions(t, input.filters, params, 'filters');
  const capture = await startCapture(s, t);
  // A value the database refuses (class 22) is looked for filter by filter, after the failed statement.
  let sql = `DELETE FROM ${qi(t.name)}${where.length ? ' WHERE ' + where.join(' AND ') : ''}`;
  // The deleted rows for a cache (at most one more than are reported), and how many there were.
  if (capture)
    sql = `WITH d AS (${sql} RETURNING *) SELECT (SELECT count(*) FROM d)::int AS n,
      (SELECT string_agg(r, '\u001e') FROM (SELECT ${rowJson('d')} AS r FROM d LIMIT ${MAX_REPORTED_ROWS + 1}) AS z) AS rows`;
  const r = await inSavepoint(s, () => s.query(sql, params)).catch(async (e) => {
    if (!isDbError(e) || isRace(e)) throw e;
    const field = e.code?.startsWith('22') ? await refusedFilter(s, t, input.filters!) : undefined;
    throw new ValidationError({ filters: [field ? `${e.message} (field "${field}")` : e.message] });
  });
  let deleted = r.rowCount;
  if (capture) {
    deleted = Number(r.rows[0].n);
    if (deleted) capture.add(-1, String(r.rows[0].rows).split('\u001e'));
  }
  s.addCount(t.name, -deleted);
  if (input.calculate_record_count) await recount(s, t.name);
  capture?.report();
  return deleted;
}

/** The first filter whose value the database refuses as data (each tried alone, planned only). */
async function refusedFilter(s: WriteSession, t: Table, filters: Record<string, unknown>): Promise<string | undefined> {
  for (const [k, v] of Object.entries(filters)) {
    const params: unknown[] = [];
    const [cond] = filterConditions(t, { [k]: v }, params, 'filters');
    try {
      await inSavepoint(s, () => s.query(`EXPLAIN SELECT 1 FROM ${qi(t.name)} WHERE ${cond}`, params), { rollback: true });
    } catch (e) {
      if (isDbError(e) && e.code?.startsWith('22')) return k;
    }
  }
  return undefined;
}

export async function recount(s: WriteSession, name: string): Promise<void> {
  await s.flushCounts();
  await s.query(`ANALYZE ${qi(name)}`);
  await s.query(`INSERT INTO ${COUNTS_TABLE} (id, n) SELECT $1, count(*) FROM ${qi(name)} ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n`, [
    name,
  ]);
}

/**
 * Appends records in one COPY, written straight from their JSON (json-to-copy.ts) a piece at a
 * time: on PostgreSQL the server takes in a piece while the next is made. Missing keys are NULL.
 */
export async function insertRecords(s: WriteSession, t: Table, records: RecordInput, capture: Capture | null = null): Promise<void> {
  if (capture) {
    // Through a scratch table, so that the rows come back as stored; any error: the plain path says it.
    const done = await inSavepoint(s, () => insertReturning(s, t, records, capture)).catch((e) => {
      if (!isDbError(e) || isRace(e)) throw e;
      return false;
    });
    if (done) return;
  }
  capture?.drop();
  const reader = recordReader(t, records);
  if (!nextChecked(reader)) return;
  // _id is written only when the records give it (then all must: a serial cannot be half given).
  const idCol = t.columns.findIndex((c) => c.id === '_id');
  const withId = reader.has(idCol);
  const cols = writableColumns(t).filter((i) => i !== idCol || withId);
  const take = () => {
    if (!withId && reader.has(idCol))
      throw new ValidationError({ records: ['"_id" must be given in every record or in none'], records_row: reader.index });
    return true;
  };
  let inserted: number;
  if (!cols.length) {
    // A table without columns of its own: every record (checked as read) is a row of defaults.
    for (const _ of copyPieces(reader, cols, take)) continue;
    inserted = (await s.query(`INSERT INTO ${qi(t.name)} SELECT FROM generate_series(1, $1::int)`, [reader.index + 1])).rowCount;
  } else {
    try {
      inserted = await copyRecords(
        s,
        copyTarget(
          t.name,
          cols.map((i) => t.columns[i]),
        ),
        reader,
        cols,
        take,
      );
    } catch (e) {
      throw recordError(e);
    }
  }
  s.addCount(t.name, inserted);
  s.wroteRows(t, inserted);
}

/** Records few enough to be reported one by one (their JSON's size when not a list). */
const small = (records: RecordInput) =>
  Array.isArray(records) ? records.length <= MAX_REPORTED_ROWS : (records?.bytes?.length ?? Infinity) <= 256 * 1024;

/**
 * insertRecords through a scratch table (COPY, then INSERT ... RETURNING the rows as stored), for
 * a cache that wants them; false when there is nothing to copy (the plain path does that).
 */
async function insertReturning(s: WriteSession, t: Table, records: RecordInput, capture: Capture): Promise<boolean> {
  const reader = recordReader(t, records);
  if (!nextChecked(reader)) return true;
  const idCol = t.columns.findIndex((c) => c.id === '_id');
  const withId = reader.has(idCol);
  const cols = writableColumns(t).filter((i) => i !== idCol || withId);
  if (!cols.length) return false;
  const columns = cols.map((i) => t.columns[i]);
  const scratch = 'svc_insert';
  await s.exec(`CREATE TEMP TABLE ${qi(scratch)} (${columnDefs(columns)}) ON COMMIT DROP`);
  await s
    .copyIn(
      copyTarget(scratch, columns),
      copyPieces(reader, cols, () => {
        if (!withId && reader.has(idCol))
          throw new ValidationError({ records: ['"_id" must be given in every record or in none'], records_row: reader.index });
        return true;
      }),
    )
    .catch((e) => {
      throw recordError(e);
    });
  const names = columns.map((c) => qi(c.id)).join(', ');
  const r = await s.query<{ r: string }>(
    `INSERT INTO ${qi(t.name)} AS t (${names}) SELECT ${names} FROM ${qi(scratch)} RETURNING ${rowJson('t')} AS r`,
  );
  await s.exec(`DROP TABLE ${qi(scratch)}`);
  capture.add(
    1,
    r.rows.map((row) => row.r),
  );
  s.addCount(t.name, r.rowCount);
  s.wroteRows(t, r.rowCount);
  return true;
}

/**
 * upsert on a table with a primary key. The records with the keys of the first one (a loader's
 * usual batch: all of them) go by one COPY into a scratch table while they are read, then in one
 * INSERT ... ON CONFLICT into the table; records with other keys follow, grouped (stageGroups,
 * applyGroups), once every existing row the request writes is locked in key order.
 */
async function upsertRecords(s: WriteSession, t: Table, records: RecordInput, pk: string[], capture: Capture | null): Promise<void> {
  // A load of new rows: one COPY into the table (append.ts); not when a cache wants the rows.
  if ((!capture || moreRecordsThan(records, MAX_REPORTED_ROWS)) && (await appendNewKeys(s, t, records, pk))) return capture?.drop();
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
  const take = () => {
    if (reader.count !== cols.length || !cols.every((c) => reader.has(c))) {
      others.push(reader.value() as Record<string, unknown>);
      otherRows.push(reader.index);
      return false;
    }
    const absent = pk.filter((_, j) => reader.isNull(keyCols[j]));
    if (absent.length)
      throw new ValidationError({ key: [`fields "${absent.join(', ')}" are missing but needed as key`], records_row: reader.index });
    const key = keyCols.length === 1 ? reader.copyText(keyCols[0]) : keyCols.map((c) => reader.copyText(c)).join('\t');
    if (seen.has(key)) duplicates = true;
    else seen.add(key);
    mainRows.push(reader.index);
    return true;
  };
  const columns = cols.map((i) => t.columns[i]);
  const names = columns.map((c) => qi(c.id)).join(', ');
  const nonKey = columns.filter((c) => !pk.includes(c.id));
  const scratch = 'svc_upsert';
  await s.exec(`CREATE TEMP TABLE ${qi(scratch)} (${columnDefs(columns)}) ON COMMIT DROP`);
  try {
    await copyRecords(s, copyTarget(scratch, columns), reader, cols, take);
  } catch (e) {
    const err = recordError(e);
    if (err instanceof ValidationError && isDbError(e) && typeof err.errors.records_row === 'number') {
      err.errors.records_row = mainRows[err.errors.records_row] ?? err.errors.records_row;
    }
    throw err;
  }
  // Records with other keys go to scratch tables of their own; then every existing row the request
  // writes is locked in key order at once (two runs, each in order, could still deadlock).
  let staged: Staged[] = [];
  if (others.length) {
    staged = await remapRows(otherRows, async () => {
      checkKeys(others, pk);
      return stageGroups(s, t, others, pk);
    });
    await lockKeys(s, t, pk, [scratch, ...staged.map((g) => g.scratch)]);
  }
  if (mainRows.length + others.length > MAX_REPORTED_ROWS) capture?.drop();
  const old = capture?.parts ? await oldRows(s, t, pk, scratch) : null;
  // Later records win over earlier ones with the same key (as sequential writes would); the
  // scratch table is new, so its physical order is the order of the request.
  const keyList = pk.map(qi).join(', ');
  const source = duplicates
    ? `SELECT DISTINCT ON (${keyList}) ${names} FROM ${qi(scratch)} ORDER BY ${keyList}, ctid DESC`
    : `SELECT ${names} FROM ${qi(scratch)} ORDER BY ${keyList}`;
  const conflict = onConflict(t, nonKey);
  const r = await s
    .query(
      old
        ? upsertReturning(t, names, source, keyList, conflict, pk)
        : `WITH w AS (
      INSERT INTO ${qi(t.name)} (${names}) ${source}
      ON CONFLICT (${keyList}) ${conflict} RETURNING (xmax = 0) AS ins)
    SELECT count(*) FILTER (WHERE ins)::int AS inserted, count(*)::int AS written FROM w`,
    )
    .catch((e) => {
      if (isDbError(e) && e.code === '42P10') return Promise.reject(noUniqueKey());
      if (isDbError(e) && e.code === '21000')
        return Promise.reject(new ValidationError({ key: ['two records have the same key, written differently'] }));
      throw recordError(e);
    });
  await s.exec(`DROP TABLE ${qi(scratch)}`);
  const counted = old ? writtenCounts(capture!, old, r.rows as WrittenRow[]) : r.rows[0];
  s.addCount(t.name, Number(counted?.inserted ?? 0));
  s.wroteRows(t, Number(counted?.written ?? 0));
  if (staged.length) await remapRows(otherRows, () => applyGroups(s, t, staged, 'upsert', pk, capture));
}

/** Runs fn; a Validation Error's records_row (a place in a subset of the records) becomes the place in the request. */
async function remapRows<T>(rows: number[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ValidationError && typeof e.errors.records_row === 'number') e.errors.records_row = rows[e.errors.records_row];
    throw e;
  }
}

/** Locks the table's existing rows with the keys in these scratch tables, in key order. */
async function lockKeys(s: WriteSession, t: Table, pk: string[], scratches: string[]): Promise<void> {
  const keys = pk.map(qi).join(', ');
  const cond = pk.map((k) => `t.${qi(k)} = x.${qi(k)}`).join(' AND ');
  const all = scratches.map((x) => `SELECT ${keys} FROM ${qi(x)}`).join(' UNION ');
  await s
    .query(
      `SELECT 1 FROM ${qi(t.name)} AS t JOIN (${all}) AS x ON ${cond} ORDER BY ${pk.map((k) => `t.${qi(k)}`).join(', ')} FOR UPDATE OF t`,
    )
    .catch((e) => {
      throw recordError(e);
    });
}

/** Records of one key set, copied into a scratch table (rows: later records with the same key won). */
interface Staged {
  scratch: string;
  cols: Column[];
  rows: Record<string, unknown>[];
}

/** update: every record by its primary key (groups of records with the same keys, rows locked in key order first). */
async function updateRecords(
  s: WriteSession,
  t: Table,
  records: Record<string, unknown>[],
  pk: string[],
  capture: Capture | null,
): Promise<void> {
  const staged = await stageGroups(s, t, records, pk);
  await lockKeys(
    s,
    t,
    pk,
    staged.map((g) => g.scratch),
  );
  if (records.length > MAX_REPORTED_ROWS) capture?.drop();
  await applyGroups(s, t, staged, 'update', pk, capture);
}

/**
 * Groups records by their keys and copies each group by COPY (the fast parser, which names the
 * field of a bad value) into a scratch table; a bad row is named by its place in records.
 */
async function stageGroups(s: WriteSession, t: Table, records: Record<string, unknown>[], pk: string[]): Promise<Staged[]> {
  const groups = new Map<string, { cols: Column[]; rows: Record<string, unknown>[] }>();
  for (const r of records) {
    const sig = Object.keys(r).sort().join('\u0000');
    let g = groups.get(sig);
    if (!g) groups.set(sig, (g = { cols: usedColumns(t, [r]), rows: [] }));
    g.rows.push(r);
  }
  const staged: Staged[] = [];
  for (const g of groups.values()) {
    // Later records win over earlier ones with the same key (as sequential writes would).
    const seen = new Map<string, Record<string, unknown>>();
    for (const r of g.rows) seen.set(JSON.stringify(pk.map((k) => r[k])), r);
    const rows = [...seen.values()];
    const scratch = `svc_upsert_${staged.length}`;
    await s.exec(`CREATE TEMP TABLE ${qi(scratch)} (${columnDefs(g.cols)}) ON COMMIT DROP`);
    try {
      const reader = recordReader(t, rows);
      nextChecked(reader);
      await s.copyIn(
        copyTarget(scratch, g.cols),
        copyPieces(
          reader,
          g.cols.map((c) => t.columns.indexOf(c)),
          () => true,
        ),
      );
    } catch (e) {
      const err = recordError(e, true);
      if (err instanceof ValidationError && typeof err.errors.records_row === 'number') {
        err.errors.records_row = records.indexOf(rows[err.errors.records_row]);
      }
      throw err;
    }
    staged.push({ scratch, cols: g.cols, rows });
  }
  return staged;
}

/** Writes staged groups into the table: update (every key must exist) or upsert. */
async function applyGroups(
  s: WriteSession,
  t: Table,
  staged: Staged[],
  method: 'upsert' | 'update',
  pk: string[],
  capture: Capture | null = null,
): Promise<void> {
  const keyList = pk.map(qi).join(', ');
  const cond = pk.map((k) => `t.${qi(k)} = x.${qi(k)}`).join(' AND ');
  for (const g of staged) {
    const old = capture?.parts ? await oldRows(s, t, pk, g.scratch) : null;
    const names = g.cols.map((c) => qi(c.id)).join(', ');
    const nonKey = g.cols.filter((c) => !pk.includes(c.id));
    if (method === 'update') {
      const set =
        (nonKey.length ? nonKey : g.cols.filter((c) => pk.includes(c.id)).slice(0, 1))
          .map((c) => `${qi(c.id)} = x.${qi(c.id)}`)
          .join(', ') + unfill(t);
      const returning = old ? ` RETURNING ${keyJson('t', pk)} AS k, ${rowJson('t')} AS r` : '';
      const r = await s.query(`UPDATE ${qi(t.name)} AS t SET ${set} FROM ${qi(g.scratch)} AS x WHERE ${cond}${returning}`).catch((e) => {
        throw recordError(e);
      });
      if (old) captureWritten(capture!, old, r.rows);
      if (r.rowCount < g.rows.length) {
        // The first record (in the scratch table's order: the request's) whose key is not in the table.
        const miss = await s.query<{
          n: number;
        }>(`SELECT n::int AS n FROM (SELECT row_number() OVER (ORDER BY ctid) AS n, * FROM ${qi(g.scratch)}) AS x
          WHERE NOT EXISTS (SELECT 1 FROM ${qi(t.name)} AS t WHERE ${cond}) ORDER BY n LIMIT 1`);
        const row = g.rows[(miss.rows[0]?.n ?? 1) - 1];
        throw new ValidationError({ key: [`key "${JSON.stringify(pk.map((k) => row[k]))}" not found`] });
      }
      s.wroteRows(t, r.rowCount);
    } else {
      const conflict = onConflict(t, nonKey);
      const source = `SELECT ${names} FROM ${qi(g.scratch)} ORDER BY ${keyList}`;
      const r = await s
        .query<{ inserted: number; written: number }>(
          old
            ? upsertReturning(t, names, source, keyList, conflict, pk)
            : `WITH w AS (
          INSERT INTO ${qi(t.name)} (${names}) ${source}
          ON CONFLICT (${keyList}) ${conflict} RETURNING (xmax = 0) AS ins)
        SELECT count(*) FILTER (WHERE ins)::int AS inserted, count(*)::int AS written FROM w`,
        )
        .catch((e) => {
          if (isDbError(e) && e.code === '42P10') return Promise.reject(noUniqueKey());
          throw recordError(e);
        });
      const counted = old ? writtenCounts(capture!, old, r.rows as unknown as WrittenRow[]) : r.rows[0];
      s.addCount(t.name, Number(counted?.inserted ?? 0));
      s.wroteRows(t, Number(counted?.written ?? 0));
    }
  }
}

/** Re-applies the table's triggers to every row; returns the row count. */
export async function runTriggers(s: WriteSession, id: string): Promise<number> {
  const t = await requireTable(s, id);
  try {
    // Setting the vector to NULL runs the triggers (WHEN NEW._full_text IS NULL) and refills it.
    const n = (await s.query(`UPDATE ${qi(t.name)} SET ${storedLanguage(t) ? `${qi(FTS_COLUMN)} = NULL` : '"_id" = "_id"'}`)).rowCount;
    s.wroteRows(t, n);
    return n;
  } catch (e) {
    if (isDbError(e)) throw new ValidationError({ records: [e.message] });
    throw e;
  }
}
