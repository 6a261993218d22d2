// Data store reads: datastore_info and datastore_search (whose validation the dump route shares:
// prepareSearch). Aliases are resolved before the access check; _table_metadata lists the tables
// of the resources the caller may read.
import { Type } from '@sinclair/typebox';
import type { ActionContext } from '../../actions/context.ts';
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import { datastoreSearchSchema } from '../../actions/result-schemas.ts';
import { visiblePackagesCondition } from '../../auth/authz.ts';
import { anyone } from '../../auth/rules.ts';
import type { SearchInput } from '../../datastore/backend.ts';
import { METADATA_VIEW } from '../../datastore/postgres.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { datastoreResourceIdsIn } from '../../model/datastore-flags.ts';
import { compileParams, p, type ParamValues } from '../../validation/params.ts';
import { Invalid, validateOrThrow, type Validator } from '../../validation/validate.ts';
import { jsonObject, oneOf } from '../../validation/validators.ts';
import { backendOf, resolveReadable, resourceShowAuth, withResourceId } from './access.ts';
import { FIELDS_MAX, idFields, natural, naturalOrInvalid, names } from './params.ts';

// --- datastore_info -----------------------------------------------------------------------------

const notFoundAsAlias = (resourceId: unknown) => (e: unknown) => {
  if (e instanceof NotFoundError) throw new NotFoundError(`Resource/Alias "${String(resourceId)}" was not found.`);
  throw e;
};

const datastoreInfo = defineAction({
  name: 'datastore_info',
  sideEffectFree: true,
  auth: (ctx, prm) => Promise.resolve(resourceShowAuth(ctx, prm)).catch(notFoundAsAlias(prm.resource_id)),
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
  async handler(ctx, prm) {
    try {
      return await backendOf(ctx).resource_info(await resolveReadable(ctx, prm));
    } catch (e) {
      return notFoundAsAlias(prm.resource_id)(e);
    }
  },
});

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
  if (v && typeof v === 'object' && !Array.isArray(v)) return qObject(v as Record<string, unknown>);
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

const filtersValidator: Validator = (v, f) => {
  try {
    return jsonObject(v, f);
  } catch {
    throw new Invalid(`invalid value "${typeof v === 'string' ? v : JSON.stringify(v)}"`);
  }
};

const thresholdValidator: Validator = (v, f) => {
  if (v === null || v === 'null' || v === 'None' || v === '') return null;
  return naturalOrInvalid(v, f);
};

const RECORDS_FORMATS = ['objects', 'lists', 'csv', 'tsv'] as const;

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
    fields: names('fields to return (default all, in table order)', FIELDS_MAX),
    sort: names('fields, each optionally followed by asc or desc', FIELDS_MAX),
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

type SearchParams = ParamValues<ReturnType<typeof searchParams>>;

const searchSchemas = [compileParams(searchParams(false), 'keep'), compileParams(searchParams(true), 'keep')];

const SEARCH_KEYS = new Set(Object.keys(searchParams()));

/** Validates search parameters (stray keys are errors), checks read access, resolves aliases. */
export async function prepareSearch(
  ctx: ActionContext,
  input: Record<string, unknown>,
  dump = false,
): Promise<{ params: SearchParams & Record<string, unknown>; search: SearchInput }> {
  const prm = await validateOrThrow<SearchParams & Record<string, unknown>>(searchSchemas[dump ? 1 : 0], withResourceId(input), ctx);
  const stray = Object.keys(prm).filter((k) => !SEARCH_KEYS.has(k) && k !== 'callback' && !(dump && (k === 'format' || k === 'bom')));
  if (stray.length) throw new ValidationError({ __extras: [`invalid value "${stray[0]}"`] });
  if (!ctx.identity.sysadmin && !ctx.ignoreAuth) await resourceShowAuth(ctx, prm);
  const id = await resolveReadable(ctx, prm);
  return {
    params: prm,
    search: {
      resource_id: id,
      filters: prm.filters,
      q: prm.q,
      full_text: prm.full_text,
      plain: prm.plain,
      language: prm.language,
      distinct: prm.distinct,
      // Undefined only for the dump route (all rows).
      limit: prm.limit as number,
      offset: prm.offset,
      fields: prm.fields,
      sort: prm.sort,
      include_total: prm.include_total,
      total_estimation_threshold: prm.total_estimation_threshold,
      records_format: prm.records_format,
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

/** CKAN's _links: the same request at the first page and at the next (and previous) one. */
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

const datastoreSearch = defineAction({
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
  async handler(ctx, input) {
    const { params: prm, search } = await prepareSearch(ctx, input as Record<string, unknown>);
    const r = await backendOf(ctx).search({ ...search, records_as_json: ctx.rawJsonAnswer === true });
    const out: Record<string, unknown> = {
      include_total: prm.include_total,
      limit: prm.limit,
      records_format: prm.records_format,
      resource_id: search.resource_id,
      total_estimation_threshold: prm.total_estimation_threshold,
    };
    for (const k of ['offset', 'filters', 'q', 'full_text', 'sort', 'plain', 'language', 'distinct'] as const) {
      if (prm[k] !== undefined) out[k] = prm[k];
    }
    out.fields = r.fields;
    out.records = r.records;
    out._links = links(ctx, prm.offset ?? 0, prm.limit ?? 0);
    if (prm.include_total) {
      out.total = r.total;
      out.total_was_estimated = r.total_was_estimated ?? false;
    }
    return out;
  },
});

export const datastoreReadActions: ActionDefinition<any, any>[] = [datastoreInfo, datastoreSearch];
