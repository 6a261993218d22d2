// A large JSON request keeps its big lists as bytes: `records` of a 10,000-row datastore_upsert
// goes from the request bytes to COPY text while the database takes in the rows before it (no
// JavaScript object per record), and is echoed in the answer as the very bytes that were sent (no
// second serialisation). Everything else in the body is parsed as usual.
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE, isSpace, jsonError } from './bytes.ts';

/**
 * A JSON array as the bytes of the request (valid UTF-8, checked by whoever made it), not parsed:
 * its reader parses it (the data store writes records straight from the bytes); a malformed
 * array is a Bad Request error when it is read.
 */
export class JsonArrayText {
  /** @param bytes the array, `[` to `]` */
  constructor(readonly bytes: Buffer) {}

  /** The elements, parsed. */
  toArray(): unknown[] {
    try {
      return JSON.parse(this.bytes.toString('utf8'));
    } catch (e) {
      throw jsonError(e);
    }
  }

  /** In JSON.stringify: the bytes as sent while an answer is written by stringifyWithRaw, else the parsed list. */
  toJSON(): unknown {
    if (!collecting) return this.toArray();
    collecting.push(this.bytes);
    return `${MARKER}${collecting.length - 1}`;
  }
}

// --- splicing the bytes into an answer ----------------------------------------------------------

const MARKER = `svc-raw-json:${Math.random().toString(36).slice(2)}${Date.now().toString(36)}:`;
let collecting: Buffer[] | null = null;

/**
 * JSON.stringify, where a JsonArrayText is written as its own bytes: a string when there is none,
 * else a Buffer (the answer echoing 10,000 records costs a copy, not a serialisation).
 */
export function stringifyWithRaw(value: unknown): string | Buffer {
  collecting = [];
  let text: string;
  let raws: Buffer[];
  try {
    text = JSON.stringify(value);
    raws = collecting;
  } finally {
    collecting = null;
  }
  if (!raws.length) return text;
  const parts: Buffer[] = [];
  let at = 0;
  for (let k = 0; k < raws.length; k++) {
    const token = `"${MARKER}${k}"`;
    const i = text.indexOf(token, at);
    parts.push(Buffer.from(text.slice(at, i)), raws[k]);
    at = i + token.length;
  }
  parts.push(Buffer.from(text.slice(at)));
  return Buffer.concat(parts);
}

// --- reading a body -------------------------------------------------------------------------------

/** Index just past the string that opens at i (a quote), or -1. */
function skipString(buf: Buffer, i: number): number {
  const n = buf.length;
  for (let j = i + 1; j < n; j++) {
    const b = buf[j];
    if (b === BACKSLASH) j++;
    else if (b === QUOTE) return j + 1;
  }
  return -1;
}

/** Index just past the value that starts at i, or -1. */
function skipValue(buf: Buffer, i: number): number {
  const n = buf.length;
  const first = buf[i];
  if (first === QUOTE) return skipString(buf, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let j = i;
    while (j < n) {
      const b = buf[j];
      if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || isSpace(b)) break;
      j++;
    }
    return j > i ? j : -1;
  }
  // The hot loop of a large body: strings are skipped in an inner loop, outside them only
  // brackets count (the content is checked when it is parsed).
  let depth = 0;
  let j = i;
  while (j < n) {
    const b = buf[j++];
    if (b === QUOTE) {
      for (;;) {
        if (j >= n) return -1;
        const c = buf[j++];
        if (c === QUOTE) break;
        if (c === BACKSLASH) j++;
      }
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      depth++;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      if (--depth === 0) return j;
    }
  }
  return -1;
}

function skipSpace(buf: Buffer, i: number): number {
  while (i < buf.length && isSpace(buf[i])) i++;
  return i;
}

const isScalarByte = (b: number) =>
  (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7a) || b === 0x2b || b === 0x2d || b === 0x2e || b === 0x45;

function skipSpaceBack(buf: Buffer, j: number): number {
  while (j >= 0 && isSpace(buf[j])) j--;
  return j;
}

/** Start of the string whose closing quote is at j: the first quote before it that no backslash escapes. */
function stringStartBack(buf: Buffer, j: number, min: number): number {
  for (let k = j - 1; k > min; k--) {
    if (buf[k] !== QUOTE) continue;
    let n = 0;
    while (buf[k - 1 - n] === BACKSLASH) n++;
    if (n % 2 === 0) return k;
  }
  return -1;
}

/**
 * The quick guess at where a list that starts at `start` ends: read from the end of the body, past
 * members with plain values (`"method": "insert"`), to the first `]`. Wrong only when a member
 * with a list value follows the list too, which reading the list shows (see parseWithLazyArrays).
 * null when the end of the body is anything else.
 */
function listEndFromTail(buf: Buffer, start: number): { end: number; tail: { key: string; member: string }[] } | null {
  let j = skipSpaceBack(buf, buf.length - 1);
  if (buf[j] !== CLOSE_BRACE) return null;
  const tail: { key: string; member: string }[] = [];
  for (;;) {
    j = skipSpaceBack(buf, j - 1);
    if (j <= start) return null;
    if (buf[j] === CLOSE_BRACKET) return { end: j + 1, tail: tail.reverse() };
    const valueEnd = j + 1;
    if (buf[j] === QUOTE) {
      j = stringStartBack(buf, j, start);
    } else if (isScalarByte(buf[j])) {
      while (j > start && isScalarByte(buf[j - 1])) j--;
    } else {
      return null;
    }
    j = skipSpaceBack(buf, j - 1);
    if (j <= start || buf[j] !== COLON) return null;
    j = skipSpaceBack(buf, j - 1);
    if (buf[j] !== QUOTE) return null;
    const keyStart = stringStartBack(buf, j, start);
    if (keyStart < 0) return null;
    tail.push({ key: buf.toString('utf8', keyStart, j + 1), member: buf.toString('utf8', keyStart, valueEnd) });
    j = skipSpaceBack(buf, keyStart - 1);
    if (buf[j] !== COMMA) return null;
  }
}

export interface LazyBody {
  data: Record<string, unknown>;
  /** Whether a lazy list's end was guessed (quick): reading it shows whether the guess was right. */
  guessed: boolean;
}

/**
 * Reads a JSON object body whose members named in `lazyKeys` are lists: those stay bytes
 * (JsonArrayText), the rest is parsed. With `quick`, the end of such a list is found from the end
 * of the body instead of by reading the list through (the list is read anyway when it is used);
 * a guess that was wrong makes the list malformed, and the caller then reads the body again
 * without `quick`. null when the body is not such an object or anything is unusual (a repeated
 * key, a malformed member): the caller then parses the whole body as usual, which also gives the
 * usual error.
 */
export function parseWithLazyArrays(buf: Buffer, lazyKeys: readonly string[], quick = false): LazyBody | null {
  let i = skipSpace(buf, 0);
  if (buf[i] !== OPEN_BRACE) return null;
  i = skipSpace(buf, i + 1);
  const eager: string[] = [];
  const lazy = new Map<string, JsonArrayText>();
  const seen = new Set<string>();
  let guessed = false;
  if (buf[i] === CLOSE_BRACE) return null;
  const keyOf = (text: string) => {
    try {
      const key = JSON.parse(text) as string;
      if (seen.has(key)) return null;
      seen.add(key);
      return key;
    } catch {
      return null;
    }
  };
  for (;;) {
    if (buf[i] !== QUOTE) return null;
    const keyStart = i;
    const keyEnd = skipString(buf, i);
    if (keyEnd < 0) return null;
    const key = keyOf(buf.toString('utf8', keyStart, keyEnd));
    if (key === null) return null;
    i = skipSpace(buf, keyEnd);
    if (buf[i] !== COLON) return null;
    i = skipSpace(buf, i + 1);
    const valueStart = i;
    if (lazyKeys.includes(key) && buf[i] === OPEN_BRACKET) {
      const guess = quick ? listEndFromTail(buf, valueStart) : null;
      if (guess) {
        for (const { key: text, member } of guess.tail) {
          if (keyOf(text) === null) return null;
          eager.push(member);
        }
        lazy.set(key, new JsonArrayText(buf.subarray(valueStart, guess.end)));
        guessed = true;
        break;
      }
      const end = skipValue(buf, i);
      if (end < 0 || buf[end - 1] !== CLOSE_BRACKET) return null;
      lazy.set(key, new JsonArrayText(buf.subarray(valueStart, end)));
      i = end;
    } else {
      const end = skipValue(buf, i);
      if (end < 0) return null;
      eager.push(buf.toString('utf8', keyStart, end));
      i = end;
    }
    i = skipSpace(buf, i);
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1);
      continue;
    }
    if (buf[i] !== CLOSE_BRACE) return null;
    if (skipSpace(buf, i + 1) !== buf.length) return null;
    break;
  }
  if (!lazy.size) return null;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(`{${eager.join(',')}}`);
  } catch {
    return null;
  }
  for (const [k, v] of lazy) data[k] = v;
  return { data, guessed };
}

/** Whether two readings of a body give the same parameters (lazy lists: the same bytes). */
export function sameReading(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => {
    const x = a[k];
    const y = b[k];
    if (x instanceof JsonArrayText || y instanceof JsonArrayText) {
      return (
        x instanceof JsonArrayText &&
        y instanceof JsonArrayText &&
        x.bytes.byteOffset === y.bytes.byteOffset &&
        x.bytes.length === y.bytes.length
      );
    }
    return k in b && JSON.stringify(x) === JSON.stringify(y);
  });
}
