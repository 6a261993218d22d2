// Text encodings of uploaded tables: detection from the first bytes (BOM, UTF-16 zero bytes, UTF-8
// validity, CJK multi-byte encodings via chardet, else the Western single-byte code page that reads
// most plausibly) and streaming decoding to strings. A file that is not text fails with a message.
import fs from 'node:fs';
import chardet from 'chardet';
import iconv from 'iconv-lite';

export class DecodeError extends Error {}

export interface DetectedEncoding {
  /** iconv-lite / WHATWG name: utf-8, utf-16le, utf-16be, windows-1252, cp850, big5, shift_jis, ... */
  encoding: string;
  /** Bytes of a byte order mark to skip. */
  bomLength: number;
}

export const SAMPLE_BYTES = 256 * 1024;

const MULTI_BYTE: Record<string, string> = {
  Big5: 'big5',
  Shift_JIS: 'shift_jis',
  'EUC-JP': 'euc-jp',
  'EUC-KR': 'euc-kr',
  GB18030: 'gb18030',
  'ISO-2022-JP': 'iso-2022-jp',
};
/** Single-byte encodings chardet may name for non-Western text, used when it is confident. */
const OTHER_SINGLE_BYTE: Record<string, string> = {
  'windows-1250': 'windows-1250',
  'windows-1251': 'windows-1251',
  'windows-1253': 'windows-1253',
  'windows-1254': 'windows-1254',
  'windows-1255': 'windows-1255',
  'windows-1256': 'windows-1256',
  'KOI8-R': 'koi8-r',
  'ISO-8859-5': 'iso-8859-5',
  'ISO-8859-7': 'iso-8859-7',
};

/** Whether the bytes are UTF-8 (a sequence cut by the end of the sample is allowed). */
function isUtf8(sample: Buffer, complete: boolean): boolean {
  let end = sample.length;
  if (!complete) {
    // Step back over a last sequence that may be cut.
    let i = end - 1;
    let back = 0;
    while (i >= 0 && back < 3 && (sample[i] & 0xc0) === 0x80) {
      i--;
      back++;
    }
    if (i >= 0 && sample[i] >= 0xc0) end = i;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

function utf16ByZeros(sample: Buffer): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(sample.length, 4096) & ~1;
  if (n < 4) return null;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (sample[i] === 0) evenZeros++;
    if (sample[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.3 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.3 && oddZeros < pairs * 0.05) return 'utf-16be';
  return null;
}

const LETTER = /\p{L}/u;
const DIGIT = /\d/;
const CURRENCY = /[£€¥¢$]/;
const COMMON_SYMBOL = /[’‘“”–—…•°±§©®«»·¼½¾¹²³µ¶ºª¿¡×÷]/;

/**
 * How plausible a decoding of the non-ASCII bytes is: letters inside words, currency signs next to
 * numbers and common punctuation count for it; box drawing, controls and stray symbols against.
 */
export function plausibility(text: string): number {
  let score = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c.charCodeAt(0) < 0x80) continue;
    const prev = text[i - 1] ?? ' ';
    const next = text[i + 1] ?? ' ';
    if (LETTER.test(c)) score += LETTER.test(prev) || LETTER.test(next) ? 2 : 0;
    else if (CURRENCY.test(c)) score += DIGIT.test(next) || DIGIT.test(prev) || /[\s()]/.test(prev + next) ? 2 : 1;
    else if (COMMON_SYMBOL.test(c) || c === '\u00a0') score += 1;
    else score -= 3;
  }
  return score;
}

/** Detects the encoding from the first bytes of a file (complete: the sample is the whole file). */
export function detectEncoding(sample: Buffer, complete = false): DetectedEncoding {
  if (sample[0] === 0xef && sample[1] === 0xbb && sample[2] === 0xbf) return { encoding: 'utf-8', bomLength: 3 };
  if (sample[0] === 0xff && sample[1] === 0xfe) return { encoding: 'utf-16le', bomLength: 2 };
  if (sample[0] === 0xfe && sample[1] === 0xff) return { encoding: 'utf-16be', bomLength: 2 };
  const utf16 = utf16ByZeros(sample);
  if (utf16) return { encoding: utf16, bomLength: 0 };
  if (isUtf8(sample, complete)) return { encoding: 'utf-8', bomLength: 0 };
  return { encoding: guessLegacyEncoding(sample), bomLength: 0 };
}

/** The sample up to its last line end (no character cut in half). */
const wholeLines = (b: Buffer) => {
  const end = b.lastIndexOf(10);
  return end > 0 ? b.subarray(0, end + 1) : b;
};

/** For bytes that are not UTF-8: a CJK encoding chardet is sure of, else the best Western code page. */
export function guessLegacyEncoding(sample: Buffer): string {
  const guesses = chardet.analyse(sample);
  // A CJK encoding when chardet is sure, or ranks it first and it decodes the sample cleanly.
  for (const [i, g] of guesses.slice(0, 2).entries()) {
    const enc = MULTI_BYTE[g.name];
    if (enc && (g.confidence >= 50 || (i === 0 && !iconv.decode(wholeLines(sample), enc).includes('\ufffd')))) return enc;
  }
  const top = guesses[0];
  if (top && OTHER_SINGLE_BYTE[top.name] && top.confidence >= 60) return OTHER_SINGLE_BYTE[top.name];
  // Western files: windows-1252 (a superset of latin-1's printable range) or DOS cp850.
  const cp1252 = plausibility(iconv.decode(sample, 'windows-1252'));
  const cp850 = plausibility(iconv.decode(sample, 'cp850'));
  return cp850 > cp1252 ? 'cp850' : 'windows-1252';
}

/** Reads the first bytes of a file. */
export async function readSample(file: string, bytes = SAMPLE_BYTES): Promise<{ sample: Buffer; complete: boolean }> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    const size = (await fh.stat()).size;
    return { sample: buf.subarray(0, bytesRead), complete: bytesRead >= size };
  } finally {
    await fh.close();
  }
}

const NATIVE = new Set(['utf-8', 'utf-16le', 'utf-16be']);

/**
 * The file's text as strings, in pieces. UTF-8 is decoded strictly: bytes that are not UTF-8 throw
 * a DecodeError naming the offset (the caller can retry with a legacy encoding).
 */
export async function* decodeFile(file: string, enc: DetectedEncoding, onBytes?: (n: number) => void): AsyncGenerator<string> {
  const stream = fs.createReadStream(file, { start: enc.bomLength, highWaterMark: 1 << 20 });
  let offset = enc.bomLength;
  if (NATIVE.has(enc.encoding)) {
    const decoder = new TextDecoder(enc.encoding, { fatal: true, ignoreBOM: true });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        stream.destroy();
        throw new DecodeError(`the file is not valid ${enc.encoding.toUpperCase()} (near byte ${offset})`);
      }
      offset += chunk.length;
      onBytes?.(chunk.length);
      if (text) yield text;
    }
    let rest: string;
    try {
      rest = decoder.decode();
    } catch {
      throw new DecodeError(`the file is not valid ${enc.encoding.toUpperCase()}: it ends inside a character`);
    }
    if (rest) yield rest;
    return;
  }
  const decoder = iconv.getDecoder(enc.encoding);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onBytes?.(chunk.length);
    const text = decoder.write(chunk);
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

/** Fails when decoded text does not look like text (binary data, a wrong encoding). */
export function checkLooksLikeText(text: string, encoding: string): void {
  if (!text.length) return;
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13 && c !== 12) || c === 0xfffd || (c >= 0x80 && c < 0xa0)) bad++;
  }
  if (bad > Math.max(2, text.length * 0.01)) {
    throw new DecodeError(
      `the file could not be decoded as text: read as ${encoding} it has ${bad} control or undecodable characters in its first ${text.length}; is it a table (CSV, TSV, XLSX)?`,
    );
  }
}
