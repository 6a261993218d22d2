// ckanext-fluent's validators: multilingual values are objects of language -> text (or tags),
// taken from the object sent or from the form's per-language inputs (<field>-en, <field>-fr).
import { Stop, type FieldContext, type Validator } from '../validation/validate.ts';
import { tagNameErrors } from '../validation/package-schema.ts';
import { isBlank, loadJson, requiredEnforced, type Factory, type ValidatorScope } from './validator-scope.ts';

const LANGUAGE = /^[a-z]{2,8}(-[0-9a-zA-Z]{1,8})*$/;

function formLanguages(scope: ValidatorScope): string[] {
  const own = scope.field.form_languages ?? scope.schema.form_languages;
  return Array.isArray(own) ? own.map(String) : [scope.defaultLocale];
}

/** The per-language form inputs (<field>-en, <field>-fr), taken out of the dict; undefined when there are none. */
function languageInputs(f: FieldContext): Record<string, unknown> | undefined {
  const prefix = `${f.key}-`;
  const names = Object.keys(f.data).filter((k) => k.startsWith(prefix));
  if (!names.length) return undefined;
  const out: Record<string, unknown> = {};
  for (const name of names) {
    out[name.slice(prefix.length)] = f.data[name];
    delete f.data[name];
  }
  return out;
}

/** Shared by fluent_text and fluent_tags: the object of languages, checked. */
function fluentObject(scope: ValidatorScope, f: FieldContext, v: unknown, item: (lang: string, x: unknown, errs: string[]) => unknown) {
  const form = languageInputs(f);
  let value: unknown = form ?? v;
  if (isBlank(value)) value = {};
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Stop('Failed to decode JSON string');
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Stop('expecting JSON object');
  const errs: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [lang, x] of Object.entries(value as Record<string, unknown>)) {
    if (!LANGUAGE.test(lang)) {
      errs.push(`invalid language code: "${lang}"`);
      continue;
    }
    const converted = item(lang, x, errs);
    if (converted !== undefined) out[lang] = converted;
  }
  if (scope.field.required && requiredEnforced(scope, f)) {
    for (const lang of formLanguages(scope)) {
      const got = out[lang];
      if (!got || (Array.isArray(got) && !got.length)) errs.push(`Required language "${lang}" missing`);
    }
  }
  if (errs.length) throw new Stop(errs.join(', '));
  return out;
}

export const fluentText: Factory = (_args, scope) => (v, f) =>
  fluentObject(scope, f, v, (lang, x, errs) => {
    if (x === '' || x === null) return '';
    if (typeof x !== 'string') {
      errs.push(`invalid type for "${lang}" value`);
      return undefined;
    }
    return x;
  });

export const fluentTags: Factory = (_args, scope) => (v, f) =>
  fluentObject(scope, f, v, (lang, x, errs) => {
    const list = typeof x === 'string' ? x.split(',').filter((t) => t.trim()) : x;
    if (!Array.isArray(list)) {
      errs.push(`invalid type for "${lang}" value`);
      return undefined;
    }
    const tags: string[] = [];
    list.forEach((t, i) => {
      if (typeof t !== 'string') errs.push(`invalid type for "${lang}" value item ${i}`);
      else {
        errs.push(...tagNameErrors(t.trim()));
        tags.push(t.trim());
      }
    });
    return tags;
  });

export const fluentTextOutput: Factory = (_args, scope) => (v) => {
  if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  if (typeof v !== 'string') return v;
  try {
    const parsed = JSON.parse(v);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // a plain string: the default locale's text
  }
  return { [scope.defaultLocale]: v };
};

export const fluentTagsOutput: Validator = (v) => (typeof v === 'string' ? loadJson(v, undefined as never) : v);

/** On <core>_translated: the object, and the core field (title) in the default locale. */
export const fluentCoreTranslatedOutput: Factory = (args, scope) => {
  const toObject = fluentTextOutput(args, scope);
  return async (v, f) => {
    const value = (await toObject(v, f)) as Record<string, string>;
    const core = f.key.replace(/_translated$/, '');
    if (core !== f.key && core in f.data && value && typeof value === 'object') {
      const text = value[scope.defaultLocale] ?? Object.values(value).find((x) => typeof x === 'string' && x);
      if (text !== undefined) f.data[core] = text;
    }
    return value;
  };
};
