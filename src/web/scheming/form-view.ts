// What the schema form template shows: one view per field (label, help, placeholder, required
// mark, the widget's values and options, its errors), grouped into the form's pages
// (start_form_page of scheming_version 2) shown as fieldsets of one form.
import type { Choice, SchemingField } from '../../scheming/types.ts';
import type { Translate } from '../i18n.ts';
import { ADD_BUTTON, type FormOptions, type FormState, REMOVE_BUTTON, TZ_SUFFIX } from './form-state.ts';
import { FLUENT_KINDS, fieldLabel, fluentLanguages, hiddenInForm, isRequired, labelText, type WidgetKind, widgetKind } from './widgets.ts';

export interface Option {
  value: string;
  label: string;
  selected: boolean;
}

export interface LangInput {
  lang: string;
  name: string;
  id: string;
  label: string;
  value: string;
  placeholder: string;
  errors: string[];
  /** The tab shown first when scripts make the languages tabs: the first with an error, else the UI language's. */
  selected: boolean;
}

export interface WidgetView {
  kind: WidgetKind;
  field_name: string;
  /** The input's name and the suffix of its id (field-<name>). */
  name: string;
  id: string;
  label: string;
  help: string;
  placeholder: string;
  required: boolean;
  errors: string[];
  value: string;
  values: string[];
  options: Option[];
  langs: LangInput[];
  groups: { legend: string; remove_value: string; remove_label: string; fields: WidgetView[] }[];
  add_value: string;
  add_label: string;
  once: boolean;
  /** datetime_tz: the offset select. */
  zone: { name: string; id: string; options: Option[] } | null;
  /** organization: the visibility select. */
  visibility: { options: Option[]; errors: string[] } | null;
}

export interface FormPage {
  title: string;
  description: string;
  fields: WidgetView[];
}

/** What the page supplies: organizations and licences (as the classic form has them), translator, language. */
export interface FormContext extends FormOptions {
  lang: string;
  t: Translate;
  organizations: { value: string; label: string }[];
  licenses: { value: string; label: string }[];
  /** Choices of fields given by a choices_helper, as the page read them. */
  helperChoices?: ReadonlyMap<SchemingField, Choice[]>;
}

type ErrorDict = Record<string, unknown>;

/** Messages of an error entry: strings, lists, nested dicts as "key: message". */
export function messagesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(messagesOf);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => messagesOf(v).map((m) => `${k}: ${m}`));
  return [];
}

/** UTC offsets offered by the datetime_tz widget. */
const ZONES = (() => {
  const out: string[] = [];
  for (let minutes = -12 * 60; minutes <= 14 * 60; minutes += 30) {
    if (minutes % 60 !== 0 && ![-570, -210, 210, 270, 330, 390, 570, 630].includes(minutes)) continue;
    const sign = minutes < 0 ? '-' : '+';
    const abs = Math.abs(minutes);
    out.push(`${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`);
  }
  return out;
})();

/** A language's name in the UI language ("German (de)"), or its code. */
export function languageName(code: string, uiLang: string): string {
  try {
    const name = new Intl.DisplayNames([uiLang, 'en'], { type: 'language' }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
const many = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

export function fieldChoices(field: SchemingField, ctx: Pick<FormContext, 'helperChoices'>): Choice[] {
  return ctx.helperChoices?.get(field) ?? (Array.isArray(field.choices) ? field.choices : []);
}

function choiceOptions(field: SchemingField, ctx: FormContext, selected: string[]): Option[] {
  // form_restrict_choices_to: the form offers only these values (others stay valid through the API).
  const only = Array.isArray(field.form_restrict_choices_to) ? field.form_restrict_choices_to.map(String) : null;
  const choices = fieldChoices(field, ctx).filter((c) => !only || only.includes(String(c.value)) || selected.includes(String(c.value)));
  const options = choices.map((c) => ({
    value: String(c.value),
    label: labelText(c.label, ctx.lang) || String(c.value),
    selected: selected.includes(String(c.value)),
  }));
  if (field.sorted_choices) options.sort((a, b) => a.label.localeCompare(b.label, undefined, { sensitivity: 'base' }));
  return options;
}

/** Errors of a field: under its name, or nested under its parent (a group's dict, a language). */
function errorsAt(errors: ErrorDict, name: string, nested: unknown): string[] {
  return [...messagesOf(errors[name]), ...(nested === undefined ? [] : messagesOf(nested))];
}

function widget(field: SchemingField, name: string, state: FormState, ctx: FormContext, errors: ErrorDict, nested: unknown): WidgetView {
  const { flat } = state;
  const kind = widgetKind(field);
  const label = fieldLabel(field, ctx.lang);
  const view: WidgetView = {
    kind,
    field_name: field.field_name,
    name,
    id: `field-${name}`,
    label,
    help: labelText(field.help_text, ctx.lang),
    placeholder: labelText(field.form_placeholder, ctx.lang),
    required: isRequired(field),
    errors: [],
    value: first(flat[name]),
    values: many(flat[name]),
    options: [],
    langs: [],
    groups: [],
    add_value: '',
    add_label: '',
    once: !!field.repeating_once,
    zone: null,
    visibility: null,
  };
  if (FLUENT_KINDS.includes(kind)) {
    // A fluent field's errors come for the whole value, or per language ({"en": [...]}).
    const own = nested !== undefined ? nested : errors[name];
    const byLang = own && typeof own === 'object' && !Array.isArray(own) ? (own as Record<string, unknown>) : {};
    view.errors = Array.isArray(own) || typeof own === 'string' ? messagesOf(own) : [];
    view.langs = fluentLanguages(field, ctx.schemaLanguages, ctx.siteLanguages).map((lang) => ({
      lang,
      name: `${name}-${lang}`,
      id: `field-${name}-${lang}`,
      label: languageName(lang, ctx.lang),
      value: first(flat[`${name}-${lang}`]),
      placeholder: labelText(field.form_placeholder, lang),
      errors: [...messagesOf(byLang[lang]), ...messagesOf(errors[`${name}-${lang}`])],
      selected: false,
    }));
    const shown = view.langs.find((l) => l.errors.length) ?? view.langs.find((l) => l.lang === ctx.lang) ?? view.langs[0];
    if (shown) shown.selected = true;
    return view;
  }
  view.errors = errorsAt(errors, name, nested);
  if (field.field_name === 'tag_string') view.errors.push(...messagesOf(errors.tags));
  switch (kind) {
    case 'select': {
      const chosen = view.value !== '' ? [view.value] : field.default !== undefined ? [String(field.default)] : [];
      const options = choiceOptions(field, ctx, chosen);
      if (!view.required || field.form_include_blank_choice) options.unshift({ value: '', label: '', selected: chosen.length === 0 });
      view.options = options;
      break;
    }
    case 'radio':
    case 'checkboxes':
    case 'multiselect':
      view.options = choiceOptions(field, ctx, kind === 'radio' ? [view.value] : view.values);
      break;
    case 'multitext':
      // The filled values and one empty input for another.
      view.values = [...view.values.filter((v) => v !== ''), ''];
      break;
    case 'datetime_tz': {
      const zone = first(flat[`${name}${TZ_SUFFIX}`]) || '+00:00';
      view.zone = {
        name: `${name}${TZ_SUFFIX}`,
        id: `field-${name}${TZ_SUFFIX}`,
        options: ZONES.map((z) => ({ value: z, label: `UTC${z === '+00:00' ? '' : z}`, selected: z === zone })),
      };
      break;
    }
    case 'organization': {
      view.name = 'owner_org';
      view.id = 'field-owner_org';
      view.value = first(flat.owner_org);
      view.errors = errorsAt(errors, 'owner_org', undefined);
      view.options = ctx.organizations.map((o) => ({ ...o, selected: o.value === view.value }));
      const isPrivate = first(flat.private) === 'True';
      view.visibility = {
        options: [
          { value: 'False', label: ctx.t('manage.dataset.public'), selected: !isPrivate },
          { value: 'True', label: ctx.t('manage.dataset.private'), selected: isPrivate },
        ],
        errors: messagesOf(errors.private),
      };
      break;
    }
    case 'license':
      view.options = ctx.licenses.map((l) => ({ ...l, selected: l.value === view.value }));
      break;
    case 'repeating': {
      const legend = labelText(field.repeating_label, ctx.lang) || label;
      const nestedList = Array.isArray(errors[name]) ? (errors[name] as unknown[]) : [];
      view.errors = messagesOf(nestedList.filter((e) => typeof e === 'string'));
      const count = state.groups[field.field_name] ?? 0;
      for (let i = 0; i < count; i++) {
        const groupErrors = nestedList[i] && typeof nestedList[i] === 'object' ? (nestedList[i] as Record<string, unknown>) : {};
        view.groups.push({
          legend: view.once ? legend : `${legend} ${i + 1}`,
          remove_value: `${name}-${i}`,
          remove_label: ctx.t('scheming.form.remove_group', { label: `${legend} ${i + 1}` }),
          fields: (field.repeating_subfields ?? [])
            .filter((sub) => !hiddenInForm(sub))
            .map((sub) => widget(sub, `${name}-${i}-${sub.field_name}`, state, ctx, errors, groupErrors[sub.field_name])),
        });
      }
      view.add_value = name;
      view.add_label = ctx.t('scheming.form.add_group', { label: legend });
      break;
    }
    default:
      break;
  }
  return view;
}

/** The form's pages: a new one starts at each field with start_form_page; without any, one untitled page. */
export function formPages(fields: SchemingField[], state: FormState, ctx: FormContext, errors: ErrorDict = {}): FormPage[] {
  const pages: FormPage[] = [];
  for (const field of fields) {
    const start = field.start_form_page as { title?: unknown; description?: unknown } | undefined;
    if (start || !pages.length)
      pages.push({
        title: start ? labelText(start.title as never, ctx.lang) : '',
        description: start ? labelText(start.description as never, ctx.lang) : '',
        fields: [],
      });
    if (hiddenInForm(field)) continue;
    pages[pages.length - 1].fields.push(widget(field, field.field_name, state, ctx, errors, undefined));
  }
  return pages.filter((p) => p.fields.length || p.title);
}

/** Input names the form shows an error beside (others go in the summary at the top). */
export function shownErrorKeys(fields: SchemingField[]): string[] {
  const keys: string[] = [];
  for (const field of fields) {
    if (hiddenInForm(field)) continue;
    if (widgetKind(field) === 'organization') keys.push('owner_org', 'private');
    else keys.push(field.field_name);
    if (widgetKind(field) === 'slug' || field.field_name === 'name') keys.push('name');
    if (field.field_name === 'tag_string') keys.push('tags');
  }
  return keys;
}

export { ADD_BUTTON, REMOVE_BUTTON };
