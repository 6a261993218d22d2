// The direct path for plain CSV: UTF-8 text with a header on its first line, rows as wide as the
// header, no blank values and values PostgreSQL reads as they are written (no decimal commas,
// thousands separators or non-ISO dates). Such a file goes to COPY (FORMAT csv) as its own bytes,
// while the same bytes are read once to guess the column types: the table is made with the types
// the first batch suggests, and the file is copied batch by batch as it is read (the database
// works on one batch on its core while the next is read on this one; on PostgreSQL several
// connections copy batches at once into a staged table, each record behind its row number: see
// LoadTable in load.ts). When the whole file ends up with other types (a later value contradicts
// the guess), the table is made again and the file copied once more, in the load's transaction.
// Anything else leaves the file to the general path (NotDirect).
import fs from 'node:fs';
import type { BulkSession } from '../datastore/bulk.ts';
import { type Savepoint, savepoint } from '../db/database.ts';
import { quoteIdent as qi, quoteLiteral } from '../db/sql.ts';
import { CsvByteScanner, NotDirect, numberRecords } from './csv-bytes.ts';
import { type BulkLoadBackend, copyFailure, isDbError, type LoadOptions, swapInTable } from './load.ts';
import { columnName, guessedColumns, HEADER_SAMPLE, MAX_COLUMNS, type PreparedColumn } from './prepare.ts';
import { openTableSource, type TableSource } from './source.ts';
import { findHeaderRow } from './sniff.ts';
import { ColumnGuess } from './types.ts';

export { NotDirect } from './csv-bytes.ts';

export interface DirectPlan {
  file: string;
  delimiter: string;
  names: string[];
  /** Byte offset of the first data row (after a BOM and the header line). */
  dataStart: number;
  notes: string[];
}

/** Bytes of rows per COPY statement. */
const BATCH_BYTES: Record<BulkSession['kind'], number> = { postgres: 2 << 20, pglite: 16 << 20 };

/**
 * Whether the file may take the direct path, from its first rows: the same encoding, delimiter and
 * header the general path would find; throws NotDirect (with the reason) when not.
 */
export async function planDirect(file: string, overrides: Map<string, string>): Promise<DirectPlan> {
  const source = await openTableSource(file).catch((e: Error) => {
    throw new NotDirect(e.message);
  });
  if (source.kind !== 'text' || source.encoding !== 'utf-8') throw new NotDirect(`${source.kind} ${source.encoding ?? ''}`.trim());
  const delimiter = source.delimiter!;
  // The header as the general path finds it (the same records read ahead): from the sample when it
  // holds them all (reading on would tokenize a whole first piece of the file).
  let head = source.headRecords!(HEADER_SAMPLE);
  if (head.length < HEADER_SAMPLE) head = await firstRecords(source);
  if (!head.length || findHeaderRow(head) !== 0) throw new NotDirect('lines before the header');
  const names = head[0].map(columnName);
  if (names.length < 2 || names.length > MAX_COLUMNS) throw new NotDirect(`${names.length} column(s)`);
  if (names.some((n) => !n) || new Set(names).size !== names.length) throw new NotDirect('blank or duplicate headers');
  if (names.some((n) => overrides.has(n))) throw new NotDirect('type overrides');
  // Where the rows start: the header line read as bytes (it must read as the general path read it).
  const { bytes, complete, bomLength } = source.sample!;
  const scanner = new CsvByteScanner(
    delimiter,
    names.map(() => new ColumnGuess()),
  );
  const header = scanner.header(bytes.subarray(bomLength), complete);
  if (!header || header.cells.length !== head[0].length || header.cells.some((c, i) => c !== head[0][i]))
    throw new NotDirect('the header line');
  return { file, delimiter, names, dataStart: bomLength + header.end, notes: source.notes };
}

/** The first HEADER_SAMPLE records as the general path reads them (or all, when fewer). */
async function firstRecords(source: TableSource): Promise<string[][]> {
  const head: string[][] = [];
  const records = source.records();
  try {
    while (head.length < HEADER_SAMPLE) {
      const r = await records.next();
      if (r.done) break;
      head.push(...r.value);
    }
  } catch (e) {
    throw new NotDirect((e as Error).message);
  } finally {
    await records.return(undefined).catch(() => undefined);
  }
  return head.slice(0, HEADER_SAMPLE);
}

/** Whole records of the file, about BATCH_BYTES of them. */
interface Batch {
  /** The records as they are in the file, or each behind its number when numbered. */
  pieces: Buffer[];
  /** Bytes of the file they take. */
  bytes: number;
}

/**
 * Whole records of the file from dataStart, in batches of about `size` bytes, read by the scanner;
 * the file offset where each batch ends goes to `ends`. When numbered, each record comes behind its
 * row number (the `_id` column).
 */
async function* scannedBatches(
  plan: DirectPlan,
  size: number,
  scanner: CsvByteScanner,
  ends: number[],
  numbered: boolean,
): AsyncGenerator<Batch> {
  const stream = fs.createReadStream(plan.file, { start: plan.dataStart, highWaterMark: 1 << 20 });
  const starts: number[] = [];
  let carry: Buffer | null = null;
  let batch: Batch = { pieces: [], bytes: 0 };
  let offset = plan.dataStart;
  const add = (buf: Buffer, from: number) => {
    batch.pieces.push(numbered ? numberRecords(buf, starts, from, plan.delimiter) : buf);
    batch.bytes += buf.length;
    starts.length = 0;
  };
  const take = () => {
    offset += batch.bytes;
    ends.push(offset);
    const b = batch;
    batch = { pieces: [], bytes: 0 };
    return b;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
      const from = scanner.rows + 1;
      const end = scanner.scan(buf, false, numbered ? starts : undefined);
      carry = end < buf.length ? buf.subarray(end) : null;
      if (end) add(buf.subarray(0, end), from);
      // The first batch is the first piece read: the database starts on it sooner.
      if (batch.bytes >= size || ends.length === 0) yield take();
    }
    if (carry) {
      const from = scanner.rows + 1;
      scanner.scan(carry, true, numbered ? starts : undefined);
      add(carry, from);
    }
    if (batch.bytes) yield take();
  } finally {
    stream.destroy();
  }
}

/** The same batches again, by their end offsets. */
async function* batchesAgain(plan: DirectPlan, ends: number[]): AsyncGenerator<Buffer[]> {
  const fh = await fs.promises.open(plan.file, 'r');
  try {
    let start = plan.dataStart;
    for (const end of ends) {
      const buf = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await fh.read(buf, 0, buf.length, start);
      if (bytesRead !== buf.length) throw new Error('the file changed while it was loaded');
      yield [buf];
      start = end;
    }
  } finally {
    await fh.close();
  }
}

const sameTypes = (a: PreparedColumn[], b: PreparedColumn[]) => a.length === b.length && a.every((c, i) => c.type === b[i].type);

/**
 * Loads the file the direct way (replacing the resource's table); returns the rows, the columns and
 * the log lines, or throws NotDirect before anything changed.
 */
export async function loadDirect(
  backend: BulkLoadBackend,
  resourceId: string,
  plan: DirectPlan,
  opts: LoadOptions = {},
): Promise<{ rows: number; columns: PreparedColumn[]; log: string[] }> {
  const log = [...plan.notes];
  const streams = Math.max(1, opts.streams ?? 1);
  let columns: PreparedColumn[] = [];
  let staged = false;
  const rows = await swapInTable(backend, resourceId, streams, async (s, table) => {
    staged = table.stage;
    // COPY statements at once: one in the load's own transaction.
    const atOnce = table.stage ? streams : 1;
    const guesses = plan.names.map(() => new ColumnGuess());
    const scanner = new CsvByteScanner(plan.delimiter, guesses);
    const quiet: string[] = [];
    const current = () => {
      const cols = guessedColumns(plan.names, guesses, [], plan.delimiter, quiet);
      const needs = cols.find((c) => c.conversion.kind !== 'none');
      if (needs) throw new NotDirect(`column "${needs.id}" needs its values converted`);
      return cols;
    };
    const target = (cols: PreparedColumn[], numbered: boolean) =>
      `${qi(table.name)} (${[...(numbered ? ['_id'] : []), ...cols.map((c) => c.id)].map(qi).join(', ')})`;
    const options = (cols: PreparedColumn[]) =>
      `WITH (FORMAT csv, DELIMITER ${quoteLiteral(plan.delimiter)}, FORCE_NULL (${cols.map((c) => qi(c.id)).join(', ')}))`;
    // Pass one with the copy alongside (several COPY streams when the table is staged), into a
    // table of the types guessed so far.
    let spec: PreparedColumn[] | null = null;
    /** Set before the first copy into an unstaged table: undone when the file is copied again. */
    let firstCopy: Savepoint | undefined;
    const ends: number[] = [];
    const copying = new Set<Promise<void>>();
    let refused: unknown = null;
    let copied = 0;
    let read = 0;
    const send = async (batch: Batch) => {
      while (copying.size >= atOnce) await Promise.race(copying);
      if (refused) return;
      const copy: Promise<void> = table
        .copy(target(spec!, table.stage), options(spec!), batch.pieces)
        .then(
          (n) => {
            copied += n;
          },
          (e) => {
            refused ??= e;
          },
        )
        .finally(() => copying.delete(copy));
      copying.add(copy);
    };
    try {
      for await (const batch of scannedBatches(plan, BATCH_BYTES[s.kind], scanner, ends, table.stage)) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        read += batch.bytes;
        if (!spec) {
          spec = current();
          await table.create(spec);
          if (!table.stage) firstCopy = await savepoint(s);
        }
        await send(batch);
        opts.onProgress?.({ rows: scanner.rows, bytes: read });
      }
    } finally {
      await Promise.all(copying);
    }
    if (refused && !isDbError(refused)) throw refused;
    columns = current();
    guessedColumns(plan.names, guesses, [], plan.delimiter, log);
    if (spec && !refused && sameTypes(spec, columns) && copied === scanner.rows) {
      await firstCopy?.release();
      return { rows: copied, columns };
    }
    // The guess changed (or the file was small): the table in its final types, the file once more,
    // in the load's transaction (the `_id` from the table's sequence, in the file's order).
    if (spec) {
      await firstCopy?.rollback();
      if (refused || !sameTypes(spec, columns)) log.push('the types guessed from the first rows changed further on: copied again');
    }
    await table.create(columns);
    copied = 0;
    try {
      for await (const batch of batchesAgain(plan, ends)) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        copied += await s.copyWith(target(columns, false), options(columns), batch);
      }
    } catch (e) {
      throw isDbError(e) ? copyFailure(e, copied) : e;
    }
    return { rows: copied, columns };
  });
  log.push(`${rows} row(s), ${columns.length} column(s): ${columns.map((c) => `${c.id} ${c.type}`).join(', ')}`);
  log.push(`plain UTF-8 CSV: the file went to COPY as it is${staged ? `, ${streams} streams at once` : ''}`);
  return { rows, columns, log };
}
