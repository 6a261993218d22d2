// The harvest pages: the source list (search, last job), the source form with CSRF and its errors
// by field, "Harvest now" and the job report (counts, errors per record, the raw record), the
// dataset page's "harvested from" line, "Clear", and who sees what (anonymous visitors, members,
// a private organization's source). A second svc app on a real port is the remote CKAN catalog.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';
import { as, asSysadmin, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { Worker } from '../src/jobs/worker.ts';
import { readerFor } from '../src/harvest/readers.ts';
import type { HarvestService } from '../src/plugins/harvest/index.ts';

let remote: TestApp;
let remoteUrl: string;
let t: TestApp;
let admin: TestUser;

/** Runs the queued jobs until the source's job has ended (the in-process worker is off: the test decides when jobs run). */
async function drain(source: string): Promise<void> {
  const w = new Worker(t.services.db, t.services.jobs.types, t.services.logger, {
    queues: ['default'],
    pollMs: 0,
    leaseMs: 60_000,
    keepDays: 7,
  });
  for (let round = 0; round < 200; round++) {
    while (await w.runOnce());
    const [job] = await t.ok('harvest_job_list', { source_id: source, limit: 1 }, asSysadmin(t));
    if (!job || !['New', 'Running'].includes(job.status)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the harvest job of ${source} did not end`);
}

async function signedIn(name: string): Promise<WebClient> {
  const web = new WebClient(t.app);
  await web.login(name);
  return web;
}

const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

before(async () => {
  remote = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false } });
  await remote.app.listen({ port: 0, host: '127.0.0.1' });
  remoteUrl = `http://127.0.0.1:${(remote.app.server.address() as AddressInfo).port}`;
  await remote.ok('organization_create', { name: 'remote-org' }, asSysadmin(remote));
  for (const [name, title] of [
    ['rivers', 'Rivers'],
    ['wells', 'Wells'],
  ])
    await remote.ok('package_create', { name, title, owner_org: 'remote-org' }, asSysadmin(remote));
  t = await startApp({
    plugins: ['harvest'],
    config: { 'svc.jobs.in_process_worker': false, 'svc.harvest.allow_private_urls': true, 'svc.harvest.scheduler': false },
  });
  ({
    users: { hw_admin: admin },
  } = await organizationWithTeam(t, { name: 'hw-org', title: 'Harvesting org' }, { hw_admin: 'admin', hw_member: 'member' }));
  await organizationWithTeam(t, { name: 'hw-secret' }, { hw_secret_member: 'member' });
  await t.ok(
    'harvest_source_create',
    {
      name: 'secret-source',
      title: 'Secret source',
      url: `${remoteUrl}/secret`,
      source_type: 'ckan',
      owner_org: 'hw-secret',
      private: true,
    },
    asSysadmin(t),
  );
  // Records titled "Wells" arrive malformed: an error of that record, not of the job.
  const harvest = t.services.plugins.harvest as HarvestService;
  harvest.deps.readerFor = (type) => {
    const real = readerFor(type);
    return {
      listGuids: (s, o) => real.listGuids(s, o),
      async *read(s, o) {
        for await (const r of real.read(s, o))
          yield r.dataset && r.dataset.title === 'Wells' ? { ...r, dataset: { ...r.dataset, name: 'Not A Name!' } } : r;
      },
    };
  };
});

after(async () => {
  await t?.close();
  await remote?.close();
});

test('an organization admin adds a source through the form: CSRF checked, errors shown by field, nothing saved until valid', async () => {
  const web = await signedIn('hw_admin');
  const form = await web.get('/harvest/new');
  assert.equal(form.statusCode, 200);
  for (const f of ['url', 'title', 'name', 'notes', 'source_type', 'frequency', 'config', 'owner_org'])
    assert.match(form.body, new RegExp(`name="${f}"`), f);
  assert.match(form.body, /<option value="[^"]+"[^>]*>Harvesting org<\/option>/);
  const fields = {
    url: remoteUrl,
    title: 'Remote CKAN',
    name: 'remote-ckan',
    source_type: 'ckan',
    frequency: 'DAILY',
    owner_org: 'hw-org',
  };

  const forged = await web.post('/harvest/new', fields, { csrf: 'forged' });
  assert.equal(forged.statusCode, 403);
  const badJson = await web.post('/harvest/new', { ...fields, config: '{"default_tags": [' });
  assert.equal(badJson.statusCode, 400);
  assert.match(badJson.body, /id="config-error"/);
  assert.match(badJson.body, /value="remote-ckan"/, 'the values typed stay in the form');
  assert.equal((await t.ok('harvest_source_list', {}, asSysadmin(t))).length, 1, 'nothing was saved');

  const created = await web.post('/harvest/new', { ...fields, config: '{"default_tags": ["harvested"]}', notes: 'The **remote** site.' });
  assert.equal(created.statusCode, 303, created.body);
  assert.equal(created.headers.location, '/harvest/remote-ckan');
  const source = await t.ok('harvest_source_show', { id: 'remote-ckan' }, as(admin));
  assert.equal(source.frequency, 'DAILY');
  assert.deepEqual(JSON.parse(source.config), { default_tags: ['harvested'] });

  const edit = await web.get('/harvest/edit/remote-ckan');
  assert.equal(edit.statusCode, 200);
  assert.match(edit.body, /&quot;default_tags&quot;/);
  const saved = await web.post('/harvest/edit/remote-ckan', { ...fields, title: 'Remote CKAN site', config: source.config });
  assert.equal(saved.statusCode, 303, saved.body);
  assert.equal((await t.ok('harvest_source_show', { id: 'remote-ckan' }, as(admin))).title, 'Remote CKAN site');
});

test('visitors see the public sources and their pages but neither the form nor the buttons; a private organization source stays hidden', async () => {
  const anonymous = new WebClient(t.app);
  const list = await anonymous.get('/harvest');
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /Remote CKAN site/);
  assert.doesNotMatch(list.body, /Secret source/);
  assert.doesNotMatch(list.body, /href="\/harvest\/new"/);
  assert.equal((await anonymous.get('/harvest/new')).statusCode, 303, 'sent to sign in');
  const page = await anonymous.get('/harvest/remote-ckan');
  assert.equal(page.statusCode, 200);
  assert.doesNotMatch(page.body, /action="\/harvest\/refresh\//);
  assert.doesNotMatch(page.body, /href="\/harvest\/clear\//);
  assert.notEqual((await anonymous.get('/harvest/secret-source')).statusCode, 200);

  const member = await signedIn('hw_member');
  assert.doesNotMatch((await member.get('/harvest/remote-ckan')).body, /action="\/harvest\/refresh\//);
  assert.equal((await member.get('/harvest/edit/remote-ckan')).statusCode, 403);
  assert.equal((await member.post('/harvest/refresh/remote-ckan', {}, { from: '/harvest' })).statusCode, 403);

  const secretMember = await signedIn('hw_secret_member');
  assert.match((await secretMember.get('/harvest')).body, /Secret source/);
  assert.equal((await secretMember.get('/harvest/secret-source')).statusCode, 200);
});

test('"Harvest now" runs a job; the source and job pages report its counts and the record in error, the dataset says where it comes from', async () => {
  const web = await signedIn('hw_admin');
  const run = await web.post('/harvest/refresh/remote-ckan', {}, { from: '/harvest/remote-ckan' });
  assert.equal(run.statusCode, 303, run.body);
  const again = await web.post('/harvest/refresh/remote-ckan', {}, { from: '/harvest/remote-ckan' });
  assert.equal(again.statusCode, 303);
  const flash = decodeURIComponent(String(again.headers['set-cookie']));
  assert.match(flash, /There already is an unrun job/, "one job of a source at a time, said in the action's words");
  assert.doesNotMatch(flash, /Validation Error/);
  await drain('remote-ckan');

  const page = text((await web.get('/harvest/remote-ckan')).body);
  assert.match(page, /1 added/);
  assert.match(page, /1 errors/);
  assert.match(page, /Finished/);
  assert.match(page, /1 dataset harvested/);

  const list = text((await web.get('/harvest?q=remote')).body);
  assert.match(list, /Last job: Finished/);
  assert.match(list, /1 added/);
  assert.doesNotMatch(text((await web.get('/harvest?q=nothing-like-it')).body), /Remote CKAN site/);

  const [job] = await t.ok('harvest_job_list', { source_id: 'remote-ckan' }, as(admin));
  const report = await web.get(`/harvest/remote-ckan/job/${job.id}`);
  assert.equal(report.statusCode, 200);
  assert.match(text(report.body), /Job report/);
  assert.match(text(report.body), /name/i, 'the record error names the field');
  assert.match(text(report.body), /Duration/);
  assert.equal((await web.get('/harvest/remote-ckan/job/last')).statusCode, 200);
  assert.match(text((await web.get('/harvest/remote-ckan/job')).body), /Finished/);

  const harvested = (await t.ok('package_search', { q: 'Rivers' }, asSysadmin(t))).results[0];
  const object = await t.ok('harvest_object_show', { dataset_id: harvested.id }, as(admin));
  const raw = await web.get(`/harvest/object/${object.id}`);
  assert.equal(raw.statusCode, 200);
  assert.match(String(raw.headers['content-type']), /^application\/json/);
  assert.equal(JSON.parse(raw.body).name, 'rivers');

  const dataset = await new WebClient(t.app).get(`/dataset/${harvested.name}`);
  assert.match(dataset.body, /Harvested from <a href="\/harvest\/[^"]+">Remote CKAN site<\/a>/);
  assert.match(dataset.body, new RegExp(`href="${remoteUrl}/dataset/rivers"`));
});

test('"Clear" asks first, then removes what the source harvested', async () => {
  const web = await signedIn('hw_admin');
  const confirm = await web.get('/harvest/clear/remote-ckan');
  assert.equal(confirm.statusCode, 200);
  assert.match(confirm.body, /action="\/harvest\/clear\/remote-ckan"/);
  const cleared = await web.post('/harvest/clear/remote-ckan', {}, { from: '/harvest/clear/remote-ckan' });
  assert.equal(cleared.statusCode, 303, cleared.body);
  assert.match(text((await web.get('/harvest/remote-ckan')).body), /No datasets harvested yet/);
  assert.equal((await t.ok('package_search', { q: 'Rivers' }, asSysadmin(t))).count, 0);
});
