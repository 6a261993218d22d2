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
import { Invalid, MISSING, Stop, validateOrThrow, type Validator } from '../../validation/validate.ts';
import { intValidator, jsonObject, jsonValue, notEmpty, oneOf, stringList } from '../../validation/validators.ts';
import { Type } from '@sinclair/typebox';
import { compileParams, p } from '../../validation/params.ts';
import { datastoreCreateSchema, datastoreSearchSchema } from '../../actions/result-schemas.ts';

export const READ_ONLY_MESSAGE =
  'Cannot edit read-only resource because changes made may be lost. Use a resource created for editing e.g. with datastore_create or use "force=True" to ignore this warning.';

export function backendOf(ctx: { services: ActionContext['services'] }): DatastoreBackend {
  const b = ctx.services.plugins.datastore as DatastoreBackend | undefined;
  if (!b) throw new NotFoundError('the datastore plugin is not enabled');
  return b;
}

// --- validators -----------------------------------------------------------------------------

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** A table name / resource id: a non-empty string without NUL, at most 63 bytes (PostgreSQL's limit). */
const tableName: Validator = (v) => {
  if (typeof v !== 'string' || !v || v.includes('\u0000') || byteLength(v) > 63)
    throw new Invalid(`invalid value "${String(v).slice(0, 100)}"`);
  return v;
};

/** `id` accepted for resource_id (CKAN 2.11); `id` must come first in the schema. */
const fromId: Validator = (v, f) => (v === MISSING || v === null || v === undefined ? (f.data.id ?? v) : v);
const skipMissing: Validator = (v) => {
  if (v === MISSING || v === null || v === undefined) throw new Stop();
  return v;
};
const idFields = (required: boolean) => ({
  id: p.custom<string>('another name of resource_id', [tableName]),
  resource_id: p
    .custom<string>(
      `id or alias of the resource${required ? '' : ' (or give resource)'}`,
      [fromId, required ? notEmpty : skipMissing, tableName],
      Type.String(),
    )
    .handlesMissing(),
});
const resourceIdParam = (description: string) => p.custom<string>(description, [tableName]).required();
const force = p.boolean('edit a read-only resource').default(false);
const calculateRecordCount = p.boolean('update the stored record count after this call').default(false);

const validFieldName = (name: string) =>
  typeof name === 'string' &&
  name.length > 0 &&
  !name.startsWith('_') &&
  !name.includes('"') &&
  !name.includes('\u0000') &&
  name.trim() === name;

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

const names = (description: string) =>
  p.custom<string[]>(`${description} (a list, or comma-separated)`, [nameList], Type.Array(Type.String()), 'list of strings');
const recordsSchema = Type.Array(Type.Record(Type.String(), Type.Unknown()));

const createParams = {
  ...idFields(false),
  resource: p.object('resource dictionary passed to resource_create (with package_id)'),
  force,
  aliases: p.custom<string[]>(
    'names for read-only aliases of the resource (list or comma-separated)',
    [aliasList],
    Type.Array(Type.String()),
    'list of strings',
  ),
  fields: p
    .listOf(
      {
        id: p.string('the column name').required(),
        type: p.string('the column type (guessed from the first record when not given)'),
        info: p.object('data dictionary entries (label, notes, type_override...)'),
      },
      'fields/columns and their extra metadata',
    )
    .use(jsonValue),
  records: p.custom<unknown[]>(
    'the data, e.g. [{"dob": "2005", "some_stuff": ["a", "b"]}]',
    [jsonList],
    recordsSchema,
    'list of dictionaries',
  ),
  primary_key: names('fields that represent a unique key (replaces an existing one)'),
  indexes: names('indexes on the table (replace existing ones)'),
  triggers: p
    .listOf(
      { function: p.string('a trigger function (datastore_function_create)').required() },
      'trigger functions to apply to this table on update/insert',
    )
    .use(jsonValue),
  calculate_record_count: calculateRecordCount,
  delete_fields: p.boolean('drop existing fields not listed in fields').default(false),
};

const datastoreCreate: ActionDefinition = {
  name: 'datastore_create',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  authBeforeValidation: true,
  description: 'Adds a new table to the data store (or fields, records, aliases, indexes to an existing one).',
  params: createParams,
  returns: { description: 'the newly created data object, excluding records', rtype: 'dictionary', schema: datastoreCreateSchema },
  async handler(ctx, p: Record<string, any>) {
    p = withResourceId(p);
    if (p.resource && p.resource_id) throw new ValidationError({ resource: ['resource cannot be used with resource_id'] });
    if (!p.resource && !p.resource_id) throw new ValidationError({ resource_id: ['resource_id or resource required'] });
    checkFieldsInput(p.fields);
    const backend = backendOf(ctx);
    if (p.resource) {
      const res = await ctx.call('resource_create', {
        ...p.resource,
        url: p.resource.url || '_datastore_only_resource',
        url_type: 'datastore',
      });
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

const UPSERT_METHODS = ['upsert', 'insert', 'update'] as const;

const datastoreUpsert: ActionDefinition = {
  name: 'datastore_upsert',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  // The catalog is only read; the data store's own transaction is the write.
  transaction: false,
  lazyLists: ['records'],
  description: 'Updates or inserts into a table in the data store.',
  params: {
    resource_id: resourceIdParam('resource id that the data is going to be stored under'),
    force,
    records: p
      .custom<unknown[] | JsonArrayText>(
        'the data, e.g. [{"dob": "2005", "some_stuff": ["a", "b"]}]',
        [recordList],
        recordsSchema,
        'list of dictionaries',
      )
      .default(() => []),
    method: p
      .custom<'upsert' | 'insert' | 'update'>(
        'upsert, insert or update',
        [oneOf(UPSERT_METHODS)],
        Type.Union(UPSERT_METHODS.map((m) => Type.Literal(m))),
      )
      .default('upsert'),
    dry_run: p.boolean('validate and roll back instead of committing').default(false),
    calculate_record_count: calculateRecordCount,
  },
  returns: { description: 'the modified data object', rtype: 'dictionary', schema: datastoreCreateSchema },
  async handler(ctx, p: Record<string, any>) {
    await writableResource(ctx, p.resource_id, p.force);
    await backendOf(ctx).upsert({
      resource_id: p.resource_id,
      records: p.records,
      method: p.method,
      dry_run: p.dry_run,
      calculate_record_count: p.calculate_record_count,
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

const deleteParams = (filtersRequired: boolean) => {
  const filters = p.custom<Record<string, unknown>>(
    filtersRequired
      ? 'filters selecting the records to delete ({} deletes all)'
      : 'filters to apply before deleting (e.g. {"name": "fred"}); without filters the table and its aliases are dropped',
    [filtersDict],
    Type.Record(Type.String(), Type.Unknown()),
    'dictionary',
  );
  return {
    resource_id: resourceIdParam('resource id that the data will be deleted from'),
    force,
    filters: filtersRequired ? filters.required() : filters,
    calculate_record_count: calculateRecordCount,
  };
};
const deleteReturns = {
  description: 'the filters sent, with resource_id',
  rtype: 'dictionary',
  schema: Type.Object({ resource_id: Type.String(), filters: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
};

async function deleteHandler(ctx: ActionContext, p: Record<string, any>) {
  await writableResource(ctx, p.resource_id, p.force);
  await backendOf(ctx).delete({ resource_id: p.resource_id, filters: p.filters, calculate_record_count: p.calculate_record_count });
  if (p.filters === undefined) await setDatastoreActiveFlag(ctx.db, p.resource_id, false);
  const result: Record<string, unknown> = { resource_id: p.resource_id };
  if (p.filters !== undefined) result.filters = p.filters;
  return result;
}

/** datastore_delete and datastore_records_delete: one action, the latter with filters required (never drops). */
const deleteAction = (name: string, filtersRequired: boolean, description: string): ActionDefinition => ({
  name,
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  description,
  params: deleteParams(filtersRequired),
  returns: deleteReturns,
  handler: deleteHandler,
});

const datastoreDelete = deleteAction('datastore_delete', false, 'Deletes a table or a set of records from the data store.');
const datastoreRecordsDelete = deleteAction('datastore_records_delete', true, 'Deletes records from a data store table (never the table).');

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
  description: 'Returns the metadata and data dictionary of a data store table.',
  params: idFields(true),
  returns: {
    description: '{"meta": {id, count, table_type, size, db_size, idx_size, aliases}, "fields": [...]}',
    rtype: 'dictionary',
    schema: Type.Object(
      { meta: Type.Record(Type.String(), Type.Unknown()), fields: Type.Array(Type.Unknown()) },
      { additionalProperties: true },
    ),
  },
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
      } catch {
        /* a plain query string */
      }
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

const RECORDS_FORMATS = ['objects', 'lists', 'csv', 'tsv'] as const;
const natural = (description: string) => p.custom<number>(description, [naturalOrInvalid], Type.Integer({ minimum: 0 }), 'int');

/** datastore_search's parameters (the dump route's too: no default limit there, all rows). */
export function searchParams(dump = false) {
  const limit = natural('maximum number of rows (default svc.datastore.search.rows_default, at most svc.datastore.search.rows_max)');
  return {
    ...idFields(true),
    filters: p.custom<Record<string, unknown>>(
      'matching conditions, e.g. {"key1": "a", "key2": ["b", "c"]}',
      [filtersValidator],
      Type.Record(Type.String(), Type.Unknown()),
      'dictionary',
    ),
    q: p.custom<string | Record<string, string>>(
      'full text query (string), or {field: query} per field',
      [qValue],
      Type.Union([Type.String(), Type.Record(Type.String(), Type.String())]),
      'string or dictionary',
    ),
    full_text: p.string('full text query over all fields'),
    plain: p.boolean('treat q as plain text (default true); false allows the full text query language'),
    language: p.string('full text search language (default english)'),
    distinct: p.boolean('return only distinct rows (default false)'),
    limit: dump
      ? limit
      : limit
          .default((f) => f.context.config.int('svc.datastore.search.rows_default'))
          .use((n: number, f) => Math.min(n, f.context.config.int('svc.datastore.search.rows_max'))),
    offset: natural('rows to skip'),
    fields: names('fields to return (default all, in table order)'),
    sort: names('fields, each optionally followed by asc or desc'),
    include_total: p.boolean('count the matching rows').default(true),
    total_estimation_threshold: p
      .custom<number | null>(
        'estimate the total above this many rows (default none)',
        [thresholdValidator],
        Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
        'int',
      )
      .default(null),
    records_format: p
      .custom<(typeof RECORDS_FORMATS)[number]>(
        'objects, lists, csv or tsv',
        [oneOf(RECORDS_FORMATS)],
        Type.Union(RECORDS_FORMATS.map((f) => Type.Literal(f))),
      )
      .default('objects'),
  };
}
const searchSchemas = [compileParams(searchParams(false), 'keep'), compileParams(searchParams(true), 'keep')];

const SEARCH_KEYS = new Set(Object.keys(searchParams()));

/** Validates search parameters (stray keys are errors), checks read access, resolves aliases. */
export async function prepareSearch(
  ctx: ActionContext,
  input: Record<string, unknown>,
  dump = false,
): Promise<{ params: Record<string, any>; search: SearchInput }> {
  const p = await validateOrThrow(searchSchemas[dump ? 1 : 0], withResourceId(input), ctx);
  const stray = Object.keys(p).filter((k) => !SEARCH_KEYS.has(k) && k !== 'callback' && !(dump && (k === 'format' || k === 'bom')));
  if (stray.length) throw new ValidationError({ __extras: [`invalid value "${stray[0]}"`] });
  await checkAccessForSearch(ctx, p);
  const id = await resolveReadable(ctx, p);
  return {
    params: p,
    search: {
      resource_id: id,
      filters: p.filters,
      q: p.q,
      full_text: p.full_text,
      plain: p.plain,
      language: p.language,
      distinct: p.distinct,
      limit: p.limit,
      offset: p.offset,
      fields: p.fields,
      sort: p.sort,
      include_total: p.include_total,
      total_estimation_threshold: p.total_estimation_threshold,
      records_format: p.records_format,
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
  description: 'Searches a data store table (GET or POST). resource_id _table_metadata lists all tables and aliases.',
  params: searchParams(),
  // Other keys are an error ({__extras: ...}), the dump route shares the checks, and aliases are
  // resolved before the access check: prepareSearch validates with these declarations.
  extras: 'keep',
  validatedBy: 'handler',
  returns: {
    description: '{fields, records, total, total_was_estimated, limit, offset, _links, ...}',
    rtype: 'dictionary',
    schema: datastoreSearchSchema,
  },
  async handler(ctx, input: Record<string, any>) {
    const { params: p, search } = await prepareSearch(ctx, input);
    const r = await backendOf(ctx).search({ ...search, records_as_json: ctx.rawJsonAnswer === true });
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
  description: "Re-applies the table's triggers to every existing row.",
  params: { resource_id: resourceIdParam('resource id') },
  returns: { description: 'the number of rows', rtype: 'int', schema: Type.Integer() },
  async handler(ctx, p: Record<string, any>) {
    return backendOf(ctx).run_triggers(p.resource_id);
  },
};

/** A function name follows the rules of a table name (PostgreSQL identifiers). */
const functionNameParam = p.custom<string>('function name', [tableName]).required();

const noArguments: Validator = (v) => {
  if (Array.isArray(v) && v.length) throw new Invalid('trigger functions take no arguments');
  return v;
};

const datastoreFunctionCreate: ActionDefinition = {
  name: 'datastore_function_create',
  sideEffectFree: false,
  auth: sysadminOnly,
  description: 'Creates a trigger function (PL/pgSQL) for data store triggers. Sysadmins only.',
  params: {
    name: functionNameParam,
    or_replace: p.boolean('replace an existing function of that name').default(false),
    rettype: p.custom<'trigger'>('return type; must be trigger', [oneOf(['trigger'])], Type.Literal('trigger')).default('trigger'),
    definition: p.string('PL/pgSQL function body').required(),
    arguments: p
      .custom<unknown[]>('not allowed: trigger functions take no arguments', [jsonList], Type.Array(Type.Unknown()), 'list')
      .use(noArguments),
  },
  returns: { description: 'None', schema: Type.Null() },
  async handler(ctx, p: Record<string, any>) {
    await backendOf(ctx).create_function({ name: p.name, definition: p.definition, or_replace: p.or_replace, rettype: p.rettype });
    return null;
  },
};

const datastoreFunctionDelete: ActionDefinition = {
  name: 'datastore_function_delete',
  sideEffectFree: false,
  auth: sysadminOnly,
  description: 'Deletes a data store trigger function. Sysadmins only.',
  params: { name: functionNameParam, if_exists: p.boolean('no error when the function does not exist').default(false) },
  returns: { description: 'None', schema: Type.Null() },
  async handler(ctx, p: Record<string, any>) {
    await backendOf(ctx).drop_function(p.name, p.if_exists);
    return null;
  },
};

export const datastoreActions: ActionDefinition<any, any>[] = [
  datastoreCreate,
  datastoreUpsert,
  datastoreDelete,
  datastoreRecordsDelete,
  datastoreInfo,
  datastoreSearch,
  datastoreRunTriggers,
  datastoreFunctionCreate,
  datastoreFunctionDelete,
];

/** CKAN's set_datastore_active_flag: sets the resource's datastore_active flag (context, data_dict, flag). */
export async function set_datastore_active_flag(ctx: ActionContext, dataDict: { resource_id: string }, flag: boolean): Promise<void> {
  await setDatastoreActiveFlag(ctx.db, dataDict.resource_id, flag);
}
