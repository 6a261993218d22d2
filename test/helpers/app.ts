// Starts the real app in-process for HTTP-level tests, on PGlite (from a prepared template data
// dir, so a database costs well under a second) or on PostgreSQL when SVC_TEST_DATABASE_URL is set
// and SVC_TEST_DB=postgres (a throw-away database per app).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { PGlite } from '@electric-sql/pglite';
import { loadConfig } from '../../src/config/load.ts';
import { PGliteDatabase, PostgresDatabase, type Database } from '../../src/db/database.ts';
import { PGliteWorkerDatabase } from '../../src/db/pglite-worker.ts';
import { createServices, closeServices } from '../../src/services.ts';
import { buildApp } from '../../src/http/app.ts';
import type { Services } from '../../src/actions/context.ts';
import { insertUser } from '../../src/model/users.ts';
import { hashPassword } from '../../src/auth/passwords.ts';

export const onPostgres = process.env.SVC_TEST_DB === 'postgres' && !!process.env.SVC_TEST_DATABASE_URL;
export const dbLabel = onPostgres ? 'postgres' : 'pglite';

const templatePath = process.env.SVC_TEST_TEMPLATE ?? path.join(process.cwd(), '.cache', 'pglite-template.tar.gz');

/** A fresh, empty PGlite: loaded from the template data dir (made once by scripts/test.mjs). */
export async function freshPGlite(): Promise<PGliteDatabase> {
  if (!fs.existsSync(templatePath)) await makePGliteTemplate(templatePath);
  const blob = new Blob([fs.readFileSync(templatePath)]);
  return PGliteDatabase.open({ loadDataDir: blob });
}

export async function makePGliteTemplate(file: string): Promise<void> {
  const db = await PGlite.create();
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  fs.renameSync(tmp, file);
}

function urlWithDatabase(url: string, dbName: string, user?: string): string {
  const u = new URL(url);
  u.pathname = '/' + dbName;
  if (user) {
    u.username = user;
    u.password = '';
  }
  return u.toString();
}

export const READ_ROLE = 'svc_test_reader';

/** Creates a throw-away PostgreSQL database; returns its URL and a function that drops it. */
export async function freshPostgresDatabase(suffix = ''): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const admin = process.env.SVC_TEST_DATABASE_URL!;
  const name = `svct_${process.pid}_${randomBytes(4).toString('hex')}${suffix}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return {
    url: urlWithDatabase(admin, name),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** The read-only login role used as svc.datastore.read_url in PostgreSQL tests. */
export async function ensureReadRole(): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.SVC_TEST_DATABASE_URL! });
  await client.connect();
  await client
    .query(`DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${READ_ROLE}') THEN CREATE ROLE ${READ_ROLE} LOGIN; END IF;
  END $$`)
    .catch((e) => {
      if (!/already exists/.test(String(e))) throw e;
    });
  await client.end();
}

/** Runs fn holding a lock shared by every test process (an advisory lock in the admin database). */
async function withSetupLock<T>(fn: () => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: process.env.SVC_TEST_DATABASE_URL! });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock(715517)');
    return await fn();
  } finally {
    await admin.end();
  }
}

export interface CallOptions {
  token?: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  body: { help: string; success: boolean; result?: T; error?: Record<string, any> };
}

export interface TestApp {
  services: Services;
  app: FastifyInstance;
  storagePath: string;
  /** Calls an action over HTTP (POST JSON, or GET with query parameters). */
  call<T = any>(action: string, data?: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse<T>>;
  /** Calls an action and returns its result; fails the test with the error when success is false. */
  ok<T = any>(action: string, data?: Record<string, unknown>, opts?: CallOptions): Promise<T>;
  /** A sysadmin's API token. */
  sysadminToken: string;
  /** Creates a user and returns it with an API token. */
  user(name: string, opts?: { sysadmin?: boolean; email?: string }): Promise<{ id: string; name: string; token: string }>;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Record<string, unknown>;
  /** Plugins to enable (default: the configured default, i.e. datastore). */
  plugins?: string[];
  /** The app's logger (default: silent, or the level in SVC_TEST_LOG). */
  logger?: pino.Logger;
  /**
   * PGlite pass: the catalog and data store as the server opens them (data dirs under the storage
   * path, each in its worker thread) instead of the in-memory catalog loaded from the test template.
   */
  embeddedDataDirs?: boolean;
}

export async function startApp(opts: StartOptions = {}): Promise<TestApp> {
  const storagePath = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const cleanups: (() => Promise<void>)[] = [];
  const overrides: Record<string, unknown> = {
    'svc.storage_path': storagePath,
    'svc.site_url': 'http://test.local',
    'svc.log_level': 'silent',
    // Tests run without a network: maps draw their points with no tiles.
    'svc.views.map.tile_url': '',
    ...(opts.plugins ? { 'svc.plugins': opts.plugins } : {}),
    ...opts.config,
  };
  let db: Database | undefined;
  if (onPostgres) {
    const catalog = await freshPostgresDatabase();
    const datastore = await freshPostgresDatabase('_ds');
    cleanups.push(catalog.drop, datastore.drop);
    overrides['svc.database_url'] = catalog.url;
    overrides['svc.datastore.write_url'] ??= datastore.url;
    overrides['svc.datastore.read_url'] ??= urlWithDatabase(datastore.url, datastore.name, READ_ROLE);
    // --- datastore: give the read-only role its permissions (what `svc datastore set-permissions` prints), as superuser.
    {
      const { setPermissionsSql } = await import('../../src/plugins/datastore/permissions.ts');
      // Test files run in parallel and share the reader role: one grant at a time ("tuple concurrently updated").
      await withSetupLock(async () => {
        await ensureReadRole();
        const su = new pg.Client({ connectionString: datastore.url });
        await su.connect();
        try {
          await su.query(setPermissionsSql(String(overrides['svc.datastore.write_url']), String(overrides['svc.datastore.read_url'])));
        } finally {
          await su.end();
        }
      });
    }
    // --- end datastore
    db = PostgresDatabase.open(catalog.url, { max: 5 });
  } else if (!opts.embeddedDataDirs) {
    db = await freshPGlite();
  }
  const config = loadConfig({ env: {}, overrides, cwd: storagePath });
  const services = await createServices(config, {
    db,
    logger: opts.logger ?? pino({ level: process.env.SVC_TEST_LOG ?? 'silent' }),
    openEmbedded: () => freshPGlite(),
    ...(opts.embeddedDataDirs
      ? {}
      : {
          openEmbeddedWorker: (name: string) =>
            PGliteWorkerDatabase.open({ dataDir: path.join(storagePath, name), template: templatePath }),
        }),
  });
  const app = await buildApp(services);
  await app.ready();

  async function call(action: string, data: Record<string, unknown> = {}, o: CallOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = o.token;
    let res;
    if (o.method === 'GET') {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(data)) {
        if (Array.isArray(v)) v.forEach((x) => qs.append(k, String(x)));
        else qs.append(k, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
      }
      res = await app.inject({ method: 'GET', url: `/api/3/action/${action}${qs.size ? '?' + qs : ''}`, headers });
    } else {
      res = await app.inject({
        method: 'POST',
        url: `/api/3/action/${action}`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify(data),
      });
    }
    return { status: res.statusCode, body: res.json() };
  }

  async function ok(action: string, data?: Record<string, unknown>, o?: CallOptions) {
    const r = await call(action, data, o);
    if (!r.body.success) throw new Error(`${action} failed (${r.status}): ${JSON.stringify(r.body.error)}`);
    return r.body.result;
  }

  let counter = 0;
  async function user(name: string, uo: { sysadmin?: boolean; email?: string } = {}) {
    const row = await insertUser(services.db, {
      name,
      email: uo.email ?? `${name}@example.org`,
      sysadmin: uo.sysadmin ?? false,
      password_hash: await hashPassword('correct horse battery'),
    });
    const { issueToken } = await import('../../src/actions/api-token.ts');
    const ctx: any = { db: services.db, config: services.config };
    const { token } = await issueToken(ctx, row, `test-${++counter}`);
    return { id: row.id, name: row.name, token };
  }

  const admin = await user('test_sysadmin', { sysadmin: true });

  return {
    services,
    app,
    storagePath,
    call,
    ok,
    user,
    sysadminToken: admin.token,
    async close() {
      await app.close();
      await closeServices(services);
      for (const c of cleanups) await c().catch(() => undefined);
      fs.rmSync(storagePath, { recursive: true, force: true });
    },
  };
}
