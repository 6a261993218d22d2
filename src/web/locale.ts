// The language of a page, as CKAN chooses it: a locale prefix of the address (/fr/dataset) names it;
// without one, the visitor's remembered choice (a cookie the prefix and the switcher set), then the
// browser's Accept-Language, then svc.locale_default. The default locale has no prefix: /en/x
// remembers English and redirects to /x. Addresses under /api/ never take a prefix.
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/load.ts';
import { bcp47 } from './i18n.ts';

export const LOCALE_COOKIE = 'svc_locale';
const PREFIX = /^\/([a-z]{2}(?:_[A-Z]{2})?)(?=\/|\?|$)/;

/** svc.locales_offered with svc.locale_default first (the default is always offered). */
export function offeredLocales(config: Config): string[] {
  const fallback = config.str('svc.locale_default') || 'en';
  return [...new Set([fallback, ...config.list('svc.locales_offered')])];
}

/** The offered locale an address starts with (/fr/dataset -> fr), and the address without it. */
function splitLocalePrefix(url: string, offered: string[]): { locale: string; rest: string } | undefined {
  const m = PREFIX.exec(url);
  if (!m || !offered.includes(m[1]!)) return undefined;
  const after = url.slice(m[0].length);
  const rest = after.startsWith('/') ? after : `/${after}`;
  if (rest.startsWith('/api/') || rest === '/api') return undefined;
  return { locale: m[1]!, rest };
}

/** Fastify's rewriteUrl: routes see the address without its locale prefix (request.originalUrl keeps it). */
export function localePrefixRewriter(config: Config): (req: IncomingMessage) => string {
  return (req) => {
    const url = req.url ?? '/';
    return splitLocalePrefix(url, offeredLocales(config))?.rest ?? url;
  };
}

/** The offered locale an Accept-Language header prefers most (q weights, a region falls back to its language). */
function negotiateLocale(header: string | undefined, offered: string[]): string | undefined {
  if (!header) return undefined;
  const wanted = header
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
      return { tag: tag.trim().toLowerCase(), q: q ? Number(q[1]) : 1, i };
    })
    .filter((w) => w.tag && w.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  const byTag = new Map(offered.map((l) => [bcp47(l).toLowerCase(), l]));
  for (const { tag } of wanted) {
    const found = byTag.get(tag) ?? byTag.get(tag.split('-')[0]!) ?? offered.find((l) => l.toLowerCase().startsWith(`${tag}_`));
    if (found) return found;
  }
  return undefined;
}

interface PageLocale {
  locale: string;
  /** The address prefix the page's links keep ('' for the default locale or a page without prefix). */
  prefix: string;
  /** The locale the address named (undefined when chosen by cookie, header or default). */
  fromAddress?: string;
}

export function pageLocale(
  config: Config,
  originalUrl: string,
  cookie: string | undefined,
  acceptLanguage: string | undefined,
): PageLocale {
  const offered = offeredLocales(config);
  const fallback = offered[0]!;
  const named = splitLocalePrefix(originalUrl, offered)?.locale;
  if (named) return { locale: named, prefix: named === fallback ? '' : `/${named}`, fromAddress: named };
  const remembered = cookie && offered.includes(cookie) ? cookie : undefined;
  return { locale: remembered ?? negotiateLocale(acceptLanguage, offered) ?? fallback, prefix: '' };
}

/** A local address of this site in the page's language: /dataset -> /fr/dataset (not /api/, assets or one with a prefix). */
export function withLocalePrefix(url: string, prefix: string, offered: string[]): string {
  if (!prefix || !url.startsWith('/') || url.startsWith('//') || url.startsWith('/\\')) return url;
  if (/^\/(api|static)(\/|$)|^\/custom\.css/.test(url) || splitLocalePrefix(url, offered)) return url;
  return url === '/' ? prefix : `${prefix}${url}`;
}

/** Every local link and form target of a page (href, action, formaction) given the locale prefix. */
export function prefixLinks(html: string, prefix: string, offered: string[]): string {
  if (!prefix) return html;
  return html.replace(
    /(\s(?:href|action|formaction)=")(\/[^"]*)"/g,
    (_m, attr: string, url: string) => `${attr}${withLocalePrefix(url, prefix, offered)}"`,
  );
}

const ownNames = new Map<string, string>();

/** A language's name in itself, capitalized as a menu entry: Français, Deutsch, Español. */
function ownName(lang: string): string {
  let name = ownNames.get(lang);
  if (!name) {
    const own = new Intl.DisplayNames([lang], { type: 'language' }).of(lang) ?? lang;
    name = own.charAt(0).toLocaleUpperCase(lang) + own.slice(1);
    ownNames.set(lang, name);
  }
  return name;
}

/** The same page in every offered locale: the switcher's links and the hreflang alternates. */
export function localeLinks(
  offered: string[],
  current: string,
  path: string,
): { locale: string; lang: string; name: string; href: string; current: boolean }[] {
  return offered.map((locale) => {
    const lang = bcp47(locale);
    return {
      locale,
      lang,
      name: ownName(lang),
      href: path === '/' ? `/${locale}` : `/${locale}${path}`,
      current: locale === current,
    };
  });
}
