// All user-facing text of the web interface comes from a message catalogue per locale
// (src/web/messages/<locale>/*.json, flat keys, one file per area of the site). English is complete;
// another locale falls back to it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'messages');
type Catalogue = Record<string, string>;
const catalogues = new Map<string, Catalogue>();

function catalogue(locale: string): Catalogue | undefined {
  if (!catalogues.has(locale)) {
    const folder = path.join(dir, locale);
    const merged: Catalogue = {};
    if (/^[a-z]{2}(_[A-Z]{2})?$/.test(locale) && fs.existsSync(folder)) {
      for (const file of fs.readdirSync(folder).sort()) {
        if (!file.endsWith('.json')) continue;
        for (const [key, text] of Object.entries(JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8')) as Catalogue)) {
          if (key in merged) throw new Error(`message ${key} is defined twice (${locale}/${file})`);
          merged[key] = text;
        }
      }
    }
    catalogues.set(locale, merged);
  }
  return catalogues.get(locale);
}

export type Translate = (key: string, vars?: Record<string, unknown>) => string;

/** A translator for a locale: `{name}` in a message is replaced by vars.name; `key|plural` is picked when vars.count !== 1. */
export function translator(locale: string): Translate {
  const own = catalogue(locale) ?? {};
  const en = catalogue('en') ?? {};
  return (key, vars) => {
    const plural = vars && typeof vars.count === 'number' && vars.count !== 1 ? `${key}|plural` : undefined;
    const text = (plural && (own[plural] ?? en[plural])) ?? own[key] ?? en[key] ?? key;
    return vars ? text.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m)) : text;
  };
}

/** Every key of the English catalogue (tests check that templates name only known keys). */
export function messageKeys(): string[] {
  return Object.keys(catalogue('en') ?? {});
}
