// Harvest imports several objects per transaction (svc.harvest.import_transaction), each in a
// savepoint: a refused record is an error of its own object only, its tags are not left behind,
// and every other dataset of the transaction is there, with its activity, and found by search
// once the job is reported finished. A second run changes nothing.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';
import { harvestNow } from './helpers/harvest.ts';
import { readerFor } from '../src/harvest/readers.ts';
import type { HarvestService } from '../src/plugins/harvest/index.ts';
import type { SourceReader } from '../src/harvest/types.ts';

let remote: TestApp;
let t: TestApp;
const NAMES = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'];

before(async () => {
  remote = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false } });
  await remote.app.listen({ port: 0, host: '127.0.0.1' });
  await remote.ok('organization_create', { name: 'remote-org' }, asSysadmin(remote));
  for (const [i, name] of NAMES.entries())
    await remote.ok(
      'package_create',
      {
        name,
        title: `Batch ${name}`,
        owner_org: 'remote-org',
        // a tag every record shares, and one of its own
        tags: [{ name: 'batch-shared' }, { name: `batch-own-${name}` }],
        resources: [{ url: `http://example.org/${i}.csv`, format: 'CSV' }],
      },
      asSysadmin(remote),
    );
  t = await startApp({
    plugins: ['activity', 'harvest'],
    config: {
      'svc.jobs.in_process_worker': false,
      'svc.harvest.allow_private_urls': true,
      'svc.harvest.scheduler': false,
      'svc.harvest.import_transaction': 50,
    },
  });
  await t.ok('organization_create', { name: 'local-org' }, asSysadmin(t));
  // "delta" arrives with a name the catalog refuses
  const harvest = t.services.plugins.harvest as HarvestService;
  harvest.deps.readerFor = (type) => {
    const real = readerFor(type);
    const reader: SourceReader = {
      listGuids: (s, o) => real.listGuids(s, o),
      async *read(s, o) {
        for await (const r of real.read(s, o))
          yield r.dataset && r.dataset.name === 'delta' ? { ...r, dataset: { ...r.dataset, name: 'Not A Name!' } } : r;
      },
    };
    return reader;
  };
  const url = `http://127.0.0.1:${(remote.app.server.address() as AddressInfo).port}`;
  await t.ok('harvest_source_create', { name: 'batch-src', url, source_type: 'ckan', owner_org: 'local-org' }, asSysadmin(t));
});

after(async () => {
  await t?.close();
  await remote?.close();
});

test('objects imported in one transaction: a refused record is its own error, the others are there and found', async () => {
  const job = await harvestNow(t, 'batch-src');
  assert.equal(job.status, 'Finished');
  assert.deepEqual(job.stats, { added: NAMES.length - 1, updated: 0, deleted: 0, 'not modified': 0, errored: 1 });
  assert.match(job.object_error_summary[0].message, /^Validation Error: name: /);
  // found by search as soon as the job is reported finished
  const found = await t.ok('package_search', { fq: 'tags:batch-shared', rows: 100 });
  assert.deepEqual(
    found.results.map((d: any) => d.name).sort(),
    NAMES.filter((n) => n !== 'delta'),
  );
  for (const name of NAMES.filter((n) => n !== 'delta')) {
    const activity = await t.ok('package_activity_list', { id: name, include_hidden_activity: true }, asSysadmin(t));
    assert.equal(activity.length, 1);
    assert.equal(activity[0].activity_type, 'new package');
    assert.equal((await t.ok('tag_show', { id: `batch-own-${name}` })).name, `batch-own-${name}`);
  }
  // the refused record's own tag is on no dataset, so neither listed nor found
  assert.ok(!(await t.ok('tag_list', { query: 'batch-own' })).includes('batch-own-delta'));
  assert.ok((await t.ok('tag_list', { query: 'batch-own' })).includes('batch-own-alpha'));
  assert.equal((await t.ok('package_search', { fq: 'tags:batch-own-delta' })).count, 0);
  assert.equal((await t.call('package_show', { id: 'delta' })).status, 404);
});

test('a second run with nothing changed over there writes nothing', async () => {
  const before = await t.ok('package_show', { id: 'alpha' });
  const job = await harvestNow(t, 'batch-src');
  assert.equal(job.status, 'Finished');
  assert.equal(job.stats.added + job.stats.updated + job.stats.deleted, 0);
  assert.equal((await t.ok('package_show', { id: 'alpha' })).metadata_modified, before.metadata_modified);
  assert.equal((await t.ok('package_activity_list', { id: 'alpha', include_hidden_activity: true }, asSysadmin(t))).length, 1);
});
