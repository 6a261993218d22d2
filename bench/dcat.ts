// npm run bench -- dcat: the DCAT endpoints on PostgreSQL at 100,000 datasets (SVC_BENCH_DATASETS).
//
//   1. The catalog of `npm run bench -- search` (made the same way, or SVC_BENCH_REUSE=<database>
//      kept by an earlier run: SVC_BENCH_KEEP=1 keeps this one).
//   2. The real app as a child process with the dcat plugin, over HTTP (keep-alive, anonymous):
//      - a 100-dataset catalog page (/catalog.ttl and /catalog.jsonld) at the first, middle and last
//        page, SVC_BENCH_RUNS times each: p50/p95, beside package_search doing the same paging
//        (same rows, start, sort and filters) in the same run;
//      - one dataset's RDF (/dataset/{id}.ttl, .jsonld, .xml) for SVC_BENCH_RUNS random datasets;
//      - following the pages (hydra next) for SVC_BENCH_FOLLOW pages (default 50): datasets/s.
//      - package_search through the whole catalog as the export searches it (1,000 at a time,
//        keyset paging): the rate the export would have without writing RDF.
//   3. The whole catalog streamed by `svc dcat export` (N-Triples and Turtle to /dev/null):
//      datasets/s, and the resident memory of that process sampled every 250 ms (flat = the last
//      samples no higher than the first ones after warm-up).
// Goals (issue #28): page p50 <= 50 ms in Turtle and JSON-LD; whole catalog >= 2,000 datasets/s with
// flat memory; a dataset's RDF p50 <= 10 ms. Results: bench/results/dcat-postgres-<n>.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { log, rssBytes, startServer, stopChild } from './common.ts';
import { resultsDir } from './data.ts';
import { CatalogKeyset } from '../src/plugins/dcat/keyset.ts';
import { benchDatabase, cloneInSql, createThroughApi, pct, readCatalog, rebuild, request, unindexedCount } from './search.ts';

const REUSE = process.env.SVC_BENCH_REUSE;
const TOTAL = Number(process.env.SVC_BENCH_DATASETS ?? 100_000);
const CREATE = Math.min(TOTAL, Number(process.env.SVC_BENCH_CREATE ?? 2_000));
const RUNS = Number(process.env.SVC_BENCH_RUNS ?? 20);
const FOLLOW = Number(process.env.SVC_BENCH_FOLLOW ?? 50);
const PER_PAGE = 100;
const benchDir = path.dirname(new URL(import.meta.url).pathname);

const stats = (xs: number[]) => ({ p50: Number(pct(xs, 50).toFixed(1)), p95: Number(pct(xs, 95).toFixed(1)) });

async function timed(port: number, url: string, runs = RUNS, warmups = 2): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < warmups + runs; i++) {
    const t0 = performance.now();
    const r = await request(port, 'GET', url);
    if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
    if (i >= warmups) times.push(performance.now() - t0);
  }
  return times;
}

/** The package_search call a catalog page makes (output.ts searchParams). */
function searchUrl(page: number): string {
  const qs = new URLSearchParams({
    q: '*:*',
    rows: String(PER_PAGE),
    start: String((page - 1) * PER_PAGE),
    sort: 'metadata_modified desc, id desc',
    facet: 'false',
  });
  qs.append('fq_list', '-dataset_type:harvest');
  qs.append('fq_list', '-dataset_type:showcase');
  return `/api/3/action/package_search?${qs}`;
}

/**
 * package_search through the whole catalog as `svc dcat export` searches it (1,000 a search, the
 * same keyset paging, over HTTP): the export's rate without the RDF. Resolves with datasets/s.
 */
async function searchWholeCatalog(port: number): Promise<{ datasets: number; datasets_per_s: number }> {
  const rows = 1000;
  const keyset = new CatalogKeyset();
  const started = performance.now();
  let datasets = 0;
  for (;;) {
    const params = keyset.after({ fq_list: ['-dataset_type:harvest', '-dataset_type:showcase'] });
    const qs = new URLSearchParams({
      q: '*:*',
      rows: String(rows),
      start: String(params.start),
      sort: 'metadata_modified desc, id desc',
      facet: 'false',
    });
    for (const fq of params.fq_list ?? []) qs.append('fq_list', fq);
    const r = await request(port, 'GET', `/api/3/action/package_search?${qs}`);
    if (r.status !== 200) throw new Error(`package_search: HTTP ${r.status} ${r.text.slice(0, 200)}`);
    const results = JSON.parse(r.text).result.results;
    datasets += keyset.next(results).length;
    if (results.length < rows) break;
  }
  return { datasets, datasets_per_s: Math.round(datasets / ((performance.now() - started) / 1000)) };
}

/** Runs `svc dcat export`, sampling its memory; resolves with its rate and memory samples. */
function exportRun(dbUrl: string, storage: string, format: string): Promise<{ datasets: number; seconds: number; rssMb: number[] }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      // the sources through tsx, as the server above (bin/svc.js would first compile dist/)
      [
        '--import',
        'tsx',
        path.join(benchDir, '..', 'src', 'cli', 'main.ts'),
        'dcat',
        'export',
        '--format',
        format,
        '--output',
        '/dev/null',
      ],
      {
        env: {
          ...process.env,
          SVC__DATABASE_URL: dbUrl,
          SVC__STORAGE_PATH: storage,
          SVC__PLUGINS: 'dcat',
          SVC__LOG_LEVEL: 'warn',
          SVC__SITE_URL: 'http://bench.local',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const rssMb: number[] = [];
    const sampler = setInterval(() => {
      try {
        rssMb.push(Math.round(rssBytes(child.pid!) / 1048576));
      } catch {
        // exited
      }
    }, 250);
    let err = '';
    child.stderr!.on('data', (c) => {
      err += String(c);
    });
    child.on('exit', (code) => {
      clearInterval(sampler);
      if (code !== 0) return reject(new Error(`svc dcat export exited with ${code}: ${err.slice(-500)}`));
      const m = /(\d+) datasets in ([\d.]+) s/.exec(err);
      resolve({ datasets: Number(m?.[1] ?? 0), seconds: m ? Number(m[2]) : (performance.now() - started) / 1000, rssMb });
    });
  });
}

export async function run(): Promise<void> {
  const { dbName, dbUrl } = await benchDatabase('dcat');
  const storage = fs.mkdtempSync(path.join('/tmp', 'svc-bench-dcat-'));
  const plain = { 'svc.database_url': dbUrl, 'svc.storage_path': storage, 'svc.plugins': [], 'svc.log_level': 'warn' };
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  const results: Record<string, unknown> = { runs: RUNS, per_page: PER_PAGE };
  try {
    if (!REUSE) {
      const builder = await startServer(plain);
      try {
        log(`creating ${CREATE} datasets through package_create, then cloning to ${TOTAL.toLocaleString()} in SQL`);
        await createThroughApi(builder.port, builder.token, readCatalog());
        await cloneInSql(client, TOTAL - CREATE);
      } finally {
        await stopChild(builder.child);
      }
    }
    if (!REUSE || (await unindexedCount(client)) > 0) await rebuild(client, dbUrl, storage, results);
    await client.query('VACUUM ANALYZE package_search_index');
    const total = Number((await client.query('SELECT count(*) AS n FROM packages')).rows[0].n);
    const visible = Number(
      (await client.query("SELECT count(*) AS n FROM package_search_index WHERE state = 'active' AND NOT private")).rows[0].n,
    );
    Object.assign(results, { datasets: total, public_active: visible, database: REUSE ? 'reused' : 'made' });
    log(`${total.toLocaleString()} datasets, ${visible.toLocaleString()} public and active`);

    const server = await startServer({ ...plain, 'svc.plugins': ['dcat'], 'svc.site_url': 'http://bench.local' });
    try {
      const last = Math.ceil(visible / PER_PAGE);
      const pages: Record<string, unknown>[] = [];
      for (const page of [1, Math.ceil(last / 2), last]) {
        const row: Record<string, unknown> = { page };
        row.package_search = stats(await timed(server.port, searchUrl(page)));
        for (const ext of ['ttl', 'jsonld']) row[ext] = stats(await timed(server.port, `/catalog.${ext}?page=${page}`));
        const size = (await request(server.port, 'GET', `/catalog.ttl?page=${page}`)).text.length;
        row.ttl_kb = Math.round(size / 1024);
        log(`page ${page}: ${JSON.stringify(row)}`);
        pages.push(row);
      }
      results.catalog_pages = pages;

      const ids = (
        await client.query(
          "SELECT package_id FROM package_search_index WHERE state = 'active' AND NOT private ORDER BY md5(package_id::text) LIMIT $1",
          [RUNS],
        )
      ).rows.map((r) => r.package_id as string);
      const dataset: Record<string, unknown> = {};
      for (const ext of ['ttl', 'jsonld', 'xml']) {
        await timed(server.port, `/dataset/${ids[0]}.${ext}`, 0, 2);
        const times: number[] = [];
        for (const id of ids) times.push(...(await timed(server.port, `/dataset/${id}.${ext}`, 1, 0)));
        dataset[ext] = stats(times);
      }
      const showTimes: number[] = [];
      for (const id of ids) showTimes.push(...(await timed(server.port, `/api/3/action/package_show?id=${id}`, 1, 0)));
      dataset.package_show = stats(showTimes);
      results.dataset_rdf = dataset;
      log(`one dataset: ${JSON.stringify(dataset)}`);

      const follow = async (first: string, pick: (text: string) => string | undefined) => {
        const t0 = performance.now();
        let url: string | undefined = first;
        let n = 0;
        for (let i = 0; i < FOLLOW && url; i++) {
          const r = await request(server.port, 'GET', url);
          if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
          n += PER_PAGE;
          url = pick(r.text);
        }
        return Math.round(n / ((performance.now() - t0) / 1000));
      };
      const nextOf = (text: string) => {
        const m = /<http:\/\/www\.w3\.org\/ns\/hydra\/core#next> <http:\/\/bench\.local([^>]+)>/.exec(text);
        return m?.[1];
      };
      let searchPage = 1;
      results.follow_pages = {
        pages: FOLLOW,
        nt_datasets_per_s: await follow('/catalog.nt?page=1', nextOf),
        package_search_datasets_per_s: await follow(searchUrl(1), () => searchUrl(++searchPage)),
      };
      log(`following ${FOLLOW} pages: ${JSON.stringify(results.follow_pages)}`);
      results.package_search_whole_catalog = await searchWholeCatalog(server.port);
      log(`package_search through the whole catalog as the export: ${JSON.stringify(results.package_search_whole_catalog)}`);
    } finally {
      await stopChild(server.child);
    }

    const exports: Record<string, unknown> = {};
    for (const format of ['nt', 'ttl']) {
      const r = await exportRun(dbUrl, storage, format);
      const settled = r.rssMb.slice(Math.floor(r.rssMb.length / 4));
      exports[format] = {
        datasets: r.datasets,
        seconds: r.seconds,
        datasets_per_s: Math.round(r.datasets / r.seconds),
        rss_mb_first_quarter_end: settled[0],
        rss_mb_max: Math.max(...r.rssMb),
        rss_mb_last: r.rssMb.at(-1),
      };
      log(`svc dcat export --format ${format}: ${JSON.stringify(exports[format])}`);
    }
    results.export = exports;
  } finally {
    await client.end();
    fs.rmSync(storage, { recursive: true, force: true });
    if (!REUSE && process.env.SVC_BENCH_KEEP !== '1') {
      const admin = new pg.Client({ connectionString: dbUrl.replace(/\/[^/]+$/, '/postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
      await admin.end();
    } else log(`kept database ${dbName}`);
  }
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `dcat-postgres-${results.datasets}.json`);
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
  log(`results: ${file}`);
}
