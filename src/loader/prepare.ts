// Pass one over a table file: finds the header, checks the column names, guesses each column's type
// from all its values, checks values against type overrides, and spools the rows as COPY text to a
// temporary file (so pass two only splits lines). Memory stays constant whatever the file size.
import fs from 'node:fs';
import { once } from 'node:events';
import { openTableSource, RestartError, SourceError, type TableSource } from './source.ts';
import { findHeaderRow } from './sniff.ts';
import { headerNames } from './header-names.ts';
import { ColumnGuess, overrideKind, readDate, plainNumber, type DateOrder, type GuessedType, type NumberFormat } from './types.ts';

export class LoadError extends Error {}

export type Conversion =
  | { kind: 'none' }
  | { kind: 'number'; format: NumberFormat }
  | { kind: 'date'; order: DateOrder; withTime: boolean };

export interface PreparedColumn {
  id: string;
  /** Column type for the DDL (guessed, or the type override). */
  type: string;
  guessed: GuessedType;
  override?: string;
  conversion: Conversion;
  /** Position of the column's cell in a spooled row. */
  cell: number;
  /** Why the loader made the column's name up (a blank or repeated header): the field's notes in the data dictionary. */
  note?: string;
}

export interface PreparedTable {
  columns: PreparedColumn[];
  /** Cells per spooled row (columns may drop blank ones). */
  width: number;
  spoolPath: string;
  rows: number;
  source: TableSource;
  log: string[];
}

export interface PrepareOptions {
  /** type_override of existing columns, by column id. */
  overrides: Map<string, string>;
  spoolPath: string;
  onProgress?: (p: { rows: number; bytes: number }) => void;
  signal?: AbortSignal;
}

export const HEADER_SAMPLE = 200;
export const MAX_COLUMNS = 1600; // PostgreSQL's limit on the columns of a table

/** A header cell as a column name: whitespace folded, no double quotes, no leading underscores, at most 63 bytes. */
export function columnName(cell: string): string {
  let name = cell.replace(/\s+/g, ' ').trim().replace(/"/g, '').replace(/^_+/, '').trim();
  while (Buffer.byteLength(name) > 63) name = name.slice(0, -1);
  return name.trimEnd();
}

const COPY_SPECIAL = /[\\\t\n\r]/;
export function copyEscape(s: string): string {
  if (!COPY_SPECIAL.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

export async function prepareTable(file: string, opts: PrepareOptions): Promise<PreparedTable> {
  const source = await openTableSource(file);
  for (let attempt = 0; ; attempt++) {
    try {
      return await preparePass(source, opts);
    } catch (e) {
      if (e instanceof RestartError && attempt === 0) continue;
      throw e;
    }
  }
}

async function preparePass(source: TableSource, opts: PrepareOptions): Promise<PreparedTable> {
  const log: string[] = [...source.notes];
  const out = fs.createWriteStream(opts.spoolPath, { highWaterMark: 1 << 20 });
  let bytes = 0;
  const records = source.records((n) => {
    bytes += n;
  });
  try {
    // The header: the first rows are read ahead to tell a title or notes from the header.
    const head: string[][] = [];
    let done = false;
    while (head.length < HEADER_SAMPLE) {
      const r = await records.next();
      if (r.done) {
        done = true;
        break;
      }
      head.push(...r.value);
    }
    if (!head.some((r) => r.some((c) => c.trim()))) throw new LoadError('the file has no rows: there is no header to make columns from');
    // Judged from the first HEADER_SAMPLE records exactly (the batches read may hold more), as the direct path does.
    const headerIndex = findHeaderRow(head.slice(0, HEADER_SAMPLE));
    const headerRow = head[headerIndex];
    if (headerIndex > 0) log.push(`${headerIndex} line(s) before the header skipped (title or notes)`);
    // Blank and repeated header cells get made-up names; a blank one's column is dropped if it has no values either.
    if (headerRow.length > MAX_COLUMNS)
      throw new LoadError(`the table has ${headerRow.length} columns; at most ${MAX_COLUMNS} are supported`);
    const header = headerNames(headerRow);
    const names = header.names;
    const width = names.length;
    const guesses = names.map(() => new ColumnGuess());
    const overrides = names.map((n) => (n ? opts.overrides.get(n) : undefined));
    const overrideKinds = overrides.map((t) => (t ? overrideKind(t) : null));
    const hasValues = names.map(() => false);
    let rowNo = headerIndex + 1; // file row (1-based) of the header
    let rows = 0;
    let skipped = 0;
    let pending: string[] = [];
    let pendingSize = 0;
    const flush = async () => {
      if (!pending.length) return;
      const ok = out.write(pending.join(''));
      pending = [];
      pendingSize = 0;
      if (!ok) await once(out, 'drain');
    };
    const takeRow = (rec: string[]) => {
      rowNo++;
      let filled = false;
      for (let i = 0; i < rec.length; i++)
        if (rec[i] !== '' && rec[i].trim() !== '') {
          filled = true;
          break;
        }
      if (!filled) {
        skipped++;
        return;
      }
      if (rec.length > width) {
        for (let i = width; i < rec.length; i++) {
          if (rec[i].trim())
            throw new LoadError(
              `row ${rowNo} has ${rec.length} values but the header has ${width} columns (value "${rec[i].slice(0, 40)}" in column ${i + 1} has no header)`,
            );
        }
      }
      let line = '';
      for (let i = 0; i < width; i++) {
        const v = i < rec.length ? rec[i] : '';
        if (i) line += '\t';
        if (v === '' || !v.trim()) {
          line += '\\N';
          continue;
        }
        hasValues[i] = true;
        guesses[i].add(v, rowNo);
        const ok = overrideKinds[i];
        if (ok && ok !== 'raw') {
          const fits =
            ok === 'number' ? ['plain', 'en', 'eu'].some((f) => plainNumber(v, f as NumberFormat) !== '') : readDate(v.trim()) !== null;
          if (!fits)
            throw new LoadError(
              `row ${rowNo}: "${v.slice(0, 60)}" in column "${names[i]}" is not a valid ${overrides[i]} (the type override of the data dictionary)`,
            );
        }
        line += copyEscape(v);
      }
      pending.push(line + '\n');
      pendingSize += line.length;
      rows++;
    };
    const takeBatch = async (batch: string[][]) => {
      for (const rec of batch) takeRow(rec);
      if (pendingSize > 1 << 20) {
        await flush();
        opts.onProgress?.({ rows, bytes });
        if (opts.signal?.aborted) throw opts.signal.reason;
      }
    };
    await takeBatch(head.slice(headerIndex + 1));
    if (!done) for await (const batch of { [Symbol.asyncIterator]: () => records }) await takeBatch(batch);
    await flush();
    out.end();
    await once(out, 'finish');
    opts.onProgress?.({ rows, bytes });
    if (source.merges) {
      const merged = (await source.merges()).filter((m) => m.top <= headerIndex + 1 && m.bottom >= headerIndex + 1);
      if (merged.length) {
        throw new LoadError(
          `merged header cells are not supported: ${merged.map((m) => m.ref).join(', ')} (unmerge them so that each column has its own header)`,
        );
      }
    }
    if (skipped) log.push(`${skipped} empty row(s) skipped`);
    const dropped = names.map((_, i) => (header.blank[i] && !hasValues[i] ? i + 1 : -1)).filter((i) => i > 0);
    if (dropped.length) log.push(`${dropped.length} empty column(s) without a header dropped (column ${dropped.join(', ')})`);
    const kept = names.map((n, i) => (dropped.includes(i + 1) ? '' : n));
    kept.forEach((n, i) => {
      if (n && header.notes[i]) log.push(header.notes[i]!);
    });
    const delimiter = source.delimiter ?? ',';
    const columns = guessedColumns(kept, guesses, overrides, delimiter, log);
    for (const c of columns) if (header.notes[c.cell]) c.note = header.notes[c.cell];
    if (!columns.length) throw new LoadError('the header row has no column names');
    log.push(`${rows} row(s), ${columns.length} column(s): ${columns.map((c) => `${c.id} ${c.type}`).join(', ')}`);
    return { columns, width, spoolPath: opts.spoolPath, rows, source, log };
  } catch (e) {
    out.destroy();
    await records.return(undefined).catch(() => undefined);
    if (e instanceof SourceError) throw new LoadError(e.message);
    throw e;
  }
}

/**
 * The columns of a table from what pass one learnt: the guessed type or the type override, and
 * the conversion its values need for COPY (notes go to the log). Columns without a name are left out.
 */
export function guessedColumns(
  names: string[],
  guesses: ColumnGuess[],
  overrides: (string | undefined)[],
  delimiter: string,
  log: string[],
): PreparedColumn[] {
  const overrideKinds = overrides.map((t) => (t ? overrideKind(t) : null));
  const columns: PreparedColumn[] = [];
  names.forEach((id, i) => {
    if (!id) return;
    const g = guesses[i];
    const guessed = g.type(delimiter);
    const override = overrides[i];
    let type: string = guessed;
    let conversion: Conversion = { kind: 'none' };
    if (override) {
      type = override;
      const k = overrideKinds[i];
      if (k === 'number') conversion = { kind: 'number', format: g.numberFormat(delimiter) ?? 'plain' };
      else if (k === 'date' || k === 'timestamp') conversion = { kind: 'date', order: g.dateOrder() ?? 'ymd', withTime: k === 'timestamp' };
      log.push(`column "${id}": ${override} (type override)`);
    } else {
      if (guessed === 'int4' || guessed === 'int8' || guessed === 'numeric') {
        const format = g.numberFormat(delimiter)!;
        if (format !== 'plain') {
          conversion = { kind: 'number', format };
          log.push(`column "${id}": numbers with ${format === 'en' ? 'thousands separators' : 'decimal commas'}`);
        }
      } else if (guessed === 'date' || guessed === 'timestamp') {
        if (!g.isoDates) conversion = { kind: 'date', order: g.dateOrder()!, withTime: guessed === 'timestamp' };
        if (g.dateOrder() === 'dmy') log.push(`column "${id}": day-first dates`);
      }
      if (g.contradiction) {
        log.push(
          `column "${id}": guessed ${g.contradiction.was} until row ${g.contradiction.row} ("${g.contradiction.value}"): loaded as text`,
        );
      }
    }
    columns.push({ id, type, guessed, override, conversion, cell: i });
  });
  return columns;
}
