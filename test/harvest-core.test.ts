// Harvesting from a CKAN site: a second svc app listening on a real port is the remote catalog.
// Sources (auth, validation, shapes), runs (added, unchanged, changed, deleted remote datasets,
// a malformed record, local datasets never touched), a source answering 500, overlapping runs,
// abort, a worker killed mid-job, the scheduler, clear.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { as, asSysadmin, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { Worker } from '../src/jobs/worker.ts';
import { claimJob } from '../src/jobs/queue.ts';
import { createHarvestFetch, harvestFetchOptions } from '../src/harvest/fetch.ts';
import { readerFor } from '../src/harvest/readers.ts';
import { runGather } from '../src/harvest/run-gather.ts';
import type { HarvestService } from '../src/plugins/harvest/index.ts';
import type { SourceReader } from '../src/harvest/types.ts';

let remote: TestApp;
let remoteUrl: string;
let t: TestApp;
let admin: TestUser;
let editor: TestUser;
let failing: http.Server;
let failingUrl: string;
/** Serves the DCAT document of the current version at /catalog.ttl. */
let transit: http.Server;
let transitVersion = 'v1';
const remoteIds: Record<string, string> = {};

/** A worker of the default queue, run by the test (the in-process worker is off: the tests decide when jobs run). */
const testWorker = (app = t) =>
  new Worker(app.services.db, app.services.jobs.types, app.services.logger, {
    queues: ['default'],
    pollMs: 50,
    leaseMs: 60_000,
    keepDays: 7,
  });

/** Runs the queued jobs until none is left. */
async function drain(app = t): Promise<void> {
  const w = testWorker(app);
  while (await w.runOnce());
}

const harvest = () => t.services.plugins.harvest as HarvestService;

async function runSource(source: string): Promise<any> {
  const job = await t.ok('harvest_job_create', { source_id: source }, as(admin));
  await drain();
  return t.ok('harvest_job_show', { id: job.id }, as(admin));
}

const sql = async (q: string, params: unknown[] = []) => (await t.services.db.query<any>(q, params)).rows;

before(async () => {
  remote = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false } });
  await remote.app.listen({ port: 0, host: '127.0.0.1' });
  remoteUrl = `http://127.0.0.1:${(remote.app.server.address() as AddressInfo).port}`;
  await remote.ok('organization_create', { name: 'remote-org', title: 'Remote org' }, asSysadmin(remote));
  for (const [name, title] of [
    ['rivers', 'Rivers'],
    ['lakes', 'Lakes'],
    ['wells', 'Wells'],
    ['clash', 'Clashing name'],
  ]) {
    const d = await remote.ok(
      'package_create',
      {
        name,
        title,
        owner_org: 'remote-org',
        tags: [{ name: 'water' }],
        resources: [{ url: `http://example.org/${name}.csv`, format: 'CSV' }],
      },
      asSysadmin(remote),
    );
    remoteIds[name] = d.id;
  }
  t = await startApp({
    plugins: ['activity', 'harvest'],
    config: { 'svc.jobs.in_process_worker': false, 'svc.harvest.allow_private_urls': true, 'svc.harvest.scheduler': false },
  });
  ({
    users: { hv_admin: admin, hv_editor: editor },
  } = await organizationWithTeam(t, { name: 'local-org' }, { hv_admin: 'admin', hv_editor: 'editor' }));
  // A local dataset holding a remote dataset's name: never touched by the harvest.
  await t.ok('package_create', { name: 'clash', title: 'Local clash', owner_org: 'local-org' }, as(admin));
  // Retries without the real pauses; records titled "Wells" arrive malformed (refused by validation).
  const opts = { ...harvestFetchOptions(t.services.config), retryDelayMs: 5 };
  harvest().deps.fetch = () => createHarvestFetch(opts);
  harvest().deps.readerFor = (type) => {
    const real = readerFor(type);
    const reader: SourceReader = {
      listGuids: (s, o) => real.listGuids(s, o),
      async *read(s, o) {
        for await (const r of real.read(s, o))
          yield r.dataset && r.dataset.title === 'Wells' ? { ...r, dataset: { ...r.dataset, name: 'Not A Name!' } } : r;
      },
    };
    return reader;
  };
  failing = http.createServer((_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('down');
  });
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
  failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
  transit = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/turtle' });
    res.end(fs.readFileSync(new URL(`./fixtures/harvest/core-transit-${transitVersion}.ttl`, import.meta.url)));
  });
  await new Promise<void>((r) => transit.listen(0, '127.0.0.1', r));
});

after(async () => {
  await t?.close();
  await remote?.close();
  failing?.close();
  transit?.close();
});

describe('harvest sources', () => {
  test('only sysadmins and organization admins create sources; bad fields are refused by name', async () => {
    const input = { name: 'remote-ckan', url: remoteUrl, source_type: 'ckan', owner_org: 'local-org' };
    assert.equal((await t.call('harvest_source_create', input, as(editor))).status, 403);
    assert.equal((await t.call('harvest_source_create', input)).status, 403);
    for (const [bad, field] of [
      [{ config: '{"default_tags": [' }, 'config'],
      [{ config: { force_all: 'yes' } }, 'config'],
      [{ source_type: 'csw' }, 'source_type'],
      [{ frequency: 'SOMETIMES' }, 'frequency'],
      [{ url: 'ftp://example.org/' }, 'url'],
      [{ config: { user: 'nobody-here' } }, 'config'],
      [{ config: { rows: 5000 } }, 'config'],
    ] as const) {
      const r = await t.call('harvest_source_create', { ...input, ...bad }, as(admin));
      assert.equal(r.status, 409, JSON.stringify(bad));
      assert.ok(r.body.error?.[field], `${field}: ${JSON.stringify(r.body.error)}`);
    }
    t.services.config.set('svc.harvest.allow_private_urls', false);
    try {
      const r = await t.call('harvest_source_create', input, as(admin));
      assert.match(String(r.body.error?.url), /private, loopback/);
    } finally {
      t.services.config.set('svc.harvest.allow_private_urls', true);
    }
    assert.equal((await t.call('harvest_source_list')).body.result.length, 0, 'nothing was created');
  });

  test('a source answers in ckanext-harvest shape, by id, name or url', async () => {
    const created = await t.ok(
      'harvest_source_create',
      {
        name: 'remote-ckan',
        title: 'Remote CKAN',
        url: remoteUrl,
        source_type: 'ckan',
        owner_org: 'local-org',
        config: { default_tags: ['harvested'] },
      },
      as(admin),
    );
    assert.equal(created.type, 'harvest');
    assert.equal(created.frequency, 'MANUAL');
    assert.equal(typeof created.config, 'string');
    assert.deepEqual(JSON.parse(created.config), { default_tags: ['harvested'] });
    assert.equal(created.status.job_count, 0);
    for (const ref of [{ id: created.id }, { id: 'remote-ckan' }, { url: remoteUrl }])
      assert.equal((await t.ok('harvest_source_show', ref)).id, created.id);
    const dup = await t.call(
      'harvest_source_create',
      { name: 'other', url: remoteUrl, source_type: 'ckan', owner_org: 'local-org', config: { default_tags: ['harvested'] } },
      as(admin),
    );
    assert.match(String(dup.body.error?.url), /already is a Harvest Source/, JSON.stringify(dup.body));
  });
});

describe('harvest runs', () => {
  let firstModified: string;
  let activities: number;

  test('the first run adds the remote datasets; a bad record is an error of its object; local datasets are untouched', async () => {
    const job = await runSource('remote-ckan');
    assert.equal(job.status, 'Finished');
    assert.deepEqual(job.stats, { added: 3, updated: 0, deleted: 0, 'not modified': 0, errored: 1 });
    assert.match(job.object_error_summary[0].message, /name/);
    const report = await t.ok('harvest_job_report', { id: job.id }, as(admin));
    const [bad] = Object.values(report.object_errors) as any[];
    assert.equal(bad.guid, remoteIds.wells);
    assert.match(bad.errors[0].message, /^Validation Error: name: /);
    const rivers = await t.ok('package_show', { id: 'rivers' });
    const extras = Object.fromEntries(rivers.extras.map((e: any) => [e.key, e.value]));
    const source = await t.ok('harvest_source_show', { id: 'remote-ckan' });
    assert.equal(extras.harvest_source_id, source.id);
    assert.equal(extras.harvest_source_title, 'Remote CKAN');
    assert.equal(extras.harvest_url, `${remoteUrl}/dataset/rivers`);
    assert.equal(rivers.organization.name, 'local-org');
    assert.ok(rivers.tags.some((x: any) => x.name === 'harvested'));
    const obj = await t.ok('harvest_object_show', { id: extras.harvest_object_id });
    assert.equal(obj.package_id, rivers.id);
    assert.equal(JSON.parse(obj.content).name, 'rivers');
    assert.equal((await t.ok('package_show', { id: 'clash' })).title, 'Local clash');
    const [clashCopy] = await sql(`SELECT name FROM packages WHERE title = 'Clashing name'`);
    assert.match(clashCopy.name, /^clash-[0-9a-f]{8}$/);
    assert.equal(source.status.total_datasets, 3);
    assert.equal(source.status.last_job.id, job.id);
    firstModified = rivers.metadata_modified;
    activities = (await sql('SELECT count(*)::int AS n FROM activities'))[0].n;
  });

  test('a run with no remote change writes nothing', async () => {
    const job = await runSource('remote-ckan');
    assert.equal(job.stats.added + job.stats.updated + job.stats.deleted, 0);
    assert.equal((await t.ok('package_show', { id: 'rivers' })).metadata_modified, firstModified);
    // read everything this time: every record compared by its hash, none written
    await t.ok('harvest_source_patch', { id: 'remote-ckan', config: { default_tags: ['harvested'], force_all: true } }, as(admin));
    const forced = await runSource('remote-ckan');
    assert.equal(forced.stats['not modified'], 3);
    assert.equal(forced.stats.added + forced.stats.updated, 0);
    assert.equal((await t.ok('package_show', { id: 'rivers' })).metadata_modified, firstModified);
    assert.equal((await sql('SELECT count(*)::int AS n FROM activities'))[0].n, activities);
  });

  test('a changed remote dataset is updated, a vanished one deleted', async () => {
    await remote.ok('package_patch', { id: 'rivers', title: 'Rivers and streams' }, asSysadmin(remote));
    await remote.ok('package_delete', { id: 'lakes' }, asSysadmin(remote));
    const job = await runSource('remote-ckan');
    assert.equal(job.stats.updated, 1);
    assert.equal(job.stats.deleted, 1);
    assert.equal(job.stats['not modified'], 1);
    assert.equal((await t.ok('package_show', { id: 'rivers' })).title, 'Rivers and streams');
    assert.equal((await t.call('package_show', { id: 'lakes' })).body.result?.state ?? 'gone', 'gone');
    const rows = await sql(`SELECT count(*)::int AS n FROM packages WHERE title LIKE 'Rivers%'`);
    assert.equal(rows[0].n, 1, 'updated in place, not copied');
  });

  test('a source answering 500 ends its job with the status, after retries', async () => {
    await t.ok('harvest_source_create', { name: 'down', url: failingUrl, source_type: 'ckan', owner_org: 'local-org' }, as(admin));
    const job = await runSource('down');
    assert.equal(job.status, 'Finished');
    assert.equal(job.stats.errored, 1);
    assert.match(job.gather_error_summary[0].message, /500/);
  });

  test('two runs of a source never overlap; abort stops a run', async () => {
    const job = await t.ok('harvest_job_create', { source_id: 'remote-ckan' }, as(admin));
    const again = await t.call('harvest_job_create', { source_id: 'remote-ckan' }, as(admin));
    assert.equal(again.status, 409);
    assert.match(String(again.body.error?.source_id), /already/);
    assert.equal((await t.call('harvest_job_show', { id: job.id }, as(editor))).status, 403);
    const aborted = await t.ok('harvest_job_abort', { id: job.id }, as(admin));
    assert.equal(aborted.status, 'Aborted');
    assert.equal((await sql(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`))[0].n, 0);
    const list = await t.ok('harvest_job_list', { source_id: 'remote-ckan' }, as(admin));
    assert.equal(list[0].id, job.id);
  });

  test('a job whose worker died mid-import is retried and ends without duplicates', async () => {
    await remote.ok('package_patch', { id: 'wells', title: 'Wells and springs' }, asSysadmin(remote));
    await remote.ok('package_create', { name: 'springs', title: 'Springs', owner_org: 'remote-org' }, asSysadmin(remote));
    t.services.config.set('svc.harvest.import_batch', 1);
    // the import jobs do the imports (not the gather as it goes)
    t.services.config.set('svc.harvest.import_while_gathering', false);
    try {
      const job = await t.ok('harvest_job_create', { source_id: 'remote-ckan' }, as(admin));
      const w = testWorker();
      assert.ok(await w.runOnce(), 'the gather ran');
      // A worker takes an import job, commits its object's dataset, and dies (its lease runs out).
      const taken = await claimJob(t.services.db, ['default'], 'dead-worker', 1);
      assert.ok(taken);
      const [objectId] = taken.data.object_ids as string[];
      await t.ok('harvest_objects_import', { harvest_object_id: objectId }, asSysadmin(t));
      await new Promise((r) => setTimeout(r, 20));
      await drain();
      const done = await t.ok('harvest_job_show', { id: job.id }, as(admin));
      assert.equal(done.status, 'Finished');
      assert.equal(done.stats.added, 1);
      const springs = await sql(`SELECT count(*)::int AS n FROM packages WHERE title = 'Springs'`);
      assert.equal(springs[0].n, 1);
    } finally {
      t.services.config.set('svc.harvest.import_batch', 100);
      t.services.config.set('svc.harvest.import_while_gathering', true);
    }
  });

  test('on PostgreSQL the gather imports each batch as it goes; the queued import jobs then find nothing to do', async () => {
    await remote.ok('package_create', { name: 'ponds', title: 'Ponds', owner_org: 'remote-org' }, asSysadmin(remote));
    await remote.ok('package_create', { name: 'weirs', title: 'Weirs', owner_org: 'remote-org' }, asSysadmin(remote));
    t.services.config.set('svc.harvest.import_batch', 1);
    try {
      const job = await t.ok('harvest_job_create', { source_id: 'remote-ckan' }, as(admin));
      const w = testWorker();
      assert.ok(await w.runOnce(), 'the gather ran');
      const imported = await sql(`SELECT count(*)::int AS n FROM packages WHERE title IN ('Ponds', 'Weirs')`);
      const shown = await t.ok('harvest_job_show', { id: job.id }, as(admin));
      if (onPostgres) {
        assert.equal(imported[0].n, 2, 'both imported by the gather');
        assert.equal(shown.status, 'Finished');
      } else {
        assert.equal(imported[0].n, 0, 'the embedded database leaves them to the import jobs');
        assert.equal(shown.status, 'Running');
      }
      await drain();
      const done = await t.ok('harvest_job_show', { id: job.id }, as(admin));
      assert.equal(done.status, 'Finished');
      assert.equal(done.stats.added, 2);
      assert.equal((await sql(`SELECT count(*)::int AS n FROM packages WHERE title IN ('Ponds', 'Weirs')`))[0].n, 2);
    } finally {
      t.services.config.set('svc.harvest.import_batch', 100);
    }
  });

  test('a gather run again (its worker died) adds no object and queues no import twice', async () => {
    await remote.ok('package_create', { name: 'canals', title: 'Canals', owner_org: 'remote-org' }, asSysadmin(remote));
    const job = await t.ok('harvest_job_create', { source_id: 'remote-ckan', run: false }, as(admin));
    const signal = new AbortController().signal;
    const first = await runGather(t.services, harvest().deps, job.id, signal);
    assert.equal(first.objects, 1);
    const queued = async () => (await sql(`SELECT count(*)::int AS n FROM jobs WHERE type = 'harvest_import' AND status = 'queued'`))[0].n;
    const imports = await queued();
    const second = await runGather(t.services, harvest().deps, job.id, signal);
    assert.equal(second.objects, 0);
    assert.equal(await queued(), imports);
    await drain();
    assert.equal((await t.ok('harvest_job_show', { id: job.id }, as(admin))).stats.added, 1);
    assert.equal((await sql(`SELECT count(*)::int AS n FROM packages WHERE title = 'Canals'`))[0].n, 1);
  });

  test('the scheduler starts due sources once; clear purges what a source made', async () => {
    await t.ok('harvest_source_patch', { id: 'remote-ckan', frequency: 'DAILY' }, as(admin));
    await sql(`UPDATE harvest_source SET next_run = now() at time zone 'utc' - interval '1 minute' WHERE name = 'remote-ckan'`);
    const first = await harvest().tick();
    assert.equal(first.started.length, 1);
    assert.equal((await harvest().tick()).started.length, 0, 'not started twice');
    await drain();
    const [src] = await sql(`SELECT next_run > now() at time zone 'utc' AS later FROM harvest_source WHERE name = 'remote-ckan'`);
    assert.ok(src.later);
    assert.equal((await t.call('harvest_source_clear', { id: 'remote-ckan' }, as(editor))).status, 403);
    await t.ok('harvest_source_clear', { id: 'remote-ckan' }, as(admin));
    assert.equal((await t.call('package_show', { id: 'rivers' })).status, 404);
    assert.equal((await t.ok('package_show', { id: 'clash' })).title, 'Local clash');
    assert.equal((await t.ok('harvest_source_show', { id: 'remote-ckan' })).status.job_count, 0);
  });
});

describe('DCAT sources', () => {
  test('a Turtle catalog: added, then compared by content (nothing written), then changed and deleted', async () => {
    const url = `http://127.0.0.1:${(transit.address() as AddressInfo).port}/catalog.ttl`;
    await t.ok('harvest_source_create', { name: 'transit', url, source_type: 'dcat_rdf', owner_org: 'local-org' }, as(admin));
    const first = await runSource('transit');
    assert.deepEqual(first.stats, { added: 3, updated: 0, deleted: 0, 'not modified': 0, errored: 0 });
    const titled = async (title: string) => (await sql('SELECT id, state, metadata_modified FROM packages WHERE title = $1', [title]))[0];
    const ferries = await titled('Ferries');
    const again = await runSource('transit');
    assert.deepEqual(again.stats, { added: 0, updated: 0, deleted: 0, 'not modified': 3, errored: 0 });
    transitVersion = 'v2';
    const changed = await runSource('transit');
    assert.deepEqual(changed.stats, { added: 0, updated: 1, deleted: 1, 'not modified': 1, errored: 0 });
    assert.ok(await titled('Bus stops and shelters'));
    assert.equal((await titled('Tram lines')).state, 'deleted');
    assert.equal(String((await titled('Ferries')).metadata_modified), String(ferries.metadata_modified));
    const obj = await t.ok('harvest_object_show', { dataset_id: ferries.id });
    assert.equal(obj.guid, 'https://transit.example.org/dataset/ferries');
  });

  test('the scheduler starts a job made with run=false, and ends one whose worker died on its last attempt', async () => {
    const waiting = await t.ok('harvest_job_create', { source_id: 'transit', run: false }, as(admin));
    assert.deepEqual((await harvest().tick()).started, [waiting.id]);
    await drain();
    assert.equal((await t.ok('harvest_job_show', { id: waiting.id }, as(admin))).status, 'Finished');
    const job = await t.ok('harvest_job_create', { source_id: 'transit' }, as(admin));
    await sql(`UPDATE jobs SET max_attempts = 1 WHERE data->>'harvest_job_id' = $1`, [job.id]);
    assert.ok(await claimJob(t.services.db, ['default'], 'dead-worker', 1));
    // the dead worker's gather had begun
    await sql(`UPDATE harvest_job SET status = 'Running', gather_started = now() at time zone 'utc' WHERE id = $1`, [job.id]);
    await new Promise((r) => setTimeout(r, 20));
    await drain(); // the expired lease fails the queue job: no attempt left
    assert.deepEqual((await harvest().tick()).ended, [job.id]);
    const ended = await t.ok('harvest_job_show', { id: job.id }, as(admin));
    assert.equal(ended.status, 'Finished');
    assert.match(ended.gather_error_summary[0].message, /gather stopped/);
  });
});
