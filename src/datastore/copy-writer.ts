// The bytes handed to COPY FROM STDIN: a buffer written in pieces, and the frame of COPY's binary
// format (header, trailer, which column types go in binary).

/**
 * A growing byte buffer for COPY text, handed out in pieces: a piece is a view of the bytes
 * written since the one before, and stays valid (later bytes go after it, or to a new buffer
 * that takes over only the unfinished part), so pieces cost no copy and no allocation each.
 */
export class CopyWriter {
  buf: Buffer;
  len = 0;
  private start = 0;

  /** The same bytes, for writing numbers (DataView's setters are cheaper than Buffer's writeInt32BE). */
  private view: DataView;

  constructor(size = 1 << 16) {
    this.buf = Buffer.allocUnsafe(size);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** Bytes written since the last piece. */
  get pending(): number {
    return this.len - this.start;
  }

  ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const pending = this.len - this.start;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, pending + n));
    this.buf.copy(next, 0, this.start, this.len);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.length);
    this.len = pending;
    this.start = 0;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  ascii(s: string): void {
    this.ensure(s.length * 3);
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  // Big-endian numbers at the end (room made by ensure() beforehand), or at a given place.
  int16(v: number): void {
    this.view.setInt16(this.len, v);
    this.len += 2;
  }

  int32(v: number): void {
    this.view.setInt32(this.len, v);
    this.len += 4;
  }

  uint32(v: number): void {
    this.view.setUint32(this.len, v);
    this.len += 4;
  }

  float64(v: number): void {
    this.view.setFloat64(this.len, v);
    this.len += 8;
  }

  int32At(at: number, v: number): void {
    this.view.setInt32(at, v);
  }

  /** The bytes written since the last piece. */
  take(): Buffer {
    const out = this.buf.subarray(this.start, this.len);
    this.start = this.len;
    return out;
  }
}
// --- COPY's binary format ---------------------------------------------------------------------
// The server takes binary rows for about half the work of text ones (no line and field splitting,
// no parsing of numbers and dates). A value goes in binary only when its bytes are certain to be
// what the server makes of its text; any other value ends the binary rows, and the records from
// it on go as text (writeBinaryLine says false), so every value means what it meant as text.

/** Column types written in binary (0: not). */
export const enum Bin {
  None = 0,
  Int2,
  Int4,
  Int8,
  Float8,
  Bool,
  Text,
  Date,
  Timestamp,
}

const BIN_TYPES: Record<string, Bin> = {
  int2: Bin.Int2,
  int4: Bin.Int4,
  int8: Bin.Int8,
  float8: Bin.Float8,
  bool: Bin.Bool,
  text: Bin.Text,
  date: Bin.Date,
  timestamp: Bin.Timestamp,
};

/** The binary writing of a column of this type (pg_type.typname; 0: none). */
export function binaryType(typname: string): Bin {
  return BIN_TYPES[typname] ?? Bin.None;
}

/** Start of COPY binary data: signature, flags, header extension length. */
const BINARY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
/** End of COPY binary data: a field count of -1. */
const BINARY_TRAILER = Buffer.from([0xff, 0xff]);

export function writeBinaryHeader(out: CopyWriter): void {
  out.ensure(BINARY_HEADER.length);
  out.len += BINARY_HEADER.copy(out.buf, out.len);
}

export function writeBinaryTrailer(out: CopyWriter): void {
  out.ensure(2);
  out.len += BINARY_TRAILER.copy(out.buf, out.len);
}
