// All user-facing text of the web interface comes from a message catalogue per locale
// (src/web/messages/<locale>/*.json, flat keys, one file per area of the site), served by i18next.
// English is complete and the fallback of every other locale. A plural message is written as
// `key` (one) and `key|plural` (every other plural category of the locale; `key|many`, `key|few`...
// may refine one category); i18next picks the form by the locale's CLDR rules (Intl.PluralRules).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import i18next, { type i18n } from 'i18next';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'messages');
type Catalogue = Record<string, string>;
const LOCALE_NAME = /^[a-z]{2}(_[A-Z]{2})?$/;

/** The catalogue of a locale as written: its files merged, a key defined twice refused. */
export function catalogueOf(locale: string): Catalogue {
  const folder = path.join(dir, locale);
  const merged: Catalogue = {};
  if (!LOCALE_NAME.test(locale) || !fs.existsSync(folder)) return merged;
  for (const file of fs.readdirSync(folder).sort()) {
    if (!file.endsWith('.json')) continue;
    for (const [key, text] of Object.entries(JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8')) as Catalogue)) {
      if (key in merged) throw new Error(`message ${key} is defined twice (${locale}/${file})`);
      merged[key] = text;
    }
  }
  return merged;
}

/** The locales that have a catalogue folder. */
export function catalogueLocales(): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && LOCALE_NAME.test(e.name))
    .map((e) => e.name)
    .sort();
}

/** Our `key|plural` forms as i18next's `key_<category>` keys for the locale's plural categories. */
function i18nextResources(locale: string, messages: Catalogue): Catalogue {
  const categories = new Intl.PluralRules(bcp47(locale)).resolvedOptions().pluralCategories;
  const out: Catalogue = {};
  for (const [key, text] of Object.entries(messages)) {
    const bar = key.indexOf('|');
    if (bar < 0) {
      out[key] = text;
      if (`${key}|plural` in messages) out[`${key}_one`] = text;
      continue;
    }
    const base = key.slice(0, bar);
    const form = key.slice(bar + 1);
    if (form === 'plural') {
      for (const category of categories) if (category !== 'one' && !(`${base}|${category}` in messages)) out[`${base}_${category}`] = text;
    } else out[`${base}_${form}`] = text;
  }
  return out;
}

/** A locale name (fr, pt_BR) as a BCP 47 language tag (fr, pt-BR) for Intl and lang attributes. */
export function bcp47(locale: string): string {
  return locale.replace('_', '-');
}

let instance: i18n | undefined;

function i18nextInstance(): i18n {
  if (instance) return instance;
  const resources: Record<string, { translation: Catalogue }> = {};
  for (const locale of catalogueLocales()) resources[locale] = { translation: i18nextResources(locale, catalogueOf(locale)) };
  const created = i18next.createInstance();
  created.init({
    resources,
    initAsync: false,
    lng: 'en',
    fallbackLng: 'en',
    keySeparator: false,
    nsSeparator: false,
    returnEmptyString: false,
    interpolation: {
      prefix: '{',
      suffix: '}',
      // Nunjucks escapes what a template prints; escaping here too would show &amp; on the page.
      escapeValue: false,
      skipOnVariables: true,
    },
  });
  instance = created;
  return created;
}

export type Translate = (key: string, vars?: Record<string, unknown>) => string;

/**
 * A translator for a locale: `{name}` in a message is replaced by vars.name (numbers formatted for
 * the locale); with a numeric vars.count the plural form of the locale's rules is chosen.
 */
export function translator(locale: string): Translate {
  const fixed = i18nextInstance().getFixedT(locale);
  return (key, vars) => {
    if (!vars) return String(fixed(key, { defaultValue: key }));
    // i18next picks the plural form by count and fills the message from `replace`: numbers as the locale writes them.
    const replace = Object.fromEntries(
      Object.entries(vars).map(([name, value]) => [name, typeof value === 'number' ? formatNumber(value, locale) : value]),
    );
    const count = typeof vars.count === 'number' ? { count: vars.count } : {};
    return String(fixed(key, { ...count, replace, defaultValue: key }));
  };
}

/** Every key of the English catalogue, plural forms by their base key (tests check that templates name only known keys). */
export function messageKeys(): string[] {
  return [...new Set(Object.keys(catalogueOf('en')).map((key) => key.split('|')[0]!))];
}

export function formatNumber(value: number, locale: string): string {
  return new Intl.NumberFormat(bcp47(locale)).format(value);
}

/**
 * A multilingual (ckanext-fluent) value in the page's language: an object of language -> text gives
 * the text of the locale, else of its language without region, else of the fallbacks, else the first
 * non-empty one; anything else is returned as it is.
 */
export function localizedValue(value: unknown, locale: string, fallbacks: string[] = ['en']): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const byLang = value as Record<string, unknown>;
  const blank = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
  const order = [locale, locale.split(/[_-]/)[0]!, ...fallbacks, ...Object.keys(byLang)];
  for (const lang of order) if (Object.hasOwn(byLang, lang) && !blank(byLang[lang])) return byLang[lang];
  return '';
}
