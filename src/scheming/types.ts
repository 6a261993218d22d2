// The shapes of custom metadata schemas (ckanext-scheming's files): what a schema file holds, and
// what the loader gives the rest of svc. A field keeps every key of its file (form_attrs, classes,
// anything a template of CKAN's would read) so scheming_*_schema_show answers what the file says.

/** A label, help text or placeholder: one string, or one per language ({"en": ..., "de": ...}). */
export type Label = string | Record<string, string>;

export interface Choice {
  value: string;
  label?: Label;
  [key: string]: unknown;
}

export interface SchemingField {
  field_name: string;
  label?: Label;
  /** A preset's name; in an expanded schema its values are merged in (the field's own keys win). */
  preset?: string;
  required?: boolean;
  /** Validator names with arguments, space-separated as in the file ("ignore_missing int_validator"). */
  validators?: string;
  output_validators?: string;
  choices?: Choice[];
  /** A helper that gives the choices (e.g. scheming_language_choices); see choices.ts for the ones we have. */
  choices_helper?: string;
  form_snippet?: string | null;
  display_snippet?: string | null;
  form_placeholder?: Label;
  help_text?: Label;
  /** A list of objects, each with these fields. */
  repeating_subfields?: SchemingField[];
  /** The form shows one group of subfields, not a repeating list (the value is still a list). */
  repeating_once?: boolean;
  repeating_label?: Label;
  /** Fluent fields: the languages of the value object. */
  form_languages?: string[];
  [key: string]: unknown;
}

interface SchemaBase {
  scheming_version: 1 | 2;
  about?: string;
  about_url?: string;
  /** The file it came from (for messages). */
  source: string;
  /** The schema as written in its file (scheming_*_schema_show with expanded=false). */
  raw: Record<string, unknown>;
}

export interface DatasetSchema extends SchemaBase {
  dataset_type: string;
  /** Expanded: presets merged into each field. */
  dataset_fields: SchemingField[];
  resource_fields: SchemingField[];
}

export interface GroupSchema extends SchemaBase {
  /** group_type (group schemas) or organization_type (organization schemas). */
  type: string;
  /** Expanded: presets merged into each field. */
  fields: SchemingField[];
}

export interface Preset {
  preset_name: string;
  values: Partial<SchemingField>;
}

/** Every configured schema, loaded and checked at start (services.scheming). */
export interface SchemingSchemas {
  /** By dataset_type, in the order of svc.scheming.dataset_schemas. */
  datasets: Map<string, DatasetSchema>;
  groups: Map<string, GroupSchema>;
  organizations: Map<string, GroupSchema>;
  /** svc.scheming.dataset_fallback: a type without a schema is validated by the default schema instead of refused. */
  datasetFallback: boolean;
  presets: Map<string, Preset>;
}
