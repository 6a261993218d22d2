// A first start on an empty data dir copies the prepared embedded databases (src/db/embedded-
// template.ts, made by npm's prepare) instead of running initdb and every migration: the catalog
// comes with its migrations applied, and works; each embedded database keeps a small buffer cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { prepareEmbeddedTemplates } from '../src/db/embedded-template.ts';
import { buildApp } from '../src/http/app.ts';
import { closeServices, createServices } from '../src/services.ts';
import { onPostgres } from './helpers/app.ts';

test('a new embedded catalog is copied with its migrations applied, answers, and keeps 16 MB of buffers', {
  skip: onPostgres && 'embedded only (the PGlite pass runs it)',
}, async () => {
  await prepareEmbeddedTemplates();
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-template-'));
  const startedAt = new Date();
  const config = loadConfig({ env: {}, cwd: storage, overrides: { 'svc.storage_path': storage, 'svc.plugins': [] } });
  const services = await createServices(config, { logger: pino({ level: 'silent' }), worker: false });
  try {
    const app = await buildApp(services);
    const res = await app.inject({ method: 'GET', url: '/api/3/action/package_list' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().result, []);
    const migrations = await services.db.query<{ name: string; applied_at: string }>(
      "SELECT name, applied_at FROM svc_migrations WHERE scope = 'core'",
    );
    const files = fs.readdirSync(path.join('src', 'db', 'migrations')).filter((f) => f.endsWith('.sql'));
    assert.deepEqual(migrations.rows.map((r) => r.name).sort(), files.sort());
    for (const r of migrations.rows)
      assert.ok(new Date(`${r.applied_at}Z`) < startedAt, `${r.name} was applied before this start (in the template)`);
    const buffers = await services.db.query<{ shared_buffers: string }>('SHOW shared_buffers');
    assert.equal(buffers.rows[0].shared_buffers, '16MB');
    await app.close();
  } finally {
    await closeServices(services);
    fs.rmSync(storage, { recursive: true, force: true });
  }
});
