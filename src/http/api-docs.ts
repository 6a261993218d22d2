// GET /api/3/openapi.json (the document made from the declarations) and GET /api/3/docs, a
// Swagger UI page served from the swagger-ui-dist package's files (works offline, no CDN).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import { CachedBody } from './cached-body.ts';
import { openApiDocument } from './openapi.ts';

const uiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The only files served from the package; a Map, so no name finds anything on an object's prototype. */
const ASSET_TYPES = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);
const assets = new Map<string, CachedBody>();

function asset(file: string): CachedBody | undefined {
  const type = ASSET_TYPES.get(file);
  if (!type) return undefined;
  let cached = assets.get(file);
  if (!cached) {
    cached = new CachedBody(fs.readFileSync(path.join(uiDir, file)), type);
    assets.set(file, cached);
  }
  return cached;
}
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function docsPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} – API documentation</title>
<link rel="stylesheet" href="/api/3/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/3/docs/favicon-32x32.png">
</head>
<body>
<main id="api-docs"><noscript>The interactive documentation needs JavaScript; the document itself is at <a href="/api/3/openapi.json">/api/3/openapi.json</a>.</noscript></main>
<script src="/api/3/docs/swagger-ui-bundle.js"></script>
<script src="/api/3/docs/init.js"></script>
</body>
</html>`;
}

// A file of its own, so the page needs no inline script (a strict Content-Security-Policy holds).
// Operations start collapsed and the schema list is hidden: rendering ~160 open operations took seconds.
const INIT = new CachedBody(
  Buffer.from(
    "window.ui = SwaggerUIBundle({ url: '/api/3/openapi.json', dom_id: '#api-docs', deepLinking: true, docExpansion: 'none', defaultModelsExpandDepth: -1 });\n",
  ),
  'application/javascript; charset=utf-8',
);
/** Revalidated on every use (the document follows the runtime configuration); unchanged answers are a 304. */
const REVALIDATE = 'no-cache';

export async function apiDocsRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { config } = services;
  let cached: { key: string; body: CachedBody } | undefined;
  app.get('/api/3/openapi.json', async (request, reply) => {
    // Made once per set of actions (plugins register theirs at start-up) and of the settings it shows.
    const key = JSON.stringify([
      services.registry.names(),
      config.str('svc.site_title'),
      config.str('apikey_header_name'),
      config.str('svc.site_url'),
    ]);
    if (cached?.key !== key) {
      cached = { key, body: new CachedBody(Buffer.from(JSON.stringify(openApiDocument(services))), 'application/json; charset=utf-8') };
    }
    return cached.body.send(request, reply, REVALIDATE);
  });
  app.get('/api/3/docs', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
      .send(docsPage(config.str('svc.site_title'))),
  );
  app.get('/api/3/docs/init.js', async (request, reply) => INIT.send(request, reply, REVALIDATE));
  app.get('/api/3/docs/:file', async (request, reply) => {
    const file = asset((request.params as { file: string }).file);
    if (!file) throw new NotFoundError('no such file of the API documentation');
    return file.send(request, reply, 'public, max-age=86400');
  });
}
