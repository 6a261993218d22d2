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

function digitsAt(b: Buffer, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = b[i];
    if (!isDigit(c)) return -1;
    v = v * 10 + c - D0;
  }
  return v;
}

/** Whether b[s, e) is an ISO date (10 bytes) or an ISO date and hh:mm:ss time (19 bytes), valid. */
function isoDateKind(b: Buffer, s: number, e: number): 'date' | 'timestamp' | null {
  const n = e - s;
  if (n !== 10 && n !== 19) return null;
  if (b[s + 4] !== MINUS || b[s + 7] !== MINUS) return null;
  const y = digitsAt(b, s, 4);
  const m = digitsAt(b, s + 5, 2);
  const d = digitsAt(b, s + 8, 2);
  if (y < 0 || m < 0 || d < 0 || !validDate(y, m, d)) return null;
  if (n === 10) return 'date';
  const sep = b[s + 10];
  if ((sep !== 0x54 && sep !== 0x20) || b[s + 13] !== 0x3a || b[s + 16] !== 0x3a) return null;
  const h = digitsAt(b, s + 11, 2);
  const mi = digitsAt(b, s + 14, 2);
  const se = digitsAt(b, s + 17, 2);
  return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 && se <= 59 ? 'timestamp' : null;
}

export class CsvByteScanner {
  /** Data records read (the header is not one). */
  rows = 0;
  /** Line end of the file, from the header: PostgreSQL wants one kind throughout. */
  private eol: '\n' | '\r\n' | '\r' | null = null;
  private readonly delimiter: number;
  /** Per byte: 0 inside an unquoted value, 1 where it ends (delimiter, CR, LF), 2 refused there (quote, NUL). */
  private readonly stops = new Uint8Array(256);

  constructor(
    delimiter: string,
    private readonly guesses: ColumnGuess[],
    /** File row (1-based) of the header. */
    private readonly headerRow = 1,
  ) {
    this.delimiter = delimiter.charCodeAt(0);
    for (const c of [this.delimiter, LF, CR]) this.stops[c] = 1;
    for (const c of [QUOTE, 0]) this.stops[c] = 2;
  }

  /**
   * Reads the header record at the start of buf; returns its cells and the bytes it takes (with its
   * line end), or null when buf does not hold all of it yet.
   */
  header(buf: Buffer, final: boolean): { cells: string[]; end: number } | null {
    const cells: string[] = [];
    const end = this.records(
      buf,
      final,
      (s, e, _quoted, escaped) => {
        cells.push(this.text(buf, s, e, escaped));
        return true;
      },
      1,
    );
    if (end === 0 && !final) return null;
    if (!cells.length) throw new NotDirect('no header');
    return { cells, end };
  }

  /**
   * Reads the whole records of buf (all of it when final); returns the bytes they take. The offset
   * where each record starts goes to starts when given.
   */
  scan(buf: Buffer, final: boolean, starts?: number[]): number {
    const end = this.records(buf, final, (s, e, _quoted, escaped, col) => this.value(buf, s, e, escaped, col), undefined, starts);
    if (!isUtf8(buf.subarray(0, end))) throw new NotDirect('not UTF-8');
    return end;
  }

  private text(buf: Buffer, s: number, e: number, escaped: boolean): string {
    const t = buf.toString('utf8', s, e);
    return escaped ? t.replaceAll('""', '"') : t;
  }

  /**
   * The record loop. onField gets each field's bytes (without its quotes) and says whether it has
   * a value; data records must be as wide as the header and have a value (the general path skips
   * empty rows).
   */
  private records(
    buf: Buffer,
    final: boolean,
    onField: (s: number, e: number, quoted: boolean, escaped: boolean, col: number) => boolean,
    limit = Number.POSITIVE_INFINITY,
    starts?: number[],
  ): number {
    const n = buf.length;
    const d = this.delimiter;
    const stops = this.stops;
    const width = this.guesses.length;
    const isHeader = limit === 1;
    let pos = 0;
    let taken = 0;
    while (pos < n && taken < limit) {
      const recStart = pos;
      let i = pos;
      let col = 0;
      let filled = false;
      for (;;) {
        let s: number;
        let e: number;
        let quoted = false;
        let escaped = false;
        if (i < n && buf[i] === QUOTE) {
          quoted = true;
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
          while (i < n && stops[buf[i]] === 0) i++;
          if (i < n && stops[buf[i]] === 2) throw new NotDirect(buf[i] === QUOTE ? 'a quote inside an unquoted value' : 'a NUL byte');
          e = i;
          if (i >= n && !final) return recStart;
        }
        if (!isHeader && col >= width) throw new NotDirect(`a row wider than the header (row ${this.headerRow + this.rows + 1})`);
        if (onField(s, e, quoted, escaped, col)) filled = true;
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
      taken++;
      pos = i;
    }
    return pos;
  }

  /** One data value: blank ones are refused (the general path makes them null), the rest guessed. */
  private value(buf: Buffer, s: number, e: number, escaped: boolean, col: number): boolean {
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
      if (g.isoDateColumn()) {
        const iso = isoDateKind(buf, s, e);
        if (iso && g.addIsoDate(iso === 'timestamp')) return true;
      }
      let k = s;
      if (buf[k] === MINUS) k++;
      const intStart = k;
      while (k < e && isDigit(buf[k])) k++;
      const intDigits = k - intStart;
      if (intDigits && (intDigits === 1 || buf[intStart] !== D0)) {
        if (k === e && g.addPlainInteger(intDigits)) return true;
        if (buf[k] === DOT && k + 1 < e) {
          const fracStart = k + 1;
          let f = fracStart;
          while (f < e && isDigit(buf[f])) f++;
          if (f === e && g.addPlainDecimal(intDigits + (e - fracStart))) return true;
        }
      }
      const iso = isoDateKind(buf, s, e);
      if (iso && g.addIsoDate(iso === 'timestamp')) return true;
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
  let extra = 0;
  for (let i = 0, n = first, width = String(n).length, next = 10 ** width; i < starts.length; i++, n++) {
    if (n >= next) {
      width++;
      next *= 10;
    }
    extra += width + 1;
  }
  const out = Buffer.allocUnsafe(buf.length + extra);
  const digits = new Uint8Array(16);
  let o = 0;
  for (let i = 0; i < starts.length; i++) {
    let n = first + i;
    let k = 0;
    do {
      digits[k++] = D0 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
    while (k > 0) out[o++] = digits[--k];
    out[o++] = d;
    o += buf.copy(out, o, starts[i], i + 1 < starts.length ? starts[i + 1] : buf.length);
  }
  return out;
}
