// npm run bench -- datastore: the data store through the real app on a real port, next to the raw
// database doing the same work, on PostgreSQL and on PGlite (one run each).
//
//   load    N rows as JSON records in batches of 10,000 over HTTP: datastore_upsert method=insert
//           into a table without key, and method=upsert into a table with primary key row_id,
//           against COPY FROM of the same rows (CSV) into a table with the same columns (and the
//           same unique index for the upsert case). In rounds (SVC_BENCH_ROUNDS, default 3), raw
//           and app in turn, each on new tables after a CHECKPOINT and sync; medians compared.
//           The background full-text filler is paused until the rounds are over (a loaded table's
//           fill would run in the phases after it); each phase logs the CPU it took (bench, app
//           server, database backends) per batch, recorded as load.cpuSeconds.
//                                                              goals: insert >= 50 %, upsert >= 25 %
//   search  datastore_search, filter country=<one of 20>, sort date desc, 100 rows, include_total,
//           16 connections (autocannon), against a minimal node:http endpoint running the same
//           two statements (page + count) through the same driver.            goal: >= 70 %
//           The insert is also compared with COPY into a table of the app's shape (the hidden
//           full-text column and its partial indexes), the goal's reference since full-text search.
//   fts     full-text search over HTTP once the background filler has computed every vector
//           (SVC_BENCH_FTS_REQUESTS sequential requests each, default 50, p50): q rare term, q common
//           term (~10 % of rows) with exact total and with include_total false, q dict on one
//           text column (rare value), full_text + filters. Goals 20, 300, 30, 20, 50 ms.
//           While the filler works, a rare-term search before each poll: "time until full text is
//           fast" is when such searches start answering within 100 ms (goal: at once, or the fill
//           done within 30 s).
//   dump    GET /datastore/dump/{id} (CSV) against COPY (SELECT ...) TO STDOUT (CSV, HEADER);
//           server RSS growth sampled from /proc.       goals: >= 50 %, RSS growth < 100 MB
//
// Environment: SVC_BENCH_ROWS (default 1000000), SVC_BENCH_PGLITE_ROWS (default SVC_BENCH_ROWS),
// SVC_BENCH_DB (postgres,pglite), SVC_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres;
// throw-away databases are created and dropped), SVC_BENCH_DURATION (search seconds, default 10),
// SVC_BENCH_BATCH (default 10000), SVC_BENCH_ONLY=load (skip search and dump, for tuning the load;
// sql-memory: only the embedded data store's memory around a string_agg of SVC_BENCH_ROWS rows;
// fts: only the insert table's load and the full-text part, for tuning the fill),
// SVC_BENCH_LOAD_CONCURRENCY (load requests at once, default 1), SVC_BENCH_LOG_LEVEL (the app's),
// SVC_BENCH_FTS_RANK_WINDOW (the app's svc.datastore.fts_rank_window; 0 ranks every match).
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { PGlite } from '@electric-sql/pglite';
import { FIELDS, SOURCE, generateRows, resultsDir, toCsv, type BenchRow } from './data.ts';
import { ADMIN_URL, adminQuery, api, grantDataStoreReader, log, rssBytes, stopChild, urlWith } from './common.ts';

const benchDir = path.dirname(new URL(import.meta.url).pathname);
const BATCH = Number(process.env.SVC_BENCH_BATCH ?? 10_000);
const DURATION = Number(process.env.SVC_BENCH_DURATION ?? 10);
const CONNECTIONS = 16;
/** Concurrent load requests (default 1: one client sending batch after batch, as ckanapi does). */
const LOAD_CONCURRENCY = Number(process.env.SVC_BENCH_LOAD_CONCURRENCY ?? 1);
const LOAD_ONLY = process.env.SVC_BENCH_ONLY === 'load';
/** SVC_BENCH_ONLY=fts: the insert table's load, then only the full-text part (for tuning the fill; the recorded figures are kept). */
const FTS_ONLY = process.env.SVC_BENCH_ONLY === 'fts';
/** Load rounds; each ratio is the median round of each side against the other's median. */
const ROUNDS = Math.max(1, Number(process.env.SVC_BENCH_ROUNDS ?? 3));
const MB = 1024 * 1024;
const FTS_REQUESTS = Number(process.env.SVC_BENCH_FTS_REQUESTS ?? 50);
/** A rare-term search this fast counts as "full text is fast" (goal: from the load's end, or the fill within 30 s). */
const FAST_MS = 100;
/** The app's table shape for COPY: the hidden full-text column and its partial indexes (src/datastore/fts.ts). */
const SHAPED_DDL = (name: string) => `${TABLE_DDL(name)}; ALTER TABLE ${qi(name)} ADD COLUMN "_full_text" tsvector;
  CREATE INDEX ON ${qi(name)} USING gin ("_full_text") WHERE "_full_text" IS NOT NULL;
  CREATE INDEX ON ${qi(name)} ("_id") WHERE "_full_text" IS NULL;
  CREATE INDEX ON ${qi(name)} USING gin (to_tsvector('english'::regconfig, country)) WHERE "_full_text" IS NOT NULL;
  CREATE INDEX ON ${qi(name)} USING gin (to_tsvector('english'::regconfig, province)) WHERE "_full_text" IS NOT NULL`;

type DbKind = 'postgres' | 'pglite';

const qi = (s: string) => '"' + s.replace(/"/g, '""') + '"';
const COLS = FIELDS.map((f) => qi(f.id)).join(', ');
const TABLE_DDL = (name: string) =>
  `CREATE TABLE ${qi(name)} ("_id" serial PRIMARY KEY, ${FIELDS.map((f) => `${qi(f.id)} ${f.type}`).join(', ')})`;

/** Samples a process's RSS every 25 ms until stopped; returns the peak. */
function rssSampler(pid: number) {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      /* exited */
    }
  }, 25);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc; null once it is gone. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in ticks (USER_HZ 100)
  } catch {
    return null;
  }
}

/**
 * CPU used during a phase by the bench's own process, the app's server process and (PostgreSQL)
 * the backends and autovacuum workers of one database, polled every 200 ms (a backend that exits
 * between two polls loses its last 200 ms). Says where a load's time went on a shared machine.
 */
function cpuMeter(serverPid: number | null, dbName: string | null) {
  const self0 = process.cpuUsage();
  const server0 = serverPid ? (cpuSeconds(serverPid) ?? 0) : 0;
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const client = dbName ? new pg.Client({ connectionString: ADMIN_URL }) : null;
  const poll = async () => {
    if (!client) return;
    const r = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
      dbName,
    ]);
    for (const { pid } of r.rows) {
      const c = cpuSeconds(pid);
      if (c === null) continue;
      if (!first.has(pid)) first.set(pid, started ? 0 : c);
      last.set(pid, c);
    }
  };
  let started = false;
  const ready = (async () => {
    await client?.connect();
    await poll();
    started = true;
  })();
  let polling = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(poll).catch(() => undefined);
  }, 200);
  return {
    ready,
    async stop(): Promise<{ benchCpuSeconds: number; serverCpuSeconds: number; dbCpuSeconds: number | null }> {
      clearInterval(timer);
      await polling;
      await poll().catch(() => undefined);
      await client?.end();
      const self = process.cpuUsage(self0);
      let db = 0;
      for (const [pid, c] of last) db += c - (first.get(pid) ?? 0);
      const round = (x: number) => Math.round(x * 100) / 100;
      return {
        benchCpuSeconds: round((self.user + self.system) / 1e6),
        serverCpuSeconds: round(serverPid ? (cpuSeconds(serverPid) ?? server0) - server0 : 0),
        dbCpuSeconds: client ? round(db) : null,
      };
    },
  };
}

async function startChild(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; msg: any }> {
  const child = fork(path.join(benchDir, script), [], {
    // SVC_BENCH_CPU_PROF=<dir>: V8 CPU profiles of the children (for finding why a goal is missed).
    // SVC_BENCH_SERVER_FLAGS: extra node flags for the children (e.g. --max-old-space-size=192).
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.SVC_BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean),
      ...(process.env.SVC_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SVC_BENCH_CPU_PROF}`] : []),
    ],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const msg = await new Promise<any>((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, msg };
}

/**
 * The load's client (bench/load-thread.mjs) in a worker thread: prepare() hands it the bodies
 * (moved, not copied, where they own their memory), run() sends them and resolves once all are answered.
 */
function loadClient(port: number, token: string) {
  const worker = new Worker(new URL('./load-thread.mjs', import.meta.url), {
    execArgv: [],
    workerData: { port, token, concurrency: LOAD_CONCURRENCY },
  });
  worker.unref();
  const answer = (send: () => void) =>
    new Promise<void>((resolve, reject) => {
      const done = (m: unknown) => {
        worker.off('error', reject);
        if (m === 'ready' || m === 'done') resolve();
        else reject(new Error(`load client: ${(m as { error?: string }).error ?? String(m)}`));
      };
      worker.once('message', done);
      worker.once('error', reject);
      send();
    });
  return {
    prepare: (bodies: Buffer[]) =>
      answer(() =>
        worker.postMessage(
          { bodies },
          bodies.filter((b) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength).map((b) => b.buffer as ArrayBuffer),
        ),
      ),
    run: () => answer(() => worker.postMessage('go')),
    close: () => worker.terminate(),
  };
}

// --- raw baselines ------------------------------------------------------------------------------

interface RawDb {
  exec(sql: string): Promise<void>;
  copyIn(sql: string, data: Buffer): Promise<void>;
  copyOut(sql: string): Promise<number>;
  close(): Promise<void>;
}

async function openRaw(kind: DbKind, target: string): Promise<RawDb> {
  if (kind === 'postgres') {
    const c = new pg.Client({ connectionString: target });
    await c.connect();
    return {
      exec: async (sql) => {
        await c.query(sql);
      },
      copyIn: async (sql, data) => {
        const chunks: Buffer[] = [];
        for (let i = 0; i < data.length; i += 1 << 16) chunks.push(data.subarray(i, i + (1 << 16)));
        await pipeline(Readable.from(chunks), c.query(copyStreams.from(sql)));
      },
      copyOut: async (sql) => {
        let bytes = 0;
        await pipeline(
          c.query(copyStreams.to(sql)),
          new Writable({
            write(chunk, _e, cb) {
              bytes += chunk.length;
              cb();
            },
          }),
        );
        return bytes;
      },
      close: () => c.end(),
    };
  }
  const db = await PGlite.create({ dataDir: target });
  return {
    exec: async (sql) => {
      await db.exec(sql);
    },
    copyIn: async (sql, data) => {
      await db.query(sql.replace('STDIN', "'/dev/blob'"), [], {
        blob: new Blob([data.buffer.slice(data.byteOffset, data.byteOffset + data.length) as ArrayBuffer]),
      });
    },
    copyOut: async (sql) => {
      const r = await db.query(sql.replace('STDOUT', "'/dev/blob'"));
      return r.blob?.size ?? 0;
    },
    close: () => db.close(),
  };
}

/**
 * Before each timed load: PostgreSQL checkpointed and the OS's dirty pages written, so no phase
 * pays for the writes the one before it left behind (the raw loads run first).
 */
async function settle(kind: DbKind): Promise<void> {
  if (kind === 'postgres') await adminQuery('CHECKPOINT');
  execFileSync('sync');
}

/** Sends the bench server a message and waits for its answer (the same message). */
function tell(server: ChildProcess, m: string): Promise<void> {
  return new Promise((resolve) => {
    const done = (a: unknown) => {
      if (a !== m) return;
      server.off('message', done);
      resolve();
    };
    server.on('message', done);
    server.send(m);
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { value, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

// --- the run for one database -----------------------------------------------------------------------

interface Measure {
  app: number;
  raw: number;
  unit: string;
  ratio: number;
  goal: number;
  ok: boolean;
  [k: string]: unknown;
}

const measure = (app: number, raw: number, unit: string, goal: number, extra: Record<string, unknown> = {}): Measure => {
  const ratio = raw > 0 ? app / raw : 0;
  return { app, raw, unit, ratio, goal, ok: ratio >= goal, ...extra };
};

async function benchOne(kind: DbKind, n: number): Promise<Record<string, unknown>> {
  log(`${kind}: generating ${n} rows from ${path.basename(SOURCE)}`);
  const rows = generateRows(n);
  const csv = toCsv(rows);
  const batches: Buffer[] = [];
  for (let i = 0; i < rows.length; i += BATCH) batches.push(Buffer.from(JSON.stringify(rows.slice(i, i + BATCH))));
  const countries = pickCountries(rows, 20);

  const tag = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), `svc-bench-${kind}-`));
  const cleanups: (() => Promise<void>)[] = [async () => fs.rmSync(storage, { recursive: true, force: true })];
  const out: Record<string, unknown> = {
    db: kind,
    rows: n,
    batch: BATCH,
    loadConcurrency: LOAD_CONCURRENCY,
    source: SOURCE,
    loadAverageBefore: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
  try {
    // Databases.
    let rawTarget: string;
    let dbNames: { raw: string; ds: string } | null = null;
    let dsTarget: string;
    const appConfig: Record<string, unknown> = {
      'svc.storage_path': storage,
      'svc.log_level': process.env.SVC_BENCH_LOG_LEVEL ?? 'warn',
      'svc.plugins': ['datastore'],
      'svc.auth.create_unowned_dataset': true,
      // The full-text part polls for the background filler with datastore_search_sql.
      'svc.datastore.sqlsearch.enabled': true,
      // SVC_BENCH_FTS_RANK_WINDOW=0: every match ranked (the order before the rank window, as CKAN).
      ...(process.env.SVC_BENCH_FTS_RANK_WINDOW ? { 'svc.datastore.fts_rank_window': Number(process.env.SVC_BENCH_FTS_RANK_WINDOW) } : {}),
    };
    if (kind === 'postgres') {
      const names = { cat: `svcbench_${tag}_cat`, ds: `svcbench_${tag}_ds`, raw: `svcbench_${tag}_raw` };
      dbNames = names;
      for (const name of Object.values(names)) {
        await adminQuery(`CREATE DATABASE ${name}`);
        cleanups.push(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      }
      const dsUrl = urlWith(ADMIN_URL, names.ds);
      const readUrl = await grantDataStoreReader(dsUrl, names.ds);
      Object.assign(appConfig, {
        'svc.database_url': urlWith(ADMIN_URL, names.cat),
        'svc.datastore.write_url': dsUrl,
        'svc.datastore.read_url': readUrl,
      });
      rawTarget = urlWith(ADMIN_URL, names.raw);
      dsTarget = readUrl;
      out.server = await (async () => {
        const c = new pg.Client({ connectionString: ADMIN_URL });
        await c.connect();
        const v = (await c.query('SHOW server_version')).rows[0].server_version;
        await c.end();
        return `PostgreSQL ${v}`;
      })();
    } else {
      rawTarget = path.join(storage, 'raw');
      dsTarget = path.join(storage, 'datastore');
      out.server = 'PGlite (embedded, data dir on disk)';
    }

    // 1. Loads, in rounds (median of each side): raw COPY FROM into a plain table and into one with
    // the unique index the upsert table gets, then the app's insert and upsert, each on new tables.
    const raw = await openRaw(kind, rawTarget);
    const copySql = (t: string) => `COPY ${t} (${COLS}) FROM STDIN (FORMAT csv)`;
    log(`${kind}: starting the app`);
    const { child: server, msg } = await startChild('server.ts', { SVC_BENCH_CONFIG: JSON.stringify(appConfig) });
    const { port, token } = msg as { port: number; token: string };
    let stopped = false;
    cleanups.unshift(async () => {
      if (!stopped) await stopChild(server);
    });
    cleanups.unshift(() => raw.close().catch(() => undefined));
    const pkg = `bench-${tag}`.replace(/_/g, '-');
    await api(port, token, 'package_create', { name: pkg, title: 'Benchmark' });
    const fields = FIELDS.map((f) => ({ id: f.id, type: f.type }));
    const body = (id: string, method: string, recs: Buffer) =>
      Buffer.concat([Buffer.from(`{"resource_id":"${id}","method":"${method}","records":`), recs, Buffer.from('}')]);
    const client = loadClient(port, token);
    cleanups.unshift(async () => {
      await client.close();
    });
    /** Sends the bodies, timed from the first request to the last answer (handed to the client before). */
    const load = async (bodies: Buffer[], time: (send: () => Promise<void>) => Promise<number>) => {
      await client.prepare(bodies);
      return time(client.run);
    };
    const seconds = {
      rawInsert: [] as number[],
      rawShaped: [] as number[],
      rawKeyed: [] as number[],
      appInsert: [] as number[],
      appUpsert: [] as number[],
    };
    // CPU of each timed phase, per round: raw phases in the raw database, the app's in its server and data store database.
    const cpu: Record<string, Awaited<ReturnType<ReturnType<typeof cpuMeter>['stop']>>[]> = {};
    const phase = async (name: keyof typeof seconds, serverPid: number | null, fn: () => Promise<unknown>): Promise<number> => {
      const meter = cpuMeter(serverPid, dbNames ? (serverPid ? dbNames.ds : dbNames.raw) : null);
      await meter.ready;
      const s = (await timed(fn)).seconds;
      const used = await meter.stop();
      (cpu[name] ??= []).push(used);
      const per = (x: number | null) => (x === null ? '-' : ((x * 1000 * BATCH) / n).toFixed(1));
      log(
        `${kind}: ${name} ${Math.round(n / s)} rows/s; CPU ms per ${BATCH} rows: bench ${per(used.benchCpuSeconds)}, server ${per(used.serverCpuSeconds)}, database ${per(used.dbCpuSeconds)}; load average ${os.loadavg()[0].toFixed(1)}`,
      );
      return s;
    };
    const rssStart = rssBytes(server.pid!);
    let sampler = rssSampler(server.pid!);
    let insertId = '';
    let keyedId = '';
    // The background full-text fill of a loaded table would run during the timed phases after it
    // (the upsert, the next round's raw copies): paused until the rounds are over.
    if (!FTS_ONLY) await tell(server, 'fts-pause');
    for (let round = 1; round <= ROUNDS; round++) {
      if (FTS_ONLY) {
        insertId = (await api(port, token, 'datastore_create', { resource: { package_id: pkg, name: `covid insert ${round}` }, fields }))
          .resource_id as string;
        log(`${kind}: datastore_upsert insert, ${batches.length} batches (full text only)`);
        seconds.appInsert.push(
          await load(
            batches.map((b) => body(insertId, 'insert', b)),
            async (send) => (await timed(send)).seconds,
          ),
        );
        break;
      }
      log(`${kind}: round ${round}/${ROUNDS}: raw COPY FROM`);
      await raw.exec(
        `DROP TABLE IF EXISTS plain; DROP TABLE IF EXISTS keyed; DROP TABLE IF EXISTS shaped; ${TABLE_DDL('plain')}; ${TABLE_DDL('keyed')}; CREATE UNIQUE INDEX keyed_pk ON keyed (row_id); ${SHAPED_DDL('shaped')}`,
      );
      await settle(kind);
      seconds.rawInsert.push(await phase('rawInsert', null, () => raw.copyIn(copySql('plain'), csv)));
      await settle(kind);
      seconds.rawShaped.push(await phase('rawShaped', null, () => raw.copyIn(copySql('shaped'), csv)));
      await settle(kind);
      seconds.rawKeyed.push(await phase('rawKeyed', null, () => raw.copyIn(copySql('keyed'), csv)));

      // The tables of the round before go (the last insert table stays for search and dump).
      for (const id of [insertId, keyedId].filter(Boolean)) await api(port, token, 'datastore_delete', { resource_id: id });
      insertId = (await api(port, token, 'datastore_create', { resource: { package_id: pkg, name: `covid insert ${round}` }, fields }))
        .resource_id as string;
      keyedId = (
        await api(port, token, 'datastore_create', {
          resource: { package_id: pkg, name: `covid upsert ${round}` },
          fields,
          primary_key: ['row_id'],
        })
      ).resource_id as string;
      log(`${kind}: round ${round}/${ROUNDS}: datastore_upsert insert and upsert, ${batches.length} batches each`);
      const insertBodies = batches.map((b) => body(insertId, 'insert', b));
      await settle(kind);
      seconds.appInsert.push(await load(insertBodies, (send) => phase('appInsert', server.pid!, send)));
      const upsertBodies = batches.map((b) => body(keyedId, 'upsert', b));
      await settle(kind);
      seconds.appUpsert.push(await load(upsertBodies, (send) => phase('appUpsert', server.pid!, send)));
      const check = await api(port, token, 'datastore_search', { resource_id: keyedId, limit: 0 });
      if (check.total !== n) throw new Error(`upsert table has ${check.total} rows, expected ${n}`);
    }
    if (!FTS_ONLY) await tell(server, 'fts-resume');
    const rssLoadPeak = sampler.stop();
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
    if (FTS_ONLY) out.loadSeconds = seconds.appInsert[0];
    else
      out.load = {
        rounds: ROUNDS,
        insert: measure(n / median(seconds.appInsert), n / median(seconds.rawShaped), 'rows/s', 0.5, {
          appSeconds: seconds.appInsert,
          rawSeconds: seconds.rawShaped,
        }),
        insertBare: measure(n / median(seconds.appInsert), n / median(seconds.rawInsert), 'rows/s', 0, {
          appSeconds: seconds.appInsert,
          rawSeconds: seconds.rawInsert,
        }),
        upsert: measure(n / median(seconds.appUpsert), n / median(seconds.rawKeyed), 'rows/s', 0.25, {
          appSeconds: seconds.appUpsert,
          rawSeconds: seconds.rawKeyed,
        }),
        cpuSeconds: cpu,
        serverRssStartMB: rssStart / MB,
        serverRssPeakMB: rssLoadPeak / MB,
      };

    if (LOAD_ONLY) return out;

    // Search: an index on the filter column (what a user of a big table adds), then 16 connections.
    await api(port, token, 'datastore_create', { resource_id: insertId, indexes: ['country'] });
    // The background filler works once the loads are over: the searches measure the settled table.
    const { fillSeconds, fastSeconds, indexSeconds } = await waitForVectors(
      port,
      token,
      insertId,
      server,
      String(rows[Math.floor(rows.length / 3)].row_id),
      kind === 'postgres' ? dsTarget : null,
    );
    if (FTS_ONLY) {
      out.fts = { ...(await benchFullText(port, token, insertId, rows, fillSeconds)), fastSecondsAfterLoad: fastSeconds, indexSeconds };
      return out;
    }
    const searchBodies = countries.map((c) =>
      JSON.stringify({ resource_id: insertId, filters: { country: c }, sort: 'date desc', limit: 100 }),
    );
    const sample = await api(port, token, 'datastore_search', JSON.parse(searchBodies[0]));
    log(`${kind}: datastore_search under ${CONNECTIONS} connections (${DURATION}s)`);
    const appSearch = await cannon(`http://127.0.0.1:${port}/api/3/action/datastore_search`, searchBodies);

    out.fts = { ...(await benchFullText(port, token, insertId, rows, fillSeconds)), fastSecondsAfterLoad: fastSeconds, indexSeconds };

    log(`${kind}: dump`);
    const rssBeforeDump = rssBytes(server.pid!);
    sampler = rssSampler(server.pid!);
    const appDump = await timed(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/datastore/dump/${insertId}`, { headers: { authorization: token } });
      if (res.status !== 200 || !res.body) throw new Error(`dump: ${res.status}`);
      let bytes = 0;
      for await (const chunk of res.body as any) bytes += chunk.length;
      return bytes;
    });
    const rssDumpPeak = sampler.stop();
    await stopChild(server);
    stopped = true;

    // 3. Raw search endpoint: the page and its count as two plain statements, same driver (svc runs them as one, its records written as JSON by PostgreSQL).
    const id = qi(insertId);
    const page = `SELECT "_id" AS "f0", ${FIELDS.map((f, i) => `${selectExpr(f.id, f.type)} AS "f${i + 1}"`).join(', ')} FROM ${id} WHERE "country"::text = $1 ORDER BY "date" DESC LIMIT 100 OFFSET 0`;
    const count = `SELECT count(*)::text AS n FROM ${id} WHERE "country"::text = $1`;
    log(`${kind}: raw search endpoint`);
    const { child: rawServer, msg: rawMsg } = await startChild('raw-server.ts', {
      SVC_BENCH_RAW: JSON.stringify({
        kind,
        url: kind === 'postgres' ? dsTarget : undefined,
        dataDir: kind === 'pglite' ? dsTarget : undefined,
        poolSize: 5,
        queries: [page, count],
      }),
    });
    let rawSearch;
    try {
      rawSearch = await cannon(`http://127.0.0.1:${rawMsg.port}/`, searchBodies);
    } finally {
      await stopChild(rawServer);
    }

    log(`${kind}: raw COPY TO`);
    const rawOut = await openRaw(kind, kind === 'postgres' ? dsTarget : dsTarget);
    const rawDump = await timed(() =>
      rawOut.copyOut(
        `COPY (SELECT "_id", ${FIELDS.map((f) => selectExpr(f.id, f.type)).join(', ')} FROM ${id} ORDER BY "_id") TO STDOUT (FORMAT csv, HEADER)`,
      ),
    );
    await rawOut.close();

    out.search = {
      ...measure(appSearch.rps, rawSearch.rps, 'requests/s', 0.7),
      appLatencyMs: appSearch.latency,
      rawLatencyMs: rawSearch.latency,
      appErrors: appSearch.errors,
      rawErrors: rawSearch.errors,
      connections: CONNECTIONS,
      seconds: DURATION,
      total: sample.total,
      countries: countries.length,
      sql: [page, count],
    };
    out.dump = {
      ...measure(n / appDump.seconds, n / rawDump.seconds, 'rows/s', 0.5),
      appSeconds: appDump.seconds,
      rawSeconds: rawDump.seconds,
      appBytes: appDump.value,
      rawBytes: rawDump.value,
      serverRssBeforeMB: rssBeforeDump / MB,
      serverRssPeakMB: rssDumpPeak / MB,
      rssGrowthMB: (rssDumpPeak - rssBeforeDump) / MB,
      rssGoalMB: 100,
      rssOk: (rssDumpPeak - rssBeforeDump) / MB < 100,
    };
  } finally {
    for (const c of cleanups) await c().catch((e) => log(`cleanup: ${e}`));
  }
  return out;
}

/** p50/p90 of sequential requests, each body in turn (one connection, as a user's page would). */
async function latencies(port: number, token: string, bodies: object[]): Promise<{ p50: number; p90: number; total: unknown }> {
  const ms: number[] = [];
  let total: unknown;
  for (let i = 0; i < FTS_REQUESTS; i++) {
    const t0 = process.hrtime.bigint();
    const r = await api(port, token, 'datastore_search', bodies[i % bodies.length]);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    total ??= r.total;
  }
  ms.sort((x, y) => x - y);
  return { p50: Math.round(ms[Math.floor(ms.length / 2)] * 10) / 10, p90: Math.round(ms[Math.floor(ms.length * 0.9)] * 10) / 10, total };
}

/**
 * Full-text searches on the loaded table, once the background filler computed every vector
 * (polled with datastore_search_sql, which the bench's app enables).
 */
async function waitForVectors(
  port: number,
  token: string,
  id: string,
  server: ChildProcess,
  rareTerm: string,
  indexUrl: string | null,
): Promise<{ fillSeconds: number; fastSeconds: number | null; indexSeconds: Record<string, number> }> {
  const t0 = Date.now();
  // PostgreSQL: when the table's full-text indexes go (a bulk fill) and come back, by kind.
  const indexSeconds: Record<string, number> = {};
  const catalog = indexUrl ? new pg.Client({ connectionString: indexUrl }) : null;
  await catalog?.connect();
  const watchIndexes = async () => {
    if (!catalog) return;
    const r = await catalog.query<{ row: boolean; columns: number }>(
      `SELECT bool_or(indexname ~ '_fts$') OR count(*) FILTER (WHERE indexname ~ '_fts_(lo|hi)$') = 2 AS row, count(*) FILTER (WHERE indexname ~ '_fts_c_')::int AS columns FROM pg_indexes WHERE tablename = $1`,
      [id],
    );
    const at = (Date.now() - t0) / 1000;
    const { row, columns } = r.rows[0];
    if (!row) indexSeconds.rowIndexGone ??= at;
    else if (indexSeconds.rowIndexGone !== undefined) indexSeconds.rowIndexBack ??= at;
    if (!columns) indexSeconds.columnIndexesGone ??= at;
    else if (indexSeconds.columnIndexesGone !== undefined) indexSeconds.columnIndexesBack ??= at;
  };
  // Time until full text is fast: the first moment from which a rare-term search answers within
  // FAST_MS (checked before each poll until the vectors are complete).
  let fastSince: number | null = null;
  let filledAt: number | null = null;
  for (;;) {
    const started = Date.now();
    const ok = await api(port, token, 'datastore_search', { resource_id: id, q: rareTerm, limit: 10 }).then(
      () => true,
      () => false,
    );
    const ms = Date.now() - started;
    if (ok && ms <= FAST_MS) fastSince ??= started;
    else fastSince = null;
    await watchIndexes();
    // Asked until the vectors are complete (a count of a million rows took CPU from the filler):
    // whether a row is still NULL, from the end of the index of pending rows (the filler fills by
    // ranges of _id upwards). A poll may meet a connection the busy server (PGlite filling,
    // same thread) let expire: try again.
    const r =
      filledAt === null
        ? await api(port, token, 'datastore_search_sql', {
            sql: `SELECT count(*) AS n FROM (SELECT 1 FROM "${id}" WHERE "_full_text" IS NULL ORDER BY "_id" DESC LIMIT 1) AS x`,
          }).catch(() => null)
        : null;
    if (r && Number(r.records[0].n) === 0) filledAt = Date.now();
    // Vectors complete; a bulk fill then builds the indexes again: wait until searches are fast too.
    if (filledAt !== null && (fastSince !== null || Date.now() - filledAt > 300_000)) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  const fillSeconds = ((filledAt ?? Date.now()) - t0) / 1000;
  const fastSeconds = fastSince === null ? null : (fastSince - t0) / 1000;
  await catalog?.end();
  log(`full-text vectors complete ${fillSeconds.toFixed(1)} s after the last write`);
  if (catalog) log(`full-text indexes (seconds after the last write, polled each second): ${JSON.stringify(indexSeconds)}`);
  log(
    `time until full text is fast (a rare-term search <= ${FAST_MS} ms): ${fastSeconds === null ? 'at completion' : `${fastSeconds.toFixed(1)} s`}`,
  );
  // The filler then vacuums and analyzes the table: searches timed during that would be slowed by it.
  await new Promise<void>((resolve) => {
    const done = (m: unknown) => {
      if (m !== 'fts-idle') return;
      server.off('message', done);
      resolve();
    };
    server.on('message', done);
    server.send('fts-idle');
  });
  log(`full-text filler idle (table vacuumed) ${((Date.now() - t0) / 1000).toFixed(1)} s after the last write`);
  return { fillSeconds, fastSeconds: fastSeconds ?? fillSeconds, indexSeconds };
}

async function benchFullText(
  port: number,
  token: string,
  id: string,
  rows: BenchRow[],
  fillSeconds: number,
): Promise<Record<string, unknown>> {
  // A rare value in a text column: five rows added (a small write: indexed before it commits; the
  // table has no key to update rows by).
  const few = [1, 2, 3, 4, 5].map((k) => ({ ...rows[Math.floor((rows.length * k) / 6)], province: 'Atlantis' }));
  await api(port, token, 'datastore_upsert', { resource_id: id, method: 'insert', records: few });
  // The single-word country nearest to 10 % of rows; rare terms: row_id values.
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.country, (counts.get(r.country) ?? 0) + 1);
  const common = [...counts]
    .filter(([c]) => /^[A-Za-z]+$/.test(c))
    .sort((x, y) => Math.abs(x[1] / rows.length - 0.1) - Math.abs(y[1] / rows.length - 0.1))[0][0];
  const rareIds = Array.from({ length: 10 }, (_, i) => String(rows[Math.floor((rows.length * (i + 0.5)) / 10)].row_id));
  const province = rows.find((r) => r.province && /^[A-Za-z]+$/.test(r.province))!;
  const res: Record<string, unknown> = {
    fillSecondsAfterLoad: fillSeconds,
    commonTerm: common,
    commonShare: counts.get(common)! / rows.length,
  };
  const run = async (name: string, goal: number, bodies: object[]) => {
    const m = await latencies(port, token, bodies);
    res[name] = { ...m, goalMs: goal, ok: m.p50 <= goal, example: bodies[0] };
    log(`fts ${name}: p50 ${m.p50} ms (goal ${goal}), total ${m.total}`);
  };
  await run(
    'qRare',
    20,
    rareIds.map((q) => ({ resource_id: id, q })),
  );
  await run('qCommonTotal', 300, [{ resource_id: id, q: common }]);
  await run('qCommonNoTotal', 30, [{ resource_id: id, q: common, include_total: false }]);
  await run('qDictRare', 20, [{ resource_id: id, q: { province: 'Atlantis' } }]);
  await run('fullTextFilters', 50, [{ resource_id: id, full_text: province.province, filters: { country: province.country } }]);
  return res;
}

/** How datastore_search selects a column (postgres.ts selectExpr for these types). */
function selectExpr(id: string, type: string): string {
  if (type === 'timestamp') return `to_char(${qi(id)}, 'YYYY-MM-DD"T"HH24:MI:SS')`;
  if (type === 'date') return `${qi(id)}::text`;
  return qi(id);
}

/** The most frequent countries without provinces (one row per date and repetition). */
function pickCountries(rows: BenchRow[], k: number): string[] {
  const counts = new Map<string, number>();
  const withProvince = new Set(rows.filter((r) => r.province !== null).map((r) => r.country));
  for (const r of rows) if (!withProvince.has(r.country)) counts.set(r.country, (counts.get(r.country) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, k)
    .map(([c]) => c);
}

async function cannon(
  url: string,
  bodies: string[],
): Promise<{ rps: number; latency: { p50: number; p99: number; mean: number }; errors: number }> {
  let i = 0;
  const opts = {
    url,
    connections: CONNECTIONS,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (req: any) => ({ ...req, body: bodies[i++ % bodies.length] }) }],
  };
  await autocannon({ ...opts, duration: 2 }); // warm-up
  const r = await autocannon({ ...opts, duration: DURATION });
  return {
    rps: r.requests.average,
    latency: { p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.average },
    errors: r.errors + r.non2xx,
  };
}

// --- output -------------------------------------------------------------------------------------------

const fmt = (v: number, d = 0) => v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const pct = (r: number) => `${Math.round(r * 100)} %`;

function printTable(res: any) {
  const lines: string[][] = [['measure', 'svc', 'raw database', 'ratio', 'goal', '']];
  if (!res.load) {
    console.log(`\n${res.server}, ${fmt(res.rows)} rows, full text only: insert load ${fmt(res.loadSeconds, 1)} s`);
    printFullText(res.fts);
    return;
  }
  const row = (name: string, m: Measure, d = 0) =>
    lines.push([
      name,
      `${fmt(m.app, d)} ${m.unit}`,
      `${fmt(m.raw, d)} ${m.unit}`,
      pct(m.ratio),
      `>= ${pct(m.goal)}`,
      m.ok ? 'ok' : 'MISSED',
    ]);
  row('load: insert (JSON over HTTP vs COPY FROM)', res.load.insert);
  if (res.load.insertBare) row('load: insert vs COPY into a bare table', res.load.insertBare);
  row('load: upsert with primary key', res.load.upsert);
  if (res.search) row(`search: 100-row page, ${res.search.connections} conns`, res.search, 1);
  if (res.dump) {
    row('dump: CSV vs COPY TO STDOUT', res.dump);
    lines.push(['dump: server RSS growth', `${fmt(res.dump.rssGrowthMB, 1)} MB`, '', '', '< 100 MB', res.dump.rssOk ? 'ok' : 'MISSED']);
  }
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => l[c].length)));
  console.log(`\n${res.server}, ${fmt(res.rows)} rows (${res.batch} per request; loads: median of ${res.load.rounds} rounds)`);
  for (const [i, l] of lines.entries()) {
    console.log(l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  printFullText(res.fts);
  if (res.search)
    console.log(
      `search latency p50/p99: svc ${res.search.appLatencyMs.p50}/${res.search.appLatencyMs.p99} ms, raw ${res.search.rawLatencyMs.p50}/${res.search.rawLatencyMs.p99} ms; errors svc ${res.search.appErrors}, raw ${res.search.rawErrors}`,
    );
}

/** The full-text figures of a run. */
function printFullText(f: any): void {
  if (!f) return;
  for (const [k, label] of [
    ['qRare', 'fts: q rare term'],
    ['qCommonTotal', 'fts: q common term, exact total'],
    ['qCommonNoTotal', 'fts: q common term, include_total false'],
    ['qDictRare', 'fts: q dict, one text column, rare value'],
    ['fullTextFilters', 'fts: full_text + filters'],
  ] as const) {
    if (f[k])
      console.log(
        `${label.padEnd(42)} p50 ${String(f[k].p50).padStart(7)} ms  p90 ${String(f[k].p90).padStart(7)} ms  goal <= ${f[k].goalMs} ms  total ${f[k].total}  ${f[k].ok ? 'ok' : 'MISSED'}`,
      );
  }
  console.log(
    `time until full text is fast (rare-term search <= ${FAST_MS} ms): ${f.fastSecondsAfterLoad.toFixed(1)} s after the search index was made (goal 0 s, or within 30 s: vectors complete and indexed) ${f.fastSecondsAfterLoad <= 30 ? 'ok' : 'MISSED'}`,
  );
  console.log(
    `full-text vectors complete ${f.fillSecondsAfterLoad.toFixed(1)} s after the search index was made (common term "${f.commonTerm}", ${(f.commonShare * 100).toFixed(1)} % of rows)`,
  );
  if (f.indexSeconds && Object.keys(f.indexSeconds).length)
    console.log(`full-text indexes dropped and back (bulk fill; s after the search index was made): ${JSON.stringify(f.indexSeconds)}`);
}

/**
 * SVC_BENCH_ONLY=sql-memory: the embedded data store's memory (its worker's WebAssembly memory and
 * the process's RSS) before and after a string_agg over SVC_BENCH_ROWS rows, without a memory
 * limit and with svc.datastore.embedded_max_memory's default (the worker restarted after it).
 */
async function sqlMemory(rows: number): Promise<void> {
  const { PGliteWorkerDatabase } = await import('../src/db/pglite-worker.ts');
  const { existingEmbeddedTemplate } = await import('../src/db/embedded-template.ts');
  const mb = (x: number) => `${Math.round(x / MB)} MB`;
  for (const limitMb of [0, 512]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-sqlmem-'));
    const db = await PGliteWorkerDatabase.open({ dataDir: path.join(dir, 'datastore'), template: existingEmbeddedTemplate('datastore') });
    try {
      db.maxMemoryBytes = limitMb * MB;
      await db.exec(`CREATE TABLE big AS SELECT g AS id, md5(g::text) || ' row ' || g AS t FROM generate_series(1, ${rows}) g`);
      await db.query('SELECT 1');
      const before = { wasm: db.heapBytes, rss: process.memoryUsage().rss };
      const started = performance.now();
      const r = await db.query<{ s: string }>(`SELECT string_agg(t, ',') AS s FROM big`);
      const ms = Math.round(performance.now() - started);
      const length = r.rows[0].s.length;
      r.rows.length = 0;
      await db.query('SELECT 1');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const limit = limitMb ? `limit ${limitMb} MB` : 'no limit';
      log(
        `${limit}: string_agg over ${rows} rows (${mb(length)} of text) in ${ms} ms; worker memory ${mb(before.wasm)} -> ${mb(db.heapBytes)}, process RSS ${mb(before.rss)} -> ${mb(process.memoryUsage().rss)} (worker restarted ${db.recycled} times)`,
      );
    } finally {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

export async function run(_args: string[]): Promise<void> {
  const n = Number(process.env.SVC_BENCH_ROWS ?? 1_000_000);
  if (process.env.SVC_BENCH_ONLY === 'sql-memory') return sqlMemory(n);
  const nPglite = Number(process.env.SVC_BENCH_PGLITE_ROWS ?? n);
  const dbs = (process.env.SVC_BENCH_DB ?? 'postgres,pglite')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as DbKind[];
  fs.mkdirSync(resultsDir, { recursive: true });
  for (const kind of dbs) {
    const res = await benchOne(kind, kind === 'pglite' ? nPglite : n);
    res.date = new Date().toISOString();
    res.loadAverageAfter = os.loadavg().map((x) => Math.round(x * 100) / 100);
    const settings = ['SVC_BENCH_ROUNDS', 'SVC_BENCH_DURATION', 'SVC_BENCH_FTS_RANK_WINDOW']
      .filter((k) => process.env[k])
      .map((k) => ` ${k}=${process.env[k]}`)
      .join('');
    res.command = `SVC_BENCH_ROWS=${n}${nPglite !== n ? ` SVC_BENCH_PGLITE_ROWS=${nPglite}` : ''}${settings} SVC_BENCH_DB=${kind} npm run bench -- datastore`;
    res.machine = `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), node ${process.version}`;
    printTable(res);
    if (LOAD_ONLY || FTS_ONLY) continue; // a partial run does not replace the recorded figures
    const file = path.join(resultsDir, `datastore-${kind}.json`);
    fs.writeFileSync(file, JSON.stringify(res, null, 2) + '\n');
    console.log(`written ${path.relative(process.cwd(), file)}`);
  }
}
