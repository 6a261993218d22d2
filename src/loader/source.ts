// The rows of a table file, whatever it is: delimited text in any supported encoding, or the first
// worksheet of a spreadsheet (xlsx/xlsm here; xls and ods in sheet-book.ts; formulas as their
// values, dates as dates). Rows come as lists of strings so one pipeline guesses types and writes
// COPY data for both.
import iconv from 'iconv-lite';
import {
  DecodeError,
  checkLooksLikeText,
  decodeFile,
  detectEncoding,
  guessLegacyEncoding,
  readSample,
  type DetectedEncoding,
} from './decode.ts';
import { sniffDelimiter } from './sniff.ts';
import { CsvTokenizer } from './csv.ts';

export class SourceError extends Error {}

export type SourceKind = 'text' | 'xlsx' | 'xls' | 'ods';

export interface TableSource {
  kind: SourceKind;
  /** Text files: how they are read. */
  encoding?: string;
  delimiter?: string;
  /** Records in file order, in batches (a record is one row; rows keep their file row number by position). */
  records(onBytes?: (n: number) => void): AsyncGenerator<string[][]>;
  /**
   * Text files: the first `count` records (fewer when the sample holds fewer) of the sample already
   * read, as records() reads them: for deciding from the first rows without reading on.
   */
  headRecords?: (count: number) => string[][];
  /** Text files: the first bytes read to decide (all of them when `complete`) and the BOM's length. */
  sample?: { bytes: Buffer; complete: boolean; bomLength: number };
  /** Spreadsheets: the merged cell ranges of the sheet read (after records() ended). */
  merges?: () => Promise<{ top: number; left: number; bottom: number; right: number; ref: string }[]>;
  /** Notes for the log (the sheet read, the encoding found). */
  notes: string[];
}

export function kindOf(sample: Buffer): SourceKind {
  if (sample[0] === 0xd0 && sample[1] === 0xcf && sample[2] === 0x11 && sample[3] === 0xe0) return 'xls';
  if (sample[0] === 0x50 && sample[1] === 0x4b && sample[2] === 0x03 && sample[3] === 0x04) {
    return sample.subarray(30, 100).toString('latin1').includes('opendocument.spreadsheet') ? 'ods' : 'xlsx';
  }
  return 'text';
}

export async function openTableSource(file: string): Promise<TableSource> {
  const { sample, complete } = await readSample(file);
  const kind = kindOf(sample);
  if (kind === 'xlsx' || kind === 'ods') {
    // A zip: its entries tell (an .ods may not store its mimetype first).
    const names = new Set((await openZip(file).catch(() => ({ files: [] as { path: string }[] }))).files.map((f) => f.path));
    if (names.has('content.xml') && !names.has('xl/workbook.xml')) return (await import('./sheet-book.ts')).bookSource(file, 'ods');
    return xlsxSource(file);
  }
  if (kind === 'xls') return (await import('./sheet-book.ts')).bookSource(file, kind);
  return textSource(file, sample, complete);
}

// --- delimited text -------------------------------------------------------------------------

function textSource(file: string, sample: Buffer, complete: boolean): TableSource {
  let enc: DetectedEncoding = detectEncoding(sample, complete);
  const decodeSample = (e: DetectedEncoding) => {
    const body = sample.subarray(e.bomLength);
    return e.encoding.startsWith('utf-') ? new TextDecoder(e.encoding).decode(body) : iconv.decode(body, e.encoding);
  };
  let text = decodeSample(enc);
  checkLooksLikeText(text, enc.encoding);
  const delimiter = sniffDelimiter(text, complete);
  const notes = [
    `encoding ${enc.encoding}${enc.bomLength ? ' (with BOM)' : ''}, delimiter ${delimiter === '\t' ? 'tab' : `"${delimiter}"`}`,
  ];
  const source: TableSource = {
    kind: 'text',
    encoding: enc.encoding,
    delimiter,
    notes,
    sample: { bytes: sample, complete, bomLength: enc.bomLength },
    headRecords(count) {
      // From its first 64 KB when they hold that many records (most files), else from all of it.
      if (text.length > 1 << 16) {
        const rows = new CsvTokenizer(delimiter).push(text.slice(0, 1 << 16));
        if (rows.length >= count) return rows.slice(0, count);
      }
      const tokenizer = new CsvTokenizer(delimiter);
      const rows = tokenizer.push(text);
      if (complete) rows.push(...tokenizer.end());
      return rows.slice(0, count);
    },
    async *records(onBytes) {
      for (let attempt = 0; ; attempt++) {
        let yielded = false;
        try {
          const tokenizer = new CsvTokenizer(delimiter);
          for await (const piece of decodeFile(file, enc, onBytes)) {
            const batch = tokenizer.push(piece);
            if (batch.length) {
              yielded = true;
              yield batch;
            }
          }
          const last = tokenizer.end();
          if (last.length) yield last;
          return;
        } catch (e) {
          // UTF-8 at the start, something else later: read the file again as a legacy encoding.
          if (e instanceof DecodeError && enc.encoding === 'utf-8' && attempt === 0) {
            const legacy = guessLegacyEncoding(sample);
            notes.push(`the file is not UTF-8 after all (${e.message}): read as ${legacy}`);
            enc = { encoding: legacy, bomLength: 0 };
            source.encoding = legacy;
            text = decodeSample(enc);
            if (yielded) throw new RestartError();
            continue;
          }
          if (e instanceof DecodeError) throw new SourceError(e.message);
          if (e instanceof Error && /Quote Not Closed/i.test(e.message)) {
            throw new SourceError(`the file is not valid CSV: ${e.message}`);
          }
          throw e;
        }
      }
    },
  };
  return source;
}

/** Thrown when the encoding changed after rows were produced: the caller starts its pass again. */
export class RestartError extends Error {
  constructor() {
    super('the encoding changed while reading: read again');
  }
}

// --- spreadsheets ---------------------------------------------------------------------------

const pad = (n: number) => String(n).padStart(2, '0');

/** A cell value as text: formulas as their result, dates as ISO dates (with the time when not midnight). */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) return '';
    const date = `${v.getUTCFullYear()}-${pad(v.getUTCMonth() + 1)}-${pad(v.getUTCDate())}`;
    const h = v.getUTCHours();
    const m = v.getUTCMinutes();
    const s = v.getUTCSeconds();
    return h || m || s ? `${date} ${pad(h)}:${pad(m)}:${pad(s)}` : date;
  }
  if (typeof v === 'object') {
    const o = v as Record<string, any>;
    if ('result' in o || 'formula' in o || 'sharedFormula' in o) return cellText(o.result);
    if (Array.isArray(o.richText)) return o.richText.map((r: { text: string }) => r.text).join('');
    if ('text' in o) return cellText(o.text);
    if ('error' in o) return '';
  }
  return String(v);
}

function decodeRef(ref: string): { row: number; col: number } {
  const m = /^([A-Z]+)(\d+)$/.exec(ref.replace(/\$/g, ''))!;
  let col = 0;
  for (const ch of m[1]) col = col * 26 + (ch.charCodeAt(0) - 64);
  return { row: Number(m[2]), col };
}

// exceljs and unzipper are loaded when a spreadsheet is read (not at every start of the CLI).
const openZip = async (file: string) => (await import('unzipper')).Open.file(file);

async function zipText(file: string, path: string): Promise<string | null> {
  const zip = await openZip(file);
  const entry = zip.files.find((f) => f.path === path);
  if (!entry) return null;
  const parts: Buffer[] = [];
  for await (const c of entry.stream() as AsyncIterable<Buffer>) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}

/** The zip path of the workbook's first sheet (workbook.xml order, through its relationships). */
async function firstSheetPath(file: string): Promise<string | null> {
  const wb = await zipText(file, 'xl/workbook.xml');
  const rels = await zipText(file, 'xl/_rels/workbook.xml.rels');
  if (!wb || !rels) return null;
  const rid = /<(?:\w+:)?sheet\b[^>]*\br:id="([^"]+)"/.exec(wb)?.[1];
  if (!rid) return null;
  for (const m of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    if (!m[0].includes(`Id="${rid}"`)) continue;
    const target = /Target="([^"]+)"/.exec(m[0])?.[1];
    if (!target) return null;
    return target.startsWith('/') ? target.slice(1) : `xl/${target}`;
  }
  return null;
}

function xlsxSource(file: string): TableSource {
  let sheetPath: string | null = null;
  const notes: string[] = [];
  return {
    kind: 'xlsx',
    notes,
    async *records() {
      const ExcelJS = (await import('exceljs')).default;
      const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, {
        sharedStrings: 'cache',
        styles: 'cache',
        hyperlinks: 'ignore',
        worksheets: 'emit',
        entries: 'ignore',
      } as any);
      try {
        const first = await firstSheetPath(file);
        for await (const ws of reader as AsyncIterable<any>) {
          const path = `xl/worksheets/sheet${ws.id}.xml`;
          // Worksheets come in the order of the zip, not of the workbook: skip all but the first.
          if (first && path !== first) {
            for await (const _row of ws as AsyncIterable<unknown>) {
              /* skipped */
            }
            continue;
          }
          sheetPath = path;
          notes.push(`first worksheet${ws.name ? ` "${ws.name}"` : ''} (other sheets are not loaded)`);
          let next = 1;
          for await (const row of ws as AsyncIterable<any>) {
            // Rows missing from the file are empty rows.
            for (; next < row.number; next++) yield [[]];
            next = row.number + 1;
            const values: unknown[] = row.values ?? [];
            const out: string[] = [];
            for (let i = 1; i < values.length; i++) out.push(cellText(values[i]));
            yield [out];
          }
          break;
        }
      } catch (e) {
        throw new SourceError(`the spreadsheet could not be read: ${(e as Error).message}`);
      }
    },
    async merges() {
      if (!sheetPath) return [];
      const zip = await openZip(file);
      const entry = zip.files.find((f) => f.path === sheetPath);
      if (!entry) return [];
      const found: { top: number; left: number; bottom: number; right: number; ref: string }[] = [];
      let tail = '';
      for await (const chunk of entry.stream() as AsyncIterable<Buffer>) {
        const text = tail + chunk.toString('utf8');
        const re = /<mergeCell ref="([A-Z]+\d+):([A-Z]+\d+)"/g;
        let m: RegExpExecArray | null;
        let last = 0;
        while ((m = re.exec(text))) {
          const a = decodeRef(m[1]);
          const b = decodeRef(m[2]);
          found.push({ top: a.row, left: a.col, bottom: b.row, right: b.col, ref: `${m[1]}:${m[2]}` });
          last = re.lastIndex;
        }
        tail = text.slice(Math.max(last, text.length - 200));
      }
      return found;
    },
  };
}
