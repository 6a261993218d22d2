// Records of a write request: checked, and read from their JSON straight into COPY text.
import { quoteIdent as qi } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import { JsonArrayText } from '../json/array-text.ts';
import type { RecordInput, RecordSource } from './backend.ts';
import type { Column, Table } from './catalog.ts';
import { FTS_COLUMN } from './fts.ts';
import { CopyWriter, JsonRecordReader } from './json-to-copy.ts';

export function checkRecordObjects(records: unknown[]): void {
  if (!Array.isArray(records)) throw new ValidationError({ records: ['records must be a list of objects'] });
  records.forEach((r, i) => {
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw new ValidationError({ records: [`row "${i}" is not a json object`] });
  });
}

/** The records, parsed and checked: objects, with known keys. */
export function checkedRecords(t: Table, records: RecordInput): Record<string, unknown>[] {
  const list = (Array.isArray(records) ? records : new JsonArrayText(records.bytes).toArray()) as Record<string, unknown>[];
  if (!Array.isArray(list)) throw new ValidationError({ records: ['records must be a list of objects'] });
  checkRecordObjects(list);
  const cols = new Set(t.columns.filter((c) => c.id !== FTS_COLUMN).map((c) => c.id));
  const unknown = new Set<string>();
  for (const r of list) for (const k in r) if (!cols.has(k)) unknown.add(k);
  if (unknown.size) throw new ValidationError({ fields: [`fields "${[...unknown].join(', ')}" do not exist`] });
  return list;
}

/** update and upsert: every record names its whole key. */
export function checkKeys(records: Record<string, unknown>[], pk: string[]): void {
  records.forEach((r, i) => {
    const missing = pk.filter((k) => r[k] === null || r[k] === undefined);
    if (missing.length)
      throw new ValidationError({ key: [`fields "${missing.join(', ')}" are missing but needed as key`], records_row: i });
  });
}

/** COPY text pieces: the first small (the server starts at once), then up to PIECE bytes. */
const FIRST_PIECE = 8 * 1024;
const PIECE = 32 * 1024;

/** COPY text of the records the reader is at and after, in pieces; take() says whether the current one goes in. */
export function* copyPieces(reader: JsonRecordReader, cols: number[], take: () => boolean): Generator<Buffer> {
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
export function recordReader(t: Table, records: RecordInput): JsonRecordReader {
  if (!Array.isArray(records) && !Buffer.isBuffer((records as RecordSource)?.bytes)) {
    throw new ValidationError({ records: ['records must be a list of objects'] });
  }
  const bytes = Array.isArray(records) ? Buffer.from(JSON.stringify(records)) : records.bytes;
  // The stored full-text vector is not written by records: its key is unknown to the reader.
  return new JsonRecordReader(
    bytes,
    t.columns.map((c) => ({ id: c.id === FTS_COLUMN ? '\u0000' : c.id, kind: c.kind, float8: c.typname === 'float8' })),
  );
}

/** Indexes of the columns records may write (all but the stored full-text vector). */
export function writableColumns(t: Table): number[] {
  return t.columns.map((_, i) => i).filter((i) => t.columns[i].id !== FTS_COLUMN);
}

/** The next record, checked to be an object with known keys; false after the last. */
export function nextChecked(reader: JsonRecordReader): boolean {
  if (!reader.next()) return false;
  if (!reader.isObject) throw new ValidationError({ records: [`row "${reader.index}" is not a json object`] });
  if (reader.unknown.length) throw new ValidationError({ fields: [`fields "${reader.unknown.join(', ')}" do not exist`] });
  return true;
}

/** Table columns that appear in any record, in table order. */
export function usedColumns(t: Table, records: Record<string, unknown>[]): Column[] {
  const keys = new Set<string>();
  for (const r of records) for (const k in r) keys.add(k);
  return t.columns.filter((c) => keys.has(c.id));
}

export function columnDefs(cols: Column[]): string {
  return cols.map((c) => `${qi(c.id)} ${c.ftype}`).join(', ');
}

/** The target of a COPY into these columns of a table. */
export function copyTarget(table: string, cols: Column[]): string {
  return `${qi(table)} (${cols.map((c) => qi(c.id)).join(', ')})`;
}
