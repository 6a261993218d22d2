// Several svc processes on one PostgreSQL catalog: what one process keeps in memory stays correct
// when another changes it. Two apps in this test process stand for two nodes behind a load
// balancer; each follows the catalog's change notifications on a connection of its own.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/load.ts';
import { PostgresDatabase } from '../src/db/database.ts';
import { LISTENER_NAME } from '../src/db/notifications.ts';
import { buildApp } from '../src/http/app.ts';
import { closeServices, createServices } from '../src/services.ts';
import type { Services } from '../src/context.ts';
import { insertUser } from '../src/model/users.ts';
import { issueToken } from '../src/actions/api-token.ts';
import { freshPostgresDatabase, onPostgres } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

interface Node {
  services: Services;
  app: FastifyInstance;
}

/** Polls until check passes or ms have gone by; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

describe('two nodes on one PostgreSQL database', {
  skip: !onPostgres && 'PostgreSQL only: an embedded data dir has one process at a time',
}, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let storage: string;
  let a: Node;
  let b: Node;
  let token: string;

  const start = async (): Promise<Node> => {
    const config = loadConfig({
      env: {},
      cwd: storage,
      overrides: {
        'svc.storage_path': storage,
        'svc.site_url': 'http://test.local',
        'svc.database_url': fresh.url,
        'svc.plugins': [],
        'svc.jobs.in_process_worker': false,
        'svc.log_level': 'silent',
      },
    });
    const services = await createServices(config, {
      db: PostgresDatabase.open(fresh.url, { max: 3 }),
      logger: pino({ level: 'silent' }),
      worker: false,
    });
    const app = await buildApp(services);
    await app.ready();
    return { services, app };
  };
  const api = (node: Node, action: string, body?: Record<string, unknown>) =>
    node.app.inject({
      method: body ? 'POST' : 'GET',
      url: `/api/3/action/${action}`,
      headers: { authorization: token, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
  const title = async (node: Node) => (await api(node, 'status_show')).json().result.site_title as string;

  before(async () => {
    fresh = await freshPostgresDatabase();
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-'));
    a = await start();
    b = await start();
    const admin = await insertUser(a.services.db, {
      name: 'cluster_admin',
      email: 'ca@example.org',
      sysadmin: true,
      password_hash: '',
    } as any);
    token = (await issueToken({ db: a.services.db, config: a.services.config } as any, admin, 'cluster')).token;
  });
  after(async () => {
    for (const n of [a, b]) {
      if (!n) continue;
      await n.app.close();
      await closeServices(n.services);
    }
    await fresh?.drop();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  test('config_option_update on one node is in effect on the other at once (its pages and its API)', async () => {
    const updated = await api(a, 'config_option_update', { 'svc.site_title': 'Changed on A' });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(await title(a), 'Changed on A');
    const took = await within(2000, async () => (await title(b)) === 'Changed on A');
    assert.ok(took < 2000);
    const home = await b.app.inject({ method: 'GET', url: '/' });
    assert.match(home.body, /Changed on A/);
    // and back the other way
    await api(b, 'config_option_update', { 'svc.site_title': 'Changed on B' });
    await within(2000, async () => (await title(a)) === 'Changed on B');
  });

  test('failed sign-ins count on every node: 10 wrong passwords spread over two nodes lock the account on both', async () => {
    const signIn = async (node: Node, password: string) => {
      const web = new WebClient(node.app);
      return web.post('/user/login', { login: 'cluster_admin', password }, { from: '/user/login' });
    };
    for (let i = 0; i < 10; i++) assert.equal((await signIn(i % 2 ? a : b, `wrong ${i}`)).statusCode, 401, `attempt ${i + 1}`);
    for (const node of [a, b]) {
      const blocked = await signIn(node, 'wrong again');
      assert.equal(blocked.statusCode, 429);
      assert.match(blocked.body, /Too many failed sign-in attempts/);
    }
  });

  test('a node that lost its listening connection reloads everything when it is back (changes made meanwhile are not lost)', async () => {
    const admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
    try {
      // cut B's connection (A's too: both carry the same name; B's is the one that matters)
      const killed = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
        [LISTENER_NAME],
      );
      assert.ok(killed.rowCount! >= 2);
      await within(2000, async () => !b.services.changes!.listening);
      // while B listens to nothing, A changes an option: the notification reaches nobody
      const updated = await api(a, 'config_option_update', { 'svc.site_description': 'made while B was deaf' });
      assert.equal(updated.statusCode, 200, updated.body);
      await within(5000, async () => (await api(b, 'status_show')).json().result.site_description === 'made while B was deaf');
      assert.ok(b.services.changes!.listening);
    } finally {
      await admin.end();
    }
  });
});
