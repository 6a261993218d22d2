// The validators a scheming schema file may name ("ignore_missing scheming_choices"), by CKAN's,
// ckanext-scheming's, ckanext-fluent's and ckanext-dcat's names, with their messages. Each name is
// a factory: its arguments (if_empty_same_as(name)) and the field it is for (scheming_choices reads
// the field's choices) give the Validator of svc's chains (src/validation/validate.ts).
//
// Values are stored as typed JSON (lists, objects, numbers), not as the JSON text CKAN keeps in
// extras: scheming_multiple_choice gives a list, fluent_text an object. Output validators accept
// both, so values saved as text by an import still read back as CKAN shows them.
import { findGroup, groupNameHolder } from '../model/groups.ts';
import { canonicalFormat, guessFormat } from '../model/resources.ts';
import { ownerOrgValidator, packageNameValidator, packageVersionValidator, tagNameErrors } from '../validation/package-schema.ts';
import { Invalid, MISSING, Stop, type FieldContext, type Validator } from '../validation/validate.ts';
import {
  booleanValidator,
  defaultValue,
  emailValidator,
  ignoreEmpty,
  ignoreMissing,
  intValidator,
  isoDate,
  jsonObject,
  nameValidator,
  naturalNumber,
  notEmpty,
  notMissing,
  positiveInteger,
} from '../validation/validators.ts';
import type { SchemingField } from './types.ts';
import { datastoreChoicesFromResult, datastoreChoicesQuery } from './choices.ts';
import { parseValidatorSpec } from './validator-spec.ts';
import {
  actionContext,
  inputOf,
  isBlank,
  isDraft,
  isEmpty,
  loadJson,
  requiredEnforced,
  type Factory,
  type ValidatorScope,
} from './validator-scope.ts';
import { fluentCoreTranslatedOutput, fluentTags, fluentTagsOutput, fluentText, fluentTextOutput } from './fluent-validators.ts';

/** A date (isodate, scheming_isodatetime) until convert_to_json_if_date(time) or the end of the chain makes it text. */
class DateValue {
  /** iso: 'YYYY-MM-DDTHH:MM:SS[.ffffff]' (UTC when withZone). */
  constructor(
    readonly iso: string,
    readonly withZone = false,
  ) {}
  dateText(): string {
    return this.iso.slice(0, 10);
  }
  dateTimeText(): string {
    return this.withZone ? `${this.iso}+00:00` : this.iso;
  }
}

/** The value a chain stores: a date still a DateValue becomes its date-time text. */
export function storedValue(v: unknown): unknown {
  return v instanceof DateValue ? v.dateTimeText() : v;
}

const simple =
  (v: Validator): Factory =>
  () =>
    v;

/** A value that is present but blank passes through (CKAN's validators that return on `not value`). */
const unlessEmpty =
  (v: Validator): Validator =>
  (value, f) =>
    isEmpty(value) ? value : v(value, f);

/** CKAN's unicode_safe: text stays, anything else becomes text (objects as JSON). */
const unicodeSafe: Validator = (v) => {
  if (v === null || typeof v === 'string' || v === MISSING) return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
};

const trimmed: Validator = (v) => (typeof v === 'string' ? v.trim() : v);

/** CKAN's url_validator: http(s) with a plain host name; blank passes. */
const urlValidator: Validator = (v) => {
  if (isEmpty(v)) return v;
  const m = typeof v === 'string' ? /^(https?):\/\/([^/?#]*)/i.exec(v) : null;
  if (!m || !m[2] || !/^[A-Za-z0-9.-]+$/.test(m[2])) throw new Invalid('Please provide a valid URL');
  return v;
};

/** CKAN's int_validator: "" and null are null. */
const intOrNull: Validator = (v, f) => (v === '' || v === null ? null : intValidator(v, f));

/** CKAN's boolean_validator: missing and null are false; svc refuses what is neither (docs/decisions.md). */
const booleanOrFalse: Validator = (v, f) => (isBlank(v) || v === '' ? false : booleanValidator(v, f));

const isodate: Validator = (v, f) => {
  if (v instanceof DateValue) return v;
  if (isBlank(v) || v === '') return v === '' ? null : v;
  const iso = isoDate(v, f) as string | null;
  return iso === null ? null : new DateValue(iso);
};

const convertToJsonIfDate: Validator = (v) => (v instanceof DateValue ? v.dateText() : v);
const convertToJsonIfDatetime: Validator = (v) => (v instanceof DateValue ? v.dateTimeText() : v);

const tagStringConvert: Validator = (v) => {
  if (Array.isArray(v)) {
    if (!v.every((t) => typeof t === 'string')) throw new Invalid('Must be a list of strings');
    return v.join(',');
  }
  if (typeof v !== 'string') throw new Stop('Must be a string');
  return v;
};

const tagCheck =
  (which: 'length' | 'name'): Validator =>
  (v) => {
    if (typeof v !== 'string') return v;
    const errs = tagNameErrors(v).filter((m) => (which === 'length' ? /minimum|maximum/.test(m) : /can only contain/.test(m)));
    if (errs.length) throw new Invalid(errs[0]);
    return v;
  };

/** CKAN's if_empty_guess_format: a new resource without a format gets the one its URL names. */
const ifEmptyGuessFormat: Validator = (v, f) => {
  if (!isEmpty(v) || f.data.id || inputOf(f).id) return v;
  const url = f.data.url ?? inputOf(f).url;
  if (typeof url !== 'string' || !url) return v;
  return guessFormat(url) || v;
};

const cleanFormat: Validator = (v) => (typeof v === 'string' ? canonicalFormat(v) : v);

const groupNameValidator: Validator = async (v, f) => {
  if (typeof v !== 'string') return v;
  const ctx = actionContext(f);
  const holder = await groupNameHolder(ctx.db, v);
  const editing = f.context?.group?.id ?? (typeof f.data.id === 'string' ? (await findGroup(ctx.db, f.data.id))?.id : undefined);
  if (holder && holder.id !== editing) throw new Invalid('Group name already exists in database');
  return v;
};

const draftFieldsNotRequired: Validator = (v, f) => (isDraft(f) ? ignoreMissing(v, f) : notEmpty(v, f));

const schemingRequired: Factory = (_args, scope) => {
  if (!scope.field.required) return ignoreMissing;
  if (scope.schema.draft_fields_required === false) return draftFieldsNotRequired;
  return notEmpty;
};

function choiceValues(field: SchemingField): string[] | undefined {
  return Array.isArray(field.choices) ? field.choices.map((c) => String(c.value)) : undefined;
}

function describe(values: string[]): string {
  return `[${values.map((x) => `'${x}'`).join(', ')}]`;
}

/**
 * The values of a field whose choices come from scheming_datastore_choices: the rows of its data
 * store table, read with the caller's rights (a table the caller may not read gives none but the
 * additional choices). Undefined for a field without such a helper.
 */
async function helperChoiceValues(field: SchemingField, f: FieldContext): Promise<string[] | undefined> {
  if (field.choices_helper !== 'scheming_datastore_choices') return undefined;
  let result: Parameters<typeof datastoreChoicesFromResult>[1];
  try {
    result = await actionContext(f).call('datastore_search', datastoreChoicesQuery(field));
  } catch {
    result = undefined;
  }
  return datastoreChoicesFromResult(field, result).map((c) => String(c.value));
}

/** One of the field's choices (a helper's choices when it has no list; a helper svc does not know accepts any value). */
const schemingChoices: Factory = (_args, { field }) => {
  const listed = choiceValues(field);
  return async (v, f) => {
    if (isBlank(v) || v === '') return v;
    const values = listed ?? (await helperChoiceValues(field, f));
    if (!values) return v;
    if (!values.includes(typeof v === 'string' ? v : String(v))) throw new Invalid(`Value must be one of ${describe(values)}`);
    return typeof v === 'string' ? v : String(v);
  };
};

const oneOf: Factory = (args) => {
  const values = (args.length === 1 && Array.isArray(args[0]) ? args[0] : args).map(String);
  return (v) => {
    if (!values.includes(String(v))) throw new Invalid(`Value must be one of ${describe(values)}`);
    return v;
  };
};

const schemingMultipleChoice: Factory = (_args, scope) => {
  const listed = choiceValues(scope.field);
  return async (v, f) => {
    const values = listed ?? (await helperChoiceValues(scope.field, f));
    let list: unknown[];
    if (isBlank(v)) list = [];
    else if (typeof v === 'string') list = v === '' ? [] : [v];
    else if (Array.isArray(v)) list = v;
    else throw new Stop('expecting list of strings');
    const wrong = values ? list.filter((x) => !values.includes(String(x))) : [];
    if (wrong.length) throw new Stop(wrong.map((x) => `unexpected choice "${String(x)}"`).join(', '));
    const chosen = new Set(list.map(String));
    const out = values ? values.filter((x) => chosen.has(x)) : [...chosen];
    if (!out.length && scope.field.required && requiredEnforced(scope, f)) throw new Stop('Select at least one');
    return out;
  };
};

const schemingMultipleText: Factory = (_args, scope) => (v, f) => {
  let out: string[] = [];
  if (!isBlank(v)) {
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list)) throw new Stop('expecting list of strings');
    const bad = list.filter((x) => x && typeof x !== 'string');
    if (bad.length) throw new Stop(bad.map((x) => `invalid type for repeating text: ${JSON.stringify(x)}`).join(', '));
    out = list.filter((x): x is string => typeof x === 'string' && x !== '');
  }
  if (!out.length && scope.field.required && requiredEnforced(scope, f)) throw new Stop('Missing value');
  return out;
};

/** dcat's scheming_multiple_number: a list of numbers (one number, or a JSON list as text). */
const schemingMultipleNumber: Factory =
  (_args, { field }) =>
  (v) => {
    if (isEmpty(v)) {
      if (field.required) throw new Stop('Missing value');
      throw new Stop();
    }
    let list: unknown = v;
    if (typeof v === 'string' && v.trim().startsWith('[')) {
      try {
        list = JSON.parse(v);
      } catch {
        throw new Stop('Could not parse value');
      }
    }
    if (!Array.isArray(list)) list = [list];
    const out: number[] = [];
    for (const x of list as unknown[]) {
      if (x === '' || x === null || x === 0) continue;
      const n = typeof x === 'number' ? x : typeof x === 'string' && x.trim() !== '' ? Number(x) : Number.NaN;
      if (!Number.isFinite(n)) throw new Invalid(`invalid type for repeating number: ${JSON.stringify(x)}`);
      out.push(n);
    }
    if (!out.length && field.required) throw new Stop('Missing value');
    return out;
  };

/** The date (and time) a form sends as <field>_date, <field>_time (and <field>_tz), taken out of the dict. */
function formDateInputs(f: FieldContext): { date?: string; time?: string; tz?: string } | undefined {
  const names = { date: `${f.key}_date`, time: `${f.key}_time`, tz: `${f.key}_tz` };
  if (!(names.date in f.data) && !(names.time in f.data)) return undefined;
  const out: Record<string, string | undefined> = {};
  for (const [part, name] of Object.entries(names)) {
    const v = f.data[name];
    delete f.data[name];
    if (typeof v === 'string' && v.trim()) out[part] = v.trim();
  }
  return out;
}

function parseDateTime(text: string, f: FieldContext, allowZone: boolean): DateValue {
  if (!allowZone && /(Z|[+-]\d{2}:?\d{2})$/i.test(text) && /T|\s\d/.test(text)) throw new Invalid('Date format incorrect');
  let iso: string | null;
  try {
    iso = isoDate(text, f) as string | null;
  } catch {
    throw new Invalid('Date format incorrect');
  }
  if (!iso) throw new Invalid('Date format incorrect');
  return new DateValue(iso, allowZone);
}

const schemingIsoDatetime =
  (withZone: boolean): Factory =>
  (_args, { field }) =>
  (v, f) => {
    if (v instanceof DateValue) return v;
    if (!isEmpty(v)) {
      if (typeof v !== 'string') throw new Invalid('Date format incorrect');
      return parseDateTime(v, f, withZone);
    }
    const form = formDateInputs(f);
    if (!form || (!form.date && !form.time)) {
      if (field.required) throw new Stop('Missing value');
      throw new Stop();
    }
    if (!form.date) throw new Stop('Date is required when a time is provided');
    if (form.time && !/^\d{1,2}:\d{2}(:\d{2})?$/.test(form.time)) throw new Stop('Time format incorrect');
    const text = form.time ? `${form.date}T${form.time.padStart(5, '0')}` : form.date;
    if (withZone && form.tz) {
      // A named zone: the offset it had at that time.
      let offset: string;
      try {
        offset = zoneOffset(form.tz, text);
      } catch {
        throw new Stop('Invalid timezone');
      }
      return parseDateTime(`${text}${offset}`, f, true);
    }
    return parseDateTime(text, f, false);
  };

/** The UTC offset (+HH:MM) of an IANA zone at a local time. */
function zoneOffset(zone: string, local: string): string {
  const asUtc = new Date(`${local.length === 10 ? `${local}T00:00` : local}Z`);
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(asUtc);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const shown = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'));
  const minutes = Math.round((shown - asUtc.getTime()) / 60000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** scheming_valid_json_object: a JSON object, or its text. */
const validJsonObject: Validator = (v) => {
  if (isEmpty(v) || (v && typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).length)) throw new Stop();
  if (typeof v === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch (e) {
      throw new Invalid(`Invalid JSON string: ${(e as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Invalid(`Unsupported value for JSON field: ${v}`);
    return parsed;
  }
  if (typeof v === 'object' && !Array.isArray(v)) return v;
  throw new Invalid(`Unsupported type for JSON field: ${Array.isArray(v) ? 'list' : typeof v}`);
};

const listOutput: Validator = (v) => {
  if (Array.isArray(v)) return v;
  if (v === null || v === undefined) return [];
  if (typeof v !== 'string') return [v];
  try {
    const parsed = JSON.parse(v);
    return Array.isArray(parsed) ? parsed : [v];
  } catch {
    return [v];
  }
};

const XSD_YEAR = /^-?([1-9][0-9]{3,}|0[0-9]{3})(Z|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))?$/;
const XSD_YEAR_MONTH = /^-?([1-9][0-9]{3,}|0[0-9]{3})-(0[1-9]|1[0-2])(Z|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))?$/;
const XSD_DATE = /^-?([1-9][0-9]{3,}|0[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(Z|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))?$/;

/** ckanext-dcat's dcat_date: a year, year-month, date or date-time, kept as sent. */
const dcatDate: Validator = (v, f) => {
  if (isEmpty(v)) return null;
  if (v instanceof DateValue) return v;
  if (typeof v !== 'string') throw new Invalid('Dates must be provided as strings or datetime objects');
  if (XSD_YEAR.test(v) || XSD_YEAR_MONTH.test(v) || XSD_DATE.test(v)) return v;
  try {
    isoDate(v, f);
    return v;
  } catch {
    throw new Invalid('Date format incorrect. Supported formats are YYYY, YYYY-MM, YYYY-MM-DD and YYYY-MM-DDTHH:MM:SS');
  }
};

// --- the registry ----------------------------------------------------------------------------

const emailIfGiven: Validator = (v, f) => (isEmpty(v) ? v : emailValidator(v, f));

const FACTORIES: Record<string, Factory> = {
  // CKAN (lib/navl, logic/validators, logic/converters)
  ignore_missing: () => ignoreMissing,
  ignore_empty: () => ignoreEmpty,
  ignore: simple(() => {
    throw new Stop();
  }),
  not_empty: () => notEmpty,
  not_missing: () => notMissing,
  empty: simple((v, f) => {
    if (!isEmpty(v)) throw new Stop(`The input field ${f.key} was not expected.`);
    throw new Stop();
  }),
  default: (args) => defaultValue(args[0]),
  unicode_safe: simple(unicodeSafe),
  unicode: simple(unicodeSafe),
  unicode_only: simple((v) => {
    if (typeof v !== 'string' && !isBlank(v)) throw new Invalid('Must be a Unicode string value');
    return v;
  }),
  strip_value: simple(trimmed),
  remove_whitespace: simple(trimmed),
  int_validator: simple(intOrNull),
  convert_int: simple((v, f) => {
    try {
      return intValidator(v, f);
    } catch {
      throw new Invalid('Please enter an integer value');
    }
  }),
  natural_number_validator: () => unlessEmpty(naturalNumber),
  is_positive_integer: () => unlessEmpty(positiveInteger),
  boolean_validator: simple(booleanOrFalse),
  isodate: simple(isodate),
  email_validator: simple(emailIfGiven),
  url_validator: simple(urlValidator),
  name_validator: () => nameValidator,
  package_name_validator: () => packageNameValidator,
  package_version_validator: () => packageVersionValidator,
  group_name_validator: simple(groupNameValidator),
  owner_org_validator: () => ownerOrgValidator,
  tag_string_convert: simple(tagStringConvert),
  tag_name_validator: simple(tagCheck('name')),
  tag_length_validator: simple(tagCheck('length')),
  if_empty_same_as: (args) => {
    const other = String(args[0] ?? '');
    return (v, f) => (isEmpty(v) ? (f.data[other] ?? inputOf(f)[other] ?? v) : v);
  },
  if_empty_guess_format: simple(ifEmptyGuessFormat),
  clean_format: simple(cleanFormat),
  json_object: () => unlessEmpty(jsonObject),
  list_of_strings: simple((v) => {
    if (!Array.isArray(v)) throw new Invalid('Not a list');
    if (!v.every((x) => typeof x === 'string')) throw new Invalid('Not a string');
    return v;
  }),
  OneOf: oneOf,
  convert_to_json_if_date: simple(convertToJsonIfDate),
  convert_to_json_if_datetime: simple(convertToJsonIfDatetime),
  // ckanext-scheming
  scheming_required: schemingRequired,
  scheming_draft_fields_not_required: simple(draftFieldsNotRequired),
  scheming_choices: schemingChoices,
  scheming_multiple_choice: schemingMultipleChoice,
  scheming_multiple_choice_output: simple(listOutput),
  scheming_multiple_text: schemingMultipleText,
  repeating_text_output: simple(listOutput),
  scheming_isodatetime: schemingIsoDatetime(false),
  scheming_isodatetime_tz: schemingIsoDatetime(true),
  scheming_valid_json_object: simple(validJsonObject),
  scheming_load_json: simple(loadJson),
  // ckanext-dcat
  dcat_date: simple(dcatDate),
  scheming_multiple_number: schemingMultipleNumber,
  // ckanext-fluent
  fluent_text: fluentText,
  fluent_text_output: fluentTextOutput,
  fluent_tags: fluentTags,
  fluent_tags_output: simple(fluentTagsOutput),
  fluent_core_translated_output: fluentCoreTranslatedOutput,
};

/** Whether a schema file may name this validator. */
export function isKnownValidator(name: string): boolean {
  return Object.hasOwn(FACTORIES, name);
}

/** The chain of a validators string (names were checked at start: an unknown one here is a bug). */
export function validatorsFromString(spec: string, scope: ValidatorScope): Validator[] {
  return parseValidatorSpec(spec).map(({ name, args }) => {
    const factory = FACTORIES[name];
    if (!factory) throw new Error(`unknown validator ${name} (field ${scope.field.field_name})`);
    return factory(args, scope);
  });
}
