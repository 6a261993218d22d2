// A schema form's state between the browser and the actions. The form posts flat names as
// ckanext-scheming and ckanext-fluent name them: `field`, `field-<lang>` for a fluent field,
// `field-<n>-<subfield>` for the n-th group of repeating subfields (repeated names for lists). The
// state is that flat dict plus the number of groups each repeating field shows; it is built from a
// dataset (editing), from a post (kept after an error or an "add another"/"remove" button), and
// turned into the dict the actions take.
import type { SchemingField } from '../../scheming/types.ts';
import { FLUENT_KINDS, fluentLanguages, hiddenInForm, widgetKind } from './widgets.ts';

export type Flat = Record<string, string | string[]>;

export interface FormState {
  flat: Flat;
  /** Groups shown per repeating field (by field_name). */
  groups: Record<string, number>;
}

export interface FormOptions {
  /** The schema's form_languages (fluent fields without their own). */
  schemaLanguages?: unknown;
  /** The site's languages (fluent fields when neither the field nor the schema names any). */
  siteLanguages: string[];
}

/** Name of the hidden time-zone select of a datetime_tz field. */
export const TZ_SUFFIX = '_tz';

const langsOf = (field: SchemingField, opts: FormOptions) => fluentLanguages(field, opts.schemaLanguages, opts.siteLanguages);

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function list(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value.map(text);
  if (typeof value === 'string' && value.startsWith('[')) {
    try {
      const parsed = JSON.parse(value);
      if (Array.isArray(parsed)) return parsed.map(text);
    } catch {}
  }
  return [text(value)];
}

/** A stored time as the value of a datetime-local input (YYYY-MM-DDTHH:MM), with its offset apart. */
export function splitDateTime(value: string): { local: string; zone: string } {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!m) return { local: value, zone: '' };
  const zone = m[3] === undefined ? '' : m[3] === 'Z' ? '+00:00' : m[3].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  return { local: `${m[1]}T${m[2]}`, zone };
}

/** One field's value of a dataset (or group of subfields) written into the flat dict under `name`. */
function flattenField(field: SchemingField, value: unknown, name: string, flat: Flat, opts: FormOptions): number | undefined {
  const kind = widgetKind(field);
  if (FLUENT_KINDS.includes(kind)) {
    const byLang = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    for (const lang of langsOf(field, opts)) {
      const v = byLang[lang];
      flat[`${name}-${lang}`] = kind === 'fluent_tags' ? list(v).join(', ') : text(v);
    }
    return undefined;
  }
  switch (kind) {
    case 'checkboxes':
    case 'multiselect':
    case 'multitext':
      flat[name] = list(value);
      return undefined;
    case 'json':
      flat[name] = value && typeof value === 'object' ? JSON.stringify(value, null, 2) : text(value);
      return undefined;
    case 'datetime':
      flat[name] = splitDateTime(text(value)).local;
      return undefined;
    case 'datetime_tz': {
      const { local, zone } = splitDateTime(text(value));
      flat[name] = local;
      flat[`${name}${TZ_SUFFIX}`] = zone;
      return undefined;
    }
    case 'repeating': {
      const items = Array.isArray(value) ? value : [];
      items.forEach((item, i) => {
        const obj = item && typeof item === 'object' ? (item as Record<string, unknown>) : {};
        for (const sub of field.repeating_subfields ?? [])
          flattenField(sub, obj[sub.field_name], `${name}-${i}-${sub.field_name}`, flat, opts);
      });
      return items.length;
    }
    default:
      flat[name] = text(value);
      return undefined;
  }
}

/** The form state of a dataset (editing it): the dict's values under the form's names. */
export function stateFromDataset(fields: SchemingField[], dict: Record<string, any>, opts: FormOptions): FormState {
  const flat: Flat = {};
  const groups: Record<string, number> = {};
  for (const field of fields) {
    const name = field.field_name;
    if (name === 'tag_string') {
      flat.tag_string =
        typeof dict.tag_string === 'string'
          ? dict.tag_string
          : ((dict.tags ?? []) as { name: string; vocabulary_id?: string }[])
              .filter((t) => !t.vocabulary_id)
              .map((t) => t.name)
              .join(', ');
      continue;
    }
    if (widgetKind(field) === 'organization') {
      flat.owner_org = text(dict.owner_org);
      flat.private = dict.private === true || dict.private === 'True' ? 'True' : 'False';
      continue;
    }
    const count = flattenField(field, dict[name], name, flat, opts);
    if (count !== undefined) groups[name] = field.repeating_once ? Math.max(count, 1) : count;
  }
  return { flat, groups };
}

/** A new form: each repeating field shows its form_blanks (default one) empty groups; defaults filled in. */
export function blankState(fields: SchemingField[], opts: FormOptions, given: Record<string, unknown> = {}): FormState {
  const defaults: Record<string, unknown> = { ...given };
  for (const field of fields)
    if (field.default !== undefined && defaults[field.field_name] === undefined) defaults[field.field_name] = field.default;
  const state = stateFromDataset(fields, defaults, opts);
  for (const field of fields) {
    if (widgetKind(field) !== 'repeating') continue;
    const blanks = typeof field.form_blanks === 'number' ? field.form_blanks : 1;
    state.groups[field.field_name] = Math.max(state.groups[field.field_name] ?? 0, field.repeating_once ? 1 : blanks);
  }
  return state;
}

/** A form post as the flat dict: every value a string or a list of strings. */
function flatOfPost(form: Record<string, unknown>): Flat {
  const flat: Flat = {};
  for (const [k, v] of Object.entries(form)) flat[k] = Array.isArray(v) ? v.map(text) : text(v);
  return flat;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The group numbers a post carries for a repeating field, in order. */
function postedGroups(flat: Flat, name: string): number[] {
  const re = new RegExp(`^${escapeRe(name)}-(\\d{1,4})-`);
  const found = new Set<number>();
  for (const key of Object.keys(flat)) {
    const m = re.exec(key);
    if (m) found.add(Number(m[1]));
  }
  return [...found].sort((a, b) => a - b);
}

/** What a post's "add another" / "remove" button asks for, if anything. */
export interface GroupAction {
  add?: string;
  remove?: { field: string; index: number };
}

export const ADD_BUTTON = '_scheming_add';
export const REMOVE_BUTTON = '_scheming_remove';

export function groupAction(form: Record<string, unknown>): GroupAction | undefined {
  const add = form[ADD_BUTTON];
  if (typeof add === 'string' && add) return { add };
  const remove = form[REMOVE_BUTTON];
  if (typeof remove === 'string') {
    const m = /^(.+)-(\d{1,4})$/.exec(remove);
    if (m) return { remove: { field: m[1], index: Number(m[2]) } };
  }
  return undefined;
}

/**
 * The state of a post: its values, the groups of each repeating field numbered again from 0 (a
 * removed group drops out, an added one comes last, empty).
 */
export function stateFromPost(fields: SchemingField[], form: Record<string, unknown>, action?: GroupAction): FormState {
  const posted = flatOfPost(form);
  delete posted[ADD_BUTTON];
  delete posted[REMOVE_BUTTON];
  const flat: Flat = {};
  const groups: Record<string, number> = {};
  const repeating = fields.filter((f) => widgetKind(f) === 'repeating' && !hiddenInForm(f));
  const prefixes = repeating.map((f) => `${f.field_name}-`);
  for (const [k, v] of Object.entries(posted)) {
    // Keys of repeating groups are copied below, renumbered.
    if (!prefixes.some((p) => k.startsWith(p) && /^\d/.test(k.slice(p.length)))) flat[k] = v;
  }
  for (const field of repeating) {
    const name = field.field_name;
    let numbers = postedGroups(posted, name);
    if (action?.remove?.field === name && !field.repeating_once) numbers = numbers.filter((n) => n !== action.remove!.index);
    numbers.forEach((n, i) => {
      const from = `${name}-${n}-`;
      for (const [k, v] of Object.entries(posted)) if (k.startsWith(from)) flat[`${name}-${i}-${k.slice(from.length)}`] = v;
    });
    let count = numbers.length;
    if (action?.add === name && !field.repeating_once) count++;
    groups[name] = field.repeating_once ? Math.max(count, 1) : count;
  }
  return { flat, groups };
}

const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
const many = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Whether a value read from the form is empty (an empty group of subfields is dropped). */
function isEmpty(value: unknown): boolean {
  if (value === '' || value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value as object).every(isEmpty);
  return false;
}

/** The value the actions take for one field, read from the flat dict under `name`. */
function readField(field: SchemingField, name: string, state: FormState, opts: FormOptions): unknown {
  const { flat } = state;
  const kind = widgetKind(field);
  switch (kind) {
    case 'fluent':
    case 'fluent_markdown':
      return Object.fromEntries(langsOf(field, opts).map((lang) => [lang, first(flat[`${name}-${lang}`])]));
    case 'fluent_tags':
      return Object.fromEntries(
        langsOf(field, opts).map((lang) => [
          lang,
          first(flat[`${name}-${lang}`])
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ]),
      );
    case 'checkboxes':
    case 'multiselect':
      return many(flat[name]).filter((v) => v !== '');
    case 'multitext':
      return many(flat[name])
        .map((v) => v.trim())
        .filter(Boolean);
    case 'json': {
      const raw = first(flat[name]);
      if (!raw.trim()) return '';
      try {
        const parsed = JSON.parse(raw);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
      } catch {}
      return raw; // the action's validator names what is wrong with it
    }
    case 'datetime_tz': {
      const local = first(flat[name]);
      const zone = first(flat[`${name}${TZ_SUFFIX}`]);
      if (!local) return '';
      return /T\d{2}:\d{2}$/.test(local) && zone ? `${local}:00${zone}` : local;
    }
    case 'repeating': {
      const out: Record<string, unknown>[] = [];
      for (let i = 0; i < (state.groups[field.field_name] ?? 0); i++) {
        const item: Record<string, unknown> = {};
        for (const sub of field.repeating_subfields ?? [])
          item[sub.field_name] = readField(sub, `${name}-${i}-${sub.field_name}`, state, opts);
        if (!isEmpty(item)) out.push(item);
      }
      return out;
    }
    default:
      return first(flat[name]);
  }
}

/**
 * The dataset (or resource) dict a form describes, as package_create / package_patch take it.
 * Fields left out of the form (form_snippet: null) are not sent, so an edit keeps them.
 */
export function dataFromState(fields: SchemingField[], state: FormState, opts: FormOptions): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    if (hiddenInForm(field)) continue;
    const name = field.field_name;
    const kind = widgetKind(field);
    if (kind === 'organization') {
      data.owner_org = first(state.flat.owner_org);
      data.private = first(state.flat.private) === 'True';
    } else if (kind === 'upload' || kind === 'image_upload') {
      data[name] = first(state.flat[name]).trim();
    } else if (name === 'name' || name === 'tag_string' || kind === 'slug') {
      data[name] = first(state.flat[name]).trim();
    } else {
      data[name] = readField(field, name, state, opts);
    }
  }
  // An empty title becomes the name, as the classic form and CKAN do.
  if ('title' in data && !data.title && typeof data.name === 'string') data.title = data.name;
  return data;
}
