// npm run bench -- harvest: harvesting a CKAN API source on PostgreSQL, beside ckanapi-style copying.
//
//   1. source   a svc (child process, its own database) loaded with SVC_BENCH_CREATE (default 2,000)
//               datasets made from the real catalog ../shared/data/catalogs/depositar-datasets.jsonl.gz
//               (bench/search.ts's createThroughApi: real titles, notes, tags, resources, organizations).
//   2. target   an empty svc with the harvest plugin (in-process worker, default import concurrency);
//               one source of type ckan on the first svc, owned by a local organization.
//      full       harvest_job_create, then harvest_job_show until the job has ended -> datasets/s
//      unchanged  the same again with nothing changed over there -> seconds (every dataset "not modified")
//      changed    SVC_BENCH_CHANGE (default 100) remote datasets patched (notes), then a run -> seconds
//   3. ckanapi  beside it, in the same run, what `ckanapi dump | ckanapi load` does: package_list on the
//               source, then per dataset package_show there and package_create in an empty svc (no
//               harvest plugin) over HTTP, with 1 client and with 3 (`ckanapi load -p 3`), each into
//               a fresh database -> datasets/s.
//
// Goals (issue 29): full >= 100 datasets/s; unchanged <= 10 s. The machine is shared: the ratio
// harvest / ckanapi-style in one run says more than the absolute figures.
// Results: bench/results/harvest-postgres.json. Environment: SVC_BENCH_CREATE, SVC_BENCH_CHANGE,
// SVC_BENCH_DATABASE_URL, SVC_BENCH_CATALOG (see search.ts), SVC_BENCH_IMPORT_CONCURRENCY (the
// target's svc.harvest.import_concurrency; its default when unset), SVC_BENCH_IMPORT_WHILE_GATHERING=0|1
// (the target's svc.harvest.import_while_gathering; default when unset), SVC_BENCH_IMPORT_TRANSACTION
// (the target's svc.harvest.import_transaction), SVC_BENCH_COPY=0 (no ckanapi-style
// copies: the harvest runs only), SVC_BENCH_CPU_PROF=<dir> (a V8 CPU profile of the target server).
// The full run's CPU is split between the source server, the target server and the database
// backends of each (from /proc; backends that end during the run are not counted), with the
// job's stages (gather, then the imports still running) from harvest_job_show.
import fs from 'node:fs';
import pg from 'pg';
import os from 'node:os';
import path from 'node:path';
import { agent, benchDatabase, createThroughApi, readCatalog } from './search.ts';
import { resultsDir } from './data.ts';
import { ADMIN_URL, adminQuery, api, log, startServer, stopChild } from './common.ts';

const CHANGE = Number(process.env.SVC_BENCH_CHANGE ?? 100);
const IMPORT_CONCURRENCY = process.env.SVC_BENCH_IMPORT_CONCURRENCY ? Number(process.env.SVC_BENCH_IMPORT_CONCURRENCY) : undefined;
const WHILE_GATHERING = process.env.SVC_BENCH_IMPORT_WHILE_GATHERING;
const IMPORT_TRANSACTION = process.env.SVC_BENCH_IMPORT_TRANSACTION ? Number(process.env.SVC_BENCH_IMPORT_TRANSACTION) : undefined;
const STRIPPED = ['id', 'owner_org', 'organization', 'groups', 'revision_id', 'metadata_created', 'metadata_modified', 'creator_user_id'];

type Server = Awaited<ReturnType<typeof startServer>>;

interface Db {
  dbName: string;
  dbUrl: string;
  storage: string;
}

/** CPU time (user + system) a process has used, in ms (Linux /proc; ticks of 10 ms); 0 when it is gone. */
function cpuMsOf(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/** The pids of the database backends connected to a database. */
async function backendPids(dbName: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const r = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [dbName]);
    return r.rows.map((x) => x.pid);
  } finally {
    await client.end();
  }
}

/** CPU ms of the backends of a database, per pid. */
async function backendCpu(dbName: string): Promise<Map<number, number>> {
  return new Map((await backendPids(dbName)).map((pid) => [pid, cpuMsOf(pid)]));
}

/** CPU ms used since `before` by the backends of a database (new ones counted whole). */
async function backendCpuSince(dbName: string, before: Map<number, number>): Promise<number> {
  let ms = 0;
  for (const [pid, now] of await backendCpu(dbName)) ms += now - (before.get(pid) ?? 0);
  return ms;
}

async function database(label: string): Promise<Db> {
  const { dbName, dbUrl } = await benchDatabase(label);
  return { dbName, dbUrl, storage: fs.mkdtempSync(path.join('/tmp', `svc-bench-${label}-`)) };
}

const serverConfig = (db: Db, plugins: string[], extra: Record<string, unknown> = {}) => ({
  'svc.database_url': db.dbUrl,
  'svc.storage_path': db.storage,
  'svc.plugins': plugins,
  'svc.log_level': 'warn',
  ...extra,
});

/** Runs the source's harvest now and waits for the job's end; returns it with its duration. */
async function harvestRun(target: Server, sourceId: string): Promise<{ job: any; seconds: number }> {
  const started = Date.now();
  const { id } = await api(target.port, target.token, 'harvest_job_create', { source_id: sourceId });
  let job: any;
  for (;;) {
    job = await api(target.port, target.token, 'harvest_job_show', { id });
    if (job.status !== 'New' && job.status !== 'Running') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (Date.now() - started) / 1000;
  if (job.status !== 'Finished' || job.gather_error_summary.length)
    throw new Error(`harvest job ${id} ended ${job.status}: ${JSON.stringify(job.gather_error_summary)}`);
  log(`  ${job.status} in ${seconds.toFixed(1)} s: ${JSON.stringify(job.stats)}`);
  return { job, seconds };
}

/** ckanapi-style copy: every dataset shown on the source and created in the target, `clients` at a time. */
async function ckanapiCopy(source: Server, target: Server, owner: string, clients: number): Promise<{ seconds: number; copied: number }> {
  const started = Date.now();
  const names = (await api(source.port, source.token, 'package_list', {})) as string[];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < names.length) {
        const dict = await api(source.port, source.token, 'package_show', { id: names[next++] });
        for (const k of STRIPPED) delete dict[k];
        for (const r of dict.resources ?? []) for (const k of ['id', 'package_id', 'created', 'metadata_modified']) delete r[k];
        await api(target.port, target.token, 'package_create', { ...dict, owner_org: owner });
      }
    }),
  );
  return { seconds: (Date.now() - started) / 1000, copied: names.length };
}

async function drop(db: Db): Promise<void> {
  await adminQuery(`DROP DATABASE IF EXISTS ${db.dbName} WITH (FORCE)`);
  fs.rmSync(db.storage, { recursive: true, force: true });
}

export async function run(): Promise<void> {
  const dbs: Db[] = [];
  const servers: Server[] = [];
  const start = async (label: string, plugins: string[], extra: Record<string, unknown> = {}, nodeOptions: string[] = []) => {
    const db = await database(label);
    dbs.push(db);
    const server = await startServer(serverConfig(db, plugins, extra), nodeOptions);
    servers.push(server);
    return { ...server, db };
  };
  try {
    log('source: creating the catalog (bench/search.ts createThroughApi)');
    const source = await start('harvest_src', []);
    const rate = await createThroughApi(source.port, source.token, readCatalog());
    const total = ((await api(source.port, source.token, 'package_list', {})) as string[]).length;
    log(`source: ${total} datasets (package_create at ${rate.toFixed(0)} datasets/s)`);

    const cpuProf = process.env.SVC_BENCH_CPU_PROF;
    const target = await start(
      'harvest_dst',
      ['harvest'],
      {
        'svc.harvest.allow_private_urls': true,
        'svc.harvest.scheduler': false,
        ...(IMPORT_CONCURRENCY ? { 'svc.harvest.import_concurrency': IMPORT_CONCURRENCY } : {}),
        ...(WHILE_GATHERING ? { 'svc.harvest.import_while_gathering': WHILE_GATHERING === '1' } : {}),
        ...(IMPORT_TRANSACTION ? { 'svc.harvest.import_transaction': IMPORT_TRANSACTION } : {}),
      },
      cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : [],
    );
    await api(target.port, target.token, 'organization_create', { name: 'harvested' });
    const created = await api(target.port, target.token, 'harvest_source_create', {
      name: 'bench-source',
      url: `http://127.0.0.1:${source.port}`,
      source_type: 'ckan',
      owner_org: 'harvested',
    });
    log('harvest: full run');
    const load0 = os.loadavg()[0];
    const cpu0 = {
      source: cpuMsOf(source.child.pid!),
      target: cpuMsOf(target.child.pid!),
      sourceDb: await backendCpu(source.db.dbName),
      targetDb: await backendCpu(target.db.dbName),
    };
    const full = await harvestRun(target, created.id);
    const cpu = {
      source_server: cpuMsOf(source.child.pid!) - cpu0.source,
      target_server: cpuMsOf(target.child.pid!) - cpu0.target,
      source_database: await backendCpuSince(source.db.dbName, cpu0.sourceDb),
      target_database: await backendCpuSince(target.db.dbName, cpu0.targetDb),
    };
    const at = (t: string | null) => (t ? Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(t) ? t : `${t}Z`) : NaN);
    const stages = {
      gather_s: +((at(full.job.gather_finished) - at(full.job.gather_started)) / 1000).toFixed(2),
      imports_after_gather_s: +((at(full.job.finished) - at(full.job.gather_finished)) / 1000).toFixed(2),
    };
    log(
      `  CPU s: source server ${(cpu.source_server / 1000).toFixed(1)}, its database ${(cpu.source_database / 1000).toFixed(1)}, ` +
        `target server ${(cpu.target_server / 1000).toFixed(1)}, its database ${(cpu.target_database / 1000).toFixed(1)}; ` +
        `gather ${stages.gather_s} s, imports after it ${stages.imports_after_gather_s} s; load ${load0.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)}`,
    );
    log('harvest: unchanged run');
    const unchanged = await harvestRun(target, created.id);
    const names = ((await api(source.port, source.token, 'package_list', {})) as string[]).slice(0, CHANGE);
    for (const name of names) await api(source.port, source.token, 'package_patch', { id: name, notes: `changed ${Date.now()}` });
    log(`harvest: run after ${names.length} remote changes`);
    const changed = await harvestRun(target, created.id);

    const copies: Record<string, { seconds: number; copied: number; datasets_per_s: number }> = {};
    for (const clients of process.env.SVC_BENCH_COPY === '0' ? [] : [1, 3]) {
      const copyTarget = await start(`harvest_copy${clients}`, []);
      await api(copyTarget.port, copyTarget.token, 'organization_create', { name: 'copied' });
      log(`ckanapi-style copy with ${clients} client(s)`);
      const c = await ckanapiCopy(source, copyTarget, 'copied', clients);
      copies[`clients_${clients}`] = { ...c, datasets_per_s: Math.round(c.copied / c.seconds) };
      log(`  ${c.copied} datasets in ${c.seconds.toFixed(1)} s`);
      await stopChild(copyTarget.child);
    }

    const fullRate = Math.round(full.job.stats.added / full.seconds);
    const results = {
      date: new Date().toISOString(),
      database: 'postgres',
      // (the machine is shared: its load over the last 15 minutes, when the run ended)
      load_average_15min: Number(os.loadavg()[2]!.toFixed(1)),
      datasets: total,
      source_create_datasets_per_s: Math.round(rate),
      harvest: {
        full: {
          seconds: full.seconds,
          stats: full.job.stats,
          datasets_per_s: fullRate,
          goal_datasets_per_s: 100,
          cpu_ms: cpu,
          stages,
          load_before: load0,
        },
        unchanged: { seconds: unchanged.seconds, stats: unchanged.job.stats, goal_seconds: 10 },
        changed: { remote_changes: names.length, seconds: changed.seconds, stats: changed.job.stats },
      },
      ckanapi_style: copies,
      import_concurrency: IMPORT_CONCURRENCY ?? 'default',
      import_while_gathering: WHILE_GATHERING ? WHILE_GATHERING === '1' : 'default',
      import_transaction: IMPORT_TRANSACTION ?? 'default',
      ratio_harvest_to_ckanapi_1: copies.clients_1 ? Number((fullRate / copies.clients_1.datasets_per_s).toFixed(2)) : null,
      ratio_harvest_to_ckanapi_3: copies.clients_3 ? Number((fullRate / copies.clients_3.datasets_per_s).toFixed(2)) : null,
    };
    console.table({
      'harvest, full': { seconds: full.seconds, 'datasets/s': fullRate },
      'harvest, unchanged': { seconds: unchanged.seconds, 'datasets/s': '' },
      [`harvest, ${names.length} changed`]: { seconds: changed.seconds, 'datasets/s': '' },
      'ckanapi-style, 1 client': { seconds: copies.clients_1?.seconds ?? '', 'datasets/s': copies.clients_1?.datasets_per_s ?? '' },
      'ckanapi-style, 3 clients': { seconds: copies.clients_3?.seconds ?? '', 'datasets/s': copies.clients_3?.datasets_per_s ?? '' },
    });
    fs.mkdirSync(resultsDir, { recursive: true });
    fs.writeFileSync(path.join(resultsDir, 'harvest-postgres.json'), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    for (const s of servers) await stopChild(s.child);
    agent.destroy();
    for (const db of dbs) await drop(db);
  }
}
