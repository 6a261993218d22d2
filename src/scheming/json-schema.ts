// JSON Schemas of the fields of a scheming schema (for the OpenAPI document), read from what the
// field says: its validators (int_validator -> integer, scheming_choices -> enum, ...), its choices,
// its repeating subfields, fluent presets (an object of language -> text), label and help text.
import type { DatasetSchema, GroupSchema, Label, SchemingField, SchemingSchemas } from './types.ts';

export type JsonSchema = Record<string, unknown>;
/** input: what create/update accept; output: what show returns. */
type Direction = 'input' | 'output';

/** A label in English, else in its first language. */
function labelText(label: Label | undefined | null): string | undefined {
  if (label === undefined || label === null) return undefined;
  if (typeof label === 'string') return label;
  if (typeof label !== 'object') return String(label);
  return label.en ?? Object.values(label)[0];
}

/** The validator names of a field's string, without their arguments ("if_empty_same_as(name)" -> if_empty_same_as). */
function validatorNames(validators: unknown): string[] {
  if (typeof validators !== 'string') return [];
  return validators
    .split(/\s+/)
    .filter(Boolean)
    .map((v) => v.replace(/\(.*$/, ''));
}

/** Whether create and update must send the field (required: true, or a not_empty validator). */
function isRequiredField(field: SchemingField): boolean {
  if (field.required === true) return true;
  return validatorNames(field.validators).includes('not_empty');
}

function description(field: SchemingField): string | undefined {
  const label = labelText(field.label);
  const help = labelText(field.help_text);
  const text = [label, help].filter(Boolean).join(': ');
  return text || undefined;
}

/** The languages of a fluent field: its own form_languages, else the schema's. */
function fieldLanguages(field: SchemingField, schemaLanguages: string[] | undefined): string[] | undefined {
  const own = field.form_languages;
  if (Array.isArray(own) && own.length) return own.map(String);
  return schemaLanguages?.length ? schemaLanguages : undefined;
}

/** Fluent values: an object of language -> value; a required field needs each of its form languages. */
function languageObject(value: JsonSchema, languages: string[] | undefined, required: boolean): JsonSchema {
  if (!languages) return { type: 'object', additionalProperties: value };
  return {
    type: 'object',
    properties: Object.fromEntries(languages.map((l) => [l, value])),
    additionalProperties: value,
    ...(required ? { required: languages } : {}),
  };
}

function choiceValues(field: SchemingField): string[] | undefined {
  if (!Array.isArray(field.choices) || !field.choices.length) return undefined;
  return field.choices.map((c) => String(c.value));
}

/** "value (label), ..." when the labels say more than the values. */
function choicesText(field: SchemingField): string | undefined {
  if (!Array.isArray(field.choices)) return undefined;
  const described = field.choices.filter((c) => {
    const label = labelText(c.label);
    return label && label !== String(c.value);
  });
  if (!described.length) return undefined;
  const text = field.choices.map((c) => `${c.value} (${labelText(c.label) ?? c.value})`).join(', ');
  return `Choices: ${text.length > 400 ? `${text.slice(0, 400)}...` : text}`;
}

/** The JSON type of a field's value, by its subfields, preset, validators and choices. */
function valueSchema(field: SchemingField, dir: Direction, languages: string[] | undefined): JsonSchema {
  const names = validatorNames(field.validators);
  const outputs = validatorNames(field.output_validators);
  const has = (n: string) => names.includes(n) || (dir === 'output' && outputs.includes(n));
  const preset = typeof field.preset === 'string' ? field.preset : '';
  const choices = choiceValues(field);

  if (Array.isArray(field.repeating_subfields)) return subfieldsSchema(field.repeating_subfields, dir, languages);
  if (has('fluent_tags') || preset === 'fluent_tags') {
    return languageObject({ type: 'array', items: { type: 'string' } }, fieldLanguages(field, languages), field.required === true);
  }
  if (has('fluent_text') || preset.startsWith('fluent_')) {
    return languageObject({ type: 'string' }, fieldLanguages(field, languages), field.required === true);
  }
  if (has('scheming_multiple_choice')) {
    return { type: 'array', items: choices ? { type: 'string', enum: choices } : { type: 'string' } };
  }
  if (has('scheming_multiple_text')) return { type: 'array', items: { type: 'string' } };
  if (has('scheming_multiple_number')) return { type: 'array', items: { type: 'number' } };
  if (has('scheming_valid_json_object') || has('json_object')) {
    return dir === 'input' ? { description: 'a JSON object, or its JSON text' } : { type: 'object', additionalProperties: true };
  }
  if (has('scheming_choices') || (choices && has('OneOf'))) {
    return choices ? { type: 'string', enum: choices } : { type: 'string' };
  }
  if (has('int_validator') || has('convert_int') || has('is_positive_integer') || has('natural_number_validator')) {
    const min = has('int_validator') || has('convert_int') ? {} : { minimum: has('is_positive_integer') ? 1 : 0 };
    return { type: 'integer', ...min };
  }
  if (has('boolean_validator')) return { type: 'boolean' };
  if (has('scheming_isodatetime_tz')) return { type: 'string', format: 'date-time' };
  // without a zone: not RFC 3339's date-time (which needs one), and a zone is refused
  if (has('scheming_isodatetime')) {
    return { type: 'string', description: 'a date and time without time zone (ISO 8601)', examples: ['2024-05-17T10:30:00'] };
  }
  if (has('isodate')) return { type: 'string', format: 'date' };
  if (has('dcat_date')) return { type: 'string', description: 'a year (YYYY), a month (YYYY-MM), a date or a date-time (ISO 8601)' };
  if (has('email_validator')) return { type: 'string', format: 'email' };
  if (has('url_validator')) return { type: 'string', format: 'uri' };
  if (has('name_validator') || has('group_name_validator')) return { type: 'string', pattern: '^[a-z0-9_-]{2,100}$' };
  if (has('list_of_strings')) return { type: 'array', items: { type: 'string' } };
  return { type: 'string' };
}

function subfieldsSchema(subfields: SchemingField[], dir: Direction, languages: string[] | undefined): JsonSchema {
  const { properties, required } = fieldsSchema(subfields, dir, languages);
  const item: JsonSchema = { type: 'object', properties, additionalProperties: true };
  if (dir === 'input' && required.length) item.required = required;
  return { type: 'array', items: item };
}

/** The JSON Schema of one field's value, with its description. */
export function fieldSchema(field: SchemingField, dir: Direction, languages?: string[]): JsonSchema {
  const value = valueSchema(field, dir, languages);
  const parts = [description(field), value.description as string | undefined, choicesText(field)].filter((x): x is string => !!x);
  const text = parts.map((x, i) => (i ? x.charAt(0).toUpperCase() + x.slice(1) : x)).join('. ');
  return text ? { ...value, description: text } : value;
}

/** Properties and required names of a list of fields. */
export function fieldsSchema(
  fields: SchemingField[],
  dir: Direction,
  languages?: string[],
): { properties: Record<string, JsonSchema>; required: string[] } {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of fields) {
    if (typeof field.field_name !== 'string') continue;
    properties[field.field_name] = fieldSchema(field, dir, languages);
    if (isRequiredField(field)) required.push(field.field_name);
  }
  return { properties, required };
}

/** The schema-level form_languages (ckanext-fluent), when the file has them. */
export function schemaLanguages(schema: DatasetSchema | GroupSchema): string[] | undefined {
  const langs = schema.raw?.form_languages;
  return Array.isArray(langs) && langs.length ? langs.map(String) : undefined;
}

/** A name usable in an OpenAPI component key (letters, digits, '.', '-', '_'). */
export function componentName(...parts: string[]): string {
  return parts.map((p) => p.replace(/[^A-Za-z0-9.\-_]/g, '_')).join('_');
}

/** The paragraphs help_show adds to actions whose input depends on the configured types. */
export function schemingHelpNotes(scheming: SchemingSchemas): Record<string, string> {
  const notes: Record<string, string> = {};
  const list = (types: Iterable<string>) => [...types].map((t) => `"${t}"`).join(', ');
  const datasetTypes = [...scheming.datasets.keys()];
  if (datasetTypes.length) {
    const fallback = scheming.datasetFallback ? ' Other types are validated by the default schema.' : '';
    const text =
      `Dataset types of this site: ${list(datasetTypes)}. Send "type" to choose one (default "dataset").${fallback} ` +
      'The fields of each type, with their labels, choices and validators, are listed by scheming_dataset_schema_show ' +
      '(e.g. {"type": "' +
      `${datasetTypes[0]}"}); its custom fields are top-level keys of the dataset and of its resources.`;
    for (const action of ['package_create', 'package_update', 'package_patch']) notes[action] = text;
  }
  for (const [kind, map, show] of [
    ['group', scheming.groups, 'scheming_group_schema_show'],
    ['organization', scheming.organizations, 'scheming_organization_schema_show'],
  ] as const) {
    const types = [...map.keys()];
    if (!types.length) continue;
    const text =
      `${kind === 'group' ? 'Group' : 'Organization'} types of this site: ${list(types)}. Send "type" to choose one (default "${kind}"). ` +
      `The fields of each type are listed by ${show} (e.g. {"type": "${types[0]}"}); its custom fields are top-level keys of the ${kind}.`;
    for (const action of [`${kind}_create`, `${kind}_update`, `${kind}_patch`]) notes[action] = text;
  }
  return notes;
}
