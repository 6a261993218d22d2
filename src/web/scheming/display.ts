// The custom fields of a dataset (or resource) as its page shows them, in schema order: choices by
// their labels, lists joined, dates formatted, fluent values in the UI language, repeating
// subfields as a small list per group. Fields the page shows elsewhere (title, description, tags,
// organization, licence) are left out, and so are empty values and display_snippet: null.
import type { SchemingField } from '../../scheming/types.ts';
import { formatDate } from '../render.ts';
import { safeLink } from '../pages/catalog-common.ts';
import { type FormContext, fieldChoices } from './form-view.ts';
import { fieldLabel, hiddenInDisplay, labelText, widgetKind } from './widgets.ts';

export interface DisplayRow {
  field_name: string;
  label: string;
  /** Plain text (or the link text). */
  text: string;
  items: string[];
  href: string | null;
  /** Markdown source, rendered by the template. */
  markdown: string | null;
  /** Pretty JSON, shown preformatted. */
  json: string | null;
  /** The machine-readable time of a date (for <time datetime>). */
  time: string | null;
  groups: { legend: string; rows: DisplayRow[] }[];
}

/** Fields every dataset page shows in its own place. */
const SHOWN_ELSEWHERE = new Set(['title', 'name', 'notes', 'tag_string', 'owner_org', 'license_id', 'private']);

type DisplayContext = Pick<FormContext, 'lang' | 'helperChoices'> & {
  /** The site's default language: a multilingual value without the page's language shows this one's. */
  defaultLang?: string;
};

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value as object).every(isEmpty);
  return false;
}

function asList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string' && value.startsWith('[')) {
    try {
      const parsed = JSON.parse(value);
      if (Array.isArray(parsed)) return parsed;
    } catch {}
  }
  return [value];
}

const asText = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);

/** A multilingual value in the page's language, else the site's default, else English, else the first language in order. */
function inLanguage(value: unknown, ctx: DisplayContext): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const byLang = value as Record<string, unknown>;
  const order = [ctx.lang, ctx.defaultLang ?? 'en', 'en', ...Object.keys(byLang).sort()];
  for (const key of order) if (!isEmpty(byLang[key])) return byLang[key];
  return '';
}

function row(field: SchemingField, value: unknown, ctx: DisplayContext): DisplayRow | null {
  if (isEmpty(value)) return null;
  const out: DisplayRow = {
    field_name: field.field_name,
    label: fieldLabel(field, ctx.lang),
    text: '',
    items: [],
    href: null,
    markdown: null,
    json: null,
    time: null,
    groups: [],
  };
  const kind = widgetKind(field);
  const display = typeof field.display_snippet === 'string' ? field.display_snippet.slice(field.display_snippet.lastIndexOf('/') + 1) : '';
  const choiceLabel = (v: unknown) => {
    const choice = fieldChoices(field, { ...ctx, helperChoices: ctx.helperChoices } as FormContext).find(
      (c) => String(c.value) === String(v),
    );
    return choice ? labelText(choice.label, ctx.lang) || String(choice.value) : asText(v);
  };
  switch (kind) {
    case 'repeating': {
      const legend = labelText(field.repeating_label, ctx.lang) || out.label;
      const items = asList(value).filter((item) => item && typeof item === 'object');
      out.groups = items.map((item, i) => ({
        legend: items.length > 1 ? `${legend} ${i + 1}` : legend,
        rows: (field.repeating_subfields ?? [])
          .filter((sub) => !hiddenInDisplay(sub))
          .map((sub) => row(sub, (item as Record<string, unknown>)[sub.field_name], ctx))
          .filter((r): r is DisplayRow => r !== null),
      }));
      return out.groups.length ? out : null;
    }
    case 'fluent':
    case 'fluent_markdown': {
      const text = inLanguage(value, ctx);
      if (isEmpty(text)) return null;
      if (kind === 'fluent_markdown' || display === 'fluent_markdown.html') out.markdown = asText(text);
      else out.text = asText(text);
      if (display === 'fluent_link.html') out.href = safeLink(out.text);
      return out;
    }
    case 'fluent_tags':
      out.items = asList(inLanguage(value, ctx)).map(asText);
      return out.items.length ? out : null;
    case 'select':
    case 'radio':
      out.text = choiceLabel(value);
      return out;
    case 'checkboxes':
    case 'multiselect':
      out.items = asList(value).map(choiceLabel);
      return out;
    case 'multitext':
      out.items = asList(value).map(asText);
      break;
    case 'json':
      out.json = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
      return out;
    case 'markdown':
      out.markdown = asText(value);
      return out;
    default:
      if (Array.isArray(value)) out.items = value.map(asText);
      else out.text = asText(value);
  }
  if (kind === 'date' || kind === 'datetime' || kind === 'datetime_tz' || /date/.test(display)) {
    const text = out.text;
    const withTime = kind !== 'date' && /T\d/.test(text);
    const formatted = formatDate(text, withTime || (display !== 'date.html' && /T\d/.test(text)), ctx.lang);
    if (formatted && formatted !== text) {
      out.time = text;
      out.text = formatted;
    }
  } else if (display === 'link.html' && out.text) {
    out.href = safeLink(out.text);
  } else if (display === 'email.html' && out.text) {
    out.href = safeLink(`mailto:${out.text}`);
  }
  return out;
}

/** The rows of a dataset's (or resource's) custom fields, in schema order. */
export function displayRows(
  fields: SchemingField[],
  dict: Record<string, unknown>,
  ctx: DisplayContext,
  skip = SHOWN_ELSEWHERE,
): DisplayRow[] {
  const rows: DisplayRow[] = [];
  for (const field of fields) {
    if (skip.has(field.field_name) || hiddenInDisplay(field)) continue;
    const kind = widgetKind(field);
    if (kind === 'slug' || kind === 'organization' || kind === 'license') continue;
    const r = row(field, dict[field.field_name], ctx);
    if (r) rows.push(r);
  }
  return rows;
}
