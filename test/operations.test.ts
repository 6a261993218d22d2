// Operations over HTTP: /healthz, /readyz (database and migrations), Prometheus /metrics (bounded
// labels, errors by type, job queues, the pool on PostgreSQL; the switch and the bearer token),
// the request id (header and log lines; a proxy's only when trusted), and a graceful stop (requests
// in flight finish, new ones are refused, a running job goes back to the queue, a limit cuts the rest),
// and the split into a web process (`svc serve --no-workers`) and a worker process (`svc jobs worker`).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { freshPostgresDatabase, onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';
import { createLogger } from '../src/log.ts';
import { defineAction } from '../src/actions/registry.ts';
import { anyone } from '../src/auth/rules.ts';
import { findJob } from '../src/jobs/queue.ts';
import { stopServing } from '../src/cli/serve.ts';
import { sample } from './helpers/metrics.ts';

let t: TestApp;
const get = (app: TestApp, url: string, headers: Record<string, string> = {}) => app.app.inject({ method: 'GET', url, headers });

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false, 'svc.jobs.queues': ['default', 'ops-bulk'] } });
});
after(async () => {
  await t?.close();
});

test('/healthz answers while the process runs; /readyz checks the database and the migrations', async () => {
  const health = await get(t, '/healthz');
  assert.equal(health.statusCode, 200);
  assert.deepEqual(health.json(), { status: 'ok' });
  const ready = await get(t, '/readyz');
  assert.equal(ready.statusCode, 200);
  assert.deepEqual(ready.json(), { status: 'ready', checks: { database: 'ok', migrations: 'ok' } });

  // A database one migration behind the code (a node started before `svc db upgrade`).
  const last = (await t.services.db.query<{ name: string }>(`SELECT max(name) AS name FROM svc_migrations WHERE scope = 'core'`)).rows[0]
    .name;
  await t.services.db.query(`DELETE FROM svc_migrations WHERE scope = 'core' AND name = $1`, [last]);
  try {
    const behind = await get(t, '/readyz');
    assert.equal(behind.statusCode, 503);
    assert.equal(behind.json().status, 'not ready');
    assert.equal(behind.json().checks.migrations, `pending: ${last} (run svc db upgrade)`);
  } finally {
    await t.services.db.query(`INSERT INTO svc_migrations (scope, name) VALUES ('core', $1)`, [last]);
  }
  assert.equal((await get(t, '/readyz')).statusCode, 200);
});

describe('metrics', () => {
  test('requests and latency per action and per route pattern, never the address', async () => {
    await t.ok('organization_create', { name: 'ops-metrics-org' }, asSysadmin(t));
    await t.ok('package_create', { name: 'ops-metrics-ds', owner_org: 'ops-metrics-org' }, asSysadmin(t));
    for (let i = 0; i < 3; i++) await t.call('package_show', { id: 'ops-metrics-ds' }, { method: 'GET' });
    await get(t, '/dataset/ops-metrics-ds');
    for (const n of ['a1', 'b2', 'c3']) await t.call(`ops_no_such_action_${n}`, {});
    await get(t, '/no/such/page/xyz');
    const res = await get(t, '/metrics');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const text = res.body;
    const show = { method: 'GET', route: '/api/3/action/:name', action: 'package_show' };
    assert.equal(sample(text, 'svc_http_requests_total', { ...show, status: '200' }), 3);
    assert.equal(sample(text, 'svc_http_request_duration_seconds_count', show), 3);
    assert.equal(sample(text, 'svc_http_request_duration_seconds_bucket', { ...show, le: '+Inf' }), 3);
    assert.equal(sample(text, 'svc_http_requests_total', { method: 'GET', route: '/dataset/:name', action: '', status: '200' }), 1);
    // Unknown action names and addresses are one label value each, whatever was asked.
    assert.equal(sample(text, 'svc_http_requests_total', { method: 'POST', action: 'unknown', status: '400' }), 3);
    assert.equal(sample(text, 'svc_http_requests_total', { route: 'unmatched', status: '404' }), 1);
    assert.ok(
      !text.includes('ops_no_such_action') && !text.includes('ops-metrics-ds') && !text.includes('xyz'),
      'no requested names in labels',
    );
    assert.match(text, /^svc_process_resident_memory_bytes \d+/m);
  });

  test('errors by type: the envelope __type for the API, the status for pages', async () => {
    await t.call('package_show', { id: 'ops-nothing-here' });
    await t.call('package_create', { name: 'ops bad name' }, asSysadmin(t));
    const text = (await get(t, '/metrics')).body;
    const api = { route: '/api/3/action/:name' };
    assert.equal(sample(text, 'svc_http_errors_total', { ...api, action: 'package_show', type: 'Not Found Error' }), 1);
    assert.equal(sample(text, 'svc_http_errors_total', { ...api, action: 'package_create', type: 'Validation Error' }), 1);
    assert.equal(sample(text, 'svc_http_errors_total', { route: 'unmatched', type: 'HTTP 404' }), 1);
  });

  test('job queue depth and the wait of the oldest job, per queue', async () => {
    let text = (await get(t, '/metrics')).body;
    assert.equal(sample(text, 'svc_jobs_queued', { queue: 'ops-bulk' }), 0, 'configured queues are listed when empty');
    for (let i = 0; i < 2; i++) await t.services.jobs.enqueue(t.services.db, { type: 'test', queue: 'ops-bulk' });
    await new Promise((r) => setTimeout(r, 1100));
    text = (await get(t, '/metrics')).body;
    assert.equal(sample(text, 'svc_jobs_queued', { queue: 'ops-bulk' }), 2);
    assert.equal(sample(text, 'svc_jobs_running', { queue: 'ops-bulk' }), 0);
    assert.ok(sample(text, 'svc_jobs_oldest_queued_seconds', { queue: 'ops-bulk' })! >= 1, text);
    await t.ok('job_clear', { queues: ['ops-bulk'] }, asSysadmin(t));
    text = (await get(t, '/metrics')).body;
    assert.equal(sample(text, 'svc_jobs_queued', { queue: 'ops-bulk' }), 0);
  });

  test('the catalog connection pool on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
    const text = (await get(t, '/metrics')).body;
    assert.ok(sample(text, 'svc_db_pool_connections', { state: 'total' })! >= 1, text);
    assert.equal(typeof sample(text, 'svc_db_pool_connections', { state: 'waiting' }), 'number');
  });
});

describe('a server with a metrics token, a trusted proxy and JSON logs', () => {
  let o: TestApp;
  before(async () => {
    o = await startApp({ plugins: [], config: { 'svc.metrics.token': 'ops-scrape-secret', 'svc.trust_proxy': ['127.0.0.1'] } });
    o.services.registry.define(
      defineAction({
        name: 'ops_log_inside',
        description: 'test: writes a log line while it runs',
        sideEffectFree: true,
        auth: anyone,
        handler: async (ctx) => {
          await new Promise((r) => setTimeout(r, 5));
          ctx.services.logger.info('inside the action');
          return true;
        },
      }),
    );
  });
  after(async () => {
    await o?.close();
  });

  test('/metrics needs the bearer token', async () => {
    assert.equal((await get(o, '/metrics')).statusCode, 401);
    assert.equal((await get(o, '/metrics', { authorization: 'Bearer wrong' })).statusCode, 401);
    const ok = await get(o, '/metrics', { authorization: 'Bearer ops-scrape-secret' });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /svc_http_requests_total/);
  });

  test('the request id: taken from a trusted proxy, in the answer and in every log line of the request', async () => {
    const lines: string[] = [];
    o.services.config.set('svc.log.format', 'json');
    o.services.config.set('svc.log_level', 'info');
    o.services.logger = createLogger(o.services.config, { write: (s: string) => lines.push(...s.split('\n').filter(Boolean)) });
    const res = await o.app.inject({
      method: 'POST',
      url: '/api/3/action/ops_log_inside',
      payload: {},
      headers: { 'x-request-id': 'lb-7f3a' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-request-id'], 'lb-7f3a');
    const logged = lines.map((l) => JSON.parse(l));
    assert.deepEqual(
      logged.map((l) => [l.msg, l.reqId]),
      [
        ['inside the action', 'lb-7f3a'],
        ['request', 'lb-7f3a'],
      ],
    );
    // A header that could forge log lines is replaced.
    const forged = await o.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b\n{"x":1}' } });
    assert.match(String(forged.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('metrics off: no /metrics', async () => {
    const off = await startApp({ plugins: [], config: { 'svc.metrics.enabled': false } });
    try {
      assert.equal((await get(off, '/metrics')).statusCode, 404);
      assert.equal((await get(off, '/healthz')).statusCode, 200);
    } finally {
      await off.close();
    }
  });
});

test('without a trusted proxy, a client cannot choose its request id', async () => {
  const res = await get(t, '/healthz', { 'x-request-id': 'client-chosen' });
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  const other = await get(t, '/healthz');
  assert.notEqual(other.headers['x-request-id'], res.headers['x-request-id']);
});

describe('graceful stop', () => {
  /** Sends the head of a JSON request on a real socket; returns the socket, what it receives, and a function sending the rest. */
  function slowRequest(port: number, body: string) {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => {
      answer += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    const connected = new Promise<void>((r) => socket.on('connect', () => r()));
    const head = `POST /api/3/action/status_show HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    return {
      connected: connected.then(() => socket.write(head + body.slice(0, 2))),
      finish: () => socket.write(body.slice(2)),
      closed,
      answer: () => answer,
    };
  }

  test('requests in flight finish, new connections are refused, a running job goes back to the queue', async () => {
    const s = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false, 'svc.jobs.poll_interval': 20 } });
    try {
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      s.services.jobs.registerJobType('ops-long', ({ signal }) => {
        started();
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      });
      const job = await s.services.jobs.enqueue(s.services.db, { type: 'ops-long', title: 'a long load' });
      s.services.jobs.startWorker();
      await running;
      await s.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (s.app.server.address() as AddressInfo).port;
      const inFlight = slowRequest(port, '{}');
      await inFlight.connected;
      await new Promise((r) => setTimeout(r, 100));

      const stopped = stopServing(s.app, s.services, 10_000);
      await new Promise((r) => setTimeout(r, 100));
      const refused = await new Promise<string>((resolve) => {
        const c = net.connect(port, '127.0.0.1');
        c.on('connect', () => {
          c.destroy();
          resolve('connected');
        });
        c.on('error', (e: NodeJS.ErrnoException) => resolve(String(e.code)));
      });
      assert.equal(refused, 'ECONNREFUSED');
      inFlight.finish();
      await inFlight.closed;
      assert.match(inFlight.answer(), /^HTTP\/1\.1 200 /);
      assert.match(inFlight.answer(), /"success":true/);
      const { cut } = await stopped;
      assert.equal(cut, false);
      const back = await findJob(s.services.db, job.id);
      assert.equal(back?.status, 'queued', 'the job waits for another worker');
      assert.equal(back?.attempts, 0);
    } finally {
      await s.close();
    }
  });

  test('a request still running at the limit has its connection closed', async () => {
    const s = await startApp({ plugins: [] });
    try {
      await s.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (s.app.server.address() as AddressInfo).port;
      const stuck = slowRequest(port, '{"never": "finished"}');
      await stuck.connected;
      await new Promise((r) => setTimeout(r, 100));
      const began = Date.now();
      const { cut } = await stopServing(s.app, s.services, 300);
      assert.equal(cut, true);
      assert.ok(Date.now() - began < 5000);
      await stuck.closed;
      assert.equal(stuck.answer(), '');
    } finally {
      await s.close();
    }
  });
});

describe('web and worker processes', { skip: !onPostgres && 'separate workers need PostgreSQL' }, () => {
  const cli = (args: string[]) => [process.execPath, ['--import', 'tsx', path.join(process.cwd(), 'src/cli/main.ts'), ...args]] as const;
  let env: NodeJS.ProcessEnv;
  let storage: string;
  let drop: () => Promise<void>;
  const children: ChildProcess[] = [];
  const logs = new Map<ChildProcess, string>();

  function start(args: string[]): ChildProcess {
    const [node, argv] = cli(args);
    const child = spawn(node, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    logs.set(child, '');
    const keep = (d: Buffer) => logs.set(child, logs.get(child) + d.toString());
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    children.push(child);
    return child;
  }
  const run = (args: string[]) => {
    const [node, argv] = cli(args);
    return spawnSync(node, argv, { env, encoding: 'utf8', timeout: 60_000 });
  };
  const exited = (child: ChildProcess) =>
    child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn().catch(() => undefined);
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms\n${[...logs.values()].join('\n---\n')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  before(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ops-split-'));
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    env = {
      ...process.env,
      SVC__DATABASE_URL: db.url,
      SVC__PLUGINS: '',
      SVC__STORAGE_PATH: storage,
      SVC__PORT: String(port),
      SVC__HOST: '127.0.0.1',
      SVC__LOG__FORMAT: 'json',
      SVC__JOBS__POLL_INTERVAL: '100',
      SVC__SHUTDOWN_TIMEOUT: '5',
    };
    env.OPS_BASE = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await drop?.();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  test('jobs wait for a worker process while the web process serves; both stop cleanly on SIGTERM', async () => {
    const base = env.OPS_BASE!;
    const web = start(['serve', '--no-workers']);
    await until('the web process is ready', async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined));
    const enqueued = run(['jobs', 'test']);
    assert.equal(enqueued.status, 0, enqueued.stderr);
    const jobId = /enqueued test job (\S+)/.exec(enqueued.stdout)?.[1];
    assert.ok(jobId, enqueued.stdout);
    const queued = async () => sample(await (await fetch(`${base}/metrics`)).text(), 'svc_jobs_queued', { queue: 'default' });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await queued(), 1, 'no worker in the web process');

    const worker = start(['jobs', 'worker']);
    await until('the worker takes the job', async () => ((await queued()) === 0 ? true : undefined));
    const shown = run(['jobs', 'show', jobId]);
    const job = JSON.parse(shown.stdout);
    assert.equal(job.status, 'finished');
    assert.match(job.result.worker, new RegExp(`:${worker.pid}$`), 'run by the worker process');

    web.kill('SIGTERM');
    worker.kill('SIGTERM');
    assert.equal(await exited(web), 0, logs.get(web));
    assert.equal(await exited(worker), 0, logs.get(worker));
    assert.match(logs.get(web)!, /"msg":"stopped"/);
  });
});
