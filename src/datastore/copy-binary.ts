// Values of COPY's binary format read straight from JSON bytes (a datastore_upsert's records):
// each writer appends one field (its length, then its bytes) and says false, appending nothing,
// when the bytes are not certain to mean what the server would make of the same text.
import { COLON, MINUS } from '../json/bytes.ts';
import { Bin, type CopyWriter } from './copy-writer.ts';

/**
 * How a JSON number was written (the reader's scan): a short integer is what String(Number(x))
 * gives; a decimal without exponent is too when plainDecimal says so, and for a float8 column
 * always (the server rounds the text to the same double JavaScript would).
 */
export const PLAIN_INT = 1;
export const PLAIN_DECIMAL = 2;

/** Days from 1970-01-01 to a proleptic Gregorian date (civil calendar, any year). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** PostgreSQL's dates count from 2000-01-01. */
const PG_EPOCH_DAYS = daysFromCivil(2000, 1, 1);
/** Exact powers of ten (up to 1e22, the largest a double holds exactly). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * A plain number's value (JSON digits, optional fraction, no exponent) computed exactly as
 * Number() reads it: at most 15 significant digits make an exact integer, divided by an exact
 * power of ten (one correctly rounded division); NaN when it has more digits.
 */
function plainNumber(b: Buffer, from: number, to: number): number {
  let j = from;
  const neg = b[j] === MINUS;
  if (neg) j++;
  let m = 0;
  let digits = 0;
  let scale = -1;
  for (; j < to; j++) {
    const x = b[j];
    if (x === 0x2e) {
      scale = 0;
      continue;
    }
    m = m * 10 + (x - 0x30);
    if (m) digits++;
    if (scale >= 0) scale++;
  }
  if (digits > 15 || scale > 22) return Number.NaN;
  const v = scale > 0 ? m / POW10[scale] : m;
  return neg ? -v : v;
}

function monthDays(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** The digits b[from, to) as a number; -1 when any byte is not a digit. */
function digitsAt(b: Buffer, from: number, to: number): number {
  let n = 0;
  for (let j = from; j < to; j++) {
    const x = b[j] - 0x30;
    if (x < 0 || x > 9) return -1;
    n = n * 10 + x;
  }
  return n;
}

/** Days since 2000-01-01 of a YYYY-MM-DD at b[i] (years 1 to 9999), NaN when it is not one. */
function isoDate(b: Buffer, i: number): number {
  if (b[i + 4] !== MINUS || b[i + 7] !== MINUS) return NaN;
  const y = digitsAt(b, i, i + 4);
  const m = digitsAt(b, i + 5, i + 7);
  const d = digitsAt(b, i + 8, i + 10);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > monthDays(y, m)) return NaN;
  return daysFromCivil(y, m, d) - PG_EPOCH_DAYS;
}

const INT_RANGE: Record<number, number> = { [Bin.Int2]: 0x7fff, [Bin.Int4]: 0x7fffffff, [Bin.Int8]: Number.MAX_SAFE_INTEGER };

/** An integer of digits b[i, end), with an optional minus, as an int2, int4 or int8 field. */
export function writeBinaryInteger(out: CopyWriter, b: Buffer, i: number, end: number, bin: Bin): boolean {
  const neg = b[i] === MINUS;
  if (neg) i++;
  if (end - i < 1 || end - i > 15) return false;
  const digits = digitsAt(b, i, end);
  if (digits < 0) return false;
  const v = neg ? -digits : digits;
  if (v > INT_RANGE[bin] || v < -INT_RANGE[bin] - 1) return false;
  out.ensure(12);
  if (bin === Bin.Int2) {
    out.int32(2);
    out.int16(v);
  } else if (bin === Bin.Int4) {
    out.int32(4);
    out.int32(v);
  } else {
    const hi = Math.floor(v / 0x100000000);
    out.int32(8);
    out.int32(hi);
    out.uint32(v - hi * 0x100000000);
  }
  return true;
}

/**
 * A JSON number b[from, to) as a float8 field: its text is as sent or as JavaScript writes it,
 * and the server rounds either to the double JavaScript reads (-0 is written 0). `plain` is how it
 * was written (PLAIN_INT, PLAIN_DECIMAL or 0).
 */
export function writeBinaryFloat8(out: CopyWriter, b: Buffer, from: number, to: number, plain: number): boolean {
  let v = plain ? plainNumber(b, from, to) : Number.NaN;
  if (Number.isNaN(v)) v = Number(b.toString('latin1', from, to));
  // As sent, a decimal past a double's range is refused by the server too.
  if (!Number.isFinite(v) && plain === PLAIN_DECIMAL) return false;
  if (v === 0) {
    // As sent, a decimal too small for a double is refused by the server: its text says so.
    if (plain === PLAIN_DECIMAL) for (let j = from; j < to; j++) if (b[j] > 0x30 && b[j] <= 0x39) return false;
    v = 0;
  }
  out.ensure(12);
  out.int32(8);
  out.float64(v);
  return true;
}

/** A JSON string without escapes b[from, to) (quotes included) holding YYYY-MM-DD, as a date field. */
export function writeBinaryDate(out: CopyWriter, b: Buffer, from: number, to: number): boolean {
  if (to - from !== 12) return false;
  const days = isoDate(b, from + 1);
  if (Number.isNaN(days)) return false;
  out.ensure(8);
  out.int32(4);
  out.int32(days);
  return true;
}

/**
 * A JSON string without escapes b[from, to) (quotes included) as a timestamp field: YYYY-MM-DD,
 * then T or a space and HH:MM, :SS, .F to .FFFFFF; no zone (the server ignores it).
 */
export function writeBinaryTimestamp(out: CopyWriter, b: Buffer, from: number, to: number): boolean {
  const i = from + 1;
  const n = to - from - 2;
  const days = n >= 10 ? isoDate(b, i) : NaN;
  if (Number.isNaN(days)) return false;
  let seconds = days * 86400;
  let micros = 0;
  if (n > 10) {
    if ((b[i + 10] !== 0x54 && b[i + 10] !== 0x20) || n < 16 || b[i + 13] !== COLON) return false;
    const hh = digitsAt(b, i + 11, i + 13);
    const mm = digitsAt(b, i + 14, i + 16);
    let ss = 0;
    if (n > 16) {
      if (n < 19 || b[i + 16] !== COLON) return false;
      ss = digitsAt(b, i + 17, i + 19);
      if (n > 19) {
        if (n < 21 || n > 26 || b[i + 19] !== 0x2e) return false;
        const f = digitsAt(b, i + 20, i + n);
        if (f < 0) return false;
        micros = f * 10 ** (26 - n);
      }
    }
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59) return false;
    seconds += hh * 3600 + mm * 60 + ss;
  }
  // seconds * 1e6 + micros as two 32-bit words, exactly: 1e6 = 15625 * 2^6, and seconds * 15625 < 2^53.
  const p = seconds * 15625;
  let hi = Math.floor(p / 0x4000000);
  let lo = (p - hi * 0x4000000) * 64 + micros;
  if (lo >= 0x100000000) {
    hi++;
    lo -= 0x100000000;
  }
  out.ensure(12);
  out.int32(8);
  out.int32(hi);
  out.uint32(lo);
  return true;
}
