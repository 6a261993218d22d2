// npm run bench -- startup [runs]: how long svc takes to answer, and its memory when idle, as a
// user meets them (bin/svc.js, as `npx svc` runs it), embedded (PGlite) and on PostgreSQL:
//   `svc --help`; `svc user list` with no server (it opens the database itself) and while one runs
//   (handed to it over the admin socket); a server's first start on an empty data dir (or new
//   databases) and its start after a restart, until it answers status_show; its resident memory
//   (RSS) after 5 s idle; the OpenAPI document's size on the wire (gzip) and the time until
//   /api/3/docs and its document are loaded (the page's HTML and the document, not the browser's
//   rendering). Each time is the median of `runs` runs (default 5; a first start: 3). Writes
//   bench/results/startup.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_URL, adminQuery, grantDataStoreReader, log, rssBytes, urlWith } from './common.ts';

const repo = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const bin = path.join(repo, 'bin', 'svc.js');

type Env = Record<string, string>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ms = (n: number) => `${Math.round(n)} ms`;
const show = (t: Timed) => `${ms(t.ms)} (CPU ${ms(t.cpuMs)})`;
const medianTimed = (ts: Timed[]): Timed => ({ ms: median(ts.map((t) => t.ms)), cpuMs: median(ts.map((t) => t.cpuMs)) });
const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Timed {
  ms: number;
  /** CPU time (user + system) of the process, all its threads: what the machine's load does not change. */
  cpuMs: number;
}

/** Runs `svc args` to its end (through bash, whose `times` gives the command's CPU time). */
function timeCommand(args: string[], env: Env, cwd: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const script = 'node "$@" >/dev/null || exit $?; times';
    const child = spawn('bash', ['-c', script, 'svc', bin, ...args], {
      env: { ...process.env, ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`svc ${args.join(' ')}: exit ${code}\n${err}`));
      // `times`: the shell's user and system time, then its children's.
      const seconds = [
        ...out
          .trim()
          .split('\n')
          .at(-1)!
          .matchAll(/(\d+)m([\d.]+)s/g),
      ].map((m) => Number(m[1]) * 60 + Number(m[2]));
      resolve({ ms: performance.now() - started, cpuMs: (seconds[0] + seconds[1]) * 1000 });
    });
  });
}

async function timeRuns(runs: number, args: string[], env: Env, cwd: string): Promise<Timed> {
  const times: Timed[] = [];
  for (let i = 0; i < runs; i++) times.push(await timeCommand(args, env, cwd));
  return { ms: median(times.map((t) => t.ms)), cpuMs: median(times.map((t) => t.cpuMs)) };
}

/** CPU time (user + system) a running process has used so far. */
function cpuMsOf(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Server {
  pid: number;
  port: number;
  ready: Timed;
  stop(): Promise<void>;
}

/** Starts `svc serve`; resolves once status_show answers. */
async function startServer(env: Env, cwd: string): Promise<Server> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, ...env, SVC__PORT: String(port), SVC__HOST: '127.0.0.1', SVC__LOG_LEVEL: 'warn' },
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`svc serve stopped (exit ${child.exitCode}): ${err}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/3/action/status_show`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const ready = { ms: performance.now() - started, cpuMs: cpuMsOf(child.pid!) };
  return {
    pid: child.pid!,
    port,
    ready,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** GET with gzip accepted: the bytes on the wire and the time. */
function getGzip(port: number, url: string): Promise<{ wireBytes: number; encoding: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: url, headers: { 'accept-encoding': 'gzip' } }, (res) => {
        let wireBytes = 0;
        res.on('data', (d: Buffer) => (wireBytes += d.length));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve({ wireBytes, encoding: String(res.headers['content-encoding'] ?? 'identity'), ms: performance.now() - started })
            : reject(new Error(`GET ${url}: ${res.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}

interface ModeResult {
  userListNoServer: Timed;
  userListViaServer: Timed;
  firstStart: Timed;
  restart: Timed;
  idleRssBytes: number;
  openapiWireBytes: number;
  openapiEncoding: string;
  docsLoadedMs: number;
}

async function measureMode(kind: 'pglite' | 'postgres', runs: number): Promise<ModeResult> {
  const firstRuns = Math.min(runs, 3);
  const dirs: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  /** A new, empty place for svc: a storage dir (and on PostgreSQL two new databases). */
  const fresh = async (n: number): Promise<{ env: Env; cwd: string }> => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-startup-'));
    dirs.push(cwd);
    const env: Env = { SVC__STORAGE_PATH: path.join(cwd, 'data') };
    if (kind === 'postgres') {
      const tag = `svcbench_startup_${process.pid}_${n}`;
      for (const db of [`${tag}_cat`, `${tag}_ds`]) {
        await adminQuery(`CREATE DATABASE ${db}`);
        cleanups.push(() => adminQuery(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`));
      }
      const write = urlWith(ADMIN_URL, `${tag}_ds`);
      const read = await grantDataStoreReader(write, `${tag}_ds`);
      Object.assign(env, {
        SVC__DATABASE_URL: urlWith(ADMIN_URL, `${tag}_cat`),
        SVC__DATASTORE__WRITE_URL: write,
        SVC__DATASTORE__READ_URL: read,
      });
    }
    return { env, cwd };
  };
  try {
    const firsts: Timed[] = [];
    let place = await fresh(0);
    for (let i = 0; i < firstRuns; i++) {
      if (i > 0) place = await fresh(i);
      const s = await startServer(place.env, place.cwd);
      firsts.push(s.ready);
      await s.stop();
      log(`${kind}: first start ${show(s.ready)}`);
    }
    const restarts: Timed[] = [];
    let server: Server | undefined;
    for (let i = 0; i < runs; i++) {
      server = await startServer(place.env, place.cwd);
      restarts.push(server.ready);
      log(`${kind}: restart ${show(server.ready)}`);
      if (i < runs - 1) await server.stop();
    }
    const s = server!;
    await new Promise((r) => setTimeout(r, 5000));
    const idleRssBytes = rssBytes(s.pid);
    const docsStarted = performance.now();
    await getGzip(s.port, '/api/3/docs');
    const doc = await getGzip(s.port, '/api/3/openapi.json');
    const docsLoadedMs = performance.now() - docsStarted;
    const userListViaServer = await timeRuns(runs, ['user', 'list'], place.env, place.cwd);
    await s.stop();
    const userListNoServer = await timeRuns(runs, ['user', 'list'], place.env, place.cwd);
    return {
      userListNoServer,
      userListViaServer,
      firstStart: medianTimed(firsts),
      restart: medianTimed(restarts),
      idleRssBytes,
      openapiWireBytes: doc.wireBytes,
      openapiEncoding: doc.encoding,
      docsLoadedMs,
    };
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  const runs = Number(args[0] ?? 5);
  const kinds = (process.env.SVC_BENCH_STARTUP_DBS ?? 'pglite,postgres').split(',') as ('pglite' | 'postgres')[];
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-startup-'));
  // The first run compiles the sources when they changed (bin/build.js): not a start-up figure.
  await timeCommand(['--help'], {}, cwd);
  const help = await timeRuns(runs, ['--help'], {}, cwd);
  fs.rmSync(cwd, { recursive: true, force: true });
  log(`svc --help ${show(help)}`);
  const modes: Partial<Record<'pglite' | 'postgres', ModeResult>> = {};
  for (const kind of kinds) modes[kind] = await measureMode(kind, runs);
  const load = os.loadavg()[0].toFixed(2);
  console.log(`\nsvc start-up (${os.cpus().length} cores, load average ${load}; median of ${runs} runs)`);
  console.log(`svc --help: ${show(help)}`);
  for (const [kind, m] of Object.entries(modes)) {
    console.log(`\n${kind === 'pglite' ? 'embedded (PGlite)' : 'PostgreSQL'}:`);
    console.log(`  svc user list, no server running      ${show(m.userListNoServer)}`);
    console.log(`  svc user list, via the running server ${show(m.userListViaServer)}`);
    console.log(`  first start, empty data, until ready  ${show(m.firstStart)}`);
    console.log(`  restart, until ready                  ${show(m.restart)}`);
    console.log(`  memory (RSS) after 5 s idle           ${mb(m.idleRssBytes)}`);
    console.log(`  OpenAPI document on the wire          ${(m.openapiWireBytes / 1024).toFixed(0)} KB (${m.openapiEncoding})`);
    console.log(`  /api/3/docs and its document loaded   ${ms(m.docsLoadedMs)}`);
  }
  const out = { date: new Date().toISOString(), loadAverage: Number(load), runs, help, modes };
  fs.mkdirSync(path.join(repo, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'bench', 'results', 'startup.json'), `${JSON.stringify(out, null, 2)}\n`);
}
