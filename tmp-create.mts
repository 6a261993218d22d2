// package_create 4 at a time with the count triggers on, off, on (same server, same database).
import { fork } from 'node:child_process';
import pg from 'pg';
import { ADMIN_URL, api, urlWith, stopChild } from './bench/common.ts';
const db = `search2_create_${process.pid}`;
const a = new pg.Client({ connectionString: ADMIN_URL }); await a.connect(); await a.query(`CREATE DATABASE ${db}`); await a.end();
const url = urlWith(ADMIN_URL, db);
const child = fork('bench/server.ts', [], { execArgv: ['--import', 'tsx'], env: { ...process.env, SVC_BENCH_CONFIG: JSON.stringify({ 'svc.database_url': url, 'svc.storage_path': '/tmp/search2/cr', 'svc.plugins': [], 'svc.log_level': 'warn' }) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const { port, token } = await new Promise<any>((r) => child.once('message', r));
const c = new pg.Client({ connectionString: url }); await c.connect();
for (let o = 0; o < 5; o++) await api(port, token, 'organization_create', { name: `org-${o}` });
const W = 'river water quality data survey census population budget traffic air station rainfall'.split(' ');
let k = 0;
async function round(label: string, n: number) {
  const t0 = Date.now(); let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => { while (next < n) { const i = next++; k++;
    await api(port, token, 'package_create', { name: `ds-${k}-${i}`, title: `${W[k % W.length]} ${W[(k * 7) % W.length]} data`, notes: W.join(' ') + ' ' + k, owner_org: `org-${k % 5}`, tags: [{ name: W[k % W.length] }, { name: 'data' }], resources: [{ url: 'http://x/a.csv', format: 'CSV' }] }); } }));
  console.log(label, (n / ((Date.now() - t0) / 1000)).toFixed(1), 'datasets/s');
}
for (const r of [1, 2]) {
  await c.query('ALTER TABLE package_search_index ENABLE TRIGGER USER'); await round(`triggers on  (${r})`, 150);
  await c.query('ALTER TABLE package_search_index DISABLE TRIGGER USER'); await round(`triggers off (${r})`, 150);
}
await c.end(); await stopChild(child);
const b = new pg.Client({ connectionString: ADMIN_URL }); await b.connect(); await b.query(`DROP DATABASE ${db} WITH (FORCE)`); await b.end();
