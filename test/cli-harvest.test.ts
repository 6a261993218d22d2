// `svc harvest list|run|jobs` on the test app: a second svc app on a real port is the remote CKAN
// catalog, a server answering 500 the source that is down.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { runCliIn } from './helpers/cli.ts';
import { asSysadmin } from './helpers/fixtures.ts';
import { createHarvestFetch, harvestFetchOptions } from '../src/harvest/fetch.ts';
import type { HarvestService } from '../src/plugins/harvest/index.ts';

let remote: TestApp;
let t: TestApp;
let down: http.Server;

before(async () => {
  remote = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false } });
  await remote.app.listen({ port: 0, host: '127.0.0.1' });
  await remote.ok('organization_create', { name: 'remote-org' }, asSysadmin(remote));
  for (const name of ['rivers', 'lakes']) await remote.ok('package_create', { name, owner_org: 'remote-org' }, asSysadmin(remote));
  down = http.createServer((_req, res) => res.writeHead(500).end('down'));
  await new Promise<void>((r) => down.listen(0, '127.0.0.1', r));

  t = await startApp({
    plugins: ['harvest'],
    config: { 'svc.jobs.in_process_worker': false, 'svc.harvest.allow_private_urls': true, 'svc.harvest.scheduler': false },
  });
  // Retries without the real pauses.
  const opts = { ...harvestFetchOptions(t.services.config), retryDelayMs: 5 };
  (t.services.plugins.harvest as HarvestService).deps.fetch = () => createHarvestFetch(opts);
  await t.ok('organization_create', { name: 'local-org' }, asSysadmin(t));
  const port = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
  for (const [name, url] of [
    ['remote-ckan', `http://127.0.0.1:${port(remote.app.server)}`],
    ['down', `http://127.0.0.1:${port(down)}`],
  ])
    await t.ok('harvest_source_create', { name, url, source_type: 'ckan', owner_org: 'local-org' }, asSysadmin(t));
});

after(async () => {
  await t?.close();
  await remote?.close();
  down?.close();
});

test('svc harvest run --sync harvests here and reports the counts; list and jobs show the last job', async () => {
  const before = await runCliIn(t, ['harvest', 'list']);
  assert.equal(before.code, 0, before.err);
  assert.match(before.out, /^remote-ckan\tckan\tMANUAL\tactive\tnever run\thttp:\/\/127\.0\.0\.1:\d+$/m);

  const run = await runCliIn(t, ['harvest', 'run', 'remote-ckan', '--sync']);
  assert.equal(run.code, 0, run.err + run.out);
  assert.match(
    run.out,
    /harvest job \S+ of remote-ckan: Finished in [\d.]+ s \(added 2, updated 0, deleted 0, not modified 0, errored 0\)/,
  );
  assert.equal((await t.ok('package_search', { q: '*:*' })).count, 2);

  const list = await runCliIn(t, ['harvest', 'list']);
  assert.match(list.out, /^remote-ckan\tckan\tMANUAL\tactive\tFinished \S+ \(added 2, /m);
  const jobs = await runCliIn(t, ['harvest', 'jobs', 'remote-ckan']);
  assert.equal(jobs.code, 0, jobs.err);
  assert.match(jobs.out, /^\S+\tFinished\t\S+\t\S+\tadded 2, /m);
  assert.equal((await runCliIn(t, ['harvest', 'jobs', 'remote-ckan', '--limit', 'x'])).code, 1);
});

test('without --sync a job is queued, once per source; a source that is down fails the run with exit status 1', async () => {
  const queued = await runCliIn(t, ['harvest', 'run', 'remote-ckan']);
  assert.equal(queued.code, 0, queued.err);
  assert.match(queued.out, /^queued harvest job \S+ of remote-ckan$/m);
  const twice = await runCliIn(t, ['harvest', 'run', 'remote-ckan']);
  assert.equal(twice.code, 1);
  assert.match(twice.err, /already/);
  // (the queued job stays for the workers: abort it so that nothing runs it later)
  await t.ok('harvest_job_abort', { source_id: 'remote-ckan' }, asSysadmin(t));

  const failed = await runCliIn(t, ['harvest', 'run', 'down', '--sync']);
  assert.equal(failed.code, 1, failed.out);
  assert.match(failed.out, /^error: .*500/m);

  const missing = await runCliIn(t, ['harvest', 'run', 'no-such-source']);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /^svc: Not found/m);
});
