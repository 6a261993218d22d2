import pg from 'pg';
import pino from 'pino';
import { loadConfig } from './src/config/load.ts';
import { closeServices, createServices } from './src/services.ts';
import { callAction } from './src/actions/registry.ts';
const dbUrl = 'postgresql://postgres@127.0.0.1:5432/svc_bench_search_cbee46';
const params = JSON.parse(process.argv[2]);
const services: any = await createServices(loadConfig({ env: {}, overrides: { 'svc.database_url': dbUrl, 'svc.storage_path': '/tmp/search2/st', 'svc.plugins': [] }, cwd: '/tmp/search2' }), { logger: pino({ level: 'warn' }), migrate: false });
const seen: any[] = [];
const db = services.db; const orig = db.query.bind(db);
db.query = (t: any, v?: any[]) => { seen.push({ text: typeof t === 'string' ? t : t.text, values: v ?? [] }); return orig(t, v); };
await callAction(services, 'package_search', params, { identity: { user: null, sysadmin: false, via: 'anonymous' } as any });
db.query = orig;
await closeServices(services);
const c = new pg.Client({ connectionString: dbUrl }); await c.connect();
for (const s of seen) {
  const times: number[] = [];
  for (let i = 0; i < 7; i++) { const t0 = performance.now(); await c.query(s.text, s.values); times.push(performance.now() - t0); }
  times.sort((a, b) => a - b);
  console.log(times[3].toFixed(1).padStart(7), s.text.replace(/\s+/g, ' ').slice(0, 150));
  if (process.env.EXPLAIN && times[3] > 5) { const e = await c.query('EXPLAIN (ANALYZE, BUFFERS) ' + s.text, s.values); console.log(e.rows.map((r: any) => r['QUERY PLAN']).join('\n')); }
}
await c.end();
