// The loader's temporary files after a process stopped mid-load (kill -9): the spooled rows and the
// download of a load whose process is gone are removed when svc starts and when a load runs again;
// the files of loads still running (here or in another live process) are left alone.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { waitForLoad } from './helpers/fixtures.ts';

let t: TestApp;
let server: http.Server;
let base: string;
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-loader-tmp-'));
const tmp = path.join(storage, 'tmp');
/** A pid no process has any more: a child that has exited. */
const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
const name = (pid: number, suffix: string) => `loader-${randomUUID()}-${pid}-1700000000000.${suffix}`;
const leftByKilled = [name(deadPid, 'spool'), name(deadPid, 'download')];
const ofLiveProcess = name(process.ppid, 'spool');
const unrelated = 'notes.txt';

const waitLoad = (resourceId: string) => waitForLoad(t, resourceId);

before(async () => {
  fs.mkdirSync(tmp, { recursive: true });
  for (const f of [...leftByKilled, ofLiveProcess, unrelated]) fs.writeFileSync(path.join(tmp, f), 'x'.repeat(64 * 1024));
  t = await startApp({
    plugins: ['datastore', 'loader'],
    config: { 'svc.storage_path': storage, 'svc.jobs.poll_interval': 50, 'svc.loader.allow_private_urls': true },
  });
  server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.end('city;n\nBonn;1\nKöln;2\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await t?.close();
  server?.close();
  fs.rmSync(storage, { recursive: true, force: true });
});

describe('loader temporary files', () => {
  test('at start the spool and download of a killed load are removed; files of live processes and other files stay', () => {
    const left = fs.readdirSync(tmp);
    for (const f of leftByKilled) assert.ok(!left.includes(f), `${f} is still there`);
    assert.ok(left.includes(ofLiveProcess));
    assert.ok(left.includes(unrelated));
  });

  test('a load removes the files no running load owns (a killed process whose pid this one reuses) and leaves none of its own', async () => {
    const reused = name(process.pid, 'spool');
    fs.writeFileSync(path.join(tmp, reused), 'x'.repeat(64 * 1024));
    await t.ok('organization_create', { name: 'tmp-org' }, { token: t.sysadminToken });
    const pkg = await t.ok('package_create', { name: 'tmp-ds', owner_org: 'tmp-org' }, { token: t.sysadminToken });
    const res = await t.ok('resource_create', { package_id: pkg.id, url: `${base}/cities.csv`, format: 'CSV' }, { token: t.sysadminToken });
    const st = await waitLoad(res.id);
    assert.equal(st.status, 'complete', JSON.stringify(st));
    const left = fs.readdirSync(tmp);
    assert.deepEqual(left.filter((f) => f.startsWith('loader-')).sort(), [ofLiveProcess]);
    assert.ok(left.includes(unrelated));
  });
});
