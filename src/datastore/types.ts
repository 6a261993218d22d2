// Data store field types: parsing user type names into safe DDL text, guessing types from the
// first record, encoding JSON values for COPY, and converting query results for the API.

/** The domain json fields are stored as (CKAN's composite `nested`): jsonb underneath, reported `json`. */
export const JSON_DOMAIN = 'nested';

// A type name: letters/digits/underscores/spaces, optional (n[,m]) modifier, optional [] / [n] suffixes,
// optional leading `_` (array). Nothing else can reach the DDL.
const TYPE_RE = /^(_?)([a-z][a-z0-9_]*(?: [a-z][a-z0-9_]*)*)\s*(\(\s*\d+\s*(?:,\s*\d+\s*)?\))?\s*((?:\[\s*\d*\s*\])*)$/;

export interface ParsedType {
  /** Base name used in to_regtype() (e.g. 'int4', 'nested', 'character varying'). */
  base: string;
  /** Text to use in DDL (validated characters only). */
  ddl: string;
  isArray: boolean;
}

/** Parses a user type ('int', 'json', 'text[]', '_int4', 'numeric(10,2)', 'int[3]'); null when malformed. */
export function parseTypeName(input: string): ParsedType | null {
  if (typeof input !== 'string') return null;
  const m = TYPE_RE.exec(input.trim().toLowerCase());
  if (!m) return null;
  let base = m[2];
  if (base === 'json') base = JSON_DOMAIN;
  const mod = m[3] ? m[3].replace(/\s+/g, '') : '';
  const arr = (m[4] ?? '').replace(/\s+/g, '');
  const isArray = m[1] === '_' || arr.length > 0;
  const ddl = `${base}${mod}${m[1] === '_' ? '[]' : ''}${arr}`;
  return { base, ddl, isArray };
}

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/;
const DATE_RES = [
  /^\d{4}-\d{1,2}-\d{1,2}$/,
  /^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{2}:\d{2}$/,
  /^\d{4}-\d{1,2}-\d{1,2}T\d{1,2}:\d{2}:\d{2}Z?$/,
  /^\d{1,2}\/\d{1,2}\/\d{4}$/,
  /^\d{1,2}-\d{1,2}-\d{4}$/,
];

/** CKAN's type guess from one value of the first record (integers, floats, ISO dates and timestamps, else text). */
export function guessType(v: unknown): string {
  if (typeof v === 'number') {
    if (Number.isInteger(v)) return Math.abs(v) < 2 ** 31 ? 'int' : 'int8';
    return 'float';
  }
  if (typeof v === 'boolean') return 'bool';
  if (v && typeof v === 'object') return 'json';
  if (typeof v === 'string') {
    const s = v.trim();
    if (INT_RE.test(s)) return 'integer';
    if (FLOAT_RE.test(s)) return 'numeric';
    if (DATE_RES.some((re) => re.test(s))) return 'timestamp';
  }
  return 'text';
}

/** Column categories that decide how values are written and read. */
export type Kind = 'text' | 'json' | 'array' | 'number' | 'bool' | 'timestamp' | 'other';

const TEXT_TYPES = new Set(['text', 'varchar', 'bpchar', 'char', 'name', 'citext']);
const NUMBER_TYPES = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'oid', 'serial', 'bigserial']);

/** Kind from pg_type.typname (arrays start with '_'). */
export function kindOf(typname: string): Kind {
  if (typname.startsWith('_')) return 'array';
  if (TEXT_TYPES.has(typname)) return 'text';
  if (typname === 'json' || typname === 'jsonb' || typname === JSON_DOMAIN) return 'json';
  if (NUMBER_TYPES.has(typname)) return 'number';
  if (typname === 'bool') return 'bool';
  if (typname === 'timestamp' || typname === 'timestamptz') return 'timestamp';
  return 'other';
}

/** The type the API reports (json domain -> json). */
export function reportedType(typname: string): string {
  return typname === JSON_DOMAIN ? 'json' : typname;
}

// --- COPY text format -----------------------------------------------------------------------

const COPY_SPECIAL = /[\\\t\n\r]/;

function copyEscape(s: string): string {
  // Most values need no escaping: test before replacing (the replace allocates).
  if (!COPY_SPECIAL.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

function arrayLiteral(v: unknown): string {
  if (!Array.isArray(v)) return arrayElement(v);
  return '{' + v.map((x) => (Array.isArray(x) ? arrayLiteral(x) : arrayElement(x))).join(',') + '}';
}

function arrayElement(x: unknown): string {
  if (x === null || x === undefined) return 'NULL';
  const s = typeof x === 'object' ? JSON.stringify(x) : String(x);
  return '"' + s.replace(/[\\"]/g, (c) => '\\' + c) + '"';
}

/** One value in COPY text format for a column of that kind ('' is NULL for non-text columns). */
export function copyValue(v: unknown, kind: Kind): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'number' && kind !== 'json') return String(v);
  if (typeof v === 'string' && v !== '' && (kind === 'text' || kind === 'number' || kind === 'timestamp')) return copyEscape(v);
  if (kind === 'array') {
    if (v === '') return '\\N';
    if (Array.isArray(v)) return copyEscape(arrayLiteral(v));
    return copyEscape(String(v));
  }
  if (typeof v === 'object') return copyEscape(JSON.stringify(v));
  if (kind === 'json') return copyEscape(JSON.stringify(v));
  if (v === '' && kind !== 'text') return '\\N';
  return copyEscape(String(v));
}

// --- values out -----------------------------------------------------------------------------

/** Converts a driver value for the JSON result (numbers as numbers, everything else as is). */
export function outValue(v: unknown, kind: Kind): unknown {
  if (v === null || v === undefined) return null;
  if (kind === 'number' && typeof v === 'string') {
    const n = Number(v);
    return Number.isFinite(n) ? n : v;
  }
  if (kind === 'number' && typeof v === 'bigint') return Number(v);
  return v;
}

/** CSV (PostgreSQL COPY csv style): quote only when needed; NULL is empty, '' is "". */
export function csvCell(v: unknown, delimiter: string): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (s === '' || s.includes(delimiter) || s.includes('"') || s.includes('\n') || s.includes('\r') || s === '\\.') {
    return '"' + s.replace(/"/g, '""') + '"';
  }
  return s;
}
