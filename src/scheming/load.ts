// Loads the configured schema files (svc.scheming.*) at start: reads them, checks them (anything
// wrong stops the start with the file, the line or field, and what is wrong) and expands each
// field's preset into it, as ckanext-scheming does.
import path from 'node:path';
import { ConfigError, type Config } from '../config/load.ts';
import type { DatasetSchema, GroupSchema, Preset, SchemingField, SchemingSchemas } from './types.ts';
import { BUILTIN_PRESET_FILES, SCHEMING_PRESETS_NAME } from './presets.ts';
import { readSchemaFile, resolveSchemaPath, type PathKey, type SchemaFile } from './schema-file.ts';
import { parseValidatorSpec } from './validator-spec.ts';
import { isKnownValidator } from './validators.ts';
import { KNOWN_DISPLAY_SNIPPETS, KNOWN_FORM_SNIPPETS } from './snippets.ts';
import { CHOICES_HELPERS, isChoiceList } from './choices.ts';

export { parseValidatorSpec } from './validator-spec.ts';

interface Warner {
  warn(obj: object, msg: string): void;
}

type Dict = Record<string, unknown>;

const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The keys of a field whose value is a validators string. */
const VALIDATOR_KEYS = ['validators', 'output_validators', 'create_validators'] as const;
/** The keys of a schema whose value is a validators string. */
const SCHEMA_VALIDATOR_KEYS = ['before_validators', 'after_validators'] as const;
/** Keys whose value is a list of fields inside a field. */
const SUBFIELD_KEYS = ['repeating_subfields', 'simple_subfields'] as const;

/** The configured schemas, checked; undefined when none is configured (svc behaves as without scheming). */
export async function loadSchemingSchemas(config: Config, logger?: Warner): Promise<SchemingSchemas | undefined> {
  const options = {
    dataset: 'svc.scheming.dataset_schemas',
    group: 'svc.scheming.group_schemas',
    organization: 'svc.scheming.organization_schemas',
  } as const;
  const lists = {
    dataset: config.list(options.dataset),
    group: config.list(options.group),
    organization: config.list(options.organization),
  };
  if (!lists.dataset.length && !lists.group.length && !lists.organization.length) return undefined;
  const baseDir = config.file ? path.dirname(path.resolve(config.file)) : process.cwd();
  const presets = loadPresets(config.list('svc.scheming.presets'), baseDir);
  const loader = new SchemaExpander(presets, logger);

  const read = (option: string, entry: string) => readSchemaFile(option, resolveSchemaPath(option, entry, baseDir));
  const datasets = new Map<string, DatasetSchema>();
  for (const entry of lists.dataset) {
    const schema = loader.datasetSchema(read(options.dataset, entry));
    const earlier = datasets.get(schema.dataset_type);
    if (earlier)
      throw new ConfigError(`${options.dataset}: ${schema.source} and ${earlier.source} both define dataset_type "${schema.dataset_type}"`);
    datasets.set(schema.dataset_type, schema);
  }
  const groupsOf = (kind: 'group' | 'organization') => {
    const out = new Map<string, GroupSchema>();
    for (const entry of lists[kind]) {
      const schema = loader.groupSchema(read(options[kind], entry), `${kind}_type`);
      const earlier = out.get(schema.type);
      if (earlier)
        throw new ConfigError(`${options[kind]}: ${schema.source} and ${earlier.source} both define ${kind}_type "${schema.type}"`);
      out.set(schema.type, schema);
    }
    return out;
  };
  return {
    datasets,
    groups: groupsOf('group'),
    organizations: groupsOf('organization'),
    datasetFallback: config.bool('svc.scheming.dataset_fallback'),
    presets,
  };
}

/**
 * The presets by name: the built-in ckanext-scheming ones always, then each entry of
 * svc.scheming.presets in order (a later file's preset replaces an earlier one of the same name).
 */
export function loadPresets(entries: string[], baseDir: string): Map<string, Preset> {
  const option = 'svc.scheming.presets';
  const out = new Map<string, Preset>();
  const add = (list: readonly Preset[]) => {
    for (const p of list) out.set(p.preset_name, p);
  };
  add(BUILTIN_PRESET_FILES.get(SCHEMING_PRESETS_NAME)!);
  for (const entry of entries) {
    const builtin = BUILTIN_PRESET_FILES.get(entry);
    if (builtin) {
      add(builtin);
      continue;
    }
    const file = readSchemaFile(option, resolveSchemaPath(option, entry, baseDir));
    add(presetsOfFile(option, file));
  }
  return out;
}

function presetsOfFile(option: string, file: SchemaFile): Preset[] {
  const fail = (at: PathKey[], what: string): never => {
    const line = file.lineOf(at);
    throw new ConfigError(`${option}: ${file.source}${line ? ` line ${line}` : ''}: ${what}`);
  };
  if (!isDict(file.data) || !Array.isArray(file.data.presets)) return fail([], 'a preset file needs a "presets" list');
  return file.data.presets.map((p: unknown, i) => {
    if (!isDict(p) || typeof p.preset_name !== 'string' || !p.preset_name) return fail(['presets', i], 'a preset without preset_name');
    if (!isDict(p.values)) return fail(['presets', i], `preset "${p.preset_name}" needs a "values" mapping`);
    return { preset_name: p.preset_name, values: p.values as Partial<SchemingField> };
  });
}

/** Checks one file's schema and expands its fields; messages name the file and the line or field. */
class SchemaExpander {
  /** Snippet names already warned about (one warning per name). */
  private readonly warned = new Set<string>();

  constructor(
    private readonly presets: Map<string, Preset>,
    private readonly logger?: Warner,
  ) {}

  datasetSchema(file: SchemaFile): DatasetSchema {
    const raw = this.schemaDict(file, 'dataset_type', 'svc.scheming.dataset_schemas');
    if (!('dataset_fields' in raw)) this.fail(file, [], 'a dataset schema needs a "dataset_fields" list');
    return {
      ...this.common(file, raw),
      dataset_type: raw.dataset_type as string,
      dataset_fields: this.fields(file, ['dataset_fields'], raw.dataset_fields),
      resource_fields: raw.resource_fields == null ? [] : this.fields(file, ['resource_fields'], raw.resource_fields),
    };
  }

  groupSchema(file: SchemaFile, typeKey: 'group_type' | 'organization_type'): GroupSchema {
    const option = typeKey === 'group_type' ? 'svc.scheming.group_schemas' : 'svc.scheming.organization_schemas';
    // Without a type the file customises the default type (ckanext-dcat's publisher_organization.yaml).
    const defaultType = typeKey.replace('_type', '');
    const raw = this.schemaDict(file, typeKey, option, defaultType);
    if (!('fields' in raw)) this.fail(file, [], `a ${defaultType} schema needs a "fields" list`);
    const type = (raw[typeKey] as string | undefined) ?? defaultType;
    return { ...this.common(file, raw), type, fields: this.fields(file, ['fields'], raw.fields) };
  }

  private schemaDict(file: SchemaFile, typeKey: string, option: string, defaultType?: string): Dict {
    const raw = file.data;
    if (!isDict(raw)) return this.fail(file, [], 'a schema must be a mapping of keys (dataset_type, dataset_fields, ...)');
    const type = raw[typeKey];
    if (type === undefined && defaultType) return raw;
    if (typeof type !== 'string' || !type.trim())
      this.fail(file, typeKey in raw ? [typeKey] : [], `"${typeKey}" must name the type (${option})`);
    return raw;
  }

  private common(file: SchemaFile, raw: Dict) {
    const version = raw.scheming_version ?? 2;
    if (version !== 1 && version !== 2)
      this.fail(file, ['scheming_version'], `scheming_version ${JSON.stringify(version)} is not supported (1 or 2)`);
    for (const key of SCHEMA_VALIDATOR_KEYS) if (key in raw) this.checkValidators(file, [key], `"${key}"`, raw[key]);
    return {
      scheming_version: version as 1 | 2,
      ...(typeof raw.about === 'string' ? { about: raw.about } : {}),
      ...(typeof raw.about_url === 'string' ? { about_url: raw.about_url } : {}),
      source: file.source,
      // its own copy: nothing done to the expanded fields reaches what expanded=false answers
      raw: structuredClone(raw),
    };
  }

  /** A list of fields, checked and expanded (subfields too). */
  private fields(file: SchemaFile, at: PathKey[], list: unknown): SchemingField[] {
    const listName = at.filter((k) => typeof k === 'string').join('.');
    if (!Array.isArray(list)) return this.fail(file, at, `"${listName}" must be a list of fields`);
    const seen = new Map<string, number>();
    return list.map((item, i) => {
      const where = [...at, i];
      if (!isDict(item)) return this.fail(file, where, `${listName} item ${i + 1} is not a field (a mapping with field_name)`);
      const name = item.field_name;
      if (typeof name !== 'string' || !name.trim()) return this.fail(file, where, `${listName} item ${i + 1} has no field_name`);
      const first = seen.get(name);
      if (first !== undefined) {
        const firstLine = file.lineOf([...at, first]);
        this.fail(file, where, `field "${name}" is defined twice in ${listName}${firstLine ? ` (first on line ${firstLine})` : ''}`);
      }
      seen.set(name, i);
      return this.field(file, where, item as SchemingField);
    });
  }

  /** One field with its preset's values merged in (the field's own keys win), checked. */
  private field(file: SchemaFile, at: PathKey[], field: SchemingField): SchemingField {
    const label = `field "${field.field_name}"`;
    let out: SchemingField = field;
    if (field.preset !== undefined && field.preset !== null) {
      const preset = typeof field.preset === 'string' ? this.presets.get(field.preset) : undefined;
      if (!preset)
        this.fail(
          file,
          [...at, 'preset'],
          `${label}: unknown preset ${JSON.stringify(field.preset)} (add its preset file to svc.scheming.presets; built in: ${[...BUILTIN_PRESET_FILES.keys()].join(', ')})`,
        );
      out = { ...structuredClone(preset!.values), ...field };
    } else out = { ...field };

    if ('choices' in out && out.choices !== null) {
      if (!Array.isArray(out.choices)) this.fail(file, [...at, 'choices'], `${label}: choices must be a list`);
      const bad = (out.choices as unknown[]).findIndex((c) => !isChoiceList([c]));
      if (bad >= 0) this.fail(file, [...at, 'choices', bad], `${label}: choice ${bad + 1} must be a mapping with a value`);
    }
    if (out.choices_helper !== undefined && out.choices_helper !== null) {
      const helper = typeof out.choices_helper === 'string' ? CHOICES_HELPERS.get(out.choices_helper) : undefined;
      if (!helper)
        this.fail(
          file,
          [...at, 'choices_helper'],
          `${label}: unknown choices_helper ${JSON.stringify(out.choices_helper)} (svc has: ${[...CHOICES_HELPERS.keys()].join(', ')})`,
        );
      const problem = helper!.check(out);
      if (problem) this.fail(file, at, `${label}: ${problem}`);
      if (helper!.resolve && !('choices' in out)) out.choices = helper!.resolve(out);
    }
    for (const key of VALIDATOR_KEYS) if (key in out) this.checkValidators(file, [...at, key], `${label} ${key}`, out[key]);
    this.checkSnippet(file, at, label, 'form_snippet', out.form_snippet, KNOWN_FORM_SNIPPETS);
    this.checkSnippet(file, at, label, 'display_snippet', out.display_snippet, KNOWN_DISPLAY_SNIPPETS);
    for (const key of SUBFIELD_KEYS) if (key in out) out[key] = this.fields(file, [...at, key], out[key]);
    return out;
  }

  private checkValidators(file: SchemaFile, at: PathKey[], what: string, value: unknown): void {
    if (value === null) return;
    if (typeof value !== 'string') this.fail(file, at, `${what} must be a string of validator names`);
    for (const { name } of parseValidatorSpec(value as string))
      if (!isKnownValidator(name)) this.fail(file, at, `${what}: unknown validator "${name}"`);
  }

  private checkSnippet(file: SchemaFile, at: PathKey[], label: string, key: string, value: unknown, known: ReadonlySet<string>) {
    if (value === undefined || value === null) return;
    if (typeof value !== 'string') this.fail(file, [...at, key], `${label}: ${key} must be a template name or null`);
    const name = value as string;
    if (known.has(name) || this.warned.has(`${key}:${name}`)) return;
    this.warned.add(`${key}:${name}`);
    const line = file.lineOf([...at, key]);
    this.logger?.warn(
      { file: file.source, line, field: label, [key]: name },
      `scheming: ${key} "${name}" (${file.source}${line ? ` line ${line}` : ''}, ${label}) has no widget in svc; the default one is used`,
    );
  }

  private fail(file: SchemaFile, at: PathKey[], what: string): never {
    let line: number | undefined;
    for (let n = at.length; n >= 0 && line === undefined; n--) line = file.lineOf(at.slice(0, n));
    throw new ConfigError(`${file.source}${line ? ` line ${line}` : ''}: ${what}`);
  }
}
