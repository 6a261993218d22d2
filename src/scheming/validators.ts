// The validators a scheming schema file may name ("ignore_missing scheming_choices"), by CKAN's,
// ckanext-scheming's, ckanext-fluent's and ckanext-dcat's names. The loader checks a file's names
// with isKnownValidator; schema-validation.ts turns a field's string into a chain.

/** Every validator name a schema file may use. */
const KNOWN_VALIDATORS = new Set([
  // CKAN (lib/navl, logic/validators, logic/converters)
  'ignore_missing',
  'ignore_empty',
  'ignore',
  'not_empty',
  'not_missing',
  'empty',
  'default',
  'unicode_safe',
  'unicode_only',
  'unicode',
  'strip_value',
  'remove_whitespace',
  'int_validator',
  'natural_number_validator',
  'is_positive_integer',
  'convert_int',
  'boolean_validator',
  'isodate',
  'email_validator',
  'url_validator',
  'name_validator',
  'package_name_validator',
  'package_version_validator',
  'group_name_validator',
  'owner_org_validator',
  'tag_string_convert',
  'tag_name_validator',
  'tag_length_validator',
  'if_empty_same_as',
  'if_empty_guess_format',
  'clean_format',
  'json_object',
  'list_of_strings',
  'OneOf',
  'convert_to_json_if_date',
  'convert_to_json_if_datetime',
  // ckanext-scheming
  'scheming_required',
  'scheming_draft_fields_not_required',
  'scheming_choices',
  'scheming_multiple_choice',
  'scheming_multiple_choice_output',
  'scheming_multiple_text',
  'repeating_text_output',
  'scheming_isodatetime',
  'scheming_isodatetime_tz',
  'scheming_valid_json_object',
  'scheming_load_json',
  // ckanext-dcat
  'dcat_date',
  'scheming_multiple_number',
  // ckanext-fluent
  'fluent_text',
  'fluent_text_output',
  'fluent_tags',
  'fluent_tags_output',
  'fluent_core_translated_output',
]);

/** Whether a schema file may name this validator. */
export function isKnownValidator(name: string): boolean {
  return KNOWN_VALIDATORS.has(name);
}
