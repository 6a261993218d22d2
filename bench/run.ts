// npm run bench -- <name>: benchmarks, never timed tests. Each prints a table and writes
// bench/results/<name>-<db>.json.
const benches: Record<string, () => Promise<{ run: (args: string[]) => Promise<void> }>> = {
  datastore: () => import('./datastore.ts'),
  search: () => import('./search.ts'),
  loader: () => import('./loader.ts'),
  web: () => import('./web.ts'),
  startup: () => import('./startup.ts'),
  views: () => import('./views.ts'),
  cluster: () => import('./cluster.ts'),
  dcat: () => import('./dcat.ts'),
  spatial: () => import('./spatial.ts'),
  harvest: () => import('./harvest.ts'),
  writes: () => import('./writes.ts'),
};

const [name, ...args] = process.argv.slice(2);
if (!name || !benches[name]) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exit(2);
}
await (await benches[name]()).run(args);
