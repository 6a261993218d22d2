// Read replicas (svc.database_read_urls): side-effect-free actions and pages are served by a replica,
// writes by the primary; a caller who wrote reads their write (the replica must have replayed the
// write's WAL position within svc.database_replica_wait, else the primary answers); a replica that
// is down is skipped, and one that goes away mid-run costs no request; lag and health in /readyz
// and /metrics. A streaming replica is too heavy here: the "replica" is a second connection to the
// test database (read-only), reached directly or through a TCP relay the test can cut.
// `npm run bench -- cluster` runs the same code against a real pg_basebackup replica.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/load.ts';
import { PostgresDatabase } from '../src/db/database.ts';
import { buildApp } from '../src/http/app.ts';
import { closeServices, createServices, openCatalogDatabase } from '../src/services.ts';
import type { Services } from '../src/context.ts';
import { insertUser } from '../src/model/users.ts';
import { issueToken } from '../src/actions/api-token.ts';
import { formatLsn, parseLsn } from '../src/db/replicas.ts';
import { freshPostgresDatabase, onPostgres, startApp } from './helpers/app.ts';
import { sample } from './helpers/metrics.ts';

/** A TCP relay to the test database that the test can cut (a replica that goes away). */
function relay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  return {
    listen: () =>
      new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))),
    cut: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

test('the embedded database ignores svc.database_read_urls', async () => {
  if (onPostgres) return;
  const t = await startApp({ plugins: [], config: { 'svc.database_read_urls': ['postgresql://nobody@127.0.0.1:1/none'] } });
  try {
    assert.equal(t.services.reads, undefined);
    assert.deepEqual(await t.ok('package_list'), []);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.deepEqual(ready.json().checks, { database: 'ok', migrations: 'ok' });
  } finally {
    await t.close();
  }
});

test('a WAL position reads and prints as PostgreSQL writes it', () => {
  const lsn = parseLsn('16/B374D848');
  assert.equal(lsn, (0x16n << 32n) | 0xb374d848n);
  assert.equal(formatLsn(lsn!), '16/B374D848');
  assert.equal(parseLsn('16/B374D848; DROP'), null);
  assert.equal(parseLsn(undefined), null);
});

describe('read replicas on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only: the embedded database has no replicas' }, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let services: Services;
  let app: FastifyInstance;
  let storage: string;
  let token: string;
  let cutReplica: () => Promise<void>;
  const WAIT_MS = 400;

  const metrics = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const reads = async (target: string) => sample(await metrics(), 'svc_db_reads_total', { target }) ?? 0;
  const afterWrite = async (outcome: string) => sample(await metrics(), 'svc_db_reads_after_write_total', { outcome }) ?? 0;
  const api = (method: 'GET' | 'POST', action: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method,
      url: `/api/3/action/${action}`,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });

  before(async () => {
    fresh = await freshPostgresDatabase();
    const u = new URL(fresh.url);
    const r = relay({ host: u.hostname, port: Number(u.port || 5432) });
    const port = await r.listen();
    cutReplica = r.cut;
    const viaRelay = new URL(fresh.url);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(port);
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-replicas-'));
    const config = loadConfig({
      env: {},
      cwd: storage,
      overrides: {
        'svc.storage_path': storage,
        'svc.site_url': 'http://test.local',
        'svc.database_url': fresh.url,
        // replica1: the test database directly; replica2: nothing listens there; replica3: through the relay
        'svc.database_read_urls': [fresh.url, 'postgresql://postgres@127.0.0.1:1/postgres', viaRelay.toString()],
        'svc.database_replica_wait': WAIT_MS,
        'svc.plugins': [],
        'svc.jobs.in_process_worker': false,
        'svc.log_level': 'silent',
      },
    });
    services = await createServices(config, {
      db: PostgresDatabase.open(fresh.url, { max: 4 }),
      logger: pino({ level: 'silent' }),
      worker: false,
    });
    app = await buildApp(services);
    await app.ready();
    const admin = await insertUser(services.db, {
      name: 'replica_admin',
      email: 'ra@example.org',
      sysadmin: true,
      password_hash: '',
    } as any);
    token = (await issueToken({ db: services.db, config: services.config } as any, admin, 'replicas')).token;
  });
  after(async () => {
    await app?.close();
    if (services) await closeServices(services);
    await fresh?.drop();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  test('reads are served by the replicas that answer, writes by the primary; a dead replica is skipped', async () => {
    const before1 = await reads('replica1');
    const before3 = await reads('replica3');
    for (let i = 0; i < 6; i++) {
      const res = await api('GET', 'package_list');
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().result, []);
    }
    // in turn over the two that answer, never the one on port 1
    assert.equal((await reads('replica1')) - before1, 3);
    assert.equal((await reads('replica3')) - before3, 3);
    assert.equal(await reads('replica2'), 0);
    const text = await metrics();
    assert.equal(sample(text, 'svc_db_replica_up', { replica: 'replica1' }), 1);
    assert.equal(sample(text, 'svc_db_replica_up', { replica: 'replica2' }), 0);
    assert.equal(sample(text, 'svc_db_replica_lag_seconds', { replica: 'replica1' }), 0);
    assert.equal(sample(text, 'svc_db_replica_lag_seconds', { replica: 'replica2' }), undefined);

    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, 'a replica that is down does not make the node unready');
    const checks = ready.json().checks;
    assert.match(checks.replicas.replica1, /^ok \(/);
    assert.match(checks.replicas.replica2, /^skipped \(127\.0\.0\.1:1\/postgres\): down: /);
    assert.doesNotMatch(JSON.stringify(ready.json()), /postgres@/, 'no URL with its user in the answer');

    // a write goes to the primary (the replicas refuse writes) and says where its commit is in the WAL
    const created = await api('POST', 'organization_create', { name: 'org-on-primary' }, { authorization: token });
    assert.equal(created.statusCode, 200, created.body);
    assert.ok(parseLsn(created.headers['x-svc-read-after']), 'the write answer carries its WAL position');
    // a page is a read too
    const page = await app.inject({ method: 'GET', url: '/organization/org-on-primary' });
    assert.equal(page.statusCode, 200);
    assert.ok((await reads('replica1')) + (await reads('replica3')) > before1 + before3 + 6);
  });

  test('catalog connections run without JIT, on the primary and on the replicas', async () => {
    // JIT compiling cost a search counting ~10,000 matches ~20 ms more than it saved
    const primary = await openCatalogDatabase(services.config);
    try {
      assert.equal((await primary.query<{ jit: string }>('SHOW jit')).rows[0].jit, 'off');
    } finally {
      await primary.close();
    }
    const onReplicas = new Set<string>();
    for (let i = 0; i < 4; i++)
      onReplicas.add(await services.reads!.read({}, async (db) => (await db.query<{ jit: string }>('SHOW jit')).rows[0].jit));
    assert.deepEqual([...onReplicas], ['off']);
  });

  test('a caller reads their own write at once: a replica that has replayed it, or the primary when none does in time', async () => {
    const created = await api('POST', 'group_create', { name: 'fresh-group' }, { authorization: token });
    assert.equal(created.statusCode, 200, created.body);
    const wrote = created.headers['x-svc-read-after'] as string;

    // the same credential: remembered by the process; a replica that has the write answers
    const seenBefore = (await afterWrite('replica')) + (await afterWrite('waited'));
    const primaryBefore = await reads('primary');
    const shown = await api('GET', 'group_show?id=fresh-group', undefined, { authorization: token });
    assert.equal(shown.statusCode, 200);
    assert.equal(shown.json().result.name, 'fresh-group');
    assert.equal((await afterWrite('replica')) + (await afterWrite('waited')), seenBefore + 1);
    assert.equal(await reads('primary'), primaryBefore);

    // a position no replica has replayed: the read waits WAIT_MS, then the primary answers
    const ahead = formatLsn(parseLsn(wrote)! + (1n << 40n));
    const primaryAnswers = await afterWrite('primary');
    const started = Date.now();
    const anonymous = await api('GET', 'group_show?id=fresh-group', undefined, { 'x-svc-read-after': ahead });
    const waited = Date.now() - started;
    assert.equal(anonymous.statusCode, 200);
    assert.ok(waited >= WAIT_MS - 20 && waited < WAIT_MS + 2000, `waited ${waited} ms`);
    assert.equal(await afterWrite('primary'), primaryAnswers + 1);
    assert.equal(await reads('primary'), primaryBefore + 1);

    // the browser's cookie counts the same way
    const viaCookie = await app.inject({
      method: 'GET',
      url: '/group/fresh-group',
      headers: { cookie: `svc_read_after=${encodeURIComponent(ahead)}` },
    });
    assert.equal(viaCookie.statusCode, 200);
    assert.equal(await afterWrite('primary'), primaryAnswers + 2);

    // nonsense in the header is ignored, not an error
    const bad = await api('GET', 'group_show?id=fresh-group', undefined, { 'x-svc-read-after': "1/1'; select" });
    assert.equal(bad.statusCode, 200);

    // a browser that writes gets the position as a cookie
    const reader = await api('GET', 'group_list');
    assert.equal(reader.headers['set-cookie'], undefined, 'a read sets no cookie');
  });

  test('a replica that goes away mid-run costs no request: its reads go to the primary, and it is reported down', async () => {
    await cutReplica();
    for (let i = 0; i < 6; i++) {
      const res = await api('GET', 'organization_list');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().result, ['org-on-primary']);
    }
    const status = services.reads!.status();
    assert.equal(status.find((r) => r.name === 'replica3')!.up, false);
    assert.equal(status.find((r) => r.name === 'replica1')!.serving, true);
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.match(ready.json().checks.replicas.replica3, /^skipped .*down: /);

    // status_show tells a sysadmin each replica's lag and health; others see no topology
    const shown = (await api('GET', 'status_show', undefined, { authorization: token })).json().result;
    const byName = Object.fromEntries(shown.read_replicas.map((r: { name: string }) => [r.name, r]));
    assert.equal(byName.replica1.serving, true);
    assert.equal(byName.replica1.lag_seconds, 0);
    assert.equal(byName.replica3.serving, false);
    assert.equal(byName.replica3.lag_seconds, null);
    assert.match(byName.replica3.problem, /down: /);
    assert.doesNotMatch(JSON.stringify(shown), /postgres@/, 'no URL with its user in the answer');
    assert.equal((await api('GET', 'status_show')).json().result.read_replicas, undefined);
  });
});
