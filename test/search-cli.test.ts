// `svc search-index rebuild [--only-missing]` as a user runs it (a child process).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { freshPostgresDatabase, onPostgres } from './helpers/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { closeServices, createServices } from '../src/services.ts';
import { callAction } from '../src/actions/registry.ts';
import { SYSADMIN_INTERNAL } from '../src/auth/identity.ts';

const bin = path.resolve('bin/svc.js');
let storage: string;
let env: Record<string, string>;
let dropDb: (() => Promise<void>) | undefined;

before(async () => {
  storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-search-cli-'));
  env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    SVC__STORAGE_PATH: storage,
    SVC__PLUGINS: '',
    SVC__LOG_LEVEL: 'warn',
  };
  if (onPostgres) {
    const db = await freshPostgresDatabase();
    env.SVC__DATABASE_URL = db.url;
    dropDb = db.drop;
  }
});
after(async () => {
  await dropDb?.();
  fs.rmSync(storage, { recursive: true, force: true });
});

/** Opens the same catalog the CLI uses, runs fn, closes it (PGlite allows one process at a time). */
async function withCatalog<T>(fn: (s: Awaited<ReturnType<typeof createServices>>) => Promise<T>): Promise<T> {
  const config = loadConfig({ env, cwd: storage });
  const s = await createServices(config, { logger: pino({ level: 'silent' }) });
  try {
    return await fn(s);
  } finally {
    await closeServices(s);
    // this process has closed the data dir: let the CLI child take it
    fs.rmSync(path.join(storage, 'catalog', 'svc.lock'), { force: true });
  }
}

test('search-index rebuild restores missing rows, with a progress bar and a throughput line', async () => {
  await withCatalog(async (s) => {
    const call = (a: string, d: Record<string, unknown>) => callAction(s, a, d, { identity: SYSADMIN_INTERNAL });
    await call('organization_create', { name: 'org1' });
    for (let i = 0; i < 7; i++) await call('package_create', { name: `ds-${i}`, owner_org: 'org1', tags: [{ name: 'cli' }] });
    await s.db.query("DELETE FROM package_search_index WHERE name IN ('ds-1', 'ds-4')");
  });
  let r = spawnSync(process.execPath, [bin, 'search-index', 'rebuild', '--only-missing'], {
    env,
    cwd: storage,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /indexed 2 datasets in [\d.]+ s \(\d+ datasets\/s\)/);
  r = spawnSync(process.execPath, [bin, 'search-index', 'rebuild', '--batch-size', '3'], {
    env,
    cwd: storage,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /indexed 7 datasets/);
  await withCatalog(async (s) => {
    const res = (await callAction(s, 'package_search', { q: 'tags:cli' }, { identity: SYSADMIN_INTERNAL })) as { count: number };
    assert.equal(res.count, 7);
  });
});
