// npm run bench -- views: chart views and dump formats on a large table, through the real app on
// a real port (a child process, so its memory is its own), next to the database doing the same.
//
//   chart   chart_view_data of a chart with a group-by and an aggregation (x date, y mean of
//           confirmed, grouped by country: the 10 largest countries, 200 intervals each), and the
//           resource page drawing it as SVG; p50/p90 of SVC_BENCH_REQUESTS sequential requests
//           (default 20) with the points kept since the view was saved (warm), and of
//           SVC_BENCH_COLD_REQUESTS (default 5) each after a one-row write (cold: the points
//           computed: the written row applied to the kept sums and counts, no scan), beside the
//           statements of that run directly on the read connection, the one-scan statement of a
//           chart after another process's write (the last computation's groups and x range
//           guessed), and the two statements of a first computation (nothing to guess), run
//           directly.                                                  goal: page p50 <= 300 ms
//   dump    GET /datastore/dump/{id}?format=parquet against format=csv of the same table (time,
//           bytes), and the server's RSS growth during the Parquet dump.
//                                          goals: Parquet >= 50 % of CSV's speed, and smaller
//
// Environment: SVC_BENCH_DUMPS=0 (the chart alone), SVC_BENCH_ROWS (default 1000000), SVC_BENCH_DB (postgres,pglite; default
// postgres), SVC_BENCH_PGLITE_ROWS (default SVC_BENCH_ROWS), SVC_BENCH_DATABASE_URL (throw-away
// databases are created and dropped there), SVC_BENCH_BATCH (default 10000). PostgreSQL only:
// SVC_BENCH_KEEP=1 keeps the databases and prints the tag, SVC_BENCH_REUSE=<tag> runs on the
// table kept by an earlier run (not loaded again; the cold renders add a few rows).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { FIELDS, generateRows, resultsDir } from './data.ts';
import { ADMIN_URL, adminQuery, api, grantDataStoreReader, log, rssBytes, startServer, stopChild, urlWith } from './common.ts';
import type { DatastoreBackend } from '../src/datastore/backend.ts';
import type { ChartConfig } from '../src/views/chart-config.ts';
import { applyChanges } from '../src/views/chart-changes.ts';
import { chartPoints } from '../src/views/chart-query.ts';

const BATCH = Number(process.env.SVC_BENCH_BATCH ?? 10_000);
const REQUESTS = Number(process.env.SVC_BENCH_REQUESTS ?? 20);
const COLD_REQUESTS = Number(process.env.SVC_BENCH_COLD_REQUESTS ?? 5);
const KEEP = process.env.SVC_BENCH_KEEP === '1';
const REUSE = process.env.SVC_BENCH_REUSE || undefined;
/** SVC_BENCH_DUMPS=0: the chart alone (no dumps). */
const DUMPS = process.env.SVC_BENCH_DUMPS !== '0';
const MB = 1024 * 1024;
type DbKind = 'postgres' | 'pglite';

const CHART: ChartConfig = { x: 'date', y: ['confirmed'], group_by: 'country', aggregate: 'mean', chart: 'line' };

/** p50 and p90 in ms of n sequential runs (each after `untimed`, when given). */
async function percentiles(n: number, fn: () => Promise<unknown>, untimed?: () => Promise<unknown>): Promise<{ p50: number; p90: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    await untimed?.();
    const t0 = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 10) / 10;
  return { p50: r(ms[Math.floor(ms.length / 2)]), p90: r(ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.9))]) };
}

/** Reads a whole answer, counting its bytes; seconds and bytes. */
async function download(url: string, token: string): Promise<{ seconds: number; bytes: number }> {
  const t0 = process.hrtime.bigint();
  const res = await fetch(url, { headers: { authorization: token } });
  if (res.status !== 200 || !res.body) throw new Error(`${url}: ${res.status}`);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, bytes };
}

/** A dataset with a data store table of n rows; the table's resource id. */
async function loadTable(port: number, token: string, pkg: string, n: number): Promise<string> {
  await api(port, token, 'package_create', { name: pkg, title: 'Views benchmark' });
  const created = await api(port, token, 'datastore_create', {
    resource: { package_id: pkg, name: 'table' },
    fields: FIELDS.map((f) => ({ id: f.id, type: f.type })),
  });
  log(`loading ${n} rows`);
  const rows = generateRows(n);
  for (let i = 0; i < rows.length; i += BATCH)
    await api(port, token, 'datastore_upsert', { resource_id: created.resource_id, method: 'insert', records: rows.slice(i, i + BATCH) });
  return created.resource_id;
}

async function runOne(kind: DbKind, n: number): Promise<Record<string, unknown>> {
  const reuse = kind === 'postgres' ? REUSE : undefined;
  const keep = kind === 'postgres' && (KEEP || !!reuse);
  const tag = reuse ?? `views_${process.pid}_${kind}`;
  const storage = path.join(os.tmpdir(), `svc-bench-${tag}`);
  fs.mkdirSync(storage, { recursive: true });
  const cleanups: (() => Promise<void>)[] = keep ? [] : [async () => fs.rmSync(storage, { recursive: true, force: true })];
  if (keep) log(`${kind}: the table is kept: SVC_BENCH_REUSE=${tag} runs on it again (drop svcbench_${tag}_cat and _ds when done)`);
  const config: Record<string, unknown> = {
    'svc.storage_path': storage,
    'svc.log_level': process.env.SVC_BENCH_LOG_LEVEL ?? 'warn',
    'svc.plugins': ['datastore', 'datatables_view', 'chart'],
    'svc.auth.create_unowned_dataset': true,
  };
  let direct: DatastoreBackend['readQuery'];
  if (kind === 'postgres') {
    const names = { cat: `svcbench_${tag}_cat`, ds: `svcbench_${tag}_ds` };
    for (const name of Object.values(names)) {
      if (!reuse) await adminQuery(`CREATE DATABASE ${name}`);
      if (!keep) cleanups.unshift(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
    const dsUrl = urlWith(ADMIN_URL, names.ds);
    const readUrl = await grantDataStoreReader(dsUrl, names.ds);
    Object.assign(config, {
      'svc.database_url': urlWith(ADMIN_URL, names.cat),
      'svc.datastore.write_url': dsUrl,
      'svc.datastore.read_url': readUrl,
    });
    const client = new pg.Client({ connectionString: readUrl });
    cleanups.unshift(() => client.end());
    await client.connect();
    direct = async (sql, opts) => {
      // The statement's planner settings as the data store sets them: SET LOCAL in its transaction.
      const settings = Object.entries(opts.settings ?? {});
      if (settings.length) {
        await client.query('BEGIN READ ONLY');
        for (const [name, value] of settings) await client.query('SELECT set_config($1, $2, true)', [name, value]);
      }
      const r = await client.query(sql, opts.params ?? []).finally(() => (settings.length ? client.query('COMMIT') : undefined));
      // Dates as the data store gives them (readValue in src/datastore/select.ts).
      const records = r.rows.map((row) =>
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString().slice(0, 19) : v])),
      );
      return { fields: [], records, truncated: r.rows.length > opts.rowLimit };
    };
  }
  const out: Record<string, unknown> = { db: kind, rows: n };
  try {
    log(`${kind}: starting the app`);
    const { child, port, token } = await startServer(config);
    cleanups.unshift(() => stopChild(child));
    const pkg = `bench-views-${kind}`;
    const id = reuse ? (await api(port, token, 'package_show', { id: pkg })).resources[0].id : await loadTable(port, token, pkg, n);
    if (kind === 'postgres') await adminQuery(`VACUUM ANALYZE "${id}"`, String(config['svc.datastore.write_url']));

    log(`${kind}: chart`);
    const view = await api(port, token, 'resource_view_create', {
      resource_id: id,
      view_type: 'chart',
      title: 'Mean confirmed by date',
      ...CHART,
    });
    const sample = await api(port, token, 'chart_view_data', { id: view.id });
    const pageUrl = `http://127.0.0.1:${port}/dataset/${pkg}/resource/${id}?view_id=${view.id}`;
    const render = async () => {
      const r = await fetch(pageUrl, { headers: { authorization: token } });
      if (r.status !== 200) throw new Error(`page: ${r.status}`);
      await r.text();
    };
    // Warm: the points computed when the view was saved, kept while the table is not written.
    const data = await percentiles(REQUESTS, () => api(port, token, 'chart_view_data', { id: view.id }));
    const page = await percentiles(REQUESTS, render);
    // Cold: a one-row write (not timed) before each render, so each render computes the points.
    const oneRow = generateRows(1)[0];
    let written = n;
    const coldPage = await percentiles(COLD_REQUESTS, render, () =>
      api(port, token, 'datastore_upsert', { resource_id: id, method: 'insert', records: [{ ...oneRow, row_id: ++written }] }),
    );
    // The same machine's floor: an action that reads nothing (the host is shared and often loaded).
    const statusMs = await percentiles(REQUESTS, () => api(port, token, 'status_show', {}));
    const chart: Record<string, unknown> = {
      config: CHART,
      series: sample.series.length,
      points: sample.series.reduce((k: number, s: { points: unknown[] }) => k + s.points.length, 0),
      dataMs: data,
      pageMs: page,
      coldPageMs: coldPage,
      statusShowMs: statusMs,
      goalMs: 300,
      ok: page.p50 <= 300,
    };
    if (kind === 'postgres') {
      // The same statements chartData sends, on a plain connection of the read role (no cursor).
      const statements: string[] = [];
      const backend = {
        readQuery: (sql: string, opts: Parameters<DatastoreBackend['readQuery']>[1]) => {
          statements.push(sql);
          return direct(sql, opts);
        },
      } as unknown as DatastoreBackend;
      const fields = FIELDS.map((f) => ({ id: f.id, type: f.type }));
      // As on the page after a write: the groups and x range of the last computation guessed (one scan).
      const { shape, state } = await chartPoints(backend, id, CHART, fields);
      statements.length = 0;
      chart.directSqlMs = await percentiles(REQUESTS, () => chartPoints(backend, id, CHART, fields, shape));
      chart.sql = statements.slice(0, 1);
      // As on the page after a write of this process: the kept state and the written row applied.
      if (state) {
        const row = JSON.stringify({ ...oneRow, row_id: written + 1 });
        statements.length = 0;
        chart.directChangesMs = await percentiles(REQUESTS, async () => {
          if (!(await applyChanges(backend, id, CHART, fields, state, [`[{"s":1,"r":${row}}]`], 'bench'))) throw new Error('not applied');
        });
        chart.sqlChanges = statements.slice(0, 2);
      }
      // With nothing to guess (a chart's first computation): two scans.
      statements.length = 0;
      chart.directSqlTwoScansMs = await percentiles(REQUESTS, () => chartPoints(backend, id, CHART, fields));
      chart.sqlTwoScans = statements.slice(0, 2);
    }
    out.chart = chart;

    if (!DUMPS) return out;
    log(`${kind}: dumps`);
    const csv = await download(`http://127.0.0.1:${port}/datastore/dump/${id}?format=csv`, token);
    const rssBefore = rssBytes(child.pid!);
    let peak = rssBefore;
    const timer = setInterval(() => {
      peak = Math.max(peak, rssBytes(child.pid!));
    }, 25);
    const parquet = await download(`http://127.0.0.1:${port}/datastore/dump/${id}?format=parquet`, token).finally(() =>
      clearInterval(timer),
    );
    out.dump = {
      csv: { seconds: csv.seconds, MB: csv.bytes / MB, rowsPerSecond: Math.round(n / csv.seconds) },
      parquet: { seconds: parquet.seconds, MB: parquet.bytes / MB, rowsPerSecond: Math.round(n / parquet.seconds) },
      speedRatio: csv.seconds / parquet.seconds,
      sizeRatio: parquet.bytes / csv.bytes,
      serverRssGrowthMB: (peak - rssBefore) / MB,
      ok: csv.seconds / parquet.seconds >= 0.5 && parquet.bytes < csv.bytes,
    };
  } finally {
    for (const c of cleanups) await c().catch((e) => log(`cleanup: ${e}`));
  }
  return out;
}

export async function run(): Promise<void> {
  const n = Number(process.env.SVC_BENCH_ROWS ?? 1_000_000);
  const kinds = (process.env.SVC_BENCH_DB ?? 'postgres').split(',') as DbKind[];
  fs.mkdirSync(resultsDir, { recursive: true });
  for (const kind of kinds) {
    const rows = kind === 'pglite' ? Number(process.env.SVC_BENCH_PGLITE_ROWS ?? n) : n;
    const res = await runOne(kind, rows);
    const file = path.join(resultsDir, `views-${kind}.json`);
    fs.writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), ...res }, null, 2) + '\n');
    const c = res.chart as any;
    const d = res.dump as any;
    const f = (v: number, k = 1) => v.toFixed(k);
    console.log(`\n# views and dumps: ${kind}, ${rows.toLocaleString('en')} rows`);
    console.log(
      `chart_view_data (group-by + mean): p50 ${c.dataMs.p50} ms, p90 ${c.dataMs.p90} ms; ${c.series} series, ${c.points} points`,
    );
    console.log(
      `resource page with the chart:      p50 ${c.pageMs.p50} ms, p90 ${c.pageMs.p90} ms, points kept (goal <= 300 ms: ${c.ok ? 'ok' : 'MISSED'})`,
    );
    console.log(`status_show (nothing read):        p50 ${c.statusShowMs.p50} ms, p90 ${c.statusShowMs.p90} ms`);
    console.log(`the page after a write (cold):     p50 ${c.coldPageMs.p50} ms, p90 ${c.coldPageMs.p90} ms, points computed`);
    if (c.directChangesMs)
      console.log(
        `the written row applied, directly: p50 ${c.directChangesMs.p50} ms, p90 ${c.directChangesMs.p90} ms (the statements of the page after a write)`,
      );
    if (c.directSqlMs)
      console.log(
        `same aggregate SQL run directly:   p50 ${c.directSqlMs.p50} ms, p90 ${c.directSqlMs.p90} ms (one scan: a write of another process)`,
      );
    if (c.directSqlTwoScansMs)
      console.log(
        `nothing guessed (first computation): p50 ${c.directSqlTwoScansMs.p50} ms, p90 ${c.directSqlTwoScansMs.p90} ms (two scans, directly)`,
      );
    if (d) {
      console.log(`CSV dump:     ${f(d.csv.seconds, 2)} s, ${f(d.csv.MB)} MB, ${d.csv.rowsPerSecond.toLocaleString('en')} rows/s`);
      console.log(
        `Parquet dump: ${f(d.parquet.seconds, 2)} s, ${f(d.parquet.MB)} MB, ${d.parquet.rowsPerSecond.toLocaleString('en')} rows/s`,
      );
      console.log(
        `Parquet/CSV: speed ${f(d.speedRatio * 100, 0)} %, size ${f(d.sizeRatio * 100, 0)} %; server RSS growth ${f(d.serverRssGrowthMB)} MB (goal speed >= 50 % and smaller: ${d.ok ? 'ok' : 'MISSED'})`,
      );
    }
    console.log(`(written to ${path.relative(process.cwd(), file)})`);
  }
}
