// Static assets of the web interface (src/web/static), fingerprinted: /static/<hash>/<file> is cached for a year;
// a page always names the current hash, so a changed file is fetched anew.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

interface Asset {
  hash: string;
  body: Buffer;
  type: string;
}

/** Files of npm packages served as static assets too (vendor/<name>), by their paths in node_modules. */
const require = createRequire(import.meta.url);
const VENDOR: Record<string, string> = {
  'vendor/leaflet.js': require.resolve('leaflet/dist/leaflet.js'),
  'vendor/leaflet.css': require.resolve('leaflet/dist/leaflet.css'),
  'vendor/leaflet.markercluster.js': require.resolve('leaflet.markercluster/dist/leaflet.markercluster.js'),
  'vendor/MarkerCluster.css': require.resolve('leaflet.markercluster/dist/MarkerCluster.css'),
  'vendor/MarkerCluster.Default.css': require.resolve('leaflet.markercluster/dist/MarkerCluster.Default.css'),
};

function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, file] of Object.entries(VENDOR)) {
    const body = fs.readFileSync(file);
    assets.set(name, { hash: createHash('sha256').update(body).digest('hex').slice(0, 12), body, type: TYPES[path.extname(name)] });
  }
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else {
        const body = fs.readFileSync(path.join(dir, rel));
        const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
        assets.set(rel, { hash, body, type: TYPES[path.extname(rel)] ?? 'application/octet-stream' });
      }
    }
  };
  walk('');
  // app.css is every file of static/css in name order (each area of the site has its own file).
  const css = [...assets.keys()].filter((k) => /^css\/[^/]+\.css$/.test(k)).sort();
  const bundle = Buffer.concat(css.map((k) => Buffer.concat([assets.get(k)!.body, Buffer.from('\n')])));
  assets.set('app.css', { hash: createHash('sha256').update(bundle).digest('hex').slice(0, 12), body: bundle, type: TYPES['.css'] });
  return assets;
}

export interface AssetTable {
  /** The fingerprinted URL of a file under src/web/static. */
  url(file: string): string;
}

export function assetRoutes(app: FastifyInstance): AssetTable {
  const assets = loadAssets();
  app.get('/static/:hash/*', async (request, reply) => {
    const { hash, '*': file } = request.params as { hash: string; '*': string };
    const asset = assets.get(file);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    reply.type(asset.type);
    // An old hash still gets the current file, but only for a short while.
    reply.header('cache-control', hash === asset.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    return reply.send(asset.body);
  });
  return {
    url(file) {
      const asset = assets.get(file);
      if (!asset) throw new Error(`no static asset ${file}`);
      return `/static/${asset.hash}/${file}`;
    },
  };
}
