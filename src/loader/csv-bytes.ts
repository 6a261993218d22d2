// The byte scanner of the direct CSV path (direct.ts): reads UTF-8 CSV bytes record by record
// without making strings of most values, guesses column types with the same ColumnGuess as the
// general path, and checks that PostgreSQL's COPY (FORMAT csv, FORCE_NULL on every column) reads
// each record exactly as the general path would. Anything else stops it with NotDirect, and the
// general path (prepare.ts, load.ts) loads the file instead.
import { isUtf8 } from 'node:buffer';
import { type ColumnGuess, validDate } from './types.ts';

/** The file cannot go to COPY as it is (the reason is for the log). */
export class NotDirect extends Error {}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const MINUS = 0x2d;
const DOT = 0x2e;
const D0 = 0x30;
const D9 = 0x39;

const isDigit = (c: number) => c >= D0 && c <= D9;
const isAsciiSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);

// Byte classes of an unquoted value (CsvByteScanner.classes), in the order the field loop tests them.
const DIGIT = 0;
const OTHER = 1;
const END = 2;
const REFUSED = 3;

/** The two-digit number at b[i], or -1. */
function twoDigits(b: Buffer, i: number): number {
  const hi = b[i] - D0;
  const lo = b[i + 1] - D0;
  return hi >= 0 && hi <= 9 && lo >= 0 && lo <= 9 ? hi * 10 + lo : -1;
}

const ISO_NONE = 0;
const ISO_DATE = 1;
const ISO_TIMESTAMP = 2;

/** Whether b[s, e) is an ISO date (10 bytes) or an ISO date and hh:mm:ss time (19 bytes), valid. */
function isoDateKind(b: Buffer, s: number, e: number): number {
  const n = e - s;
  if ((n !== 10 && n !== 19) || b[s + 4] !== MINUS || b[s + 7] !== MINUS) return ISO_NONE;
  const century = twoDigits(b, s);
  const year = twoDigits(b, s + 2);
  const m = twoDigits(b, s + 5);
  const d = twoDigits(b, s + 8);
  if (century < 0 || year < 0 || m < 0 || d < 0 || !validDate(century * 100 + year, m, d)) return ISO_NONE;
  if (n === 10) return ISO_DATE;
  const sep = b[s + 10];
  if ((sep !== 0x54 && sep !== 0x20) || b[s + 13] !== 0x3a || b[s + 16] !== 0x3a) return ISO_NONE;
  const h = twoDigits(b, s + 11);
  const mi = twoDigits(b, s + 14);
  const se = twoDigits(b, s + 17);
  return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 && se <= 59 ? ISO_TIMESTAMP : ISO_NONE;
}

export class CsvByteScanner {
  /** Data records read (the header is not one). */
  rows = 0;
  /** Line end of the file, from the header: PostgreSQL wants one kind throughout. */
  private eol: '\n' | '\r\n' | '\r' | null = null;
  private readonly delimiter: number;
  /** Per byte, in an unquoted value: DIGIT, OTHER, END (delimiter, CR, LF) or REFUSED (quote, NUL). */
  private readonly classes = new Uint8Array(256).fill(OTHER);

  constructor(
    delimiter: string,
    private readonly guesses: ColumnGuess[],
    /** File row (1-based) of the header. */
    private readonly headerRow = 1,
  ) {
    this.delimiter = delimiter.charCodeAt(0);
    for (let c = D0; c <= D9; c++) this.classes[c] = DIGIT;
    for (const c of [this.delimiter, LF, CR]) this.classes[c] = END;
    for (const c of [QUOTE, 0]) this.classes[c] = REFUSED;
  }

  /**
   * Reads the header record at the start of buf; returns its cells and the bytes it takes (with its
   * line end), or null when buf does not hold all of it yet.
   */
  header(buf: Buffer, final: boolean): { cells: string[]; end: number } | null {
    const cells: string[] = [];
    const end = this.records(buf, final, cells);
    if (end === 0 && !final) return null;
    if (!cells.length) throw new NotDirect('no header');
    return { cells, end };
  }

  /**
   * Reads the whole records of buf (all of it when final); returns the bytes they take. The offset
   * where each record starts goes to starts when given.
   */
  scan(buf: Buffer, final: boolean, starts?: number[]): number {
    const end = this.records(buf, final, null, starts);
    if (!isUtf8(buf.subarray(0, end))) throw new NotDirect('not UTF-8');
    return end;
  }

  private text(buf: Buffer, s: number, e: number, escaped: boolean): string {
    const t = buf.toString('utf8', s, e);
    return escaped ? t.replaceAll('""', '"') : t;
  }

  /**
   * The record loop: the header record's cells go to header (one record is read); otherwise each
   * field goes to value(), and data records must be as wide as the header and have a value (the
   * general path skips empty rows).
   */
  private records(buf: Buffer, final: boolean, header: string[] | null, starts?: number[]): number {
    const n = buf.length;
    const d = this.delimiter;
    const classes = this.classes;
    const width = this.guesses.length;
    const isHeader = header !== null;
    let pos = 0;
    while (pos < n) {
      const recStart = pos;
      let i = pos;
      let col = 0;
      let filled = false;
      for (;;) {
        let s: number;
        let e: number;
        // Where the leading digits of an unquoted value (after a minus) end: -1 when not known.
        let digitsEnd = -1;
        let escaped = false;
        if (i < n && buf[i] === QUOTE) {
          s = ++i;
          for (;;) {
            const q = buf.indexOf(QUOTE, i);
            if (q < 0 || q + 1 >= n) {
              if (!final) return recStart;
              if (q < 0) throw new NotDirect('a quoted value is not closed');
              i = q + 1;
              e = q;
              break;
            }
            if (buf[q + 1] === QUOTE) {
              escaped = true;
              i = q + 2;
              continue;
            }
            e = q;
            i = q + 1;
            break;
          }
          if (i < n) {
            const c = buf[i];
            if (c !== d && c !== LF && c !== CR) throw new NotDirect('text after a closing quote');
          }
        } else {
          s = i;
          if (i < n && buf[i] === MINUS) i++;
          while (i < n && classes[buf[i]] === DIGIT) i++;
          digitsEnd = i;
          while (i < n && classes[buf[i]] <= OTHER) i++;
          if (i < n && classes[buf[i]] === REFUSED)
            throw new NotDirect(buf[i] === QUOTE ? 'a quote inside an unquoted value' : 'a NUL byte');
          e = i;
          if (i >= n && !final) return recStart;
        }
        if (!isHeader && col >= width) throw new NotDirect(`a row wider than the header (row ${this.headerRow + this.rows + 1})`);
        if (isHeader) header.push(this.text(buf, s, e, escaped));
        else if (this.value(buf, s, e, escaped, col, digitsEnd)) filled = true;
        col++;
        if (i >= n) break;
        const c = buf[i];
        if (c === d) {
          i++;
          continue;
        }
        // The line end, the same kind as the header's.
        let eol: '\n' | '\r\n' | '\r';
        if (c === LF) eol = '\n';
        else if (i + 1 < n) eol = buf[i + 1] === LF ? '\r\n' : '\r';
        else if (!final) return recStart;
        else eol = '\r';
        if (this.eol === null) this.eol = eol;
        else if (eol !== this.eol) throw new NotDirect('mixed line ends');
        i += eol.length;
        break;
      }
      if (!isHeader) {
        if (col !== width) throw new NotDirect(`a row narrower than the header (row ${this.headerRow + this.rows + 1})`);
        if (!filled) throw new NotDirect(`an empty row (row ${this.headerRow + this.rows + 1})`);
        this.rows++;
        starts?.push(recStart);
      }
      pos = i;
      if (isHeader) break;
    }
    return pos;
  }

  /**
   * One data value: blank ones are refused (the general path makes them null), the rest guessed.
   * digitsEnd: where its leading digits (after a minus) end, -1 when the field loop did not say.
   */
  private value(buf: Buffer, s: number, e: number, escaped: boolean, col: number, digitsEnd: number): boolean {
    if (s === e) return false; // null (FORCE_NULL makes "" null too)
    const first = buf[s];
    if (isAsciiSpace(first) || first >= 0x80) {
      let blank = true;
      for (let k = s; k < e; k++) {
        const c = buf[k];
        if (!isAsciiSpace(c)) {
          blank = c >= 0x80 ? !buf.toString('utf8', s, e).trim() : false;
          break;
        }
      }
      if (blank) throw new NotDirect('a value of blanks');
    }
    const g = this.guesses[col];
    if (g.addSettled()) return true;
    if (!escaped) {
      // Integers and decimals without a leading zero, ISO dates and timestamps: without a string.
      const intStart = first === MINUS ? s + 1 : s;
      let k = digitsEnd;
      if (k < 0) {
        k = intStart;
        while (k < e && isDigit(buf[k])) k++;
      }
      const intDigits = k - intStart;
      if (intDigits === 4 && k === s + 4) {
        const iso = isoDateKind(buf, s, e);
        if (iso !== ISO_NONE && g.addIsoDate(iso === ISO_TIMESTAMP)) return true;
      }
      if (intDigits && (intDigits === 1 || buf[intStart] !== D0)) {
        if (k === e && g.addPlainInteger(intDigits)) return true;
        if (buf[k] === DOT && k + 1 < e) {
          const fracStart = k + 1;
          let f = fracStart;
          while (f < e && isDigit(buf[f])) f++;
          if (f === e && g.addPlainDecimal(intDigits + (e - fracStart))) return true;
        }
      }
    }
    g.add(this.text(buf, s, e, escaped), this.headerRow + this.rows + 1);
    return true;
  }
}

/**
 * The records of buf (starting at the offsets in starts) each behind its number and the delimiter,
 * numbered from first: the `_id` column in the file's order whichever connection copies them.
 */
export function numberRecords(buf: Buffer, starts: number[], first: number, delimiter: string): Buffer {
  const d = delimiter.charCodeAt(0);
  const count = starts.length;
  let extra = 0;
  for (let i = 0, n = first, width = String(n).length, next = 10 ** width; i < count; i++, n++) {
    if (n >= next) {
      width++;
      next *= 10;
    }
    extra += width + 1;
  }
  // The records are moved down within one buffer (copyWithin: no view made per record), the
  // number's digits counted up in place.
  const out = Buffer.allocUnsafe(buf.length + extra);
  buf.copy(out, extra);
  let digits = Buffer.from(String(first), 'latin1');
  let width = digits.length;
  let o = 0;
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < width; k++) out[o++] = digits[k];
    out[o++] = d;
    const s = starts[i] + extra;
    const e = (i + 1 < count ? starts[i + 1] : buf.length) + extra;
    out.copyWithin(o, s, e);
    o += e - s;
    let k = width - 1;
    while (k >= 0 && digits[k] === D9) digits[k--] = D0;
    if (k >= 0) digits[k]++;
    else if (i + 1 < count) {
      digits = Buffer.concat([Buffer.of(0x31), digits]);
      width++;
    }
  }
  return out;
}
