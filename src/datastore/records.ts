// Records of a write request: checked, and read from their JSON straight into COPY text.
import type { Transaction } from '../db/database.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import { JsonArrayText } from '../json/array-text.ts';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../json/bytes.ts';
import type { RecordInput, RecordSource } from './backend.ts';
import type { Column, Table } from './catalog.ts';
import { FTS_COLUMN } from './fts.ts';
import { isDbError } from './db-errors.ts';
import { binaryType, CopyWriter, writeBinaryHeader, writeBinaryTrailer } from './copy-writer.ts';
import { JsonRecordReader } from './json-to-copy.ts';

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

/**
 * Whether there are more than n records, counted without reading them (the commas between a JSON
 * list's elements, up to the (n)th). A malformed list's count means nothing (reading it fails).
 */
export function moreRecordsThan(records: RecordInput, n: number): boolean {
  if (Array.isArray(records)) return records.length > n;
  const b = (records as RecordSource | undefined)?.bytes;
  // Each element and its comma take two bytes at least.
  if (!Buffer.isBuffer(b) || b.length < 2 * n) return false;
  let depth = 0;
  let commas = 0;
  const len = b.length;
  for (let j = 0; j < len; j++) {
    const x = b[j];
    if (x === QUOTE) {
      for (j++; j < len; j++) {
        const c = b[j];
        if (c === QUOTE) break;
        if (c === BACKSLASH) j++;
      }
    } else if (x === OPEN_BRACE || x === OPEN_BRACKET) depth++;
    else if (x === CLOSE_BRACE || x === CLOSE_BRACKET) depth--;
    else if (x === COMMA && depth === 1 && ++commas >= n) return true;
  }
  return false;
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

/**
 * COPY text of the records the reader is at and after, in pieces; take() says whether the current
 * one goes in (taken: it was asked already for the current one, which goes in).
 */
export function* copyPieces(reader: JsonRecordReader, cols: number[], take: () => boolean, taken = false): Generator<Buffer> {
  const out = new CopyWriter();
  let size = FIRST_PIECE;
  do {
    if (taken) taken = false;
    else if (!take()) continue;
    reader.writeLine(out, cols);
    if (out.pending >= size) {
      yield out.take();
      size = Math.min(size * 2, PIECE);
    }
  } while (nextChecked(reader));
  if (out.pending) yield out.take();
}

/** How far a binary COPY went: rows written; stopped at the reader's record (taken, not written). */
interface BinaryRun {
  lines: number;
  stopped: boolean;
}

/** COPY binary data of the records the reader is at and after, up to the first that must go as text (run.stopped). */
function* binaryPieces(reader: JsonRecordReader, cols: number[], take: () => boolean, run: BinaryRun): Generator<Buffer> {
  const out = new CopyWriter();
  writeBinaryHeader(out);
  let size = FIRST_PIECE;
  do {
    if (!take()) continue;
    if (!reader.writeBinaryLine(out, cols)) {
      run.stopped = true;
      break;
    }
    run.lines++;
    if (out.pending >= size) {
      yield out.take();
      size = Math.min(size * 2, PIECE);
    }
  } while (nextChecked(reader));
  writeBinaryTrailer(out);
  yield out.take();
}

function* chain(first: Buffer, rest: Iterator<Buffer>): Generator<Buffer> {
  yield first;
  for (let r = rest.next(); !r.done; r = rest.next()) yield r.value;
}

/**
 * COPY of the records the reader is at and after (those take() takes) into target: in COPY's
 * binary format while every value has a certain binary form, as text from the first record that
 * has not; returns the rows copied. A database error of the text part names the row (COPY's line)
 * by its place among all the rows copied, as one text COPY would.
 */
export async function copyRecords(
  q: Transaction,
  target: string,
  reader: JsonRecordReader,
  cols: number[],
  take: () => boolean,
): Promise<number> {
  let rows = 0;
  let taken = false;
  if (cols.length && reader.binaryColumns(cols)) {
    const run: BinaryRun = { lines: 0, stopped: false };
    const pieces = binaryPieces(reader, cols, take, run);
    const first = pieces.next();
    if (run.lines) rows = await q.copyIn(target, chain(first.value as Buffer, pieces), '(FORMAT binary)');
    if (!run.stopped) return rows;
    taken = true;
  }
  try {
    return rows + (await q.copyIn(target, copyPieces(reader, cols, take, taken)));
  } catch (e) {
    // The line the server names counts from the text part's first row: from the first row copied.
    if (rows && isDbError(e) && e.where)
      e.where = e.where.replace(/(COPY .*?, line )(\d+)/, (_, head: string, n: string) => `${head}${Number(n) + rows}`);
    throw e;
  }
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
    t.columns.map((c) => ({
      id: c.id === FTS_COLUMN ? '\u0000' : c.id,
      kind: c.kind,
      float8: c.typname === 'float8',
      bin: binaryType(c.typname),
    })),
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
