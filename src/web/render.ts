// The template engine (Nunjucks: Jinja-like, auto-escaping on) with the filters and globals every
// page uses. Templates live in src/web/templates; a page renders one with its own variables plus
// the request's (user, t, csrf_token, site, flash).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nunjucks from 'nunjucks';
import { markdownExcerpt, renderMarkdown } from './markdown.ts';
import type { AssetTable } from './assets.ts';

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

export function formatDate(value: unknown, withTime = false): string {
  if (!value) return '';
  const text = String(value);
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);
  if (Number.isNaN(d.getTime())) return text;
  const opts: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' };
  if (withTime) Object.assign(opts, { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  return new Intl.DateTimeFormat('en-GB', opts).format(d);
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
  env.addFilter('date', (value: unknown) => formatDate(value));
  env.addFilter('datetime', (value: unknown) => formatDate(value, true));
  env.addFilter('filesize', formatBytes);
  env.addFilter('number', (value: unknown) => (typeof value === 'number' ? value.toLocaleString('en') : String(value ?? '')));
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
