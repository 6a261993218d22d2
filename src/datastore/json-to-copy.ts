// COPY text straight from the bytes of a JSON list of records (a large datastore_upsert): the
// common values (strings, numbers, true/false, null) go from request bytes to COPY bytes without
// becoming JavaScript objects; a nested value is parsed on its own and written by copyValue. The
// text is the same as copyValue gives for the parsed records, and malformed JSON is refused as
// JSON.parse would refuse it (the body's UTF-8 is checked before).
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  CR,
  LF,
  MINUS,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  TAB,
  isDigit,
  isSpace,
  jsonError,
} from '../json/bytes.ts';
import { ValidationError } from '../errors.ts';
import { PLAIN_DECIMAL, PLAIN_INT, writeBinaryDate, writeBinaryFloat8, writeBinaryInteger, writeBinaryTimestamp } from './copy-binary.ts';
import { Bin, CopyWriter } from './copy-writer.ts';
import { copyValue, type Kind } from './types.ts';

const N = 0x6e; // n
const T = 0x74; // t
const NULL_N = 0x4e; // N, of COPY's \N

const enum Token {
  Absent = 0,
  Null,
  True,
  False,
  Number,
  String,
  Nested,
}

function syntaxError(at: number): never {
  throw jsonError(new SyntaxError(`Unexpected token in JSON at position ${at}`));
}

export interface CopyColumn {
  id: string;
  kind: Kind;
  /** A float8 column (numbers without exponent go as written). */
  float8?: boolean;
  /** How its values go in COPY's binary format (binaryType; 0: they cannot). */
  bin?: Bin;
}

/**
 * Walks a JSON array of records (the bytes from `[` to `]`), one record at a time. The values of
 * the current record are kept as token spans by column; unknown keys are collected by name.
 */
export class JsonRecordReader {
  /** Number of the current record (0-based; -1 before the first). */
  index = -1;
  /** Keys of the current record that are no column (the same list, emptied for each record). */
  readonly unknown: string[] = [];
  /** Start and end (exclusive) of the current record in the bytes. */
  start = 0;
  end = 0;
  /** Whether the current element is an object (else it is some other JSON value). */
  isObject = true;
  /** Number of columns the current record has a value for. */
  count = 0;

  private pos: number;
  private readonly names: Buffer[];
  private readonly byName: Map<string, number>;
  private readonly kinds: Kind[];
  private readonly float8: Uint8Array;
  private readonly bins: Uint8Array;
  private readonly type: Uint8Array;
  private readonly from: Int32Array;
  private readonly to: Int32Array;
  /** Per column: 1 for a string with escapes; PLAIN_INT / PLAIN_DECIMAL for numbers. */
  private readonly flags: Uint8Array;
  private readonly stamp: Int32Array;
  /** Column of the k-th key of the previous record (keys usually come in the same order). */
  private readonly order: Int32Array;
  private done = false;

  constructor(
    private readonly bytes: Buffer,
    readonly columns: CopyColumn[],
  ) {
    this.names = columns.map((c) => Buffer.from(JSON.stringify(c.id)));
    this.byName = new Map(columns.map((c, i) => [c.id, i]));
    this.kinds = columns.map((c) => c.kind);
    this.float8 = Uint8Array.from(columns, (c) => (c.float8 ? 1 : 0));
    this.bins = Uint8Array.from(columns, (c) => c.bin ?? Bin.None);
    const n = columns.length;
    this.type = new Uint8Array(n);
    this.from = new Int32Array(n);
    this.to = new Int32Array(n);
    this.flags = new Uint8Array(n);
    this.stamp = new Int32Array(n).fill(-1);
    this.order = new Int32Array(n + 1).fill(-1);
    this.pos = this.space(0);
    if (bytes[this.pos] !== OPEN_BRACKET) syntaxError(this.pos);
    this.pos = this.space(this.pos + 1);
    if (bytes[this.pos] === CLOSE_BRACKET) this.finish(this.pos + 1);
  }

  /** Whether the current record has a value (possibly null) for column c. */
  has(c: number): boolean {
    return this.stamp[c] === this.index;
  }

  /** Whether the current record's value for column c is absent or null. */
  isNull(c: number): boolean {
    return this.stamp[c] !== this.index || this.type[c] === Token.Null;
  }

  /** The current record, parsed (for records that take the slow path). */
  value(): unknown {
    return JSON.parse(this.bytes.toString('utf8', this.start, this.end));
  }

  /** Reads the next record; false after the last. */
  next(): boolean {
    if (this.done) return false;
    const b = this.bytes;
    this.index++;
    if (this.unknown.length) this.unknown.length = 0;
    this.count = 0;
    this.start = this.pos;
    if (b[this.pos] === OPEN_BRACE) {
      this.isObject = true;
      this.readObject();
    } else {
      this.isObject = false;
      const end = b[this.pos] === QUOTE ? this.skipString(this.pos) : this.skipNested(this.pos);
      // A malformed value is a JSON error, a well-formed one a record that is no object.
      try {
        JSON.parse(b.toString('utf8', this.pos, end));
      } catch {
        syntaxError(this.pos);
      }
      this.pos = end;
    }
    this.end = this.pos;
    const p = this.space(this.pos);
    if (b[p] === COMMA) {
      this.pos = this.space(p + 1);
      if (this.pos >= b.length || b[this.pos] === CLOSE_BRACKET) syntaxError(this.pos);
    } else if (b[p] === CLOSE_BRACKET) {
      this.finish(p + 1);
    } else {
      syntaxError(p);
    }
    return true;
  }

  private finish(at: number): void {
    if (this.space(at) !== this.bytes.length) syntaxError(at);
    this.done = true;
  }

  private space(i: number): number {
    const b = this.bytes;
    while (i < b.length && isSpace(b[i])) i++;
    return i;
  }

  private readObject(): void {
    const b = this.bytes;
    let i = this.space(this.pos + 1);
    if (b[i] === CLOSE_BRACE) {
      this.pos = i + 1;
      return;
    }
    for (let k = 0; ; k++) {
      if (b[i] !== QUOTE) syntaxError(i);
      // Usually the key of the previous record at this place: its bytes (quotes included) match.
      const guess = k < this.order.length ? this.order[k] : -1;
      let c = guess >= 0 && this.matches(this.names[guess], i) ? guess : -2;
      let keyEnd: number;
      if (c >= 0) {
        keyEnd = i + this.names[c].length;
      } else {
        keyEnd = this.skipString(i);
        c = this.column(i, keyEnd, k);
      }
      i = this.space(keyEnd);
      if (b[i] !== COLON) syntaxError(i);
      i = this.space(i + 1);
      const end = this.readValue(i, c);
      i = this.space(end);
      if (b[i] === COMMA) {
        i = this.space(i + 1);
        continue;
      }
      if (b[i] !== CLOSE_BRACE) syntaxError(i);
      this.pos = i + 1;
      return;
    }
  }

  /** Whether the bytes at i are name (a key's JSON, quotes included: a match is that very key). */
  private matches(name: Buffer, i: number): boolean {
    const b = this.bytes;
    if (i + name.length > b.length) return false;
    for (let j = 0; j < name.length; j++) if (name[j] !== b[i + j]) return false;
    return true;
  }

  /** The column of the key at [from, to) (quotes included), -1 for an unknown key (collected). */
  private column(from: number, to: number, k: number): number {
    const b = this.bytes;
    const key = JSON.parse(b.toString('utf8', from, to)) as string;
    const c = this.byName.get(key);
    if (c === undefined) {
      this.unknown.push(key);
      return -1;
    }
    if (k < this.order.length) this.order[k] = c;
    return c;
  }

  /** Reads the value at i into column c (c < 0: checked only); returns its end. */
  private readValue(i: number, c: number): number {
    const b = this.bytes;
    const x = b[i];
    let type: Token;
    let end: number;
    let flags = 0;
    if (x === QUOTE) {
      type = Token.String;
      end = this.skipString(i);
      flags = this.lastEscaped;
    } else if (x === MINUS || isDigit(x)) {
      type = Token.Number;
      end = this.skipNumber(i);
      flags = this.lastPlain;
    } else if (x === N || x === T || x === 0x66) {
      const word = x === N ? 'null' : x === T ? 'true' : 'false';
      for (let j = 0; j < word.length; j++) if (b[i + j] !== word.charCodeAt(j)) syntaxError(i + j);
      type = x === N ? Token.Null : x === T ? Token.True : Token.False;
      end = i + word.length;
    } else if (x === OPEN_BRACE || x === OPEN_BRACKET) {
      type = Token.Nested;
      end = this.skipNested(i);
      // Checked now (a nested value of an unknown key would otherwise never be parsed).
      try {
        JSON.parse(b.toString('utf8', i, end));
      } catch {
        syntaxError(i);
      }
    } else {
      syntaxError(i);
    }
    if (c >= 0) {
      if (this.stamp[c] !== this.index) this.count++;
      this.stamp[c] = this.index;
      this.type[c] = type;
      this.from[c] = i;
      this.to[c] = end;
      this.flags[c] = flags;
    }
    return end;
  }

  private lastEscaped = 0;

  /** End of the string opening at i; checks its escapes and that it has no raw control character. */
  private skipString(i: number): number {
    const b = this.bytes;
    const n = b.length;
    let escaped = 0;
    for (let j = i + 1; j < n; j++) {
      const x = b[j];
      if (x === QUOTE) {
        this.lastEscaped = escaped;
        return j + 1;
      }
      if (x < 0x20) syntaxError(j);
      if (x === BACKSLASH) {
        escaped = 1;
        const e = b[++j];
        if (e === 0x75) {
          for (let h = 1; h <= 4; h++) if (!isHex(b[j + h])) syntaxError(j + h);
          j += 4;
        } else if (!(e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === N || e === 0x72 || e === T)) {
          syntaxError(j);
        }
      }
    }
    return syntaxError(n);
  }

  /** Set by skipNumber: PLAIN_INT for a short integer, PLAIN_DECIMAL without exponent, else 0. */
  private lastPlain = 0;

  /** End of the number at i (JSON's grammar). */
  private skipNumber(i: number): number {
    const b = this.bytes;
    let j = i;
    if (b[j] === MINUS) j++;
    const digits = j;
    if (b[j] === 0x30) j++;
    else if (isDigit(b[j])) while (isDigit(b[j])) j++;
    else syntaxError(j);
    // -0 (and -0.0) is written as 0 by JavaScript: never plain.
    const negZero = b[i] === MINUS && b[digits] === 0x30;
    this.lastPlain = !negZero && j - digits <= 15 ? PLAIN_INT : 0;
    if (b[j] === 0x2e) {
      j++;
      if (!isDigit(b[j])) syntaxError(j);
      while (isDigit(b[j])) j++;
      this.lastPlain = negZero ? 0 : PLAIN_DECIMAL;
    }
    if (b[j] === 0x65 || b[j] === 0x45) {
      j++;
      if (b[j] === 0x2b || b[j] === MINUS) j++;
      if (!isDigit(b[j])) syntaxError(j);
      while (isDigit(b[j])) j++;
      this.lastPlain = 0;
    }
    return j;
  }

  /** End of the value at i, counting brackets (its content is checked by JSON.parse). */
  private skipNested(i: number): number {
    const b = this.bytes;
    const first = b[i];
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      let j = i;
      while (j < b.length && b[j] !== COMMA && b[j] !== CLOSE_BRACKET && !isSpace(b[j])) j++;
      if (j === i) syntaxError(i);
      return j;
    }
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const x = b[j];
      if (x === QUOTE) {
        j = this.skipString(j) - 1;
      } else if (x === OPEN_BRACE || x === OPEN_BRACKET) {
        depth++;
      } else if (x === CLOSE_BRACE || x === CLOSE_BRACKET) {
        if (--depth === 0) return j + 1;
      }
    }
    return syntaxError(b.length);
  }

  /** Appends the current record's values for the given columns as one COPY text line. */
  writeLine(out: CopyWriter, cols: number[]): void {
    for (let k = 0; k < cols.length; k++) {
      if (k) out.byte(TAB);
      this.writeValue(out, cols[k]);
    }
    out.byte(LF);
  }

  /** Whether every one of these columns has a binary writing (binaryType). */
  binaryColumns(cols: number[]): boolean {
    return cols.every((c) => this.bins[c] !== Bin.None);
  }

  /**
   * Appends the current record as one row of COPY's binary format; false (nothing appended) when
   * a value's binary form is not certain to be what its text would be (it then goes as text).
   */
  writeBinaryLine(out: CopyWriter, cols: number[]): boolean {
    const pending = out.pending;
    out.ensure(2);
    out.int16(cols.length);
    for (let k = 0; k < cols.length; k++) {
      if (!this.writeBinaryValue(out, cols[k])) {
        // (ensure keeps the bytes since the last piece together: the line starts pending bytes after it)
        out.len = out.len - out.pending + pending;
        return false;
      }
    }
    return true;
  }

  private writeBinaryValue(out: CopyWriter, c: number): boolean {
    const b = this.bytes;
    const type = this.stamp[c] === this.index ? this.type[c] : Token.Absent;
    const bin = this.bins[c];
    const from = this.from[c];
    const to = this.to[c];
    if (type === Token.Absent || type === Token.Null || (type === Token.String && to - from === 2 && bin !== Bin.Text)) {
      out.ensure(4);
      out.int32(-1);
      return true;
    }
    switch (bin) {
      case Bin.Int2:
      case Bin.Int4:
      case Bin.Int8:
        // An integer as sent (a number, or a string of digits: the server reads both so).
        if (type === Token.String) return !this.flags[c] && writeBinaryInteger(out, b, from + 1, to - 1, bin);
        return type === Token.Number && this.flags[c] === PLAIN_INT && writeBinaryInteger(out, b, from, to, bin);
      case Bin.Float8:
        return type === Token.Number && writeBinaryFloat8(out, b, from, to, this.flags[c]);
      case Bin.Bool:
        if (type !== Token.True && type !== Token.False) return false;
        out.ensure(5);
        out.int32(1);
        out.buf[out.len++] = type === Token.True ? 1 : 0;
        return true;
      case Bin.Text: {
        if (type === Token.Nested) return false;
        out.ensure(4);
        // (the length's place, counted from the last piece: the pending bytes move if the buffer grows)
        const at = out.pending;
        out.len += 4;
        if (type === Token.String) {
          if (this.flags[c]) this.writeUnescaped(out, from + 1, to - 1, c);
          else {
            out.ensure(to - from);
            const buf = out.buf;
            let len = out.len;
            for (let j = from + 1; j < to - 1; j++) buf[len++] = b[j];
            out.len = len;
          }
        } else {
          // Numbers, true and false: their text has nothing COPY escapes.
          this.writeValue(out, c);
        }
        const lenAt = out.len - out.pending + at;
        out.int32At(lenAt, out.len - lenAt - 4);
        return true;
      }
      case Bin.Date:
        return type === Token.String && !this.flags[c] && writeBinaryDate(out, b, from, to);
      case Bin.Timestamp:
        return type === Token.String && !this.flags[c] && writeBinaryTimestamp(out, b, from, to);
      default:
        return false;
    }
  }

  /** A string with escapes, as its characters (binary text: nothing escaped for COPY). */
  private writeUnescaped(out: CopyWriter, from: number, to: number, c: number): void {
    const b = this.bytes;
    for (let j = from; j < to; j++) {
      const x = b[j];
      if (x !== BACKSLASH) {
        out.byte(x);
        continue;
      }
      const e = b[++j];
      switch (e) {
        case 0x62:
          out.byte(0x08);
          break;
        case 0x66:
          out.byte(0x0c);
          break;
        case N:
          out.byte(LF);
          break;
        case 0x72:
          out.byte(CR);
          break;
        case T:
          out.byte(TAB);
          break;
        case 0x75: {
          let code = parseInt(b.toString('latin1', j + 1, j + 5), 16);
          j += 4;
          if (code >= 0xd800 && code <= 0xdbff && b[j + 1] === BACKSLASH && b[j + 2] === 0x75) {
            const low = parseInt(b.toString('latin1', j + 3, j + 7), 16);
            if (low >= 0xdc00 && low <= 0xdfff) {
              code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
              j += 6;
            }
          }
          if (code === 0) this.nulError(c);
          if (code < 0x80) out.byte(code);
          else out.ascii(String.fromCodePoint(code));
          break;
        }
        default:
          // \" \\ \/
          out.byte(e);
      }
    }
  }

  private readonly scratch = new CopyWriter(256);

  /** The COPY text of column c's value (equal texts: equal values, for finding repeated keys). */
  copyText(c: number): string {
    this.scratch.len = 0;
    this.writeValue(this.scratch, c);
    return this.scratch.buf.toString('utf8', 0, this.scratch.len);
  }

  private writeValue(out: CopyWriter, c: number): void {
    const b = this.bytes;
    {
      const kind = this.kinds[c];
      const type = this.stamp[c] === this.index ? this.type[c] : Token.Absent;
      const from = this.from[c];
      const to = this.to[c];
      switch (type) {
        case Token.Absent:
        case Token.Null:
          out.byte(BACKSLASH);
          out.byte(NULL_N);
          break;
        case Token.String:
          if (kind === 'json' || kind === 'array') this.writeParsed(out, c);
          else if (to - from === 2) {
            if (kind !== 'text') {
              out.byte(BACKSLASH);
              out.byte(NULL_N);
            }
          } else if (this.flags[c]) this.writeEscaped(out, from + 1, to - 1, c);
          else {
            out.ensure(to - from);
            const buf = out.buf;
            let len = out.len;
            for (let j = from + 1; j < to - 1; j++) buf[len++] = b[j];
            out.len = len;
          }
          break;
        case Token.Number:
          if (kind === 'json') this.writeParsed(out, c);
          else if (
            this.flags[c] === PLAIN_INT ||
            (this.flags[c] === PLAIN_DECIMAL && (this.float8[c] === 1 || plainDecimal(b, from, to)))
          ) {
            out.ensure(to - from);
            const buf = out.buf;
            let len = out.len;
            for (let j = from; j < to; j++) buf[len++] = b[j];
            out.len = len;
          } else out.ascii(String(Number(b.toString('latin1', from, to))));
          break;
        case Token.True:
        case Token.False:
          if (kind === 'json') this.writeParsed(out, c);
          else out.ascii(type === Token.True ? 'true' : 'false');
          break;
        default:
          this.writeParsed(out, c);
      }
    }
  }

  private writeParsed(out: CopyWriter, c: number): void {
    const text = copyValue(JSON.parse(this.bytes.toString('utf8', this.from[c], this.to[c])), this.columns[c].kind);
    // In COPY text a NUL is a NUL byte, which the server refuses without naming the column.
    if (text.includes('\u0000')) this.nulError(c);
    out.ascii(text);
  }

  /** A NUL character (JSON \u0000): no text value can hold it. */
  private nulError(c: number): never {
    throw new ValidationError({
      records: [`invalid byte sequence for encoding "UTF8": 0x00 (field "${this.columns[c].id}")`],
      records_row: this.index,
    });
  }

  /** A string with escapes: JSON's escapes become the value's characters, COPY-escaped as copyValue does. */
  private writeEscaped(out: CopyWriter, from: number, to: number, c: number): void {
    const b = this.bytes;
    for (let j = from; j < to; j++) {
      const x = b[j];
      if (x !== BACKSLASH) {
        out.byte(x);
        continue;
      }
      const e = b[++j];
      switch (e) {
        case QUOTE:
          out.byte(QUOTE);
          break;
        case 0x2f:
          out.byte(0x2f);
          break;
        case BACKSLASH:
          out.byte(BACKSLASH);
          out.byte(BACKSLASH);
          break;
        case 0x62:
          out.byte(0x08);
          break;
        case 0x66:
          out.byte(0x0c);
          break;
        case N:
          out.byte(BACKSLASH);
          out.byte(N);
          break;
        case 0x72:
          out.byte(BACKSLASH);
          out.byte(0x72);
          break;
        case T:
          out.byte(BACKSLASH);
          out.byte(T);
          break;
        default: {
          // \uXXXX, with a following low surrogate when it is a high one
          let code = parseInt(b.toString('latin1', j + 1, j + 5), 16);
          j += 4;
          if (code >= 0xd800 && code <= 0xdbff && b[j + 1] === BACKSLASH && b[j + 2] === 0x75) {
            const low = parseInt(b.toString('latin1', j + 3, j + 7), 16);
            if (low >= 0xdc00 && low <= 0xdfff) {
              code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
              j += 6;
            }
          }
          if (code === BACKSLASH) {
            out.byte(BACKSLASH);
            out.byte(BACKSLASH);
          } else if (code === TAB) {
            out.byte(BACKSLASH);
            out.byte(T);
          } else if (code === LF) {
            out.byte(BACKSLASH);
            out.byte(N);
          } else if (code === CR) {
            out.byte(BACKSLASH);
            out.byte(0x72);
          } else if (code === 0) this.nulError(c);
          else out.ascii(String.fromCodePoint(code));
        }
      }
    }
  }
}

const isHex = (x: number) => (x >= 0x30 && x <= 0x39) || (x >= 0x41 && x <= 0x46) || (x >= 0x61 && x <= 0x66);

/**
 * Whether a decimal (no exponent, not -0: skipNumber's PLAIN_DECIMAL) is what String(Number(text))
 * gives back: no trailing zero in the fraction, at most 15 significant digits (they survive a
 * double), and not below 1e-6 (JavaScript writes those with an exponent).
 */
function plainDecimal(b: Buffer, from: number, to: number): boolean {
  if (b[to - 1] === 0x30) return false;
  const intStart = b[from] === MINUS ? from + 1 : from;
  const dot = b.indexOf(0x2e, intStart);
  const zeroInt = dot - intStart === 1 && b[intStart] === 0x30;
  let k = dot + 1;
  if (zeroInt) while (b[k] === 0x30) k++;
  const leadingZeros = zeroInt ? k - dot - 1 : 0;
  const significant = (zeroInt ? 0 : dot - intStart) + (to - k);
  return significant <= 15 && leadingZeros <= 5;
}
