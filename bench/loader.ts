// npm run bench -- loader: the loader from upload to a typed, searchable table, next to `psql \copy`
// of the same CSV into a table of text columns, in the same run.
//
//   csv   N-row CSV (11 mixed columns: int, date, text, nullable text/int, float, bool, timestamp;
//         bench/data.ts) uploaded with resource_create (multipart, streamed from disk) to the
//         real app on a real port; timed until xloader_status says complete (two passes, types
//         guessed, COPY, table swap, catalog update), then one full-text datastore_search.
//         Server peak RSS sampled from /proc.          goal (PostgreSQL): <= 2x psql \copy time
//         Also timed: psql \copy into the table shape the loader makes (guessed types, serial
//         _id), the floor of any loader of that shape; and (PostgreSQL) the time until the load's
//         background work is done too (the _id key, full-text indexes and vectors). Before each
//         timed step the last load's background work ends (PostgreSQL), then CHECKPOINT and sync.
//   xlsx  a 100,000-row sheet of the same rows, the same way.
//
// Environment: SVC_BENCH_SIZES (default 100000,1000000), SVC_BENCH_DB (postgres,pglite),
// SVC_BENCH_XLSX_ROWS (default 100000; 0 skips), SVC_BENCH_REPEAT (default 1: psql and the loader
// take turns that many times per size, medians compared), SVC_BENCH_DIRECT_COPY=0 (every file through the
// general two-pass path, as before the direct CSV path; results in loader-DB-two-pass.json),
// SVC_BENCH_RESULTS_SUFFIX (appended to the results file's name), SVC_BENCH_DATABASE_URL (default
// postgresql://postgres@127.0.0.1:5432/postgres; throw-away databases are created and dropped).
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import ExcelJS from 'exceljs';
import pg from 'pg';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FIELDS, generateRows, resultsDir, toCsv } from './data.ts';
import { quoteIdent } from '../src/db/sql.ts';
import { ADMIN_URL, adminQuery, api, grantDataStoreReader, log, rssBytes, startServer, stopChild, urlWith } from './common.ts';

const SIZES = (process.env.SVC_BENCH_SIZES ?? '100000,1000000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const XLSX_ROWS = Number(process.env.SVC_BENCH_XLSX_ROWS ?? 100000);
const REPEAT = Math.max(1, Number(process.env.SVC_BENCH_REPEAT ?? 1));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const MB = 1024 * 1024;

/** resource_create with the file streamed from disk as a multipart upload. */
function upload(port: number, token: string, packageId: string, file: string, name: string): Promise<any> {
  const boundary = '----svcbench' + randomUUID();
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\n${packageId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = head.length + fs.statSync(file).size + tail.length;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/3/action/resource_create',
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': size, authorization: token },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () => {
          const json = JSON.parse(Buffer.concat(parts).toString());
          if (!json.success) reject(new Error(`upload: ${JSON.stringify(json.error)}`));
          else resolve(json.result);
        });
      },
    );
    req.on('error', reject);
    req.write(head);
    const stream = fs.createReadStream(file);
    stream.pipe(req, { end: false });
    stream.on('end', () => req.end(tail));
  });
}

async function waitLoaded(port: number, token: string, id: string): Promise<any> {
  for (;;) {
    const res = await fetch(`http://127.0.0.1:${port}/api/3/action/xloader_status?resource_id=${id}`, {
      headers: { authorization: token },
    });
    const json: any = await res.json();
    const st = json.result?.status;
    if (st === 'complete') return json.result;
    if (st === 'error') throw new Error(`load failed: ${json.result.error?.message}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Upload -> complete, with the server's peak RSS; then (indexed, when given) until the table's
 * background work is done; then one full-text search.
 */
async function timeLoad(
  server: { child: ChildProcess; port: number; token: string },
  pkg: string,
  file: string,
  name: string,
  indexed?: (table: string) => Promise<void>,
) {
  const pid = server.child.pid!;
  const before = rssBytes(pid);
  let peak = before;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      /* exited */
    }
  }, 25);
  const t0 = performance.now();
  const res = await upload(server.port, server.token, pkg, file, name);
  const uploadSeconds = (performance.now() - t0) / 1000;
  const st = await waitLoaded(server.port, server.token, res.id);
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  await indexed?.(res.id);
  const indexedSeconds = indexed ? +((performance.now() - t0) / 1000).toFixed(2) : null;
  // Without the exact total: right after a large load its vectors are still being filled, and a
  // count computes every row's (on PGlite 5,000,000 rows pass the 60 s statement timeout).
  const found = await api(server.port, server.token, 'datastore_search', {
    resource_id: res.id,
    q: 'Germany',
    limit: 1,
    include_total: false,
  });
  const info = await api(server.port, server.token, 'datastore_search', { resource_id: res.id, limit: 0 });
  return {
    resource_id: res.id as string,
    seconds,
    upload_seconds: +uploadSeconds.toFixed(2),
    indexed_seconds: indexedSeconds,
    loaded_rows: info.total,
    search_found: found.records.length === 1,
    types: Object.fromEntries(info.fields.filter((f: any) => f.id !== '_id').map((f: any) => [f.id, f.type])),
    rss_before_mb: Math.round(before / MB),
    rss_peak_mb: Math.round(peak / MB),
    rss_growth_mb: Math.round((peak - before) / MB),
    log: st.task_info.logs.map((l: any) => `${l.timestamp.slice(11)} ${l.message}`),
  };
}

function writeCsv(rows: ReturnType<typeof generateRows>, file: string): void {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, FIELDS.map((f) => f.id).join(',') + '\n');
  for (let i = 0; i < rows.length; i += 100000) fs.writeSync(fd, toCsv(rows.slice(i, i + 100000)));
  fs.closeSync(fd);
}

async function writeXlsx(rows: ReturnType<typeof generateRows>, file: string): Promise<void> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: false, useStyles: true });
  const ws = wb.addWorksheet('data');
  ws.addRow(FIELDS.map((f) => f.id)).commit();
  for (const r of rows) {
    ws.addRow(
      FIELDS.map((f) => {
        const v = r[f.id];
        if (f.id === 'date' || f.id === 'updated_at') return new Date(`${v}${f.id === 'date' ? 'T00:00:00' : ''}Z`);
        return v;
      }),
    ).commit();
  }
  ws.commit();
  await wb.commit();
}

/**
 * `psql \copy` of the file in one transaction: into a table of text columns (the goal's
 * reference), or (typed) into the table the loader makes of it: the guessed types and a serial
 * _id (the floor of any loader of this table shape; the loader makes its indexes after the load).
 */
function psqlCopy(url: string, file: string, types?: Record<string, string>): number {
  const table = `copy_${randomBytes(4).toString('hex')}`;
  const columns = FIELDS.map((f) => `"${f.id}" ${types?.[f.id] ?? 'text'}`);
  if (types) columns.unshift('"_id" serial');
  const target = `${table} (${FIELDS.map((f) => `"${f.id}"`).join(', ')})`;
  const script = ['BEGIN;', `CREATE TABLE ${table} (${columns.join(', ')});`, `\\copy ${target} FROM '${file}' CSV HEADER`, 'COMMIT;'].join(
    '\n',
  );
  const t0 = performance.now();
  execFileSync('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1'], { input: script });
  const s = (performance.now() - t0) / 1000;
  execFileSync('psql', [url, '-qc', `DROP TABLE ${table}`]);
  return s;
}

/** PostgreSQL: until a loaded table's background work is done (its last step fills the full-text vectors). */
async function waitIndexed(dsUrl: string, table: string): Promise<void> {
  const c = new pg.Client({ connectionString: dsUrl });
  await c.connect();
  try {
    for (;;) {
      const r = await c.query(`SELECT EXISTS (SELECT 1 FROM ${quoteIdent(table)} WHERE "_full_text" IS NULL) AS pending`);
      if (!r.rows[0].pending) break;
      await new Promise((res) => setTimeout(res, 50));
    }
  } finally {
    await c.end();
  }
}

/**
 * Before each timed step: the background work of the last load done (PostgreSQL), then a
 * checkpoint and the page cache written out, so that no step pays for the one before.
 */
async function settle(dsUrl: string | null, lastTable: string | null): Promise<void> {
  if (dsUrl && lastTable) await waitIndexed(dsUrl, lastTable);
  // then until nothing else runs on the server for a second (the loaded table's VACUUM ANALYZE
  // comes after its vectors, and autovacuum workers)
  if (dsUrl) {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    try {
      for (let quiet = 0, waited = 0; quiet < 10 && waited < 1200; waited++) {
        const r = await c.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid()
           AND backend_type IN ('client backend', 'autovacuum worker') AND (state = 'active' OR backend_type = 'autovacuum worker')`,
        );
        quiet = r.rows[0].n === 0 ? quiet + 1 : 0;
        await new Promise((res) => setTimeout(res, 100));
      }
    } finally {
      await c.end();
    }
    await adminQuery('CHECKPOINT');
  }
  execFileSync('sync');
}

/**
 * The CSV files (and the xlsx) of the run. Their rows are garbage when it returns (collected before
 * the first upload): held by the bench's process they made its collections pause uploads for a second.
 */
async function writeFiles(work: string): Promise<{ files: { rows: number; file: string; bytes: number }[]; xlsx: string | null }> {
  const maxRows = Math.max(...SIZES, XLSX_ROWS);
  log(`generating ${maxRows} rows`);
  const all = generateRows(maxRows);
  const files: { rows: number; file: string; bytes: number }[] = [];
  for (const n of SIZES) {
    const file = path.join(work, `rows-${n}.csv`);
    writeCsv(all.slice(0, n), file);
    files.push({ rows: n, file, bytes: fs.statSync(file).size });
  }
  let xlsx: string | null = null;
  if (XLSX_ROWS > 0) {
    xlsx = path.join(work, `rows-${XLSX_ROWS}.xlsx`);
    log(`writing ${XLSX_ROWS}-row xlsx`);
    await writeXlsx(all.slice(0, XLSX_ROWS), xlsx);
  }
  return { files, xlsx };
}

export async function run(): Promise<void> {
  const kinds = (process.env.SVC_BENCH_DB ?? 'postgres,pglite').split(',');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-loader-'));
  const { files, xlsx } = await writeFiles(work);
  // The rows collected now, not during an upload.
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  fs.mkdirSync(resultsDir, { recursive: true });
  try {
    for (const kind of kinds) {
      const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
      const storage = fs.mkdtempSync(path.join(work, `${kind}-`));
      const cleanups: (() => Promise<void>)[] = [];
      const config: Record<string, unknown> = {
        'svc.storage_path': storage,
        'svc.log_level': 'warn',
        'svc.plugins': ['datastore', 'loader'],
        'svc.auth.create_unowned_dataset': true,
        'svc.max_resource_size': 4096,
        'svc.jobs.poll_interval': 100,
        'svc.loader.direct_copy': process.env.SVC_BENCH_DIRECT_COPY !== '0',
      };
      let rawUrl: string | null = null;
      let dsUrl: string | null = null;
      const out: Record<string, unknown> = {
        db: kind,
        cpus: os.cpus().length,
        loadavg: os.loadavg()[0],
        direct_copy: config['svc.loader.direct_copy'],
        csv: [] as unknown[],
      };
      try {
        if (kind === 'postgres') {
          const names = { cat: `svcbench_${tag}_cat`, ds: `svcbench_${tag}_ds`, raw: `svcbench_${tag}_raw` };
          for (const name of Object.values(names)) {
            await adminQuery(`CREATE DATABASE ${name}`);
            cleanups.push(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
          }
          dsUrl = urlWith(ADMIN_URL, names.ds);
          const readUrl = await grantDataStoreReader(dsUrl, names.ds);
          Object.assign(config, {
            'svc.database_url': urlWith(ADMIN_URL, names.cat),
            'svc.datastore.write_url': dsUrl,
            'svc.datastore.read_url': readUrl,
          });
          rawUrl = urlWith(ADMIN_URL, names.raw);
        }
        log(`${kind}: starting the app`);
        const server = await startServer(config);
        try {
          const pkg = (await api(server.port, server.token, 'package_create', { name: `bench-${tag.replace(/_/g, '-')}` })).id;
          let last: string | null = null;
          for (const f of files) {
            // psql and the loader take turns REPEAT times: the medians are compared (a shared
            // machine's speed drifts from one minute to the next)
            const psqls: number[] = [];
            const loads: Awaited<ReturnType<typeof timeLoad>>[] = [];
            for (let k = 0; k < REPEAT; k++) {
              await settle(dsUrl, last);
              const once = rawUrl ? psqlCopy(rawUrl, f.file) : null;
              if (once !== null) psqls.push(once);
              await settle(dsUrl, null);
              log(`${kind}: ${f.rows} rows (${(f.bytes / MB).toFixed(1)} MB)${once !== null ? `, psql \\copy ${once.toFixed(2)} s` : ''}`);
              const indexed = dsUrl ? (table: string) => waitIndexed(dsUrl!, table) : undefined;
              const one = await timeLoad(server, pkg, f.file, `rows-${f.rows}.csv`, indexed);
              loads.push(one);
              last = one.resource_id;
              log(`${kind}: loader ${one.seconds.toFixed(2)} s${once ? ` (${(one.seconds / once).toFixed(2)}x psql)` : ''}`);
            }
            const psql = psqls.length ? median(psqls) : null;
            const r = { ...loads[loads.length - 1], seconds: median(loads.map((l) => l.seconds)) };
            const ratio = psql ? r.seconds / psql : null;
            await settle(dsUrl, last);
            const typed = rawUrl ? psqlCopy(rawUrl, f.file, r.types) : null;
            log(
              `${kind}: loader ${r.seconds.toFixed(2)} s${ratio ? ` (${ratio.toFixed(2)}x psql${REPEAT > 1 ? `, medians of ${REPEAT}` : ''})` : ''}, peak RSS ${r.rss_peak_mb} MB (+${r.rss_growth_mb} MB)${r.indexed_seconds ? `, indexes and vectors done at ${r.indexed_seconds} s` : ''}${typed ? `; psql \\copy into the loader's table shape ${typed.toFixed(2)} s` : ''}`,
            );
            (out.csv as unknown[]).push({
              rows: f.rows,
              mb: +(f.bytes / MB).toFixed(1),
              psql_copy_s: psql,
              psql_copy_typed_s: typed,
              runs: loads.map((l, k) => ({ psql_copy_s: psqls[k] ?? null, seconds: l.seconds })),
              ratio_to_psql_typed: typed ? r.seconds / typed : null,
              ...r,
              ratio_to_psql: ratio,
              goal_met: ratio === null ? null : ratio <= 2,
            });
          }
          if (xlsx) {
            await settle(dsUrl, last);
            const r = await timeLoad(server, pkg, xlsx, `rows-${XLSX_ROWS}.xlsx`);
            log(`${kind}: xlsx ${XLSX_ROWS} rows ${r.seconds.toFixed(2)} s, peak RSS ${r.rss_peak_mb} MB`);
            out.xlsx = { rows: XLSX_ROWS, mb: +(fs.statSync(xlsx).size / MB).toFixed(1), ...r };
          }
        } finally {
          await stopChild(server.child);
        }
      } finally {
        for (const c of cleanups) await c().catch(() => undefined);
        fs.rmSync(storage, { recursive: true, force: true });
      }
      const name = `loader-${kind}${out.direct_copy ? '' : '-two-pass'}${process.env.SVC_BENCH_RESULTS_SUFFIX ?? ''}.json`;
      fs.writeFileSync(path.join(resultsDir, name), JSON.stringify(out, null, 2) + '\n');
      console.table(
        (out.csv as any[]).map((c) => ({
          db: kind,
          rows: c.rows,
          MB: c.mb,
          'psql s': c.psql_copy_s?.toFixed(2) ?? '-',
          'loader s': c.seconds.toFixed(2),
          ratio: c.ratio_to_psql?.toFixed(2) ?? '-',
          'psql typed s': c.psql_copy_typed_s?.toFixed(2) ?? '-',
          'indexed s': c.indexed_seconds?.toFixed(2) ?? '-',
          'ratio typed': c.ratio_to_psql_typed?.toFixed(2) ?? '-',
          'peak RSS MB': c.rss_peak_mb,
        })),
      );
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
