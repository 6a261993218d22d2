// Data store writes: datastore_create, datastore_upsert, datastore_delete, datastore_records_delete,
// datastore_run_triggers, datastore_function_create, datastore_function_delete. The storage work is
// the backend's (services.plugins.datastore).
import { Type } from '@sinclair/typebox';
import type { ActionContext } from '../../actions/context.ts';
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import { datastoreCreateSchema } from '../../actions/result-schemas.ts';
import { sysadminOnly } from '../../auth/rules.ts';
import { ValidationError } from '../../errors.ts';
import type { JsonArrayText } from '../../json/array-text.ts';
import { setDatastoreActiveFlag } from '../../model/datastore-flags.ts';
import { p } from '../../validation/params.ts';
import { Invalid, MISSING, type Validator } from '../../validation/validate.ts';
import { oneOf } from '../../validation/validators.ts';
import { backendOf, resourceUpdateAuth, writableResource } from './access.ts';
import {
  aliasesParam,
  boundedJsonList,
  calculateRecordCount,
  FIELDS_MAX,
  fieldNames,
  force,
  idFields,
  jsonList,
  NAMES_MAX,
  names,
  primaryKeyParam,
  recordList,
  recordsSchema,
  resourceIdParam,
  tableName,
} from './params.ts';

// --- datastore_create -------------------------------------------------------------------------

const datastoreCreate = defineAction({
  name: 'datastore_create',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  authBeforeValidation: true,
  description: 'Adds a new table to the data store (or fields, records, aliases, indexes to an existing one).',
  params: {
    ...idFields(false),
    resource: p.object('resource dictionary passed to resource_create (with package_id)'),
    force,
    aliases: aliasesParam,
    fields: p
      .listOf(
        {
          id: p.string('the column name').required(),
          type: p.string('the column type (guessed from the first record when not given)'),
          info: p.object('data dictionary entries (label, notes, type_override...)'),
        },
        `fields/columns and their extra metadata (at most ${FIELDS_MAX}, each name once)`,
      )
      .use(boundedJsonList(FIELDS_MAX), fieldNames),
    records: p.custom<Record<string, unknown>[]>(
      'the data, e.g. [{"dob": "2005", "some_stuff": ["a", "b"]}]',
      [jsonList],
      recordsSchema,
      'list of dictionaries',
    ),
    primary_key: primaryKeyParam,
    indexes: names('indexes on the table (replace existing ones)'),
    triggers: p
      .listOf(
        { function: p.string('a trigger function (datastore_function_create)').required() },
        `trigger functions to apply to this table on update/insert (at most ${NAMES_MAX})`,
      )
      .use(boundedJsonList(NAMES_MAX)),
    calculate_record_count: calculateRecordCount,
    delete_fields: p.boolean('drop existing fields not listed in fields').default(false),
  },
  returns: { description: 'the newly created data object, excluding records', rtype: 'dictionary', schema: datastoreCreateSchema },
  async handler(ctx, prm) {
    if (prm.resource && prm.resource_id) throw new ValidationError({ resource: ['resource cannot be used with resource_id'] });
    if (!prm.resource && !prm.resource_id) throw new ValidationError({ resource_id: ['resource_id or resource required'] });
    const backend = backendOf(ctx);
    let resourceId: string;
    if (prm.resource) {
      const res = await ctx.call('resource_create', {
        ...prm.resource,
        url: prm.resource.url || '_datastore_only_resource',
        url_type: 'datastore',
      });
      resourceId = res.id;
    } else {
      resourceId = prm.resource_id!;
      await writableResource(ctx, resourceId, prm.force);
    }
    const out = await backend.create({
      resource_id: resourceId,
      fields: prm.fields,
      records: prm.records,
      primary_key: prm.primary_key,
      indexes: prm.indexes,
      aliases: prm.aliases,
      triggers: prm.triggers,
      delete_fields: prm.delete_fields,
      calculate_record_count: prm.calculate_record_count,
    });
    await setDatastoreActiveFlag(ctx.db, resourceId, true);
    const { records: _records, id: _id, ...rest } = prm;
    return { ...rest, resource_id: resourceId, fields: out.fields, method: 'insert' };
  },
});

// --- datastore_upsert -------------------------------------------------------------------------

const UPSERT_METHODS = ['upsert', 'insert', 'update'] as const;

const datastoreUpsert = defineAction({
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
      .custom<Record<string, unknown>[] | JsonArrayText>(
        'the data, e.g. [{"dob": "2005", "some_stuff": ["a", "b"]}]',
        [recordList],
        recordsSchema,
        'list of dictionaries',
      )
      .default(() => []),
    method: p
      .custom<(typeof UPSERT_METHODS)[number]>(
        'upsert, insert or update',
        [oneOf(UPSERT_METHODS)],
        Type.Union(UPSERT_METHODS.map((m) => Type.Literal(m))),
      )
      .default('upsert'),
    dry_run: p.boolean('validate and roll back instead of committing').default(false),
    calculate_record_count: calculateRecordCount,
  },
  returns: { description: 'the modified data object', rtype: 'dictionary', schema: datastoreCreateSchema },
  async handler(ctx, prm) {
    await writableResource(ctx, prm.resource_id, prm.force);
    await backendOf(ctx).upsert({
      resource_id: prm.resource_id,
      records: prm.records,
      method: prm.method,
      dry_run: prm.dry_run,
      calculate_record_count: prm.calculate_record_count,
    });
    return prm;
  },
});

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

const filtersParam = (description: string) =>
  p.custom<Record<string, unknown>>(description, [filtersDict], Type.Record(Type.String(), Type.Unknown()), 'dictionary');

const deleteParams = {
  resource_id: resourceIdParam('resource id that the data will be deleted from'),
  force,
  filters: filtersParam('filters to apply before deleting (e.g. {"name": "fred"}); without filters the table and its aliases are dropped'),
  calculate_record_count: calculateRecordCount,
};
const recordsDeleteParams = {
  ...deleteParams,
  filters: filtersParam('filters selecting the records to delete ({} deletes all)').required(),
};

const deleteReturns = {
  description: 'the filters sent, with resource_id',
  rtype: 'dictionary',
  schema: Type.Object({ resource_id: Type.String(), filters: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
};

type DeleteParams = { resource_id: string; force: boolean; filters?: Record<string, unknown>; calculate_record_count: boolean };

async function deleteHandler(ctx: ActionContext, prm: DeleteParams) {
  await writableResource(ctx, prm.resource_id, prm.force);
  await backendOf(ctx).delete({ resource_id: prm.resource_id, filters: prm.filters, calculate_record_count: prm.calculate_record_count });
  if (prm.filters === undefined) await setDatastoreActiveFlag(ctx.db, prm.resource_id, false);
  const result: { resource_id: string; filters?: Record<string, unknown> } = { resource_id: prm.resource_id };
  if (prm.filters !== undefined) result.filters = prm.filters;
  return result;
}

const datastoreDelete = defineAction({
  name: 'datastore_delete',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  description: 'Deletes a table or a set of records from the data store.',
  params: deleteParams,
  returns: deleteReturns,
  handler: deleteHandler,
});

/** datastore_delete with filters required: never drops the table. */
const datastoreRecordsDelete = defineAction({
  name: 'datastore_records_delete',
  sideEffectFree: false,
  auth: resourceUpdateAuth,
  description: 'Deletes records from a data store table (never the table).',
  params: recordsDeleteParams,
  returns: deleteReturns,
  handler: deleteHandler,
});

// --- triggers and functions -----------------------------------------------------------------------

const datastoreRunTriggers = defineAction({
  name: 'datastore_run_triggers',
  sideEffectFree: false,
  auth: sysadminOnly,
  description: "Re-applies the table's triggers to every existing row.",
  params: { resource_id: resourceIdParam('resource id') },
  returns: { description: 'the number of rows', rtype: 'int', schema: Type.Integer() },
  handler: (ctx, prm) => backendOf(ctx).run_triggers(prm.resource_id),
});

/** A function name follows the rules of a table name (PostgreSQL identifiers). */
const functionNameParam = p.custom<string>('function name', [tableName]).required();

const noArguments: Validator = (v) => {
  if (Array.isArray(v) && v.length) throw new Invalid('trigger functions take no arguments');
  return v;
};

const datastoreFunctionCreate = defineAction({
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
  async handler(ctx, prm) {
    await backendOf(ctx).create_function({ name: prm.name, definition: prm.definition, or_replace: prm.or_replace, rettype: prm.rettype });
    return null;
  },
});

const datastoreFunctionDelete = defineAction({
  name: 'datastore_function_delete',
  sideEffectFree: false,
  auth: sysadminOnly,
  description: 'Deletes a data store trigger function. Sysadmins only.',
  params: { name: functionNameParam, if_exists: p.boolean('no error when the function does not exist').default(false) },
  returns: { description: 'None', schema: Type.Null() },
  async handler(ctx, prm) {
    await backendOf(ctx).drop_function(prm.name, prm.if_exists);
    return null;
  },
});

export const datastoreWriteActions: ActionDefinition<any, any>[] = [
  datastoreCreate,
  datastoreUpsert,
  datastoreDelete,
  datastoreRecordsDelete,
  datastoreRunTriggers,
  datastoreFunctionCreate,
  datastoreFunctionDelete,
];
