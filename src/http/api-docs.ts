// GET /api/3/openapi.json (the document made from the declarations) and GET /api/3/docs, a
// Swagger UI page served from the swagger-ui-dist package's files (works offline, no CDN).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../context.ts';
import { openApiDocument } from './openapi.ts';

const uiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

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
const INIT = `window.ui = SwaggerUIBundle({ url: '/api/3/openapi.json', dom_id: '#api-docs', deepLinking: true });\n`;

export async function apiDocsRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  let cached: { names: string; body: string } | undefined;
  app.get('/api/3/openapi.json', async (_req, reply) => {
    // The registry can change only at start-up (plugins); the document is made once per set of actions.
    const names = services.registry.names().join(',');
    if (cached?.names !== names) cached = { names, body: JSON.stringify(openApiDocument(services)) };
    return reply.type('application/json; charset=utf-8').send(cached.body);
  });
  app.get('/api/3/docs', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
      .send(docsPage(services.config.str('svc.site_title'))),
  );
  app.get('/api/3/docs/init.js', async (_req, reply) => reply.type('application/javascript; charset=utf-8').send(INIT));
  app.get('/api/3/docs/:file', async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const type = ASSETS[file];
    if (!type) return reply.code(404).type('text/plain').send('Not found');
    return reply
      .type(type)
      .header('cache-control', 'public, max-age=86400')
      .send(fs.createReadStream(path.join(uiDir, file)));
  });
}
