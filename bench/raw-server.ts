// The baseline for datastore_search: a minimal HTTP endpoint (plain node:http) that runs the same
// SQL through the same driver (pg Pool or PGlite) and answers JSON. Child process of the
// benchmark; SVC_BENCH_RAW = {kind, url | dataDir, poolSize, queries: [sql, ...]}. Every query
// gets $1 = the request's filters.country. Reports {port} over IPC.
import http from 'node:http';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';

const opts = JSON.parse(process.env.SVC_BENCH_RAW ?? '{}') as {
  kind: 'postgres' | 'pglite';
  url?: string;
  dataDir?: string;
  poolSize?: number;
  queries: string[];
};
let run: (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>;
let close: () => Promise<void>;
if (opts.kind === 'postgres') {
  const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10 });
  run = (sql, params) => pool.query(sql, params);
  close = () => pool.end();
} else {
  const db = await PGlite.create({ dataDir: opts.dataDir });
  run = (sql, params) => db.query(sql, params);
  close = () => db.close();
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const params = [body.filters?.country];
      const results = [];
      for (const q of opts.queries) results.push((await run(q, params)).rows);
      const json = JSON.stringify({ success: true, result: { records: results[0], extra: results.slice(1) } });
      res.writeHead(200, { 'content-type': 'application/json' }).end(json);
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send!({ port: typeof a === 'object' && a ? a.port : 0 });
});
const stop = async () => {
  server.close();
  await close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
