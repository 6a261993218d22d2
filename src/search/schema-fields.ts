// What the configured dataset schemas (ckanext-scheming files, services.scheming) tell search
// about custom fields: which are dates or numbers (ranges and sorts by value, not by text), which
// a schema declares (sortable, as Solr sorts CKAN's indexed fields), and which are facets whose
// values are counted (choice fields and the `{field}_{subfield}` lists of repeating subfields).
// Fields no schema declares stay what they were: extras, matched as strings.
import type { SchemingField, SchemingSchemas } from '../scheming/types.ts';

export type CustomFieldType = 'date' | 'number';

export interface SearchSchemaFields {
  typed: ReadonlyMap<string, CustomFieldType>;
  declared: ReadonlySet<string>;
  counted: ReadonlySet<string>;
}

export const NO_SCHEMA_FIELDS: SearchSchemaFields = { typed: new Map(), declared: new Set(), counted: new Set() };

const DATE_VALIDATORS = new Set([
  'isodate',
  'scheming_isodatetime',
  'scheming_isodatetime_tz',
  'convert_to_json_if_date',
  'convert_to_json_if_datetime',
]);
const DATE_PRESETS = new Set(['date', 'datetime', 'datetime_tz', 'dcat_date']);
const NUMBER_VALIDATORS = new Set(['int_validator', 'natural_number_validator', 'is_positive_integer']);
const CHOICE_VALIDATORS = new Set(['scheming_choices', 'scheming_multiple_choice']);
const CHOICE_PRESETS = new Set(['select', 'radio', 'multiple_checkbox', 'multiple_select']);

/** Validator names of a field's chain ("ignore_missing if_empty_same_as(name)" -> ignore_missing, if_empty_same_as). */
function validatorNames(f: SchemingField): string[] {
  return `${f.validators ?? ''}`
    .split(/\s+/)
    .filter(Boolean)
    .map((v) => v.replace(/\(.*$/, ''));
}

function typeOf(f: SchemingField): CustomFieldType | null {
  const names = validatorNames(f);
  if ((f.preset && DATE_PRESETS.has(f.preset)) || names.some((n) => DATE_VALIDATORS.has(n))) return 'date';
  if (names.some((n) => NUMBER_VALIDATORS.has(n))) return 'number';
  return null;
}

function isChoice(f: SchemingField): boolean {
  return (
    Array.isArray(f.choices) ||
    typeof f.choices_helper === 'string' ||
    (!!f.preset && CHOICE_PRESETS.has(f.preset)) ||
    validatorNames(f).some((n) => CHOICE_VALIDATORS.has(n))
  );
}

const cache = new WeakMap<SchemingSchemas, SearchSchemaFields>();

/** The search fields of the configured dataset schemas (a field typed differently by two schemas is not typed). */
export function searchSchemaFields(schemas: SchemingSchemas | undefined): SearchSchemaFields {
  if (!schemas) return NO_SCHEMA_FIELDS;
  const known = cache.get(schemas);
  if (known) return known;
  const typed = new Map<string, CustomFieldType | null>();
  const declared = new Set<string>();
  const counted = new Set<string>();
  const add = (name: string, f: SchemingField, facet: boolean) => {
    const type = typeOf(f);
    typed.set(name, typed.has(name) && typed.get(name) !== type ? null : type);
    declared.add(name);
    if (facet) counted.add(name);
  };
  for (const schema of schemas.datasets.values()) {
    for (const f of schema.dataset_fields) {
      if (typeof f.field_name !== 'string') continue;
      if (Array.isArray(f.repeating_subfields)) {
        for (const sub of f.repeating_subfields) {
          if (typeof sub.field_name === 'string') add(`${f.field_name}_${sub.field_name}`, sub, true);
        }
        continue;
      }
      add(f.field_name, f, isChoice(f));
    }
  }
  const out: SearchSchemaFields = {
    typed: new Map([...typed].filter((e): e is [string, CustomFieldType] => e[1] !== null)),
    declared,
    counted,
  };
  cache.set(schemas, out);
  return out;
}
