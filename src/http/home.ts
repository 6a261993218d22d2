// GET /: a small HTML page naming the site and pointing to the API (until there is a web interface).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../actions/context.ts';
import { siteUrl } from '../config/site-url.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export function homePage(services: Services): string {
  const config = services.config;
  const title = escapeHtml(config.str('svc.site_title'));
  const description = config.str('svc.site_description');
  const api = escapeHtml(`${siteUrl(config)}/api/3/action/`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}code{background:#f3f3f3;padding:.1rem .3rem;border-radius:3px}</style>
</head>
<body>
<h1>${title}</h1>
${description ? `<p>${escapeHtml(description)}</p>\n` : ''}<p>This site is a data catalog with a CKAN-compatible Action API at <code>${api}</code>.</p>
<ul>
<li><a href="/api/3/docs">API documentation</a></li>
<li><a href="/api/3/openapi.json">OpenAPI description</a> (<code>/api/3/openapi.json</code>)</li>
<li><a href="/api/3/action/status_show">Status</a> (<code>status_show</code>)</li>
</ul>
</body>
</html>
`;
}

export function registerHome(app: FastifyInstance, services: Services): void {
  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(homePage(services)));
}
