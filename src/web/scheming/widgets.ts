// Which form widget and which display a scheming field gets: from its form_snippet (or, in an
// unexpanded field, its preset), its name, and its repeating subfields. Labels, help texts and
// placeholders may be one string or one per language: the UI language is picked, then English,
// then the first one given.
import type { Label, SchemingField } from '../../scheming/types.ts';

export type WidgetKind =
  | 'text'
  | 'textarea'
  | 'markdown'
  | 'number'
  | 'select'
  | 'radio'
  | 'checkboxes'
  | 'multiselect'
  | 'multitext'
  | 'date'
  | 'datetime'
  | 'datetime_tz'
  | 'json'
  | 'slug'
  | 'organization'
  | 'license'
  | 'upload'
  | 'image_upload'
  | 'repeating'
  | 'fluent'
  | 'fluent_markdown'
  | 'fluent_tags';

/** Form snippets of ckanext-scheming, ckanext-fluent and ckanext-dcat, by file name, as our widgets. */
export const FORM_SNIPPET_WIDGETS: Record<string, WidgetKind> = {
  'text.html': 'text',
  'large_text.html': 'text',
  'textarea.html': 'textarea',
  'markdown.html': 'markdown',
  'number.html': 'number',
  'select.html': 'select',
  'radio.html': 'radio',
  'multiple_checkbox.html': 'checkboxes',
  'multiple_select.html': 'multiselect',
  'multiple_text.html': 'multitext',
  'date.html': 'date',
  'datetime.html': 'datetime',
  'datetime_tz.html': 'datetime_tz',
  'json.html': 'json',
  'slug.html': 'slug',
  'organization.html': 'organization',
  'license.html': 'license',
  'upload.html': 'upload',
  'organization_upload.html': 'image_upload',
  'repeating_subfields.html': 'repeating',
  'fluent_text.html': 'fluent',
  'fluent_markdown.html': 'fluent_markdown',
  'fluent_tags.html': 'fluent_tags',
};

/** The widget of a preset's name, for a field whose preset was not merged in. */
const PRESET_WIDGETS: Record<string, WidgetKind> = {
  title: 'text',
  dataset_slug: 'slug',
  dataset_organization: 'organization',
  resource_url_upload: 'upload',
  organization_url_upload: 'image_upload',
  select: 'select',
  radio: 'radio',
  multiple_checkbox: 'checkboxes',
  multiple_select: 'multiselect',
  multiple_text: 'multitext',
  date: 'date',
  dcat_date: 'date',
  datetime: 'datetime',
  datetime_tz: 'datetime_tz',
  json_object: 'json',
  markdown: 'markdown',
  fluent_text: 'fluent',
  fluent_core_translated: 'fluent',
  fluent_link: 'fluent',
  fluent_markdown: 'fluent_markdown',
  fluent_tags: 'fluent_tags',
};

/** The last part of a snippet path ('scheming/form_snippets/select.html' -> 'select.html'). */
function snippetFile(snippet: string): string {
  return snippet.slice(snippet.lastIndexOf('/') + 1);
}

/** The widget of a field; an unknown snippet name is the text widget (the loader warns about it at start). */
export function widgetKind(field: SchemingField): WidgetKind {
  if (typeof field.form_snippet === 'string') {
    const known = FORM_SNIPPET_WIDGETS[snippetFile(field.form_snippet)];
    if (known) return known;
    return field.repeating_subfields ? 'repeating' : 'text';
  }
  if (field.repeating_subfields) return 'repeating';
  if (field.preset && PRESET_WIDGETS[field.preset]) return PRESET_WIDGETS[field.preset];
  if (field.field_name === 'owner_org') return 'organization';
  if (field.field_name === 'license_id') return 'license';
  return 'text';
}

/** Whether the field is left out of the form (form_snippet: null, as in scheming). */
export function hiddenInForm(field: SchemingField): boolean {
  return field.form_snippet === null;
}

/** Whether the field is left out of the dataset page (display_snippet: null). */
export function hiddenInDisplay(field: SchemingField): boolean {
  return field.display_snippet === null;
}

/** A label or text in the UI language: the language, else English, else the first one given. */
export function labelText(label: Label | undefined | null, lang: string): string {
  if (label === undefined || label === null) return '';
  if (typeof label === 'string') return label;
  if (typeof label !== 'object') return String(label);
  return label[lang] ?? label.en ?? Object.values(label)[0] ?? '';
}

/** A field's label, else its name. */
export function fieldLabel(field: SchemingField, lang: string): string {
  return labelText(field.label, lang) || field.field_name;
}

/** Whether the form marks the field required: `required: true`, or not_empty / scheming_required among its validators. */
export function isRequired(field: SchemingField): boolean {
  if (field.required === true) return true;
  const validators = typeof field.validators === 'string' ? field.validators.split(/\s+/) : [];
  return validators.includes('not_empty');
}

/**
 * The languages of a fluent field, as ckanext-fluent picks them: its form_languages, the schema's,
 * else the site's (the languages of svc.locale_default and svc.locales_offered).
 */
export function fluentLanguages(field: SchemingField, schemaLanguages: unknown, siteLanguages: string[]): string[] {
  if (Array.isArray(field.form_languages) && field.form_languages.length) return field.form_languages.map(String);
  if (Array.isArray(schemaLanguages) && schemaLanguages.length) return schemaLanguages.map(String);
  return siteLanguages;
}

export const FLUENT_KINDS: readonly WidgetKind[] = ['fluent', 'fluent_markdown', 'fluent_tags'];
