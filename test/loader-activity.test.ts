// A load's changes in the activity stream name who asked for it: the user whose new upload or URL
// triggered the load, the user who called xloader_submit, or else the site user; never "Someone".
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { organizationWithTeam, waitForLoad } from './helpers/fixtures.ts';

let t: TestApp;
let server: http.Server;
let base: string;
let editor: { id: string; name: string; token: string };
let other: { id: string; name: string; token: string };
/** The download of /held.csv waits for this. */
let release: () => void = () => undefined;
let held = new Promise<void>((r) => {
  release = r;
});

/** The activities recorded since `since` (ISO time) on the dataset, newest first. */
async function activitiesSince(pkg: string, since: string): Promise<any[]> {
  const list = await t.ok('package_activity_list', { id: pkg, include_hidden_activity: true }, { token: t.sysadminToken });
  return list.filter((a: any) => String(a.timestamp) >= since);
}

const waitLoad = (resourceId: string, finishedAfter = '') => waitForLoad(t, resourceId, { finishedAfter, ms: 60_000 });

before(async () => {
  t = await startApp({
    plugins: ['datastore', 'loader', 'activity', 'datatables_view'],
    config: { 'svc.jobs.poll_interval': 50, 'svc.loader.allow_private_urls': true },
  });
  ({
    users: { act_loader_editor: editor, act_loader_other: other },
  } = await organizationWithTeam(t, { name: 'act-loader-org' }, { act_loader_editor: 'editor', act_loader_other: 'editor' }));
  server = http.createServer(async (req, res) => {
    if (req.url === '/held.csv') await held;
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.end('city,n\nBonn,1\nKöln,2\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await t?.close();
  server?.close();
});

describe('loader activity', () => {
  test("the load's dataset change is recorded as the user whose new link triggered it, then as the user who submitted it again", async () => {
    const pkg = await t.ok('package_create', { name: 'act-loader-ds', owner_org: 'act-loader-org' }, { token: editor.token });
    const since = new Date().toISOString().replace('Z', '');
    const res = await t.ok('resource_create', { package_id: pkg.id, url: `${base}/cities.csv`, format: 'CSV' }, { token: editor.token });
    const first = await waitLoad(res.id);
    assert.equal(first.status, 'complete', JSON.stringify(first));
    const byLoad = await activitiesSince(pkg.id, since);
    assert.ok(byLoad.length >= 2, JSON.stringify(byLoad));
    for (const a of byLoad) assert.equal(a.user_id, editor.id, `${a.activity_type} recorded as ${a.user_id}`);

    const again = new Date().toISOString().replace('Z', '');
    await t.ok('xloader_submit', { resource_id: res.id, ignore_hash: true }, { token: other.token });
    assert.equal((await waitLoad(res.id, first.task_info.finished_timestamp)).status, 'complete');
    const bySubmit = await activitiesSince(pkg.id, again);
    assert.ok(bySubmit.length >= 1, JSON.stringify(bySubmit));
    for (const a of bySubmit) assert.equal(a.user_id, other.id, `${a.activity_type} recorded as ${a.user_id}`);
  });

  test('when the user who asked for the load is gone by the time it is done, the site user is named', async () => {
    const leaving = await t.user('act_loader_leaving');
    await t.ok(
      'member_create',
      { id: 'act-loader-org', object: leaving.name, object_type: 'user', capacity: 'editor' },
      { token: t.sysadminToken },
    );
    const pkg = await t.ok('package_create', { name: 'act-loader-ds2', owner_org: 'act-loader-org' }, { token: leaving.token });
    const res = await t.ok('resource_create', { package_id: pkg.id, url: `${base}/held.csv`, format: 'CSV' }, { token: leaving.token });
    await t.ok('user_delete', { id: leaving.name }, { token: t.sysadminToken });
    const since = new Date().toISOString().replace('Z', '');
    release();
    assert.equal((await waitLoad(res.id)).status, 'complete');
    const site = await t.ok('get_site_user', {}, { token: t.sysadminToken });
    const byLoad = (await activitiesSince(pkg.id, since)).filter((a: any) => a.activity_type !== 'deleted package');
    assert.ok(byLoad.length >= 1, JSON.stringify(byLoad));
    for (const a of byLoad) assert.equal(a.user_id, site.id, `${a.activity_type} recorded as ${a.user_id}`);
    held = Promise.resolve();
  });
});
