// Parameter declarations shared by the data store actions: table names, resource ids (with `id`
// as CKAN 2.11's other name), name lists and JSON lists, each bounded so that no list reaches the
// database larger than it can take.
import { Type } from '@sinclair/typebox';
import { ValidationError } from '../../errors.ts';
import { JsonArrayText } from '../../json/array-text.ts';
import { p } from '../../validation/params.ts';
import { Invalid, MISSING, Stop, type Validator } from '../../validation/validate.ts';
import { intValidator, jsonValue, notEmpty, stringList } from '../../validation/validators.ts';

/** Most items of a list of names (aliases, indexes, triggers, search fields and sort keys). */
export const NAMES_MAX = 1000;
/** Most columns of a key (PostgreSQL's INDEX_MAX_KEYS). */
export const KEY_COLUMNS_MAX = 32;
/** Most fields of a table: PostgreSQL's 1600 columns, less `_id` and the full-text column. */
export const FIELDS_MAX = 1598;

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** A table name / resource id: a non-empty string without NUL, at most 63 bytes (PostgreSQL's limit). */
export const tableName: Validator = (v) => {
  if (typeof v !== 'string' || !v || v.includes('\u0000') || byteLength(v) > 63)
    throw new Invalid(`invalid value "${String(v).slice(0, 100)}"`);
  return v;
};

/** `id` accepted for resource_id (CKAN 2.11); `id` must come first in the declarations. */
const fromId: Validator = (v, f) => (v === MISSING || v === null || v === undefined ? (f.data.id ?? v) : v);
const skipMissing: Validator = (v) => {
  if (v === MISSING || v === null || v === undefined) throw new Stop();
  return v;
};

/** `id` and `resource_id` (either names the resource; required or not). */
export const idFields = (required: boolean) => ({
  id: p.custom<string>('another name of resource_id', [tableName]),
  resource_id: p
    .custom<string>(
      `id or alias of the resource${required ? '' : ' (or give resource)'}`,
      [fromId, required ? notEmpty : skipMissing, tableName],
      Type.String(),
    )
    .handlesMissing(),
});

export const resourceIdParam = (description: string) => p.custom<string>(description, [tableName]).required();
export const force = p.boolean('edit a read-only resource').default(false);
export const calculateRecordCount = p.boolean('update the stored record count after this call').default(false);

export const validFieldName = (name: unknown): name is string =>
  typeof name === 'string' &&
  name.length > 0 &&
  !name.startsWith('_') &&
  !name.includes('"') &&
  !name.includes('\u0000') &&
  name.trim() === name;

/** At most max items (before any item is looked at). */
const atMost =
  (max: number): Validator =>
  (v) => {
    if (Array.isArray(v) && v.length > max) throw new Invalid(`Must be a list of at most ${max} items (got ${v.length})`);
    return v;
  };

/** No item twice. */
const distinct: Validator = (v) => {
  const seen = new Set<string>();
  for (const x of v as string[]) {
    if (seen.has(x)) throw new Invalid(`"${x}" is listed twice`);
    seen.add(x);
  }
  return v;
};

const aliasNames: Validator = (v) => {
  for (const a of v as string[]) {
    if (!validFieldName(a) || a.includes('%') || byteLength(a) > 63) throw new Invalid(`"${a}" is not a valid alias name`);
  }
  return v;
};

/** A list of strings, or a comma-separated string; items are trimmed. */
const nameList: Validator = (v, f) => (stringList(true)(v, f) as string[]).map((s) => s.trim()).filter(Boolean);

/** A list of names (or a comma-separated string) of at most max items. */
export const names = (description: string, max = NAMES_MAX, ...more: Validator[]) =>
  p.custom<string[]>(
    `${description} (a list, or comma-separated; at most ${max})`,
    [atMost(max), nameList, atMost(max), ...more],
    Type.Array(Type.String(), { maxItems: max }),
    'list of strings',
  );

export const aliasesParam = p.custom<string[]>(
  `names for read-only aliases of the resource (list or comma-separated; at most ${NAMES_MAX}, each once)`,
  [atMost(NAMES_MAX), stringList(true), atMost(NAMES_MAX), distinct, aliasNames],
  Type.Array(Type.String(), { maxItems: NAMES_MAX, uniqueItems: true }),
  'list of strings',
);

export const primaryKeyParam = names('fields that represent a unique key (replaces an existing one)', KEY_COLUMNS_MAX, distinct);

/** A JSON list (also as a JSON string, for forms). */
export const jsonList: Validator = (v, f) => {
  const x = jsonValue(v, f);
  if (!Array.isArray(x)) throw new Invalid('Must be a list');
  return x;
};

/** A JSON list (also as JSON text) of at most max items. */
export const boundedJsonList =
  (max: number): Validator =>
  (v, f) =>
    atMost(max)(jsonValue(v, f), f);

/**
 * datastore_create's fields: names a table can have, each once (CKAN's message and key for a
 * duplicate). Items that are no dict are left to the item check.
 */
export const fieldNames: Validator = (v) => {
  if (!Array.isArray(v)) return v;
  const seen = new Set<string>();
  for (const f of v) {
    if (!f || typeof f !== 'object' || Array.isArray(f)) continue;
    const id = (f as { id?: unknown }).id;
    if (!validFieldName(id)) throw new Invalid(`"${String(id)}" is not a valid field name`);
    if (byteLength(id) > 63) throw new Invalid(`Column heading "${id}" exceeds limit of 63 characters.`);
    if (seen.has(id)) throw new ValidationError({ field: ['Duplicate column names are not supported'] });
    seen.add(id);
  }
  return v;
};

/** datastore_upsert's records: a JSON list, or the bytes of a large request's list (read while written). */
export const recordList: Validator = (v, f) => (v instanceof JsonArrayText ? v : jsonList(v, f));

export const naturalOrInvalid: Validator = (v, f) => {
  let n: number;
  try {
    n = intValidator(v, f) as number;
  } catch {
    throw new Invalid(`invalid value "${v}"`);
  }
  if (n < 0) throw new Invalid(`invalid value "${v}"`);
  return n;
};

export const natural = (description: string) => p.custom<number>(description, [naturalOrInvalid], Type.Integer({ minimum: 0 }), 'int');

export const recordsSchema = Type.Array(Type.Record(Type.String(), Type.Unknown()));
