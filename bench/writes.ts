// npm run bench -- writes: package_create with N clients on PostgreSQL in a catalog of
// SVC_BENCH_DATASETS datasets (default 100,000), the default plugins on (activity, views, loader,
// data store: the search index and activity written in the same transaction). Issue #32: >= 500/s
// with 4 clients at 100,000 datasets.
//
//   1. catalog  bench/search.ts's: SVC_BENCH_CREATE datasets through package_create from the real
//               catalog, copied in SQL to SVC_BENCH_DATASETS, `svc search-index rebuild`
//               (SVC_BENCH_REUSE=<database>: a database kept by an earlier run of this bench or of
//               the search bench; SVC_BENCH_KEEP=1 keeps the new one).
//   2. http     SVC_BENCH_WRITES (default 2,000) datasets of the harvest's shape (3 resources, 3
//               tags of a shared pool of 100, 2 extras, one of the catalog's organizations) created
//               by SVC_BENCH_CLIENTS (default 4) clients over HTTP (keep-alive) -> datasets/s. No job
//               worker runs: the loads the loader queues for the CSV/XLSX resources are queued in
//               the create's transaction (timed) and wait (their running is the loader's bench).
//   3. inproc   the same through callAction in this process (no HTTP, no JSON) -> datasets/s;
//               SVC_BENCH_PROFILE=<file> writes a CPU profile of this step (.cpuprofile).
//   4. sql      the statements svc ran for one package_create (recorded in-process: the call's
//               transaction and anything after it), replayed directly with pg by as many clients,
//               each create in its own BEGIN/COMMIT with new ids and name -> datasets/s; statements
//               per create (BEGIN and COMMIT included), and the time each took (waits for the other
//               clients included) in the results (sql_ms_per_create; SVC_BENCH_SHOW=1 prints them).
//
// Environment: SVC_BENCH_DATASETS, SVC_BENCH_CREATE, SVC_BENCH_WRITES, SVC_BENCH_CLIENTS,
// SVC_BENCH_PLUGINS (comma-separated, instead of the default plugins), SVC_BENCH_SHOW=1 (print the
// statements of one create), SVC_BENCH_DATABASE_URL, SVC_BENCH_KEEP, SVC_BENCH_REUSE, SVC_BENCH_PROFILE,
// SVC_BENCH_CPU_PROF=<dir> (a V8 CPU profile of the server of the HTTP step goes there).
// The server's CPU per create (HTTP step, from /proc) and this process's (in-process step) are in
// the results (cpu_ms_per_create).
// Results: bench/results/writes-postgres.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { closeServices, createServices } from '../src/services.ts';
import { callAction } from '../src/actions/registry.ts';
import { findUser } from '../src/model/users.ts';
import { resultsDir } from './data.ts';
import { keepOrDropCatalog, log, startServer, stopChild } from './common.ts';
import { agent, benchDatabase, cloneInSql, createThroughApi, readCatalog, rebuild, request, unindexedCount } from './search.ts';

const TOTAL = Number(process.env.SVC_BENCH_DATASETS ?? 100_000);
const CREATE = Math.min(TOTAL, Number(process.env.SVC_BENCH_CREATE ?? 2_000));
const WRITES = Number(process.env.SVC_BENCH_WRITES ?? 2_000);
const CLIENTS = Number(process.env.SVC_BENCH_CLIENTS ?? 4);
const REUSE = process.env.SVC_BENCH_REUSE;
const PROFILE = process.env.SVC_BENCH_PROFILE;
const CPU_PROF = process.env.SVC_BENCH_CPU_PROF;

/** CPU time (user + system) a process has used, in ms (Linux /proc; ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** CPU time the database's backends of this bench's database have used (all but the asking one's), in ms. */
async function dbCpuMs(client: pg.Client): Promise<number> {
  const pids = (await client.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows;
  let ms = 0;
  for (const { pid } of pids) {
    try {
      ms += cpuMsOf(pid);
    } catch {
      // (a backend that has exited)
    }
  }
  return ms;
}

const WORDS = Array.from({ length: 100 }, (_, i) => `word${i}`);
const FORMATS = ['CSV', 'JSON', 'XLSX', 'PDF', 'XML'];

/** The i-th dataset of a run: the harvest's shape. */
function dataset(run: string, i: number, orgs: string[]): Record<string, unknown> {
  const tags = [WORDS[i % 100], WORDS[(i * 7 + 1) % 100], WORDS[(i * 13 + 2) % 100]];
  return {
    name: `w-${run}-${i}`,
    title: `Written dataset ${i} of ${run}`,
    notes: `A dataset written by the writes bench: ${tags.join(' ')} data.`,
    owner_org: orgs[i % orgs.length],
    license_id: 'cc-by',
    tags: [...new Set(tags)].map((name) => ({ name })),
    extras: [
      { key: 'theme', value: WORDS[(i * 3) % 100] },
      { key: 'source_ref', value: `ref-${i}` },
    ],
    resources: [0, 1, 2].map((k) => ({
      url: `http://example.org/${run}/${i}/${k}.${FORMATS[(i + k) % FORMATS.length].toLowerCase()}`,
      name: `Part ${k}`,
      format: FORMATS[(i + k) % FORMATS.length],
      description: `part ${k} of dataset ${i}`,
    })),
  };
}

/** Runs fn(i, client) for i in [0, n) with `clients` at once; returns datasets/s. */
async function clients(n: number, fn: (i: number, client: number) => Promise<unknown>): Promise<{ seconds: number; per_s: number }> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (next < n) await fn(next++, client);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds: +seconds.toFixed(2), per_s: Math.round(n / seconds) };
}

interface Statement {
  text: string;
  /** Named statements are replayed named (prepared once per connection), as svc runs them. */
  name?: string;
  values: unknown[];
}

/** Records every statement services.db runs (in transactions or not) while fn runs; the job worker's polls left out. */
async function recording<T>(services: any, fn: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  const statements: Statement[] = [];
  const db = services.db;
  const original = db.query.bind(db);
  const originalTransaction = db.transaction.bind(db);
  const record = (text: any, values?: unknown[]) => {
    const t = typeof text === 'string' ? text : text.text;
    if (!/\bjobs\b/.test(t)) statements.push({ text: t, name: typeof text === 'string' ? undefined : text.name, values: values ?? [] });
  };
  db.query = (text: any, values?: unknown[]) => {
    record(text, values);
    return original(text, values);
  };
  db.transaction = (body: (tx: any) => Promise<unknown>, opts?: unknown) =>
    originalTransaction((tx: any) => {
      const query = (text: any, values?: unknown[]) => {
        record(text, values);
        return tx.query(text, values);
      };
      return body(new Proxy(tx, { get: (target, prop) => (prop === 'query' ? query : Reflect.get(target, prop)) }));
    }, opts);
  try {
    return { result: await fn(), statements };
  } finally {
    db.query = original;
    db.transaction = originalTransaction;
  }
}

/** Replaces the strings of `from` by those of `to` in a statement's values (strings, arrays, JSON text). */
function substitute(v: unknown, swap: (s: string) => string): unknown {
  if (typeof v === 'string') return swap(v);
  if (Array.isArray(v)) return v.map((x) => substitute(x, swap));
  return v;
}

export async function run(): Promise<void> {
  const { dbName, dbUrl } = await benchDatabase('writes');
  const storage = fs.mkdtempSync(path.join('/tmp', 'svc-bench-writes-'));
  const plugins = process.env.SVC_BENCH_PLUGINS !== undefined ? process.env.SVC_BENCH_PLUGINS.split(',').filter(Boolean) : undefined;
  // (no job worker: the loads the loader queues for the new resources wait; their queueing is timed, not their running)
  const base = { 'svc.database_url': dbUrl, 'svc.storage_path': storage, 'svc.log_level': 'warn', 'svc.jobs.in_process_worker': false };
  const config = { ...base, ...(plugins ? { 'svc.plugins': plugins } : {}) };
  const client = new pg.Client({ connectionString: dbUrl });
  client.on('error', () => {});
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    clients: CLIENTS,
    writes: WRITES,
    plugins: plugins ?? 'default',
  };
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    if (!REUSE) {
      server = await startServer({ ...base, 'svc.plugins': [] });
      await client.connect();
      log(`catalog: ${CREATE} datasets through package_create, copied in SQL to ${TOTAL.toLocaleString()}`);
      await createThroughApi(server.port, server.token, readCatalog());
      await cloneInSql(client, TOTAL - CREATE);
      await stopChild(server.child);
    } else await client.connect();
    server = await startServer(config, CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []);
    if (!REUSE || (await unindexedCount(client)) > 0) await rebuild(client, dbUrl, storage, results);
    const total = Number((await client.query('SELECT count(*) AS n FROM packages')).rows[0].n);
    results.datasets_before = total;
    log(`${total.toLocaleString()} datasets; ${CLIENTS} clients`);
    const orgs = (await client.query('SELECT name FROM groups WHERE is_organization ORDER BY name LIMIT 20')).rows.map((r) => r.name);
    const run = randomBytes(3).toString('hex');
    const api = async (body: Record<string, unknown>) => {
      const r = await request(server!.port, 'POST', '/api/3/action/package_create', server!.token, JSON.stringify(body));
      if (r.status !== 200) throw new Error(`package_create: ${r.text.slice(0, 300)}`);
    };
    // warm-up (the tag pool exists afterwards)
    for (let i = 0; i < 100; i++) await api(dataset(`${run}-warm`, i, orgs));

    const load0 = os.loadavg()[0];
    const serverCpu0 = cpuMsOf(server.child.pid!);
    const dbCpu0 = await dbCpuMs(client);
    const http = await clients(WRITES, (i) => api(dataset(`${run}-http`, i, orgs)));
    const serverMs = +((cpuMsOf(server.child.pid!) - serverCpu0) / WRITES).toFixed(2);
    const httpDbMs = +(((await dbCpuMs(client)) - dbCpu0) / WRITES).toFixed(2);
    log(
      `http: ${WRITES} creates in ${http.seconds} s = ${http.per_s}/s, server CPU ${serverMs} ms a create, database ${httpDbMs} ms (load ${load0.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)})`,
    );
    results.http = {
      ...http,
      server_cpu_ms_per_create: serverMs,
      db_cpu_ms_per_create: httpDbMs,
      load_before: load0,
      load_after: os.loadavg()[0],
    };
    await stopChild(server.child);
    server = undefined;

    const services = await createServices(loadConfig({ env: {}, overrides: config, cwd: storage }), {
      logger: pino({ level: 'warn' }),
      migrate: false,
    });
    try {
      const admin = (await client.query('SELECT name FROM users WHERE sysadmin ORDER BY created DESC LIMIT 1')).rows[0].name;
      const user = (await findUser(services.db, admin))!;
      const identity = { user, sysadmin: true, via: 'token' } as any;
      const create = (body: Record<string, unknown>) => callAction(services, 'package_create', body, { identity });
      for (let i = 0; i < 50; i++) await create(dataset(`${run}-warm2`, i, orgs));
      const session = PROFILE ? new Session() : undefined;
      if (session) {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
      }
      const load1 = os.loadavg()[0];
      const cpu1 = process.cpuUsage();
      const dbCpu1 = await dbCpuMs(client);
      const inproc = await clients(WRITES, (i) => create(dataset(`${run}-in`, i, orgs)));
      const cpu1d = process.cpuUsage(cpu1);
      const inprocMs = +((cpu1d.user + cpu1d.system) / 1000 / WRITES).toFixed(2);
      const inprocDbMs = +(((await dbCpuMs(client)) - dbCpu1) / WRITES).toFixed(2);
      if (session) {
        const { profile } = await session.post('Profiler.stop');
        fs.writeFileSync(PROFILE!, JSON.stringify(profile));
        session.disconnect();
        log(`CPU profile: ${PROFILE}`);
      }
      log(
        `in-process: ${WRITES} creates in ${inproc.seconds} s = ${inproc.per_s}/s, CPU ${inprocMs} ms a create, database ${inprocDbMs} ms (load ${load1.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)})`,
      );
      results.in_process = {
        ...inproc,
        cpu_ms_per_create: inprocMs,
        db_cpu_ms_per_create: inprocDbMs,
        load_before: load1,
        load_after: os.loadavg()[0],
      };

      // the statements of one create
      const one = dataset(`${run}-rec`, 0, orgs);
      const { result, statements } = await recording(services, () => create(one));
      void result;
      // every id in the statements' values is new for each replay, but those of rows that were
      // there before (the organization, the user, the tags)
      const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
      const seen = new Set<string>();
      const collect = (v: unknown): void => {
        if (typeof v === 'string') for (const m of v.match(UUID) ?? []) seen.add(m);
        else if (Array.isArray(v)) v.forEach(collect);
      };
      for (const s of statements) collect(s.values);
      const existing = new Set(
        (
          await client.query(
            `SELECT id FROM groups WHERE id = ANY($1) UNION SELECT id FROM users WHERE id = ANY($1) UNION SELECT id FROM tags WHERE id = ANY($1)`,
            [[...seen]],
          )
        ).rows.map((r) => r.id as string),
      );
      const newIds = [...seen].filter((id) => !existing.has(id));
      const perCreate = statements.length + 2; // with BEGIN and COMMIT
      results.statements_per_create = perCreate;
      log(`statements per create: ${perCreate} (BEGIN and COMMIT included)`);
      if (process.env.SVC_BENCH_SHOW) for (const s of statements) log(`  ${s.text.replace(/\s+/g, ' ').slice(0, 300)}`);
      const idPattern = new RegExp([...newIds, one.name as string].map((x) => x.replace(/[-]/g, '\\-')).join('|'), 'g');

      const conns = await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          const c = new pg.Client({ connectionString: dbUrl });
          c.on('error', () => {}); // (a failed run drops the database under it)
          await c.connect();
          return c;
        }),
      );
      // time spent in each statement (and the COMMIT, last) over the replay, with the clients' waits
      const spent = new Array<number>(statements.length + 1).fill(0);
      const replay = async (c: pg.Client, i: number) => {
        const map = new Map<string, string>(newIds.map((id) => [id, randomUUID()]));
        map.set(one.name as string, `w-${run}-sql-${i}`);
        const swap = (s: string) => s.replace(idPattern, (m) => map.get(m)!);
        await c.query('BEGIN');
        for (const [k, s] of statements.entries()) {
          const t0 = performance.now();
          const values = substitute(s.values, swap) as unknown[];
          await (s.name ? c.query({ name: s.name, text: s.text, values }) : c.query(s.text, values));
          spent[k] += performance.now() - t0;
        }
        const t1 = performance.now();
        await c.query('COMMIT');
        spent[statements.length] += performance.now() - t1;
      };
      const load2 = os.loadavg()[0];
      const dbCpu2 = await dbCpuMs(client);
      // each client its own connection (taken in turn, two clients' creates ran in one transaction)
      const sql = await clients(WRITES, (i, client) => replay(conns[client], i));
      const sqlDbMs = +(((await dbCpuMs(client)) - dbCpu2) / WRITES).toFixed(2);
      for (const c of conns) await c.end().catch(() => {});
      log(
        `sql replay: ${WRITES} creates in ${sql.seconds} s = ${sql.per_s}/s, database CPU ${sqlDbMs} ms a create (load ${load2.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)})`,
      );
      results.sql = { ...sql, db_cpu_ms_per_create: sqlDbMs, load_before: load2, load_after: os.loadavg()[0] };
      const texts = [...statements.map((x) => x.text.replace(/\s+/g, ' ').trim().slice(0, 90)), 'COMMIT'];
      results.sql_ms_per_create = Object.fromEntries(
        spent.map((ms, k) => [`${k} ${texts[k]}`, +(ms / WRITES).toFixed(2)] as const).sort((a, b) => b[1] - a[1]),
      );
      if (process.env.SVC_BENCH_SHOW) for (const [k, v] of Object.entries(results.sql_ms_per_create as object)) log(`  ${v} ms  ${k}`);
      results.ratio_http_to_sql = +(http.per_s / sql.per_s).toFixed(2);
    } finally {
      await closeServices(services);
    }
    results.load_average_15min = +os.loadavg()[2].toFixed(2);
    console.table({
      'package_create over HTTP': { 'datasets/s': http.per_s, seconds: http.seconds },
      'package_create in-process': { 'datasets/s': (results.in_process as any).per_s, seconds: (results.in_process as any).seconds },
      'its statements on pg directly': { 'datasets/s': (results.sql as any).per_s, seconds: (results.sql as any).seconds },
    });
    console.log(`statements per create: ${results.statements_per_create}; goal (issue #32): >= 500 datasets/s over HTTP with 4 clients`);
    fs.mkdirSync(resultsDir, { recursive: true });
    fs.writeFileSync(path.join(resultsDir, 'writes-postgres.json'), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await client.end().catch(() => {});
    if (server) await stopChild(server.child);
    agent.destroy();
    await keepOrDropCatalog(dbName, dbUrl, storage, Boolean(REUSE));
  }
}
