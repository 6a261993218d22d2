// Data store actions: datastore_create, datastore_upsert, datastore_delete, datastore_records_delete,
// datastore_info, datastore_search, datastore_run_triggers, datastore_function_create,
// datastore_function_delete. The storage work is the backend's (services.plugins.datastore).
import type { ActionContext } from '../../actions/context.ts';
import { checkAccess, type ActionDefinition, type AuthFunction } from '../../actions/registry.ts';
import { anyone, sysadminOnly } from '../../auth/rules.ts';
import type { DatastoreBackend, SearchInput } from '../../datastore/backend.ts';
import { METADATA_VIEW } from '../../datastore/postgres.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { JsonArrayText } from '../../json/array-text.ts';
import { datastoreResourceIdsIn, findDatastoreResource, setDatastoreActiveFlag } from '../../model/datastore-flags.ts';
import { visiblePackagesCondition } from '../../auth/authz.ts';
import { Invalid, MISSING, validateOrThrow, type Schema, type Validator } from '../../validation/validate.ts';
import {
  bool, booleanValidator, defaultValue, ignoreMissing, intValidator, jsonObject, jsonValue, notEmpty, oneOf, stringList, unicodeString,
} from '../../validation/validators.ts';

export const READ_ONLY_MESSAGE = 'Cannot edit read-only resource because changes made may be lost. Use a resource created for editing e.g. with datastore_create or use "force=True" to ignore this warning.';

export function backendOf(ctx: { services: ActionContext['services'] }): DatastoreBackend {
  const b = ctx.services.plugins.datastore as DatastoreBackend | undefined;
  if (!b) throw new NotFoundError('the datastore plugin is not enabled');
  return b;
}

// --- validators -----------------------------------------------------------------------------

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** A table name / resource id: a non-empty string without NUL, at most 63 bytes (PostgreSQL's limit). */
const tableName: Validator = (v) => {
  if (typeof v !== 'string' || !v || v.includes('\u0000') || byteLength(v) > 63) throw new Invalid(`invalid value "${String(v).slice(0, 100)}"`);
  return v;
};

/** `id` accepted for resource_id (CKAN 2.11); `id` must come first in the schema. */
const fromId: Validator = (v, f) => (v === MISSING || v === null || v === undefined ? f.data.id ?? v : v);
const idFields = (required: boolean): Schema => ({
  id: [ignoreMissing, tableName],
  resource_id: required ? [fromId, notEmpty, tableName] : [fromId, ignoreMissing, tableName],
});

const validFieldName = (name: string) =>
  typeof name === 'string' && name.length > 0 && !name.startsWith('_') && !name.includes('"') && !name.includes('\u0000') && name.trim() === name;

const aliasList: Validator = (v) => {
  const list = stringList(true)(v, undefined as any) as string[];
  for (const a of list) {
    if (!validFieldName(a) || a.includes('%') || byteLength(a) > 63) throw new Invalid(`"${a}" is not a valid alias name`);
  }
  return list;
};

/** A list of strings, or a comma-separated string; items are trimmed. */
const nameList: Validator = (v) => (stringList(true)(v, undefined as any) as string[]).map((s) => s.trim()).filter(Boolean);

/** A JSON list (also as a JSON string, for forms). */
const jsonList: Validator = (v, f) => {
  const x = jsonValue(v, f);
  if (!Array.isArray(x)) throw new Invalid('Must be a list');
  return x;
};

/** datastore_upsert's records: a JSON list, or the bytes of a large request's list (read while written). */
const recordList: Validator = (v, f) => (v instanceof JsonArrayText ? v : jsonList(v, f));

const naturalOrInvalid: Validator = (v) => {
  let n: number;
  try {
    n = intValidator(v, undefined as any) as number;
  } catch {
    throw new Invalid(`invalid value "${v}"`);
  }
  if (n < 0) throw new Invalid(`invalid value "${v}"`);
  return n;
};

const optionalBool: Validator[] = [ignoreMissing, booleanValidator];

function checkFieldsInput(fields: { id: string; type?: string; info?: unknown }[] | undefined): void {
  if (!fields) return;
  const seen = new Set<string>();
  for (const f of fields) {
    if (!validFieldName(f.id)) throw new ValidationError({ fields: [`"${f.id}" is not a valid field name`] });
    if (byteLength(f.id) > 63) throw new ValidationError({ fields: [`Column heading "${f.id}" exceeds limit of 63 characters.`] });
    if (seen.has(f.id)) throw new ValidationError({ field: ['Duplicate column names are not supported'] });
    seen.add(f.id);
  }
}

/** resource_id, or `id` as its alias (CKAN 2.11). */
function withResourceId(input: Record<string, unknown>): Record<string, unknown> {
  if ((input.resource_id === undefined || input.resource_id === null) && input.id !== undefined) {
    const { id, ...rest } = input;
    return { ...rest, resource_id: id };
  }
  return input;
}

/** The catalog resource a write goes to; read-only unless url_type is 'datastore' or force. */
async function writableResource(ctx: ActionContext, id: string, force: boolean): Promise<void> {
  const r = await findDatastoreResource(ctx.db, id);
  if (!r) throw new NotFoundError(`Resource "${id}" was not found.`);
  if (r.url_type !== 'datastore' && !force) throw new ValidationError({ 'read-only': [READ_ONLY_MESSAGE] });
}

// --- auth -------------------------------------------------------------------------------------

const resourceUpdateAuth: AuthFunction = async (ctx, p) => {
  const input = withResourceId(p);
  const resource = input.resource as Record<string, unknown> | undefined;
  if (resource && resource.package_id && !input.resource_id) {
    await checkAccess(ctx, 'package_update', { id: resource.package_id });
    return;
  }
  // Neither resource_id nor resource: the handler reports the missing parameter.
  if (!input.resource_id && !resource) return;
  // Checked before validation (datastore_create): a resource_id no table can have is refused here.
  if (input.resource_id) {
    try {
      tableName(input.resource_id, undefined as any);
    } catch (e) {
      if (e instanceof Invalid) throw new ValidationError({ resource_id: [e.message] });
      throw e;
    }
  }
  await checkAccess(ctx, 'resource_update', { id: input.resource_id });
};

// Searches resolve aliases once; auth and handler share the result.
const resolved = new WeakMap<object, string>();

async function resolveReadable(ctx: ActionContext, p: Record<string, any>): Promise<string> {
  const cached = resolved.get(p);
  if (cached !== undefined) return cached;
  const id = String(p.resource_id ?? '');
  if (id === METADATA_VIEW) {
    resolved.set(p, id);
    return id;
  }
  const r = await backendOf(ctx).resource_id_from_alias(id);
  if (!r.exists || !r.resource_id) throw new NotFoundError(`Resource "${id}" was not found.`);
  resolved.set(p, r.resource_id);
  return r.resource_id;
}

const resourceShowAuth: AuthFunction = async (ctx, p) => {
  const id = await resolveReadable(ctx, p);
  if (id === METADATA_VIEW) return;
  await checkAccess(ctx, 'resource_show', { id });
};

// --- datastore_create -------------------------------------------------------------------------

const fieldSchema: Schema = {
  id: [notEmpty, unicodeString],
  type: [ignoreMissing, unicodeString],
  info: [ignoreMissing, jsonObject],
};

const createSchema: Schema = {
  ...idFields(false),
  resource: [ignoreMissing, jsonObject],
  force: bool(false),
  aliases: [ignoreMissing, aliasList],
  fields: { listOf: fieldSchema, before: [ignoreMissing, jsonValue] },
  records: [ignoreMissing, jsonList],
  primary_key: [ignoreMissing, nameList],
  indexes: [ignoreMissing, nameList],
  triggers: { listOf: { function: [notEmpty, unicodeString] }, before: [ignoreMissing, jsonValue] },
  calculate_record_count: bool(false),
  delete_fields: bool(false),
};

const datastoreCreate: ActionDefinition = {
  name: 'datastore_create',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  authBeforeValidation: true,
  schema: createSchema,
  help: `Adds a new table to the data store (or fields, records, aliases, indexes to an existing one).

:param resource_id: resource id the data is going to be stored against (or give resource)
:param resource: resource dictionary passed to resource_create (with package_id)
:param force: edit a read-only resource (default False)
:param aliases: names for read-only aliases of the resource (list or comma-separated)
:param fields: fields/columns and their extra metadata [{"id": ..., "type": ..., "info": {...}}]
:param records: the data, e.g. [{"dob": "2005", "some_stuff": ["a", "b"]}]
:param primary_key: fields that represent a unique key (replaces an existing one)
:param indexes: indexes on the table (replace existing ones)
:param triggers: trigger functions to apply to this table on update/insert [{"function": ...}]
:param calculate_record_count: update the stored record count after this call (default False)
:param delete_fields: drop existing fields not listed in fields (default False)
:returns: the newly created data object, excluding records`,
  async handler(ctx, p: Record<string, any>) {
    p = withResourceId(p);
    if (p.resource && p.resource_id) throw new ValidationError({ resource: ['resource cannot be used with resource_id'] });
    if (!p.resource && !p.resource_id) throw new ValidationError({ resource_id: ['resource_id or resource required'] });
    checkFieldsInput(p.fields);
    const backend = backendOf(ctx);
    if (p.resource) {
      const res = await ctx.call('resource_create', { ...p.resource, url: p.resource.url || '_datastore_only_resource', url_type: 'datastore' });
      p.resource_id = res.id;
    } else {
      await writableResource(ctx, p.resource_id, p.force);
    }
    const out = await backend.create({
      resource_id: p.resource_id,
      fields: p.fields,
      records: p.records,
      primary_key: p.primary_key,
      indexes: p.indexes,
      aliases: p.aliases,
      triggers: p.triggers,
      delete_fields: p.delete_fields,
      calculate_record_count: p.calculate_record_count,
    });
    await setDatastoreActiveFlag(ctx.db, p.resource_id, true);
    const { records: _records, id: _id, ...rest } = p;
    return { ...rest, fields: out.fields, method: 'insert' };
  },
};

// --- datastore_upsert -------------------------------------------------------------------------

const datastoreUpsert: ActionDefinition = {
  name: 'datastore_upsert',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  // The catalog is only read; the data store's own transaction is the write.
  transaction: false,
  lazyLists: ['records'],
  schema: {
    resource_id: [notEmpty, tableName],
    force: bool(false),
    records: [defaultValue(() => []), recordList],
    method: [defaultValue('upsert'), oneOf(['upsert', 'insert', 'update'])],
    dry_run: bool(false),
    calculate_record_count: bool(false),
  },
  help: `Updates or inserts into a table in the data store.

:param resource_id: resource id that the data is going to be stored under
:param force: edit a read-only resource (default False)
:param records: the data, e.g. [{"dob": "2005", "some_stuff": ["a", "b"]}]
:param method: upsert (default), insert or update
:param calculate_record_count: update the stored record count after this call (default False)
:param dry_run: validate and roll back instead of committing (default False)
:returns: the modified data object`,
  async handler(ctx, p: Record<string, any>) {
    await writableResource(ctx, p.resource_id, p.force);
    await backendOf(ctx).upsert({
      resource_id: p.resource_id, records: p.records, method: p.method, dry_run: p.dry_run, calculate_record_count: p.calculate_record_count,
    });
    return p;
  },
};

// --- datastore_delete / datastore_records_delete -----------------------------------------------

const filtersDict: Validator = (v) => {
  if (v === null) return MISSING;
  let x = v;
  if (typeof x === 'string') {
    try {
      x = JSON.parse(x);
    } catch {
      throw new Invalid('filters must be either a dict or null.');
    }
  }
  if (!x || typeof x !== 'object' || Array.isArray(x)) throw new Invalid('filters must be either a dict or null.');
  return x;
};

const deleteSchema = (filtersRequired: boolean): Schema => ({
  resource_id: [notEmpty, tableName],
  force: bool(false),
  filters: filtersRequired ? [notEmpty, filtersDict] : [ignoreMissing, filtersDict],
  calculate_record_count: bool(false),
});

async function deleteHandler(ctx: ActionContext, p: Record<string, any>) {
  await writableResource(ctx, p.resource_id, p.force);
  await backendOf(ctx).delete({ resource_id: p.resource_id, filters: p.filters, calculate_record_count: p.calculate_record_count });
  if (p.filters === undefined) await setDatastoreActiveFlag(ctx.db, p.resource_id, false);
  const result: Record<string, unknown> = { resource_id: p.resource_id };
  if (p.filters !== undefined) result.filters = p.filters;
  return result;
}

/** datastore_delete and datastore_records_delete: one action, the latter with filters required (never drops). */
const deleteAction = (name: string, filtersRequired: boolean, summary: string, filtersHelp: string): ActionDefinition => ({
  name,
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  schema: deleteSchema(filtersRequired),
  help: `${summary}

:param resource_id: resource id that the data will be deleted from
:param force: edit a read-only resource (default False)
:param filters: ${filtersHelp}
:param calculate_record_count: update the stored record count after this call (default False)
:returns: the filters sent, with resource_id`,
  handler: deleteHandler,
});

const datastoreDelete = deleteAction('datastore_delete', false, 'Deletes a table or a set of records from the data store.',
  'filters to apply before deleting (e.g. {"name": "fred"}); without filters the table and its aliases are dropped');
const datastoreRecordsDelete = deleteAction('datastore_records_delete', true, 'Deletes records from a data store table (never the table).',
  'filters selecting the records to delete ({} deletes all)');

// --- datastore_info -----------------------------------------------------------------------------

const datastoreInfo: ActionDefinition = {
  name: 'datastore_info',
  sideEffectFree: true,
  auth: async (ctx, p) => {
    try {
      await resourceShowAuth(ctx, p);
    } catch (e) {
      if (e instanceof NotFoundError) throw new NotFoundError(`Resource/Alias "${p.resource_id}" was not found.`);
      throw e;
    }
  },
  schema: idFields(true),
  help: `Returns the metadata and data dictionary of a data store table.

:param resource_id: id or alias of the resource
:returns: {"meta": {id, count, table_type, size, db_size, idx_size, aliases}, "fields": [...]}`,
  async handler(ctx, p: Record<string, any>) {
    try {
      return await backendOf(ctx).resource_info(await resolveReadable(ctx, p));
    } catch (e) {
      if (e instanceof NotFoundError) throw new NotFoundError(`Resource/Alias "${p.resource_id}" was not found.`);
      throw e;
    }
  },
};

// --- datastore_search ---------------------------------------------------------------------------

const qValue: Validator = (v) => {
  if (typeof v === 'string') {
    const t = v.trim();
    if (t.startsWith('{')) {
      try {
        const o = JSON.parse(t);
        if (o && typeof o === 'object' && !Array.isArray(o)) return qObject(o);
      } catch { /* a plain query string */ }
    }
    return v;
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) return qObject(v);
  if (typeof v === 'number') return String(v);
  throw new Invalid(`invalid value "${String(v)}"`);
};

function qObject(o: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null || typeof v === 'object') throw new Invalid(`invalid value "${k}"`);
    out[k] = String(v);
  }
  return out;
}

const filtersValidator: Validator = (v) => {
  try {
    return jsonObject(v, undefined as any);
  } catch {
    throw new Invalid(`invalid value "${typeof v === 'string' ? v : JSON.stringify(v)}"`);
  }
};

const thresholdValidator: Validator = (v) => {
  if (v === null || v === 'null' || v === 'None' || v === '') return null;
  return naturalOrInvalid(v, undefined as any);
};

export function searchSchema(ctx: { config: ActionContext['config'] }, dump = false): Schema {
  const rowsMax = () => ctx.config.int('svc.datastore.search.rows_max');
  return {
    ...idFields(true),
    filters: [ignoreMissing, filtersValidator],
    q: [ignoreMissing, qValue],
    full_text: [ignoreMissing, unicodeString],
    plain: optionalBool,
    language: [ignoreMissing, unicodeString],
    distinct: optionalBool,
    limit: dump ? [ignoreMissing, naturalOrInvalid] : [defaultValue(() => ctx.config.int('svc.datastore.search.rows_default')), naturalOrInvalid, (n: number) => Math.min(n, rowsMax())],
    offset: [ignoreMissing, naturalOrInvalid],
    fields: [ignoreMissing, nameList],
    sort: [ignoreMissing, nameList],
    include_total: bool(true),
    total_estimation_threshold: [defaultValue(null), thresholdValidator],
    records_format: [defaultValue('objects'), oneOf(['objects', 'lists', 'csv', 'tsv'])],
    $extras: 'keep',
  };
}

const SEARCH_KEYS = new Set(Object.keys(searchSchema({ config: { int: () => 0 } as any })));

/** Validates search parameters (stray keys are errors), checks read access, resolves aliases. */
export async function prepareSearch(ctx: ActionContext, input: Record<string, unknown>, dump = false): Promise<{ params: Record<string, any>; search: SearchInput }> {
  const p = await validateOrThrow(searchSchema(ctx, dump), withResourceId(input), ctx);
  const stray = Object.keys(p).filter((k) => !SEARCH_KEYS.has(k) && k !== 'callback' && !(dump && (k === 'format' || k === 'bom')));
  if (stray.length) throw new ValidationError({ __extras: [`invalid value "${stray[0]}"`] });
  await checkAccessForSearch(ctx, p);
  const id = await resolveReadable(ctx, p);
  return {
    params: p,
    search: {
      resource_id: id, filters: p.filters, q: p.q, full_text: p.full_text, plain: p.plain, language: p.language, distinct: p.distinct,
      limit: p.limit, offset: p.offset, fields: p.fields, sort: p.sort, include_total: p.include_total,
      total_estimation_threshold: p.total_estimation_threshold, records_format: p.records_format,
      ...(id === METADATA_VIEW ? { only_resources: await readableResources(ctx) } : {}),
    },
  };
}

/** The resources whose tables _table_metadata lists to the caller (undefined: all, for sysadmins). */
async function readableResources(ctx: ActionContext): Promise<string[] | undefined> {
  if (ctx.identity.sysadmin || ctx.ignoreAuth) return undefined;
  const params: unknown[] = [];
  const visible = await visiblePackagesCondition(ctx, params, 'p');
  return datastoreResourceIdsIn(ctx.db, visible, params);
}

async function checkAccessForSearch(ctx: ActionContext, p: Record<string, any>): Promise<void> {
  if (ctx.identity.sysadmin || ctx.ignoreAuth) return;
  await resourceShowAuth(ctx, p);
}

function links(ctx: ActionContext, offset: number, limit: number): Record<string, string> {
  const path = ctx.request?.path ?? '/api/3/action/datastore_search';
  const query = ctx.request?.method === 'GET' ? ctx.request.query : '';
  const parts = query ? query.split('&').filter(Boolean) : [];
  const isOffset = (s: string) => decodeURIComponent(s.split('=')[0].replace(/\+/g, ' ')) === 'offset';
  const withOffset = (n: number | null) => {
    const out: string[] = [];
    let placed = false;
    for (const s of parts) {
      if (isOffset(s)) {
        if (n !== null && !placed) out.push(`offset=${n}`);
        placed = true;
      } else out.push(s);
    }
    if (n !== null && !placed) out.push(`offset=${n}`);
    return out.length ? `${path}?${out.join('&')}` : path;
  };
  const l: Record<string, string> = { start: withOffset(null), next: withOffset(offset + limit) };
  if (offset - limit > 0) l.prev = withOffset(offset - limit);
  return l;
}

const datastoreSearch: ActionDefinition = {
  name: 'datastore_search',
  sideEffectFree: true,
  auth: anyone, // access to the resource is checked in the handler, after the alias is resolved
  help: `Searches a data store table (GET or POST).

:param resource_id: id or alias of the resource; _table_metadata lists all tables and aliases
:param filters: matching conditions, e.g. {"key1": "a", "key2": ["b", "c"]}
:param q: full text query (string), or {field: query} per field
:param full_text: full text query over all fields
:param distinct: return only distinct rows (default False)
:param plain: treat q as plain text (default True); False allows the full text query language
:param language: full text search language (default english)
:param limit: maximum number of rows (default svc.datastore.search.rows_default, at most svc.datastore.search.rows_max)
:param offset: rows to skip
:param fields: fields to return (list or comma-separated; default all, in table order)
:param sort: comma-separated fields, each optionally followed by asc or desc
:param include_total: count the matching rows (default True)
:param total_estimation_threshold: estimate the total above this many rows (default None)
:param records_format: objects (default), lists, csv or tsv
:returns: {fields, records, total, total_was_estimated, limit, offset, _links, ...}`,
  async handler(ctx, input: Record<string, any>) {
    const { params: p, search } = await prepareSearch(ctx, input);
    const r = await backendOf(ctx).search(search);
    const out: Record<string, unknown> = {
      include_total: p.include_total,
      limit: p.limit,
      records_format: p.records_format,
      resource_id: search.resource_id,
      total_estimation_threshold: p.total_estimation_threshold,
    };
    for (const k of ['offset', 'filters', 'q', 'full_text', 'sort', 'plain', 'language', 'distinct'] as const) {
      if (p[k] !== undefined) out[k] = p[k];
    }
    out.fields = r.fields;
    out.records = r.records;
    out._links = links(ctx, p.offset ?? 0, p.limit);
    if (p.include_total) {
      out.total = r.total;
      out.total_was_estimated = r.total_was_estimated ?? false;
    }
    return out;
  },
};

// --- triggers and functions -----------------------------------------------------------------------

const datastoreRunTriggers: ActionDefinition = {
  name: 'datastore_run_triggers',
  sideEffectFree: false,
  auth: sysadminOnly,
  schema: { resource_id: [notEmpty, tableName] },
  help: `Re-applies the table's triggers to every existing row.

:param resource_id: resource id
:returns: the number of rows`,
  async handler(ctx, p: Record<string, any>) {
    return backendOf(ctx).run_triggers(p.resource_id);
  },
};

const functionName: Validator = (v) => {
  if (typeof v !== 'string' || !v || v.includes('\u0000') || byteLength(v) > 63) throw new Invalid(`invalid value "${String(v).slice(0, 100)}"`);
  return v;
};

const datastoreFunctionCreate: ActionDefinition = {
  name: 'datastore_function_create',
  sideEffectFree: false,
  auth: sysadminOnly,
  schema: {
    name: [notEmpty, functionName],
    or_replace: bool(false),
    rettype: [defaultValue('trigger'), oneOf(['trigger'])],
    definition: [notEmpty, unicodeString],
    arguments: [ignoreMissing, jsonList],
  },
  help: `Creates a trigger function (PL/pgSQL) for data store triggers. Sysadmins only.

:param name: function name
:param or_replace: replace an existing function of that name (default False)
:param rettype: return type; must be trigger
:param definition: PL/pgSQL function body
:returns: None`,
  async handler(ctx, p: Record<string, any>) {
    if (p.arguments && p.arguments.length) throw new ValidationError({ arguments: ['trigger functions take no arguments'] });
    await backendOf(ctx).create_function({ name: p.name, definition: p.definition, or_replace: p.or_replace, rettype: p.rettype });
    return null;
  },
};

const datastoreFunctionDelete: ActionDefinition = {
  name: 'datastore_function_delete',
  sideEffectFree: false,
  auth: sysadminOnly,
  schema: { name: [notEmpty, functionName], if_exists: bool(false) },
  help: `Deletes a data store trigger function. Sysadmins only.

:param name: function name
:param if_exists: no error when the function does not exist (default False)
:returns: None`,
  async handler(ctx, p: Record<string, any>) {
    await backendOf(ctx).drop_function(p.name, p.if_exists);
    return null;
  },
};

export const datastoreActions: ActionDefinition<any, any>[] = [
  datastoreCreate, datastoreUpsert, datastoreDelete, datastoreRecordsDelete, datastoreInfo, datastoreSearch,
  datastoreRunTriggers, datastoreFunctionCreate, datastoreFunctionDelete,
];

/** CKAN's set_datastore_active_flag: sets the resource's datastore_active flag (context, data_dict, flag). */
export async function set_datastore_active_flag(ctx: ActionContext, dataDict: { resource_id: string }, flag: boolean): Promise<void> {
  await setDatastoreActiveFlag(ctx.db, dataDict.resource_id, flag);
}
