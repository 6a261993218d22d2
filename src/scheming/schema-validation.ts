// svc's validation Schema (src/validation/validate.ts) from a scheming schema, as ckanext-scheming
// builds CKAN's: each field of the schema file is checked by its `validators` (a preset's, or
// ignore_missing / not_empty when it has none); core fields the file does not list keep svc's
// rules; a core field it lists also keeps svc's checks of the column after its own (a text column
// stays text). repeating_subfields are lists of dicts checked item by item.
import type { ActionContext } from '../context.ts';
import { ValidationError } from '../errors.ts';
import { compileParams } from '../validation/params.ts';
import { packageSchema, resourceParams } from '../validation/package-schema.ts';
import { Invalid, validate, type FieldContext, type FieldSpec, type ListOf, type Schema, type Validator } from '../validation/validate.ts';
import { ignoreMissing, notEmpty } from '../validation/validators.ts';
import type { DatasetSchema, GroupSchema, SchemingField, SchemingSchemas } from './types.ts';
import { storedValue, validatorsFromString } from './validators.ts';
import type { ValidatorScope } from './validator-scope.ts';

/** The schemas of this service, when any is configured. */
function schemingOf(ctx: Pick<ActionContext, 'services'>): SchemingSchemas | undefined {
  return ctx.services?.scheming;
}

/**
 * The dataset schema a dataset of this type is validated with; undefined: svc's own rules (no
 * dataset schema configured, or svc.scheming.dataset_fallback for a type without one). A type
 * without a schema is refused otherwise, naming the types there are.
 */
export function datasetSchemaFor(ctx: Pick<ActionContext, 'services'>, type: unknown): DatasetSchema | undefined {
  const schemas = schemingOf(ctx);
  if (!schemas?.datasets.size) return undefined;
  const t = typeof type === 'string' && type ? type : 'dataset';
  const found = schemas.datasets.get(t);
  if (found || schemas.datasetFallback) return found;
  const known = [...schemas.datasets.keys()].join(', ');
  throw new ValidationError({ type: [`Unsupported dataset type: ${t} (the types are: ${known})`] });
}

/** The group (or organization) schema of this type; undefined: svc's own rules. */
export function groupSchemaFor(ctx: Pick<ActionContext, 'services'>, type: unknown, isOrg: boolean): GroupSchema | undefined {
  const schemas = schemingOf(ctx);
  const map = isOrg ? schemas?.organizations : schemas?.groups;
  if (!map?.size) return undefined;
  const t = typeof type === 'string' && type ? type : isOrg ? 'organization' : 'group';
  const found = map.get(t);
  if (found) return found;
  throw new ValidationError({
    type: [`Unsupported ${isOrg ? 'organization' : 'group'} type: ${t} (the types are: ${[...map.keys()].join(', ')})`],
  });
}

// --- chains -----------------------------------------------------------------------------------

/** Fields whose own validators failed: svc's column checks after them say nothing more. */
const failed = new WeakSet<FieldContext>();

const marking =
  (v: Validator): Validator =>
  async (value, f) => {
    try {
      return await v(value, f);
    } catch (e) {
      if (e instanceof Invalid) failed.add(f);
      throw e;
    }
  };

const unlessFailed =
  (v: Validator): Validator =>
  (value, f) =>
    failed.has(f) ? value : v(value, f);

/** A date the chain left as a date becomes its text before it is stored. */
const finish: Validator = (v) => storedValue(v);

function scopeOf(field: SchemingField, raw: Record<string, unknown>, defaultLocale: string): ValidatorScope {
  return { field, schema: raw, defaultLocale };
}

/** A field's own chain: its validators (create_validators on create), or CKAN's default. */
function ownChain(field: SchemingField, scope: ValidatorScope, create: boolean): Validator[] {
  const spec = (create && typeof field.create_validators === 'string' ? field.create_validators : undefined) ?? field.validators;
  if (typeof spec === 'string') return validatorsFromString(spec, scope);
  return [field.required ? notEmpty : ignoreMissing];
}

/** One dict of a repeating field may come as the dict itself; a form sends the list as field-N-subfield keys. */
const asList: Validator = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? [v] : v);

function subfieldsSpec(field: SchemingField, raw: Record<string, unknown>, locale: string, create: boolean): ListOf {
  const listOf: Schema = { $extras: 'drop' };
  for (const sub of field.repeating_subfields ?? []) listOf[sub.field_name] = fieldSpec(sub, raw, locale, create, undefined);
  const presence: Validator = field.required ? notEmpty : ignoreMissing;
  return { listOf, before: [presence, asList] };
}

/** The spec of one field: its own chain, then (a core field) svc's checks of the column. */
function fieldSpec(
  field: SchemingField,
  raw: Record<string, unknown>,
  locale: string,
  create: boolean,
  core: FieldSpec | undefined,
): FieldSpec {
  if (field.repeating_subfields) return subfieldsSpec(field, raw, locale, create);
  const own = ownChain(field, scopeOf(field, raw, locale), create).map(marking);
  if (!core || !Array.isArray(core)) return [...own, finish];
  return [...own, finish, ...core.map(unlessFailed)];
}

/**
 * The schema's before_validators / after_validators as chains over the whole dict (CKAN's __before
 * and __after): their validators are given the field "__before" / "__after" of the schema.
 */
function schemaHooks(raw: Record<string, unknown>, locale: string): Pick<Schema, '$before' | '$after'> {
  const hooks: Pick<Schema, '$before' | '$after'> = {};
  const chain = (key: '__before' | '__after', spec: unknown) =>
    typeof spec === 'string' && spec.trim() ? validatorsFromString(spec, scopeOf({ field_name: key }, raw, locale)) : undefined;
  const before = chain('__before', raw.before_validators);
  const after = chain('__after', raw.after_validators);
  if (before) hooks.$before = before;
  if (after) hooks.$after = after;
  return hooks;
}

function withFields(base: Schema, fields: SchemingField[], raw: Record<string, unknown>, locale: string, create: boolean): Schema {
  const out: Schema = { ...base, $extras: 'keep' };
  for (const field of fields) {
    const core = base[field.field_name] as FieldSpec | undefined;
    // lists of svc's own shape (tags, resources, groups, extras) keep their declarations
    if (core && !Array.isArray(core) && !field.repeating_subfields) continue;
    out[field.field_name] = fieldSpec(field, raw, locale, create, core);
  }
  return out;
}

const cache = new WeakMap<object, Map<string, Schema>>();

function cached(owner: object, key: string, build: () => Schema): Schema {
  let m = cache.get(owner);
  if (!m) cache.set(owner, (m = new Map()));
  let s = m.get(key);
  if (!s) m.set(key, (s = build()));
  return s;
}

/** The resource schema of a dataset type: svc's resource rules with the schema's resource_fields. */
function resourceSchemaOf(ds: DatasetSchema, locale: string, create = false): Schema {
  return cached(ds, `resource:${locale}:${create}`, () =>
    withFields(compileParams(resourceParams, 'keep'), ds.resource_fields ?? [], ds.raw, locale, create),
  );
}

/** The package_create (create) / package_update schema of a dataset type. */
export function packageSchemaOf(ds: DatasetSchema, opts: { create: boolean }, locale: string): Schema {
  return cached(ds, `package:${locale}:${opts.create}`, () => {
    const schema: Schema = {
      ...withFields(packageSchema(opts), ds.dataset_fields ?? [], ds.raw, locale, opts.create),
      ...schemaHooks(ds.raw, locale),
    };
    const resources = schema.resources as ListOf | undefined;
    if (resources && ds.resource_fields?.length) schema.resources = { ...resources, listOf: resourceSchemaOf(ds, locale, opts.create) };
    return schema;
  });
}

/** The validators of a group schema's fields, over a group dict already checked by svc's rules. */
function groupFieldsSchemaOf(gs: GroupSchema, locale: string, create: boolean): Schema {
  return cached(gs, `group:${locale}:${create}`, () => ({
    ...withFields({}, gs.fields ?? [], gs.raw, locale, create),
    ...schemaHooks(gs.raw, locale),
  }));
}

/**
 * A form's repeating subfields (citation-0-originator, citation-1-originator) as the list of dicts
 * the field's validators expect (ckanext-scheming's expand_form_composite); a dict that already
 * has the field is left alone.
 */
export function expandFormComposite(input: Record<string, unknown>, fields: SchemingField[]): Record<string, unknown> {
  const names = new Set(fields.filter((f) => f.repeating_subfields && !(f.field_name in input)).map((f) => f.field_name));
  if (!names.size) return input;
  const out: Record<string, unknown> = { ...input };
  const lists = new Map<string, Map<string, Record<string, unknown>>>();
  for (const key of Object.keys(input).sort()) {
    const m = /^([^-]+)-(\d+)-(.+)$/.exec(key);
    if (!m || !names.has(m[1])) continue;
    let items = lists.get(m[1]);
    if (!items) lists.set(m[1], (items = new Map()));
    let item = items.get(m[2]);
    if (!item) items.set(m[2], (item = {}));
    item[m[3]] = input[key];
    delete out[key];
  }
  for (const [name, items] of lists) {
    out[name] = [...items.entries()].sort(([a], [b]) => Number(a) - Number(b)).map(([, item]) => item);
  }
  return out;
}

/**
 * A group or organization dict checked by its schema's fields (after svc's own rules): the core
 * fields as the schema's validators leave them, and the schema's other fields (custom, stored as
 * the group's custom fields). Throws the error dict when a field is wrong.
 */
export async function validateGroupFields(
  ctx: ActionContext,
  gs: GroupSchema,
  input: Record<string, unknown>,
  opts: { create: boolean; group?: { id: string }; core: Set<string> },
): Promise<{ core: Record<string, unknown>; custom: Record<string, unknown> }> {
  const locale = ctx.config.str('svc.locale_default') || 'en';
  const schema = groupFieldsSchemaOf(gs, locale, opts.create);
  const sent = expandFormComposite(input, gs.fields ?? []);
  const { data, errors } = await validate(schema, sent, { ctx, group: opts.group, input: sent });
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const core: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  for (const name of Object.keys(schema)) {
    if (name.startsWith('$') || !(name in data)) continue;
    if (opts.core.has(name)) core[name] = data[name];
    else custom[name] = data[name];
  }
  return { core, custom };
}

/** The resource schema of resource_create/update on a dataset of this type; undefined: svc's own. */
export function resourceSchemaFor(ctx: ActionContext, datasetType: string, create: boolean): Schema | undefined {
  const ds = datasetSchemaFor(ctx, datasetType);
  return ds ? resourceSchemaOf(ds, ctx.config.str('svc.locale_default') || 'en', create) : undefined;
}
