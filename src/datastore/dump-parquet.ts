// Parquet dumps: the chunks of a dump written as Parquet row groups as they come (memory holds one
// row group, whatever the table's size), each column typed from its data store type. On
// PostgreSQL the rows come as the text of a COPY (as a TSV dump, the database formatting the
// values), which costs far less than rows read as objects through a cursor.
import { StringDecoder } from 'node:string_decoder';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import pg from 'pg';
import type { DatastoreField, DumpChunk } from './backend.ts';

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

/**
 * Rows per row group: large enough to compress well, small enough to keep memory low (a 1M-row
 * dump grew the server's RSS by 118 MB with 10,000, by 179 MB with 25,000, whose file was 2 % smaller).
 */
const ROW_GROUP_ROWS = 10_000;
const DAY_MS = 86_400_000;
/** text[]: its parser reads any one-dimensional or nested array literal into strings and nulls. */
const TEXT_ARRAY_OID = 1009;

/** How one data store column is written: its Parquet schema element and the conversion of a value. */
interface ColumnPlan {
  element: SchemaElement;
  convert: (v: unknown) => unknown;
  /** The conversion of the value's text in a TSV dump, when not `convert`. */
  fromText?: (s: string) => unknown;
}

const asNumber = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : null;
};
const asBigInt = (v: unknown): bigint | null => {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  const n = asNumber(v);
  return n === null ? null : BigInt(Math.trunc(n));
};
/** Milliseconds of a timestamp as the dump gives it ('2020-01-02T03:04:05', UTC when no zone). */
const asMillis = (v: unknown): bigint | null => {
  const s = String(v);
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`);
  return Number.isFinite(ms) ? BigInt(ms) : null;
};
/** Days since 1970 of a date; the same dates come again and again in a column, so they are remembered (a few thousand). */
function daysOf(): (v: unknown) => number | null {
  const seen = new Map<string, number | null>();
  return (v) => {
    const s = String(v).slice(0, 10);
    let d = seen.get(s);
    if (d === undefined) {
      const ms = Date.parse(`${s}T00:00:00Z`);
      d = Number.isFinite(ms) ? Math.floor(ms / DAY_MS) : null;
      if (seen.size > 5000) seen.clear();
      seen.set(s, d);
    }
    return d;
  };
}
const asText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
const asBool = (v: unknown): boolean | null =>
  typeof v === 'boolean' ? v : v === 't' || v === 'true' ? true : v === 'f' || v === 'false' ? false : null;

/** PostgreSQL's text of an array ({a,"b c",NULL}) as the array, its elements of the element type. */
function arrayFromText(element: string): (s: string) => unknown {
  const parse = (pg.types.getTypeParser as (oid: number) => (s: string) => unknown)(TEXT_ARRAY_OID);
  const numeric = ['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'].includes(element);
  const json = element === 'json' || element === 'jsonb';
  const item = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(item);
    if (v === null || typeof v !== 'string') return v;
    if (numeric) return Number(v);
    if (element === 'bool') return v === 't' || v === 'true';
    return json ? JSON.parse(v) : v;
  };
  return (s) => item(parse(s));
}

/** The Parquet type of a data store column type (pg short names as the API reports them). */
export function columnPlan(field: DatastoreField): ColumnPlan {
  const name = field.id;
  const optional = { name, repetition_type: 'OPTIONAL' as const };
  const type = field.type;
  if (type.startsWith('_') || type === 'json' || type === 'jsonb')
    // Arrays and JSON documents: their JSON text, marked as JSON.
    return {
      element: { ...optional, type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' } },
      convert: (v) => v,
      fromText: type.startsWith('_') ? arrayFromText(type.slice(1)) : (s) => JSON.parse(s),
    };
  switch (type) {
    case 'int2':
    case 'int4':
    case 'int':
      return { element: { ...optional, type: 'INT32' }, convert: asNumber };
    case 'int8':
    case 'oid':
      return { element: { ...optional, type: 'INT64' }, convert: asBigInt };
    case 'float4':
      return { element: { ...optional, type: 'FLOAT' }, convert: asNumber };
    case 'float':
    case 'float8':
    case 'numeric':
      return { element: { ...optional, type: 'DOUBLE' }, convert: asNumber };
    case 'bool':
      return { element: { ...optional, type: 'BOOLEAN' }, convert: asBool };
    case 'date':
      return { element: { ...optional, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }, convert: daysOf() };
    case 'timestamp':
    case 'timestamptz':
      return {
        element: {
          ...optional,
          type: 'INT64',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: type === 'timestamptz', unit: 'MILLIS' },
        },
        convert: asMillis,
      };
    default:
      return { element: { ...optional, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }, convert: asText };
  }
}

/** A writer whose bytes are taken away after each row group (the offset, which the footer needs, keeps counting). */
class DrainedWriter extends ByteWriter {
  take(): Buffer {
    const out = Buffer.from(this.getBytes());
    this.index = 0;
    return out;
  }
}

/**
 * The rows of CSV-quoted TSV text (COPY ... WITH (FORMAT csv, DELIMITER tab)) given in pieces
 * that may cut a line or a character anywhere: an unquoted empty cell is NULL, "" the empty text.
 */
export class TsvRows {
  private rest = '';
  private readonly decoder = new StringDecoder('utf8');

  /** Calls row() with the cells of each whole line the text completes. */
  push(piece: Buffer, row: (cells: (string | null)[]) => void): void {
    const s = this.rest + this.decoder.write(piece);
    let i = 0;
    for (;;) {
      const nl = s.indexOf('\n', i);
      if (nl < 0) break;
      if (s.charCodeAt(i) !== 34 && s.indexOf('"', i) > nl) {
        // No quote on the line: cells as they are (the common case).
        const cells: (string | null)[] = s.slice(i, nl).split('\t');
        for (let k = 0; k < cells.length; k++) if (cells[k] === '') cells[k] = null;
        row(cells);
        i = nl + 1;
        continue;
      }
      const end = quotedLine(s, i, row);
      if (end < 0) break;
      i = end;
    }
    this.rest = s.slice(i);
  }

  /** The text ended: a line left unfinished is an error. */
  end(): void {
    if (this.rest + this.decoder.end()) throw new Error('the dump text ended inside a line');
  }
}

/** Reads the line at i, with quoted cells; the index after it, or -1 when the text stops before its end. */
function quotedLine(s: string, i: number, row: (cells: (string | null)[]) => void): number {
  const cells: (string | null)[] = [];
  let j = i;
  for (;;) {
    if (j >= s.length) return -1;
    if (s.charCodeAt(j) === 34) {
      let value = '';
      let k = j + 1;
      for (;;) {
        const q = s.indexOf('"', k);
        // A quote at the very end could still be the first of a doubled one.
        if (q < 0 || q + 1 >= s.length) return -1;
        if (s.charCodeAt(q + 1) === 34) {
          value += s.slice(k, q + 1);
          k = q + 2;
          continue;
        }
        value += s.slice(k, q);
        j = q + 1;
        break;
      }
      cells.push(value);
    } else {
      let k = j;
      for (let c = s.charCodeAt(k); k < s.length && c !== 9 && c !== 10; c = s.charCodeAt(++k));
      if (k >= s.length) return -1;
      cells.push(k === j ? null : s.slice(j, k));
      j = k;
    }
    const sep = s.charCodeAt(j);
    if (Number.isNaN(sep)) return -1;
    j++;
    if (sep === 10) {
      row(cells);
      return j;
    }
  }
}

/** The dump's chunks as a Parquet file, one piece per row group. */
export async function* writeParquet(chunks: AsyncIterable<DumpChunk>): AsyncGenerator<Buffer> {
  let plans: ColumnPlan[] | null = null;
  let parquet: ParquetWriter | null = null;
  const writer = new DrainedWriter(1 << 20);
  let columns: unknown[][] = [];
  let rows = 0;
  const flush = (): Buffer => {
    parquet!.write({
      columnData: plans!.map((p, i) => ({ name: p.element.name, data: columns[i] as never[] })),
      rowGroupSize: Math.max(rows, 1),
    });
    columns = plans!.map(() => []);
    rows = 0;
    return writer.take();
  };
  const tsv = new TsvRows();
  let fromText: ((s: string) => unknown)[] = [];
  const textRow = (cells: (string | null)[]) => {
    for (let i = 0; i < fromText.length; i++) {
      const v = cells[i];
      columns[i].push(v === null || v === undefined ? null : fromText[i](v));
    }
    rows++;
  };
  for await (const c of chunks) {
    if (!plans) {
      plans = c.fields.map(columnPlan);
      fromText = plans.map((p) => p.fromText ?? p.convert);
      parquet = new ParquetWriter({
        writer,
        schema: [{ name: 'root', num_children: plans.length }, ...plans.map((p) => p.element)],
        createdBy: 'svc data store dump',
      });
      columns = plans.map(() => []);
    }
    if (c.text) tsv.push(c.text, textRow);
    for (const row of c.rows) {
      for (let i = 0; i < plans.length; i++) {
        const v = row[i];
        columns[i].push(v === null || v === undefined ? null : plans[i].convert(v));
      }
    }
    rows += c.rows.length;
    if (rows >= ROW_GROUP_ROWS) yield flush();
  }
  tsv.end();
  if (!plans || !parquet) return;
  if (rows > 0) yield flush();
  parquet.finish();
  yield writer.take();
}
