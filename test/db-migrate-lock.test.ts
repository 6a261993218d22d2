// Two svc processes starting at once on one new PostgreSQL database (two servers behind a load
// balancer, a server and a CLI command) both come up: the migrations run under a lock, once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { PostgresDatabase } from '../src/db/database.ts';
import { buildApp } from '../src/http/app.ts';
import { closeServices, createServices } from '../src/services.ts';
import { freshPostgresDatabase, onPostgres } from './helpers/app.ts';

test('two apps starting at once on one new database both answer, each migration applied once', {
  skip: !onPostgres && 'PostgreSQL only: an embedded data dir has one process at a time',
}, async () => {
  const fresh = await freshPostgresDatabase();
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-migrate-'));
  const start = async () => {
    const config = loadConfig({
      env: {},
      cwd: storage,
      overrides: { 'svc.storage_path': storage, 'svc.database_url': fresh.url, 'svc.plugins': [], 'svc.log_level': 'silent' },
    });
    const services = await createServices(config, {
      db: PostgresDatabase.open(fresh.url, { max: 3 }),
      logger: pino({ level: 'silent' }),
      worker: false,
    });
    return { services, app: await buildApp(services) };
  };
  const started = await Promise.allSettled([start(), start(), start()]);
  try {
    for (const s of started) assert.equal(s.status, 'fulfilled', s.status === 'rejected' ? String(s.reason) : '');
    for (const s of started) {
      if (s.status !== 'fulfilled') continue;
      const res = await s.value.app.inject({ method: 'GET', url: '/api/3/action/package_list' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().result, []);
    }
    const first = started.find((s) => s.status === 'fulfilled')!.value;
    const counts = await first.services.db.query<{ n: number; distinct_names: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT name)::int AS distinct_names FROM svc_migrations WHERE scope = 'core'",
    );
    assert.equal(counts.rows[0].n, counts.rows[0].distinct_names);
    assert.ok(counts.rows[0].n > 0);
  } finally {
    for (const s of started) {
      if (s.status !== 'fulfilled') continue;
      await s.value.app.close();
      await closeServices(s.value.services);
    }
    await fresh.drop();
    fs.rmSync(storage, { recursive: true, force: true });
  }
});
