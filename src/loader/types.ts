// Column types guessed from every value of a column (one streaming pass): int, numeric, date,
// timestamp, else text (booleans stay text, as in CKAN). Numbers may use thousands separators or
// decimal commas and dates may be day-first, when the whole column agrees. A value that contradicts
// a guess turns the column to text (noted for the log), never fails the load. The same parsers
// convert values for COPY once the type is known, and check values against a type override.

export type GuessedType = 'int4' | 'int8' | 'numeric' | 'date' | 'timestamp' | 'text';
export type NumberFormat = 'plain' | 'en' | 'eu';
export type DateOrder = 'ymd' | 'dmy' | 'mdy';

const PLAIN = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const PLAIN_INT = /^[+-]?\d+$/;
const EN = /^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/;
const EU = /^[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?$/;
const LEADING_ZERO = /^[+-]?0\d/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?$/;

const MONTHS: Record<string, number> = {
  jan: 1,
  january: 1,
  feb: 2,
  february: 2,
  mar: 3,
  march: 3,
  apr: 4,
  april: 4,
  may: 5,
  jun: 6,
  june: 6,
  jul: 7,
  july: 7,
  aug: 8,
  august: 8,
  sep: 9,
  sept: 9,
  september: 9,
  oct: 10,
  october: 10,
  nov: 11,
  november: 11,
  dec: 12,
  december: 12,
};
const NUMERIC_DATE = /^(\d{1,4})([-/.])(\d{1,2})\2(\d{1,4})$/;
const NAMED_DMY = /^(\d{1,2})[ -]([A-Za-z]{3,9})\.?[ -,]+(\d{4})$/;
const NAMED_MDY = /^([A-Za-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?\s*([AaPp][Mm])?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

const MONTH_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1 || y < 1 || d > MONTH_DAYS[m]) return false;
  return m !== 2 || d < 29 || (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0));
}

/** Parsed date parts for each order a value can be read in (bit set) with its time, or null. */
interface DateReading {
  /** Bits: 1 = ymd, 2 = dmy, 4 = mdy, 8 = named month (order-free). */
  orders: number;
  parts: [number, number, number][];
  time: string | null;
  /** Time zone offset in minutes when given. */
  offset: number | null;
}

const ORDER_BIT: Record<DateOrder, number> = { ymd: 1, dmy: 2, mdy: 4 };

function readTime(s: string): { time: string; offset: number | null } | null {
  const m = TIME.exec(s);
  if (!m) return null;
  let h = Number(m[1]);
  const min = Number(m[2]);
  const sec = m[3] ? Number(m[3]) : 0;
  if (m[5]) {
    if (h < 1 || h > 12) return null;
    const pm = m[5].toLowerCase() === 'pm';
    h = (h % 12) + (pm ? 12 : 0);
  }
  if (h > 23 || min > 59 || sec > 59) return null;
  let offset: number | null = null;
  if (m[6]) {
    if (m[6] === 'Z') offset = 0;
    else {
      const z = m[6].replace(':', '');
      offset = (z[0] === '-' ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5) || 0));
    }
  }
  return { time: `${pad(h)}:${pad(min)}:${pad(sec)}${m[4] ?? ''}`, offset };
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function readDate(value: string): DateReading | null {
  // The common case first: a plain ISO date.
  const iso = value.length === 10 ? ISO_DAY.exec(value) : null;
  if (iso) {
    const y = Number(iso[1]);
    const m = Number(iso[2]);
    const d = Number(iso[3]);
    return validDate(y, m, d) ? { orders: 1, parts: [[y, m, d]], time: null, offset: null } : null;
  }
  let s = value;
  let time: string | null = null;
  let offset: number | null = null;
  const split = /^(\S+(?: \S+,?)?(?: \d{4})?)[T ](\d{1,2}:\d{2}.*)$/.exec(s);
  if (split && /\d/.test(split[1])) {
    const t = readTime(split[2]);
    if (!t) return null;
    s = split[1];
    time = t.time;
    offset = t.offset;
  }
  let m = NUMERIC_DATE.exec(s);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[3]);
    const c = Number(m[4]);
    const r: DateReading = { orders: 0, parts: [], time, offset };
    if (m[1].length === 4 && m[4].length <= 2 && validDate(a, b, c)) {
      r.orders |= 1;
      r.parts[0] = [a, b, c];
    }
    if (m[4].length === 4 && m[1].length <= 2) {
      if (validDate(c, b, a)) {
        r.orders |= 2;
        r.parts[1] = [c, b, a];
      }
      if (validDate(c, a, b)) {
        r.orders |= 4;
        r.parts[2] = [c, a, b];
      }
    }
    return r.orders ? r : null;
  }
  m = NAMED_DMY.exec(s);
  if (m) {
    const mon = MONTHS[m[2].toLowerCase()];
    const y = Number(m[3]);
    const d = Number(m[1]);
    return mon && validDate(y, mon, d) ? { orders: 8, parts: [[y, mon, d]], time, offset } : null;
  }
  m = NAMED_MDY.exec(s);
  if (m) {
    const mon = MONTHS[m[1].toLowerCase()];
    const y = Number(m[3]);
    const d = Number(m[2]);
    return mon && validDate(y, mon, d) ? { orders: 8, parts: [[y, mon, d]], time, offset } : null;
  }
  return null;
}

/** A date value as ISO text in the given order ('' when it cannot be read so). */
export function isoDate(value: string, order: DateOrder, withTime: boolean): string {
  const r = readDate(value.trim());
  if (!r) return '';
  const p = r.orders & 8 ? r.parts[0] : r.orders & ORDER_BIT[order] ? r.parts[order === 'ymd' ? 0 : order === 'dmy' ? 1 : 2] : null;
  if (!p) return '';
  let date = `${pad(p[0], 4)}-${pad(p[1])}-${pad(p[2])}`;
  if (!withTime) return date;
  let time = r.time ?? '00:00:00';
  if (r.offset) {
    const t = new Date(`${date}T${time}Z`);
    t.setUTCMinutes(t.getUTCMinutes() - r.offset);
    const iso = t.toISOString();
    date = iso.slice(0, 10);
    time = iso.slice(11, 19) + (r.time?.includes('.') ? r.time.slice(r.time.indexOf('.')) : '');
  }
  return `${date} ${time}`;
}

/** A number in the given format as plain text for PostgreSQL ('' when it is not one). */
export function plainNumber(value: string, format: NumberFormat): string {
  const s = value.trim();
  if (format === 'plain') return PLAIN.test(s) ? s : '';
  if (format === 'en') return EN.test(s) || PLAIN.test(s) ? s.replace(/,/g, '') : '';
  return EU.test(s) ? s.replace(/\./g, '').replace(',', '.') : '';
}

export interface Contradiction {
  row: number;
  value: string;
  was: string;
}

/** Everything learnt about one column in the guessing pass. */
export class ColumnGuess {
  nonEmpty = 0;
  private plain = true;
  private plainInt = true;
  private en = true;
  private enInt = true;
  private eu = true;
  private euInt = true;
  private maxDigits = 0;
  private dateOrders = 1 | 2 | 4;
  private hasTime = false;
  private dotDates = false;
  /** Every date is already ISO (PostgreSQL reads it as written: no conversion needed). */
  isoDates = true;
  /** The first value that turned a column with earlier typed values to text. */
  contradiction: Contradiction | null = null;

  /** Whether values can still change the guess (a text column only counts them). */
  alive(): boolean {
    return this.plain || this.en || this.eu || this.dateOrders !== 0;
  }

  // Shortcuts for the byte scanner of the direct CSV path (csv-bytes.ts): each does what add()
  // would do with such a value, and returns false when the column's state needs add() itself.

  /** A value that cannot change the guess any more (the column is text). */
  addSettled(): boolean {
    if (this.alive()) return false;
    this.nonEmpty++;
    return true;
  }

  /** An integer without a leading zero (digits: how many), in a column of plain numbers. */
  addPlainInteger(digits: number): boolean {
    if (!this.nonEmpty || !this.plain || this.dateOrders) return false;
    this.nonEmpty++;
    if (digits > this.maxDigits) this.maxDigits = digits;
    return true;
  }

  /** A decimal d.d without a leading zero nor exponent, in a column of plain numbers that are not thousands-dotted. */
  addPlainDecimal(digits: number): boolean {
    if (!this.nonEmpty || !this.plain || this.eu || this.dateOrders) return false;
    this.nonEmpty++;
    this.plainInt = false;
    if (this.en) this.enInt = false;
    if (digits > this.maxDigits) this.maxDigits = digits;
    return true;
  }

  /** A valid ISO date (withTime: and a valid hh:mm:ss time) in a column of ISO dates read year first. */
  addIsoDate(withTime: boolean): boolean {
    if (!this.nonEmpty || this.plain || this.en || this.eu || this.dateOrders !== 1 || !this.isoDates) return false;
    this.nonEmpty++;
    if (withTime) this.hasTime = true;
    return true;
  }

  private bestSoFar(): string {
    if (this.plain) return this.plainInt ? 'int' : 'numeric';
    if (this.en || this.eu) return 'numeric';
    return this.hasTime ? 'timestamp' : 'date';
  }

  add(raw: string, row: number): void {
    const v = raw.trim();
    if (!v) return;
    this.nonEmpty++;
    if (!this.alive()) return;
    const was = this.nonEmpty > 1 ? this.bestSoFar() : '';
    if (this.plain || this.en || this.eu) {
      if (LEADING_ZERO.test(v)) {
        this.plain = this.en = this.eu = false;
      } else {
        let digits = 0;
        for (let k = 0; k < v.length; k++) {
          const ch = v.charCodeAt(k);
          if (ch >= 48 && ch <= 57) digits++;
        }
        if (this.plain && !PLAIN.test(v)) this.plain = false;
        else if (this.plain && !PLAIN_INT.test(v)) this.plainInt = false;
        if (this.en && !EN.test(v) && !PLAIN_INT.test(v) && !(PLAIN.test(v) && !/[eE]/.test(v))) this.en = false;
        else if (this.en && v.includes('.')) this.enInt = false;
        if (this.eu && !EU.test(v)) this.eu = false;
        else if (this.eu && v.includes(',')) this.euInt = false;
        if (digits > this.maxDigits) this.maxDigits = digits;
      }
    }
    if (this.dateOrders) {
      const r = readDate(v);
      if (!r) this.dateOrders = 0;
      else {
        // Named months fit any order; numeric dates keep the orders they can be read in.
        if (!(r.orders & 8)) this.dateOrders &= r.orders;
        if (r.time) this.hasTime = true;
        if (this.isoDates && !ISO_DATE.test(v)) this.isoDates = false;
        if (/^\d{1,2}\.\d{1,2}\.\d{4}/.test(v)) this.dotDates = true;
      }
    }
    if (!this.alive() && was && !this.contradiction)
      this.contradiction = { row, value: raw.length > 60 ? raw.slice(0, 57) + '...' : raw, was };
  }

  /** The number format a numeric column was read in (separatorHint: the file's delimiter). */
  numberFormat(delimiter = ','): NumberFormat | null {
    if (this.plain) return 'plain';
    if (this.en && this.eu) return delimiter === ';' ? 'eu' : 'en';
    if (this.en) return 'en';
    if (this.eu) return 'eu';
    return null;
  }

  dateOrder(): DateOrder | null {
    const o = this.dateOrders;
    if (!o) return null;
    if (o & 1) return 'ymd';
    if (o & 2 && o & 4) return this.dotDates ? 'dmy' : 'mdy';
    return o & 2 ? 'dmy' : 'mdy';
  }

  /** The guessed type (all-empty columns are text). */
  type(delimiter = ','): GuessedType {
    if (!this.nonEmpty) return 'text';
    const fmt = this.numberFormat(delimiter);
    if (fmt) {
      const isInt = fmt === 'plain' ? this.plainInt : fmt === 'en' ? this.enInt : this.euInt;
      if (!isInt) return 'numeric';
      return this.maxDigits <= 9 ? 'int4' : this.maxDigits <= 18 ? 'int8' : 'numeric';
    }
    if (this.dateOrder()) return this.hasTime ? 'timestamp' : 'date';
    return 'text';
  }
}

/** Kinds of type override the loader converts itself; others go to PostgreSQL as written. */
export function overrideKind(pgType: string): 'number' | 'date' | 'timestamp' | 'raw' {
  const t = pgType.toLowerCase().replace(/\(.*$/, '').trim();
  if (
    [
      'int',
      'int2',
      'int4',
      'int8',
      'integer',
      'bigint',
      'smallint',
      'numeric',
      'decimal',
      'float',
      'float4',
      'float8',
      'real',
      'double precision',
    ].includes(t)
  )
    return 'number';
  if (t === 'date') return 'date';
  if (t === 'timestamp' || t === 'timestamptz' || t === 'timestamp without time zone') return 'timestamp';
  return 'raw';
}
