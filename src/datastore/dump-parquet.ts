// Parquet dumps: the chunks of a dump written as Parquet row groups as they come (memory holds one
// row group, whatever the table's size), each column typed from its data store type.
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { DatastoreField, DumpChunk } from './backend.ts';

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

/** Rows per row group: large enough to compress well, small enough to keep memory low. */
const ROW_GROUP_ROWS = 25_000;
const DAY_MS = 86_400_000;

/** How one data store column is written: its Parquet schema element and the conversion of a value. */
interface ColumnPlan {
  element: SchemaElement;
  convert: (v: unknown) => unknown;
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

/** The Parquet type of a data store column type (pg short names as the API reports them). */
export function columnPlan(field: DatastoreField): ColumnPlan {
  const name = field.id;
  const optional = { name, repetition_type: 'OPTIONAL' as const };
  const type = field.type;
  if (type.startsWith('_') || type === 'json' || type === 'jsonb')
    // Arrays and JSON documents: their JSON text, marked as JSON.
    return { element: { ...optional, type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' } }, convert: (v) => v };
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
  for await (const c of chunks) {
    if (!plans) {
      plans = c.fields.map(columnPlan);
      parquet = new ParquetWriter({
        writer,
        schema: [{ name: 'root', num_children: plans.length }, ...plans.map((p) => p.element)],
        createdBy: 'svc data store dump',
      });
      columns = plans.map(() => []);
    }
    for (const row of c.rows) {
      for (let i = 0; i < plans.length; i++) {
        const v = row[i];
        columns[i].push(v === null || v === undefined ? null : plans[i].convert(v));
      }
    }
    rows += c.rows.length;
    if (rows >= ROW_GROUP_ROWS) yield flush();
  }
  if (!plans || !parquet) return;
  if (rows > 0) yield flush();
  parquet.finish();
  yield writer.take();
}
