// svc's built-in field presets, by the preset file names a CKAN configuration uses
// (scheming.presets = ckanext.scheming:presets.json ckanext.fluent:presets.json ...). They carry the
// same preset names and the same validator and snippet names as those extensions' files, so a
// schema written for them expands to the same fields here. Plain data: bundled, never read from disk.
import type { Preset } from './types.ts';

/** The presets every schema may use (ckanext-scheming's preset names). */
const SCHEMING_PRESETS: Preset[] = [
  {
    preset_name: 'title',
    values: {
      validators: 'if_empty_same_as(name) unicode_safe',
      form_snippet: 'large_text.html',
      form_attrs: { 'data-module': 'slug-preview-target' },
    },
  },
  {
    preset_name: 'dataset_slug',
    values: { validators: 'not_empty unicode_safe name_validator package_name_validator', form_snippet: 'slug.html' },
  },
  {
    preset_name: 'tag_string_autocomplete',
    values: {
      validators: 'ignore_missing tag_string_convert',
      classes: ['control-full'],
      form_attrs: {
        'data-module': 'autocomplete',
        'data-module-tags': '',
        'data-module-source': '/api/2/util/tag/autocomplete?incomplete=?',
        class: '',
      },
    },
  },
  {
    preset_name: 'dataset_organization',
    values: { validators: 'owner_org_validator unicode_safe', form_snippet: 'organization.html' },
  },
  {
    preset_name: 'resource_url_upload',
    values: {
      validators: 'ignore_missing unicode_safe remove_whitespace',
      form_snippet: 'upload.html',
      form_placeholder: 'https://example.org/data.csv',
      upload_field: 'upload',
      upload_clear: 'clear_upload',
      upload_label: 'File',
    },
  },
  {
    preset_name: 'organization_url_upload',
    values: {
      validators: 'ignore_missing unicode_safe remove_whitespace',
      form_snippet: 'organization_upload.html',
      form_placeholder: 'https://example.org/logo.png',
    },
  },
  {
    preset_name: 'resource_format_autocomplete',
    values: {
      validators: 'if_empty_guess_format ignore_missing clean_format unicode_safe',
      form_placeholder: 'e.g. CSV, JSON or XLSX',
      form_attrs: {
        'data-module': 'autocomplete',
        'data-module-source': '/api/2/util/resource/format_autocomplete?incomplete=?',
      },
    },
  },
  {
    preset_name: 'select',
    values: { validators: 'scheming_required scheming_choices', form_snippet: 'select.html', display_snippet: 'select.html' },
  },
  {
    preset_name: 'multiple_checkbox',
    values: {
      validators: 'scheming_multiple_choice',
      output_validators: 'scheming_multiple_choice_output',
      form_snippet: 'multiple_checkbox.html',
      display_snippet: 'multiple_choice.html',
    },
  },
  {
    preset_name: 'multiple_select',
    values: {
      validators: 'scheming_multiple_choice',
      output_validators: 'scheming_multiple_choice_output',
      form_snippet: 'multiple_select.html',
      display_snippet: 'multiple_choice.html',
    },
  },
  {
    preset_name: 'date',
    values: {
      validators: 'scheming_required isodate convert_to_json_if_date',
      form_snippet: 'date.html',
      display_snippet: 'date.html',
    },
  },
  {
    preset_name: 'datetime',
    values: {
      validators: 'scheming_isodatetime convert_to_json_if_datetime',
      form_snippet: 'datetime.html',
      display_snippet: 'datetime.html',
    },
  },
  {
    preset_name: 'datetime_tz',
    values: {
      validators: 'scheming_isodatetime_tz convert_to_json_if_datetime',
      form_snippet: 'datetime_tz.html',
      display_snippet: 'datetime_tz.html',
    },
  },
  {
    preset_name: 'json_object',
    values: {
      validators: 'scheming_required scheming_valid_json_object',
      output_validators: 'scheming_load_json',
      form_snippet: 'json.html',
      display_snippet: 'json.html',
    },
  },
  {
    preset_name: 'multiple_text',
    values: {
      validators: 'scheming_multiple_text',
      output_validators: 'scheming_load_json',
      form_snippet: 'multiple_text.html',
      display_snippet: 'multiple_text.html',
    },
  },
  { preset_name: 'markdown', values: { form_snippet: 'markdown.html', display_snippet: 'markdown.html' } },
  {
    preset_name: 'radio',
    values: { validators: 'scheming_required scheming_choices', form_snippet: 'radio.html', display_snippet: 'select.html' },
  },
];

/** Multilingual fields: values are objects of language -> text (ckanext-fluent's preset names). */
function fluent(name: string, validators: string, output: string, form: string, display: string, extra = {}): Preset {
  return {
    preset_name: name,
    values: {
      validators,
      output_validators: output,
      form_snippet: form,
      display_snippet: display,
      error_snippet: 'fluent_text.html',
      ...extra,
    },
  };
}

const FLUENT_PRESETS: Preset[] = [
  fluent('fluent_core_translated', 'fluent_text', 'fluent_core_translated_output', 'fluent_text.html', 'fluent_text.html'),
  fluent('fluent_text', 'fluent_text', 'fluent_text_output', 'fluent_text.html', 'fluent_text.html'),
  fluent('fluent_tags', 'fluent_tags', 'fluent_tags_output', 'fluent_tags.html', 'fluent_tags.html', {
    form_attrs: { style: 'width: 100%', class: 'form-control' },
  }),
  fluent('fluent_markdown', 'fluent_text', 'fluent_text_output', 'fluent_markdown.html', 'fluent_markdown.html'),
  fluent('fluent_link', 'fluent_text', 'fluent_text_output', 'fluent_text.html', 'fluent_link.html'),
];

/** ckanext-dcat's preset names. */
const DCAT_PRESETS: Preset[] = [
  {
    preset_name: 'dcat_date',
    values: {
      validators: 'ignore_missing dcat_date convert_to_json_if_datetime',
      form_snippet: 'date.html',
      display_snippet: 'dcat_date.html',
    },
  },
  {
    preset_name: 'cr_title',
    values: {
      validators: 'not_empty unicode_safe',
      form_snippet: 'large_text.html',
      form_attrs: { 'data-module': 'slug-preview-target' },
    },
  },
];

export const SCHEMING_PRESETS_NAME = 'ckanext.scheming:presets.json';

/** The built-in preset files, by the names CKAN configurations give them in scheming.presets. */
export const BUILTIN_PRESET_FILES: ReadonlyMap<string, readonly Preset[]> = new Map([
  [SCHEMING_PRESETS_NAME, SCHEMING_PRESETS],
  ['ckanext.fluent:presets.json', FLUENT_PRESETS],
  ['ckanext.dcat.schemas:presets.yaml', DCAT_PRESETS],
]);
