// npm run bench -- web: server time of the main web pages on PostgreSQL at 100,000 datasets
// (SVC_BENCH_DATASETS), each beside the time of the action calls it makes, over HTTP, in the same run.
//
//   1. The catalog of the search bench (bench/search.ts): SVC_BENCH_CREATE datasets through
//      package_create, cloned in SQL to SVC_BENCH_DATASETS, `svc search-index rebuild`. Or
//      SVC_BENCH_REUSE=<database>: a catalog kept by an earlier run (SVC_BENCH_KEEP=1 with this
//      bench or the search bench); it is migrated and indexed when it needs it, and kept.
//   2. The real app runs as a child process (bench/server.ts) with the plugins a portal runs.
//   3. For each page (home, dataset search with facets, the dataset page, a resource page), the
//      action calls the page makes are recorded once, in-process, on the same database (the
//      top-level ctx.call()s with their parameters, as an anonymous visitor).
//   4. Each page is requested SVC_BENCH_RUNS times (default 30, after 3 warm-ups) over HTTP
//      (keep-alive, anonymous): p50/p95. Beside it, the recorded action calls sent to the Action
//      API over HTTP, one after the other (seq) and all at once (par): p50/p95; ratio = page p50 /
//      actions seq p50: what rendering the page adds to the actions. "cold": the search index
//      generation moves before each request (nothing from package_search's result cache);
//      "cached": the same request again.
//   A page that answers other than 200 (not built yet) is reported as missing.
//
// Goal (issue #14): page p50 <= 50 ms for the search page with facets and the dataset page.
// Environment: SVC_BENCH_DATASETS, SVC_BENCH_CREATE, SVC_BENCH_RUNS, SVC_BENCH_DATABASE_URL,
// SVC_BENCH_CATALOG, SVC_BENCH_KEEP=1, SVC_BENCH_REUSE=<database>, SVC_BENCH_PAGES=<regexp>.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { closeServices, createServices } from '../src/services.ts';
import { buildApp } from '../src/http/app.ts';
import type { Services } from '../src/actions/context.ts';
import { resultsDir } from './data.ts';
import { keepOrDropCatalog, log, startServer, stopChild } from './common.ts';
import { agent, benchDatabase, cloneInSql, createThroughApi, pct, readCatalog, rebuild, request, unindexedCount } from './search.ts';

const REUSE = process.env.SVC_BENCH_REUSE;
const TOTAL = Number(process.env.SVC_BENCH_DATASETS ?? 100_000);
const CREATE = Math.min(TOTAL, Number(process.env.SVC_BENCH_CREATE ?? 2_000));
const RUNS = Number(process.env.SVC_BENCH_RUNS ?? 30);
const GOAL_MS = 50;
// The plugins of a portal that need no second database (the data store needs one).
const PLUGINS = ['activity', 'image_view', 'text_view', 'webpage_view', 'video_view', 'audio_view'];

interface ActionCall {
  action: string;
  params: Record<string, unknown>;
}

interface PageCase {
  label: string;
  url: string;
  /** Uses package_search (the cold runs move the index generation first). */
  search: boolean;
}

/** The action calls a page makes (top level only: not the calls actions make themselves). */
async function recordPageCalls(services: Services, url: string): Promise<{ status: number; calls: ActionCall[] }> {
  const calls: ActionCall[] = [];
  const nested = new AsyncLocalStorage<boolean>();
  const registry = services.registry;
  const originalGet = registry.get.bind(registry);
  registry.get = (name: string) => {
    const def = originalGet(name);
    return {
      ...def,
      handler: (ctx: any, params: any) => {
        if (nested.getStore()) return def.handler(ctx, params);
        calls.push({ action: name, params: JSON.parse(JSON.stringify(params ?? {})) });
        return nested.run(true, () => def.handler(ctx, params));
      },
    };
  };
  try {
    const app = await buildApp(services);
    await app.ready();
    const res = await app.inject({ method: 'GET', url });
    await app.close();
    return { status: res.statusCode, calls };
  } finally {
    registry.get = originalGet;
  }
}

async function timeRuns(fn: () => Promise<void>, before?: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS + 3; i++) {
    if (before) await before();
    const t0 = performance.now();
    await fn();
    if (i >= 3) times.push(performance.now() - t0);
  }
  return times;
}

async function getPage(port: number, url: string): Promise<void> {
  const res = await request(port, 'GET', url);
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
}

async function callAll(port: number, calls: ActionCall[], parallel: boolean): Promise<void> {
  const one = async (c: ActionCall) => {
    const res = await request(port, 'POST', `/api/3/action/${c.action}`, undefined, JSON.stringify(c.params));
    if (res.status !== 200) throw new Error(`${c.action}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  };
  if (parallel) await Promise.all(calls.map(one));
  else for (const c of calls) await one(c);
}

async function buildCatalog(
  client: pg.Client,
  port: number,
  token: string,
  dbUrl: string,
  storage: string,
  results: Record<string, unknown>,
) {
  if (!REUSE) {
    const sources = readCatalog();
    log(`${sources.length} source datasets; creating ${CREATE} through package_create`);
    results.package_create_per_s = Math.round(await createThroughApi(port, token, sources));
    log(`cloning to ${TOTAL.toLocaleString()} datasets in SQL`);
    await cloneInSql(client, TOTAL - CREATE);
  }
  const unindexed = await unindexedCount(client);
  if (unindexed > 0) await rebuild(client, dbUrl, storage, results);
  await client.query('VACUUM ANALYZE');
}

/** The pages: a popular tag among public datasets, a public dataset made through the API (with activity). */
async function pageCases(client: pg.Client): Promise<PageCase[]> {
  const { o: org, v: tag } = (
    await client.query(`SELECT organization AS o, v FROM package_search_index, unnest(tags) v
      WHERE state = 'active' AND NOT private GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 1`)
  ).rows[0];
  const ds = (
    await client.query(`SELECT p.name, (SELECT r.id FROM resources r WHERE r.package_id = p.id AND r.state = 'active' ORDER BY r.position LIMIT 1) AS res
      FROM packages p WHERE p.state = 'active' AND NOT p.private AND p.owner_org IS NOT NULL
        AND EXISTS (SELECT 1 FROM resources r WHERE r.package_id = p.id AND r.state = 'active')
        AND EXISTS (SELECT 1 FROM members m WHERE m.table_id = p.id AND m.table_name = 'package' AND m.state = 'active')
      ORDER BY p.metadata_created LIMIT 1`)
  ).rows[0];
  const q = (params: [string, string][]) => new URLSearchParams(params).toString();
  return [
    { label: 'home /', url: '/', search: true },
    { label: 'search: /dataset (all, facets)', url: '/dataset', search: true },
    {
      label: 'search: q=data & tags (facets)',
      url: `/dataset?${q([
        ['q', 'data'],
        ['tags', tag],
      ])}`,
      search: true,
    },
    {
      label: 'search: q + organization + tags + res_format',
      url: `/dataset?${q([
        ['q', 'rainfall station'],
        ['organization', org],
        ['tags', tag],
        ['res_format', 'CSV'],
      ])}`,
      search: true,
    },
    {
      label: 'search: page 50, sorted by name',
      url: `/dataset?${q([
        ['sort', 'name asc'],
        ['page', '50'],
      ])}`,
      search: true,
    },
    { label: 'dataset page', url: `/dataset/${encodeURIComponent(ds.name)}`, search: false },
    { label: 'resource page', url: `/dataset/${encodeURIComponent(ds.name)}/resource/${ds.res}`, search: false },
  ];
}

export async function run(): Promise<void> {
  const { dbName, dbUrl } = await benchDatabase('web');
  const storage = fs.mkdtempSync(path.join('/tmp', 'svc-bench-web-'));
  const config = { 'svc.database_url': dbUrl, 'svc.storage_path': storage, 'svc.plugins': PLUGINS, 'svc.log_level': 'warn' };
  const client = new pg.Client({ connectionString: dbUrl });
  const results: Record<string, unknown> = { runs: RUNS, goal_p50_ms: GOAL_MS };
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    server = await startServer(config);
    await client.connect();
    const port = server.port;
    await buildCatalog(client, port, server.token, dbUrl, storage, results);
    results.datasets = Number((await client.query('SELECT count(*) AS n FROM packages')).rows[0].n);
    log(`${Number(results.datasets).toLocaleString()} datasets`);
    const services = await createServices(loadConfig({ env: {}, overrides: config, cwd: storage }), {
      logger: pino({ level: 'warn' }),
      migrate: false,
      worker: false,
    });
    const bump = () => client.query("SELECT nextval('package_search_generation')");
    const only = process.env.SVC_BENCH_PAGES ? new RegExp(process.env.SVC_BENCH_PAGES) : null;
    const rows: Record<string, unknown>[] = [];
    try {
      for (const page of (await pageCases(client)).filter((p) => !only || only.test(p.label))) {
        const { status, calls } = await recordPageCalls(services, page.url);
        if (status !== 200) {
          log(`${page.label.padEnd(46)} missing: ${page.url} answers ${status}`);
          rows.push({ page: page.label, url: page.url, status });
          continue;
        }
        const cold = page.search ? bump : undefined;
        const pageCold = await timeRuns(() => getPage(port, page.url), cold);
        const pageCached = page.search ? await timeRuns(() => getPage(port, page.url)) : pageCold;
        const seq = await timeRuns(() => callAll(port, calls, false), cold);
        const par = await timeRuns(() => callAll(port, calls, true), cold);
        const p = (xs: number[], q: number) => +pct(xs, q).toFixed(1);
        // each call on its own (cold), to see which one costs the time
        const perCall: string[] = [];
        for (const c of calls) perCall.push(`${c.action} ${p(await timeRuns(() => callAll(port, [c], false), cold), 50)}`);
        const row = {
          page: page.label,
          page_p50: p(pageCold, 50),
          page_p95: p(pageCold, 95),
          cached_p50: p(pageCached, 50),
          cached_p95: p(pageCached, 95),
          actions_seq_p50: p(seq, 50),
          actions_seq_p95: p(seq, 95),
          actions_par_p50: p(par, 50),
          ratio: +(pct(pageCold, 50) / pct(seq, 50)).toFixed(2),
          goal: pct(pageCold, 50) <= GOAL_MS ? 'ok' : 'over',
          calls: perCall.join(', '),
        };
        rows.push({ ...row, url: page.url });
        log(
          `${page.label.padEnd(46)} page p50 ${row.page_p50} p95 ${row.page_p95} | cached p50 ${row.cached_p50} | actions seq p50 ${row.actions_seq_p50} p95 ${row.actions_seq_p95}, par p50 ${row.actions_par_p50} ms | x${row.ratio}\n      ${calls.length} calls, p50 ms each: ${row.calls}`,
        );
      }
    } finally {
      await closeServices(services);
    }
    results.pages = rows;
    console.table(rows.map(({ url: _url, calls: _calls, ...r }) => r));
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `web-postgres-${results.datasets}.json`);
    fs.writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
    log(`wrote ${path.relative(process.cwd(), file)}`);
  } finally {
    await client.end().catch(() => undefined);
    if (server) await stopChild(server.child);
    agent.destroy();
    await keepOrDropCatalog(dbName, dbUrl, storage, Boolean(REUSE));
  }
}
