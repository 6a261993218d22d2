// The template engine (Nunjucks: Jinja-like, auto-escaping on) with the filters and globals every
// page uses. Templates live in src/web/templates; a page renders one with its own variables plus
// the request's (user, t, csrf_token, site, flash).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nunjucks from 'nunjucks';
import { markdownExcerpt, renderMarkdown } from './markdown.ts';
import type { AssetTable } from './assets.ts';
import { bcp47, formatNumber, localizedValue } from './i18n.ts';

const templatesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'templates');

export type Renderer = (template: string, vars: Record<string, unknown>) => string;

/** A query string from params with changes applied (null removes a key); lists repeat the key. */
export function queryString(params: Record<string, unknown>, changes: Record<string, unknown> = {}): string {
  const merged: Record<string, unknown> = { ...params, ...changes };
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(merged)) {
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v)) for (const x of v) qs.append(k, String(x));
    else qs.append(k, String(v));
  }
  const text = qs.toString();
  return text ? `?${text}` : '';
}

/** A date (an ISO string or Date) in the locale's words: "27 November 2026", "27 novembre 2026". */
export function formatDate(value: unknown, withTime = false, locale = 'en'): string {
  if (!value) return '';
  const text = value instanceof Date ? value.toISOString() : String(value);
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);
  if (Number.isNaN(d.getTime())) return text;
  const opts: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' };
  if (withTime) Object.assign(opts, { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  // English as the site has always shown it (day month year), not the US order.
  return new Intl.DateTimeFormat(locale === 'en' ? 'en-GB' : bcp47(locale), opts).format(d);
}

export function formatBytes(value: unknown): string {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || value === null || value === '') return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** Page numbers to link around the current page: first, last, two either side; null marks a gap. */
export function pageWindow(page: number, pages: number): (number | null)[] {
  const out: (number | null)[] = [];
  for (let p = 1; p <= pages; p++) {
    if (p === 1 || p === pages || Math.abs(p - page) <= 2) out.push(p);
    else if (out[out.length - 1] !== null) out.push(null);
    if (p > 1 && p < page - 3) p = page - 4; // skip to the window
    if (p > page + 2 && p < pages - 1) p = pages - 1;
  }
  return out;
}

/** What Nunjucks binds `this` to in a filter: the render's variables are its ctx. */
interface PageContext {
  ctx?: Record<string, unknown>;
}
const localeOf = (context: PageContext | undefined) => String(context?.ctx?.locale ?? 'en');

export interface RendererOptions {
  /** The address prefix of a dataset's pages (/dataset, or /<type> for a custom dataset type). */
  datasetRoot?: (pkg: { type?: unknown } | undefined) => string;
}

export function createRenderer(assets: AssetTable, opts: RendererOptions = {}): Renderer {
  const env = new nunjucks.Environment(new nunjucks.FileSystemLoader(templatesDir, { noCache: false }), {
    autoescape: true,
    trimBlocks: true,
    lstripBlocks: true,
  });
  env.addFilter('markdown', (text: unknown) => new nunjucks.runtime.SafeString(renderMarkdown(text as string)));
  env.addFilter('excerpt', (text: unknown, max?: number) => markdownExcerpt(text as string, max));
  // Filters see the page's variables as this.ctx: dates, numbers and multilingual values follow its locale.
  env.addFilter('date', function (this: PageContext, value: unknown) {
    return formatDate(value, false, localeOf(this));
  });
  env.addFilter('datetime', function (this: PageContext, value: unknown) {
    return formatDate(value, true, localeOf(this));
  });
  env.addFilter('filesize', formatBytes);
  env.addFilter('number', function (this: PageContext, value: unknown) {
    return typeof value === 'number' ? formatNumber(value, localeOf(this)) : String(value ?? '');
  });
  // A ckanext-fluent value ({"en": "...", "fr": "..."}) in the page's language, with fallback.
  env.addFilter('localized', function (this: PageContext, value: unknown) {
    return localizedValue(value, localeOf(this), [String(this.ctx?.locale_default ?? 'en'), 'en']);
  });
  // JSON inside <script type="application/ld+json">: `<` escaped so no text can close the element.
  env.addFilter(
    'json_script',
    (value: unknown) =>
      new nunjucks.runtime.SafeString(
        JSON.stringify(value ?? null)
          .replace(/</g, '\\u003c')
          .replace(/>/g, '\\u003e')
          .replace(/&/g, '\\u0026'),
      ),
  );
  env.addGlobal('asset', (file: string) => assets.url(file));
  env.addGlobal('qs', queryString);
  env.addGlobal('page_window', pageWindow);
  env.addGlobal('dataset_root', opts.datasetRoot ?? (() => '/dataset'));
  return (template, vars) => env.render(template, vars);
}
