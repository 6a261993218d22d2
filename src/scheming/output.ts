// Output validators (a field's `output_validators`, e.g. scheming_load_json, fluent_text_output)
// run on every dict read out: package_show, search results, lists, activity, group and
// organization dicts. The one place they run; package-dict.ts and group-dict.ts call it.
import type { Config } from '../config/load.ts';
import { Keep, MISSING, Stop, type FieldContext, type Validator } from '../validation/validate.ts';
import type { DatasetSchema, GroupSchema, SchemingField, SchemingSchemas } from './types.ts';
import { validatorsFromString } from './validators.ts';

/**
 * The schemas of the app a dict is read for. Most reads pass their services; a read that has
 * only the configuration (an activity record) finds the schemas seen with that configuration.
 */
const byConfig = new WeakMap<Config, SchemingSchemas>();

function schemasForDicts(ctx: { config: Config; services?: { scheming?: SchemingSchemas } }): SchemingSchemas | undefined {
  const own = ctx.services?.scheming;
  if (own) {
    byConfig.set(ctx.config, own);
    return own;
  }
  return byConfig.get(ctx.config);
}

interface OutputField {
  key: string;
  chain?: Validator[];
  /** repeating_subfields with output validators of their own */
  items?: OutputField[];
}

function outputFields(fields: SchemingField[], raw: Record<string, unknown>, locale: string): OutputField[] {
  const out: OutputField[] = [];
  for (const field of fields) {
    const own =
      typeof field.output_validators === 'string'
        ? validatorsFromString(field.output_validators, { field, schema: raw, defaultLocale: locale })
        : [];
    const items = field.repeating_subfields ? outputFields(field.repeating_subfields, raw, locale) : [];
    if (own.length || items.length)
      out.push({ key: field.field_name, chain: own.length ? own : undefined, items: items.length ? items : undefined });
  }
  return out;
}

const compiled = new WeakMap<object, Map<string, OutputField[]>>();

function compiledFor(owner: object, key: string, build: () => OutputField[]): OutputField[] {
  let m = compiled.get(owner);
  if (!m) compiled.set(owner, (m = new Map()));
  let f = m.get(key);
  if (!f) m.set(key, (f = build()));
  return f;
}

/** Runs the output chains on a dict in place; a chain that fails leaves the value as stored. */
async function applyFields(dict: Record<string, unknown>, fields: OutputField[]): Promise<void> {
  for (const of of fields) {
    let value = dict[of.key];
    if (value === undefined || value === null) continue;
    if (of.chain) {
      const f: FieldContext = { key: of.key, data: dict, context: undefined };
      try {
        for (const v of of.chain) value = await v(value, f);
      } catch (e) {
        if (e instanceof Keep) value = e.value;
        else if (!(e instanceof Stop)) value = dict[of.key];
      }
      if (value !== MISSING) dict[of.key] = value;
    }
    if (of.items && Array.isArray(dict[of.key])) {
      for (const item of dict[of.key] as unknown[])
        if (item && typeof item === 'object') await applyFields(item as Record<string, unknown>, of.items);
    }
  }
}

/** Applies the dataset schema's output validators to package dicts (and their resources) in place. */
export async function outputPackageDicts(
  ctx: { config: Config; services?: { scheming?: SchemingSchemas } },
  dicts: Record<string, unknown>[],
): Promise<void> {
  const schemas = schemasForDicts(ctx);
  if (!schemas?.datasets.size) return;
  const locale = ctx.config.str('svc.locale_default') || 'en';
  for (const dict of dicts) {
    const ds: DatasetSchema | undefined = schemas.datasets.get(String(dict.type ?? 'dataset'));
    if (!ds) continue;
    const fields = compiledFor(ds, `dataset:${locale}`, () => outputFields(ds.dataset_fields ?? [], ds.raw, locale));
    if (fields.length) await applyFields(dict, fields);
    const resFields = compiledFor(ds, `resource:${locale}`, () => outputFields(ds.resource_fields ?? [], ds.raw, locale));
    if (resFields.length && Array.isArray(dict.resources))
      for (const r of dict.resources as Record<string, unknown>[]) await applyFields(r, resFields);
  }
}

/** Applies a resource's output validators (resource_show), given its dataset's type. */
export async function outputResourceDict(
  ctx: { config: Config; services?: { scheming?: SchemingSchemas } },
  datasetType: string,
  dict: Record<string, unknown>,
): Promise<void> {
  const ds = schemasForDicts(ctx)?.datasets.get(datasetType);
  if (!ds) return;
  const locale = ctx.config.str('svc.locale_default') || 'en';
  const resFields = compiledFor(ds, `resource:${locale}`, () => outputFields(ds.resource_fields ?? [], ds.raw, locale));
  if (resFields.length) await applyFields(dict, resFields);
}

/** Applies a group or organization schema's output validators to its dict in place. */
export async function outputGroupDict(
  ctx: { config: Config; services?: { scheming?: SchemingSchemas } },
  dict: Record<string, unknown>,
  isOrg: boolean,
): Promise<void> {
  const schemas = schemasForDicts(ctx);
  const map = isOrg ? schemas?.organizations : schemas?.groups;
  if (!map?.size) return;
  const gs: GroupSchema | undefined = map.get(String(dict.type ?? (isOrg ? 'organization' : 'group')));
  if (!gs) return;
  const locale = ctx.config.str('svc.locale_default') || 'en';
  const fields = compiledFor(gs, `group:${locale}`, () => outputFields(gs.fields ?? [], gs.raw, locale));
  if (fields.length) await applyFields(dict, fields);
}
