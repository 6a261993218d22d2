// The rows a data store write changes, gathered while it runs and reported before its commit to
// whoever keeps aggregates of the table (views/chart-cache.ts).
import { quoteIdent as qi } from '../db/sql.ts';
import { COUNTS_TABLE, type Table } from './catalog.ts';
import { recordError } from './db-errors.ts';
import { FTS_COLUMN } from './fts.ts';
import type { WriteSession } from './sessions.ts';

/**
 * Rows one write transaction changed in a table, for caches of aggregates of the table
 * (views/chart-cache.ts): the table's write marker before the write (`prev`) and the one its
 * commit makes (`marker`: the transaction id, catalog.ts writeMarker), and the rows as a JSON
 * array of {"s": -1, "r": old row} and {"s": 1, "r": new row}, in the order they changed (each
 * row as to_jsonb gives it, without the full-text vector). Reported before the commit: a write
 * that does not commit never becomes a marker, so its report is never followed.
 */
export interface RowChanges {
  table: string;
  prev: string;
  marker: string;
  rows: string;
}

/** Who wants the rows changed in some tables (set once by the chart cache). */
export interface RowChangesListener {
  wants(table: string): boolean;
  changed(c: RowChanges): void;
}

let changesListener: RowChangesListener | null = null;

export function listenToRowChanges(l: RowChangesListener): void {
  changesListener = l;
}

/** Larger writes are not reported (a cache computes its aggregates again). */
export const MAX_REPORTED_ROWS = 1000;

/** The rows one write changes, gathered while it runs (null parts: too many, not reported). */
export class Capture {
  parts: string[] | null = [];
  constructor(
    readonly table: string,
    readonly prev: string,
    readonly marker: string,
  ) {}
  add(sign: 1 | -1, rows: string[]): void {
    if (!this.parts) return;
    if (this.parts.length + rows.length > MAX_REPORTED_ROWS) this.parts = null;
    else for (const r of rows) this.parts.push(`{"s":${sign},"r":${r}}`);
  }
  drop(): void {
    this.parts = null;
  }
  report(): void {
    if (this.parts)
      changesListener?.changed({ table: this.table, prev: this.prev, marker: this.marker, rows: `[${this.parts.join(',')}]` });
  }
}

/**
 * Starts gathering the rows a write changes when a cache wants them. The table's row in the counts
 * table is locked until the commit: no other write of the table commits meanwhile, so the marker
 * read now is the one this write follows, and every statement of this one sees the table as it is.
 */
export async function startCapture(s: WriteSession, t: Table): Promise<Capture | null> {
  if (!changesListener?.wants(t.name)) return null;
  const r = await s.query<{ prev: string; me: string }>(
    `SELECT xmin::text AS prev, pg_current_xact_id()::xid::text AS me FROM ${COUNTS_TABLE} WHERE id = $1 FOR UPDATE`,
    [t.name],
  );
  const row = r.rows[0];
  // Written before in this transaction: the marker it follows is not known.
  if (!row || row.prev === row.me) return null;
  return new Capture(t.name, row.prev, row.me);
}

/** A row of the table (alias or name) as JSON text, without the full-text vector. */
export const rowJson = (ref: string) => `(to_jsonb(${ref}) - '${FTS_COLUMN}')::text`;
/** A row's key as JSON text. */
export const keyJson = (ref: string, pk: string[]) => `jsonb_build_array(${pk.map((k) => `${ref}.${qi(k)}`).join(', ')})::text`;

/** The existing rows with the keys in a scratch table (locked, in key order), as JSON text by key. */
export async function oldRows(s: WriteSession, t: Table, pk: string[], scratch: string): Promise<Map<string, string>> {
  const cond = pk.map((k) => `t.${qi(k)} = x.${qi(k)}`).join(' AND ');
  const r = await s
    .query<{ k: string; r: string }>(
      `SELECT ${keyJson('t', pk)} AS k, ${rowJson('t')} AS r FROM ${qi(t.name)} AS t JOIN (SELECT ${pk.map(qi).join(', ')} FROM ${qi(scratch)}) AS x ON ${cond}
       ORDER BY ${pk.map((k) => `t.${qi(k)}`).join(', ')} FOR UPDATE OF t`,
    )
    .catch((e) => {
      throw recordError(e);
    });
  return new Map(r.rows.map((row) => [row.k, row.r]));
}

/** Old rows replaced by the written ones (same key) out, then the written rows in. */
export function captureWritten(c: Capture, old: Map<string, string>, written: { k: string; r: string }[]): void {
  c.add(
    -1,
    written.filter((w) => old.has(w.k)).map((w) => old.get(w.k)!),
  );
  c.add(
    1,
    written.map((w) => w.r),
  );
}

/** A row an upsert wrote, as upsertReturning gives it. */
export interface WrittenRow {
  ins: boolean;
  k: string;
  r: string;
}

/** INSERT ... ON CONFLICT returning every written row (whether inserted, its key, the row). */
export function upsertReturning(t: Table, names: string, source: string, keyList: string, conflict: string, pk: string[]): string {
  return `INSERT INTO ${qi(t.name)} AS t (${names}) ${source}
      ON CONFLICT (${keyList}) ${conflict} RETURNING (t.xmax = 0) AS ins, ${keyJson('t', pk)} AS k, ${rowJson('t')} AS r`;
}

/** The rows an upsert wrote, captured; how many it inserted and wrote. */
export function writtenCounts(c: Capture, old: Map<string, string>, rows: WrittenRow[]): { inserted: number; written: number } {
  captureWritten(c, old, rows);
  return { inserted: rows.filter((w) => w.ins).length, written: rows.length };
}
