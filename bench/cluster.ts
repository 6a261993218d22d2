// npm run bench -- cluster: svc on several machines' worth of processes, on this one, under faults.
// A PostgreSQL primary of its own (initdb, port 25432: below the ephemeral port range) and a streaming replica made from it with
// pg_basebackup -R (port 25433); two `svc serve --no-workers` web nodes reading on the replica
// (svc.database_read_urls), one `svc jobs worker --metrics-port`, haproxy in front (health check
// /readyz), files on an S3-compatible server (s3rver). A fixed-rate open-loop load (90 % reads:
// package_search, package_show, datastore_search, pages; 10 % writes: package_create with a
// resource, package_patch, datastore_upsert, CSV uploads) runs for SVC_BENCH_DURATION seconds
// (default 600) while: one web node is killed (-9) and restarted 30 s later, both are restarted one
// after the other (SIGTERM), the replica is stopped for 60 s, its replay is paused (lag past the
// limit), and the worker is killed during loads. First the same reads at the same rate go to one
// node directly: the single-node baseline. Report: requests and errors by kind per phase,
// p50/p99, replica lag, RSS of each process at start and end, and a check that every acknowledged
// write is in the primary, whole. Needs root (runs PostgreSQL as the postgres user) and haproxy.
// SVC_BENCH_DATASTORE_ON_REPLICA=1 points the data store's read URL at the replica as well.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import S3rver from 's3rver';
import { loadConfig } from '../src/config/load.ts';
import { closeServices, createServices } from '../src/services.ts';
import { insertUser } from '../src/model/users.ts';
import { issueToken } from '../src/actions/api-token.ts';
import { setPermissionsSql } from '../src/plugins/datastore/permissions.ts';
import { log, rssBytes } from './common.ts';

const DURATION_S = Number(process.env.SVC_BENCH_DURATION ?? 600);
const RATE = Number(process.env.SVC_BENCH_RATE ?? 20);
const PRIMARY_PORT = 25432;
const REPLICA_PORT = 25433;
const LB_PORT = 25480;
const NODE_PORTS = [25481, 25482];
const WORKER_METRICS_PORT = 25489;
const S3_PORT = 25490;
const BUCKET = 'svc-bench';
/** The nodes sign and check API tokens with one secret. */
const SECRET = randomBytes(32).toString('hex');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-'));
const repo = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const primaryUrl = (db: string, user = 'postgres') => `postgresql://${user}@127.0.0.1:${PRIMARY_PORT}/${db}`;
const replicaUrl = (db: string, user = 'postgres') => `postgresql://${user}@127.0.0.1:${REPLICA_PORT}/${db}`;
/** SVC_BENCH_DATASTORE_ON_REPLICA=1: the nodes' data store reads on the replica too (svc.datastore.read_url). */
const datastoreReadUrl = process.env.SVC_BENCH_DATASTORE_ON_REPLICA === '1' ? replicaUrl : primaryUrl;
const pgBin = (name: string) => {
  const dir = fs.readdirSync('/usr/lib/postgresql').sort().at(-1);
  return path.join('/usr/lib/postgresql', dir!, 'bin', name);
};

function asPostgres(cmd: string, args: string[]): void {
  const r = spawnSync('runuser', ['-u', 'postgres', '--', pgBin(cmd), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.stdout}`);
}

async function sql<T = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------- PostgreSQL primary + replica
function startPostgres(): void {
  const primary = path.join(root, 'primary');
  const replica = path.join(root, 'replica');
  fs.chmodSync(root, 0o777);
  asPostgres('initdb', ['-D', primary, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  fs.appendFileSync(
    path.join(primary, 'postgresql.conf'),
    `port = ${PRIMARY_PORT}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${root}'\nwal_level = replica\nmax_wal_senders = 5\nhot_standby_feedback = on\nmax_connections = 200\nshared_buffers = 256MB\nfsync = on\n`,
  );
  fs.appendFileSync(path.join(primary, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
  asPostgres('pg_ctl', ['-D', primary, '-l', path.join(root, 'primary.log'), '-w', 'start']);
  asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(PRIMARY_PORT), '-U', 'postgres', '-D', replica, '-R', '-X', 'stream']);
  fs.appendFileSync(path.join(replica, 'postgresql.conf'), `port = ${REPLICA_PORT}\nhot_standby = on\nmax_standby_streaming_delay = 5s\n`);
  startReplica();
}
const startReplica = () => asPostgres('pg_ctl', ['-D', path.join(root, 'replica'), '-l', path.join(root, 'replica.log'), '-w', 'start']);
const stopReplica = () => asPostgres('pg_ctl', ['-D', path.join(root, 'replica'), '-m', 'fast', '-w', 'stop']);
function stopPostgres(): void {
  for (const dir of ['replica', 'primary']) {
    try {
      asPostgres('pg_ctl', ['-D', path.join(root, dir), '-m', 'immediate', '-w', 'stop']);
    } catch {
      /* not running */
    }
  }
}

// ---------------------------------------------------------------- svc processes
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  SVC__DATABASE_URL: primaryUrl('svc_catalog'),
  SVC__DATABASE_READ_URLS: replicaUrl('svc_catalog'),
  SVC__DATABASE_REPLICA_MAX_LAG: '5',
  SVC__DATASTORE__WRITE_URL: primaryUrl('svc_datastore'),
  SVC__DATASTORE__READ_URL: datastoreReadUrl('svc_datastore', 'svc_ds_reader'),
  SVC__STORAGE_PATH: path.join(root, 'storage'),
  SVC__STORAGE__BACKEND: 's3',
  SVC__STORAGE__S3__ENDPOINT: `http://127.0.0.1:${S3_PORT}`,
  SVC__STORAGE__S3__BUCKET: BUCKET,
  SVC__STORAGE__S3__ACCESS_KEY_ID: 'S3RVER',
  SVC__STORAGE__S3__SECRET_ACCESS_KEY: 'S3RVER',
  SVC__STORAGE__S3__FORCE_PATH_STYLE: 'true',
  SVC__LOADER__ALLOW_PRIVATE_URLS: 'true',
  SVC__SITE_URL: `http://127.0.0.1:${LB_PORT}`,
  SVC__TRUST_PROXY: 'loopback',
  SVC__LOG_LEVEL: 'warn',
  SVC__LOG__FORMAT: 'json',
  SVC__SHUTDOWN_TIMEOUT: '10',
  SVC__SECRET: SECRET,
  ...extra,
});

interface Proc {
  name: string;
  args: string[];
  extra: Record<string, string>;
  child?: ChildProcess;
  rssStart?: number;
  rssEnd?: number;
}
const procs: Proc[] = [
  { name: 'web1', args: ['serve', '--no-workers', '-p', String(NODE_PORTS[0]), '-H', '127.0.0.1'], extra: {} },
  { name: 'web2', args: ['serve', '--no-workers', '-p', String(NODE_PORTS[1]), '-H', '127.0.0.1'], extra: {} },
  { name: 'worker', args: ['jobs', 'worker', '--metrics-port', String(WORKER_METRICS_PORT)], extra: { SVC__HOST: '127.0.0.1' } },
];

async function waitHttp(url: string, ms = 300_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} not ready within ${ms} ms`);
}

async function startProc(p: Proc): Promise<void> {
  const out = fs.openSync(path.join(root, `${p.name}.log`), 'a');
  // run from the bench's folder (no svc.ini of the checkout is read); tsx found in the checkout
  p.child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), path.join(repo, 'src/cli/main.ts'), ...p.args], {
    env: env(p.extra),
    stdio: ['ignore', out, out],
    cwd: root,
  });
  const port = p.name === 'worker' ? WORKER_METRICS_PORT : NODE_PORTS[p.name === 'web1' ? 0 : 1];
  await waitHttp(`http://127.0.0.1:${port}/${p.name === 'worker' ? 'healthz' : 'readyz'}`);
  p.rssStart ??= rssBytes(p.child.pid!);
}

async function stopProc(p: Proc, signal: NodeJS.Signals): Promise<void> {
  const c = p.child;
  if (!c || c.exitCode !== null || c.signalCode) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill(signal);
  await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
}

// ---------------------------------------------------------------- haproxy
function startHaproxy(): ChildProcess {
  const cfg = path.join(root, 'haproxy.cfg');
  fs.writeFileSync(
    cfg,
    `global
  maxconn 2000
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch
  retry-on conn-failure 503
frontend svc
  bind 127.0.0.1:${LB_PORT}
  default_backend web
backend web
  balance roundrobin
  option httpchk GET /readyz
  default-server inter 1s fall 2 rise 2
${NODE_PORTS.map((p, i) => `  server web${i + 1} 127.0.0.1:${p} check`).join('\n')}
`,
  );
  return spawn('haproxy', ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', fs.openSync(path.join(root, 'haproxy.log'), 'a')] });
}

// ---------------------------------------------------------------- the load
interface Sample {
  phase: string;
  kind: string;
  read: boolean;
  ms: number;
  status: number;
  error?: string;
}

let phase = 'baseline';
const samples: Sample[] = [];
const acked = {
  packages: [] as string[],
  patches: new Map<string, string>(),
  records: [] as { id: number; v: string }[],
  uploads: [] as string[],
};
let seq = 0;
let token = '';
const datasetIds: string[] = [];
let tableId = '';

const CSV = 'id,name,amount\n1,a,1.5\n2,b,2.5\n3,c,3.5\n';

function multipart(fields: Record<string, string>, file: string): { body: Buffer; type: string } {
  const b = `----svcbench${Date.now()}${seq}`;
  const parts = Object.entries(fields).map(([k, v]) => `--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  parts.push(
    `--${b}\r\nContent-Disposition: form-data; name="upload"; filename="bench.csv"\r\nContent-Type: text/csv\r\n\r\n${file}\r\n--${b}--\r\n`,
  );
  return { body: Buffer.from(parts.join('')), type: `multipart/form-data; boundary=${b}` };
}

/** One request of the mix: 90 % reads, 10 % writes. */
async function one(base: string, readsOnly: boolean): Promise<void> {
  const n = seq++;
  const write = !readsOnly && n % 10 === 9;
  const auth = { authorization: token };
  const json = (action: string, body: unknown) =>
    fetch(`${base}/api/3/action/${action}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  let kind: string;
  let run: () => Promise<Response>;
  let onOk: (body: any) => void = () => undefined;
  if (!write) {
    const pick = n % 9;
    const id = datasetIds[n % datasetIds.length];
    if (pick < 3) {
      kind = 'package_search';
      run = () => fetch(`${base}/api/3/action/package_search?q=bench&rows=10&facet.field=["tags"]`, { headers: auth });
    } else if (pick < 5) {
      kind = 'package_show';
      run = () => fetch(`${base}/api/3/action/package_show?id=${id}`, { headers: auth });
    } else if (pick < 7) {
      kind = 'datastore_search';
      run = () => fetch(`${base}/api/3/action/datastore_search?resource_id=${tableId}&limit=20`, { headers: auth });
    } else if (pick < 8) {
      kind = 'page /dataset';
      run = () => fetch(`${base}/dataset?q=bench`);
    } else {
      kind = 'page /dataset/:id';
      run = () => fetch(`${base}/dataset/${id}`);
    }
  } else {
    const w = Math.floor(n / 10) % 10;
    if (w < 4) {
      kind = 'package_create';
      const name = `bench-w-${process.pid}-${n}`;
      run = () =>
        json('package_create', {
          name,
          owner_org: 'bench-org',
          notes: 'bench write',
          tags: [{ name: 'bench' }],
          resources: [{ url: `http://example.org/${name}.csv`, format: 'CSV', name: 'r' }],
        });
      onOk = () => acked.packages.push(name);
    } else if (w < 6) {
      kind = 'package_patch';
      const id = datasetIds[n % datasetIds.length];
      const notes = `patched ${n}`;
      run = () => json('package_patch', { id, notes });
      onOk = () => acked.patches.set(id, notes);
    } else if (w < 9) {
      kind = 'datastore_upsert';
      const rec = { id: 100_000 + n, v: `v${n}` };
      run = () => json('datastore_upsert', { resource_id: tableId, method: 'insert', records: [rec] });
      onOk = () => acked.records.push(rec);
    } else {
      kind = 'upload';
      const id = datasetIds[n % datasetIds.length];
      run = () => {
        const m = multipart({ package_id: id, name: `upload ${n}` }, CSV);
        return fetch(`${base}/api/3/action/resource_create`, {
          method: 'POST',
          headers: { ...auth, 'content-type': m.type },
          body: new Uint8Array(m.body),
        });
      };
      onOk = (body) => acked.uploads.push(body.result.id);
    }
  }
  const at = phase;
  const start = performance.now();
  try {
    const res = await run();
    const text = await res.text();
    const ms = performance.now() - start;
    let error: string | undefined;
    if (res.status >= 400) {
      let type = `HTTP ${res.status}`;
      try {
        type = JSON.parse(text)?.error?.__type ?? type;
      } catch {
        /* a page */
      }
      error = type;
    } else if (write) {
      onOk(JSON.parse(text));
    }
    samples.push({ phase: at, kind, read: !write, ms, status: res.status, error });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    samples.push({ phase: at, kind, read: !write, ms: performance.now() - start, status: 0, error: `connection: ${cause}` });
  }
}

/** Open loop: a request every 1/RATE s, whatever the answers do, until stop() resolves. */
async function drive(base: string, readsOnly: boolean, until: Promise<void>): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let done = false;
  void until.then(() => {
    done = true;
  });
  const gap = 1000 / RATE;
  let next = performance.now();
  while (!done) {
    const p = one(base, readsOnly);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    next += gap;
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
  await Promise.all(inFlight);
}

const sleep = (s: number) => new Promise<void>((r) => setTimeout(r, s * 1000));
const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

// ---------------------------------------------------------------- the run
async function setup(): Promise<void> {
  startPostgres();
  for (const db of ['svc_catalog', 'svc_datastore']) await sql(primaryUrl('postgres'), `CREATE DATABASE ${db}`);
  await sql(primaryUrl('postgres'), 'CREATE ROLE svc_ds_reader LOGIN');
  await sql(primaryUrl('svc_datastore'), setPermissionsSql(primaryUrl('svc_datastore'), primaryUrl('svc_datastore', 'svc_ds_reader')));
  // migrations, the bench's sysadmin and its token, once, in this process
  const config = loadConfig({
    env: {},
    cwd: root,
    overrides: {
      'svc.database_url': primaryUrl('svc_catalog'),
      'svc.datastore.write_url': primaryUrl('svc_datastore'),
      'svc.datastore.read_url': primaryUrl('svc_datastore', 'svc_ds_reader'),
      'svc.storage_path': path.join(root, 'storage'),
      'svc.log_level': 'warn',
      'svc.secret': SECRET,
    },
  });
  const services = await createServices(config, { logger: pino({ level: 'warn' }), worker: false });
  const user = await insertUser(services.db, { name: 'bench_admin', email: 'bench@example.org', sysadmin: true, password_hash: '' } as any);
  token = (await issueToken({ db: services.db, config: services.config } as any, user, 'bench')).token;
  await closeServices(services);
}

async function seed(base: string): Promise<void> {
  const call = async (action: string, body: unknown) => {
    const r = await fetch(`${base}/api/3/action/${action}`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const j: any = await r.json();
    if (!j.success) throw new Error(`${action}: ${JSON.stringify(j.error)}`);
    return j.result;
  };
  await call('organization_create', { name: 'bench-org' });
  for (let i = 0; i < 50; i++) {
    const p = await call('package_create', {
      name: `bench-seed-${i}`,
      owner_org: 'bench-org',
      notes: `seed ${i}`,
      tags: [{ name: 'bench' }],
    });
    datasetIds.push(p.id);
  }
  const ds = await call('datastore_create', {
    resource: { package_id: datasetIds[0], name: 'bench table' },
    fields: [
      { id: 'id', type: 'int' },
      { id: 'v', type: 'text' },
    ],
    primary_key: ['id'],
    records: Array.from({ length: 500 }, (_, i) => ({ id: i, v: `seed${i}` })),
  });
  tableId = ds.resource_id;
}

interface Check {
  what: string;
  expected: number | string;
  found: number | string;
}

async function finalCheck(): Promise<Check[]> {
  const cat = primaryUrl('svc_catalog');
  const out: Check[] = [];
  const pk = await sql(cat, `SELECT count(*)::int AS n FROM packages WHERE name = ANY($1) AND state = 'active'`, [acked.packages]);
  out.push({ what: 'acknowledged package_create present', expected: acked.packages.length, found: pk[0].n });
  const res = await sql(
    cat,
    `SELECT count(*)::int AS n FROM resources r JOIN packages p ON p.id = r.package_id WHERE p.name = ANY($1) AND r.state = 'active'`,
    [acked.packages],
  );
  out.push({ what: 'their resources present (nothing half written)', expected: acked.packages.length, found: res[0].n });
  let patched = 0;
  for (const [id, notes] of acked.patches) {
    const r = await fetch(`http://127.0.0.1:${NODE_PORTS[0]}/api/3/action/package_show?id=${id}`, { headers: { authorization: token } });
    if (((await r.json()) as any).result?.notes === notes) patched++;
  }
  out.push({ what: 'last acknowledged package_patch of each dataset in effect', expected: acked.patches.size, found: patched });
  const ids = acked.records.map((r) => r.id);
  const expectedSum = acked.records
    .map((r) => `${r.id}:${r.v}`)
    .sort()
    .join(',');
  const got = await sql(
    primaryUrl('svc_datastore'),
    `SELECT count(*)::int AS n, coalesce(string_agg(id || ':' || v, ',' ORDER BY (id || ':' || v) COLLATE "C"), '') AS s FROM "${tableId}" WHERE id = ANY($1)`,
    [ids],
  );
  out.push({ what: 'acknowledged datastore_upsert rows', expected: ids.length, found: got[0].n });
  out.push({
    what: 'their checksum (md5 of the sorted rows)',
    expected: md5(expectedSum),
    found: md5(got[0].s),
  });
  const up = await sql(cat, `SELECT count(*)::int AS n FROM resources WHERE id = ANY($1) AND state = 'active'`, [acked.uploads]);
  out.push({ what: 'acknowledged uploads present', expected: acked.uploads.length, found: up[0].n });
  let files = 0;
  for (const id of acked.uploads) {
    const r = await fetch(`http://127.0.0.1:${NODE_PORTS[0]}/api/3/action/resource_show?id=${id}`, { headers: { authorization: token } });
    const url = ((await r.json()) as any).result?.url as string | undefined;
    if (!url) continue;
    const f = await fetch(url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${NODE_PORTS[0]}`), {
      headers: { authorization: token },
      redirect: 'follow',
    });
    if (f.ok && (await f.text()) === CSV) files++;
  }
  out.push({ what: 'their files in the object store, byte for byte', expected: acked.uploads.length, found: files });
  return out;
}

function md5(s: string): string {
  return spawnSync('md5sum', { input: s, encoding: 'utf8' }).stdout.split(' ')[0];
}

async function replicaLag(): Promise<number | null> {
  try {
    const r = await sql(
      primaryUrl('postgres'),
      `SELECT extract(epoch FROM coalesce(replay_lag, '0'))::float AS s FROM pg_stat_replication`,
    );
    return r.length ? r[0].s : null;
  } catch {
    return null;
  }
}

export async function run(): Promise<void> {
  if (!spawnSync('which', ['haproxy']).stdout.length) throw new Error('haproxy is missing: apt-get install -y haproxy');
  const s3dir = path.join(root, 's3');
  fs.mkdirSync(s3dir);
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: S3_PORT,
    directory: s3dir,
    silent: true,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  await s3.run();
  let haproxy: ChildProcess | undefined;
  const lags: { phase: string; s: number | null }[] = [];
  try {
    log(`setting up in ${root}: primary :${PRIMARY_PORT}, replica :${REPLICA_PORT}, S3 :${S3_PORT}`);
    await setup();
    for (const p of procs) await startProc(p);
    haproxy = startHaproxy();
    const lb = `http://127.0.0.1:${LB_PORT}`;
    await waitHttp(`${lb}/readyz`);
    await seed(lb);
    const lagTimer = setInterval(() => void replicaLag().then((s) => lags.push({ phase, s })), 2000);

    const d = DURATION_S;
    const base = Math.max(10, Math.round(d * 0.1));
    log(`baseline: reads only at ${RATE}/s on web1 directly for ${base} s`);
    await drive(`http://127.0.0.1:${NODE_PORTS[0]}`, true, sleep(base));

    log(`cluster: mixed load at ${RATE}/s through haproxy for ${d} s with faults`);
    const faults = (async () => {
      const at = (f: number) => sleep(d * f);
      const pause = (s: number) => sleep(Math.min(s, d * 0.08));
      phase = 'steady';
      await at(0.08);
      phase = 'web1 killed';
      log('fault: kill -9 web1');
      await stopProc(procs[0], 'SIGKILL');
      await pause(30);
      await startProc(procs[0]);
      phase = 'steady 2';
      await at(0.06);
      phase = 'rolling restart';
      log('fault: rolling restart web1, web2');
      for (const p of procs.slice(0, 2)) {
        await stopProc(p, 'SIGTERM');
        await startProc(p);
        await sleep(3);
      }
      phase = 'steady 3';
      await at(0.06);
      phase = 'replica stopped';
      log('fault: replica stopped');
      stopReplica();
      await pause(60);
      startReplica();
      phase = 'replica back';
      await at(0.06);
      phase = 'replica lagging';
      log('fault: replica replay paused (lag past the limit)');
      await sql(replicaUrl('postgres'), 'SELECT pg_wal_replay_pause()');
      await pause(30);
      await sql(replicaUrl('postgres'), 'SELECT pg_wal_replay_resume()');
      phase = 'steady 4';
      await at(0.06);
      phase = 'worker killed';
      log('fault: kill -9 worker');
      await stopProc(procs[2], 'SIGKILL');
      await pause(10);
      await startProc(procs[2]);
      phase = 'steady end';
    })().catch((e) => {
      log(`fault sequence stopped: ${(e as Error).message}`);
      phase = 'steady end';
    });
    const end = sleep(d);
    await drive(
      lb,
      false,
      Promise.all([end, faults]).then(() => undefined),
    );
    clearInterval(lagTimer);
    for (const p of procs) if (p.child?.pid && p.child.exitCode === null) p.rssEnd = rssBytes(p.child.pid);
    log('waiting for the worker to finish the loads, then checking every acknowledged write');
    await sleep(5);
    const checks = await finalCheck();
    report(checks, lags);
  } finally {
    for (const p of procs) await stopProc(p, 'SIGTERM');
    haproxy?.kill('SIGTERM');
    await s3.close();
    stopPostgres();
    if (!process.env.SVC_BENCH_KEEP) fs.rmSync(root, { recursive: true, force: true });
  }
}

function report(checks: Check[], lags: { phase: string; s: number | null }[]): void {
  const phases = [...new Set(samples.map((s) => s.phase))];
  const rows = phases.map((ph) => {
    const xs = samples.filter((s) => s.phase === ph);
    const reads = xs.filter((s) => s.read && !s.error).map((s) => s.ms);
    const writes = xs.filter((s) => !s.read && !s.error).map((s) => s.ms);
    const errors: Record<string, number> = {};
    for (const s of xs.filter((x) => x.error)) errors[`${s.kind}: ${s.error}`] = (errors[`${s.kind}: ${s.error}`] ?? 0) + 1;
    const lag = lags.filter((l) => l.phase === ph && l.s !== null).map((l) => l.s!);
    return {
      phase: ph,
      requests: xs.length,
      errors: Object.values(errors).reduce((a, b) => a + b, 0),
      'read p50 ms': Math.round(pct(reads, 50)),
      'read p99 ms': Math.round(pct(reads, 99)),
      'write p50 ms': Math.round(pct(writes, 50)),
      'write p99 ms': Math.round(pct(writes, 99)),
      'max replica lag s': lag.length ? Math.max(...lag).toFixed(1) : 'n/a',
      detail: errors,
    };
  });
  console.log(`\nnpm run bench -- cluster: ${DURATION_S} s at ${RATE} requests/s (${os.cpus().length} cores)`);
  console.table(rows.map(({ detail, ...r }) => r));
  for (const r of rows) if (r.errors) console.log(`errors in "${r.phase}":`, r.detail);
  const base = rows.find((r) => r.phase === 'baseline');
  const cluster = samples.filter((s) => s.phase !== 'baseline' && s.read && !s.error).map((s) => s.ms);
  console.log(`reads p99: single node ${base?.['read p99 ms']} ms, through the cluster (all phases) ${Math.round(pct(cluster, 99))} ms`);
  console.table(procs.map((p) => ({ process: p.name, 'RSS start MB': mb(p.rssStart), 'RSS end MB': mb(p.rssEnd) })));
  console.table(checks);
  const result = {
    duration: DURATION_S,
    rate: RATE,
    phases: rows,
    checks,
    rss: procs.map((p) => ({ name: p.name, start: p.rssStart, end: p.rssEnd })),
  };
  fs.mkdirSync(path.join(repo, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'bench', 'results', 'cluster-postgres.json'), JSON.stringify(result, null, 2));
}

const mb = (b?: number) => (b ? Math.round(b / 1048576) : 'n/a');
