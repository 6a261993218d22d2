import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { organizationWithTeam } from './helpers/fixtures.ts';
import { viewPlugins } from '../src/plugins/views/index.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let editor: U, member: U, outsider: U;
const as = (u: U) => ({ token: u.token });
const sys = () => ({ token: t.sysadminToken });
let csv: any, png: any, secretRes: any;

before(async () => {
  t = await startApp({
    plugins: ['datastore', 'image_view', 'text_view', 'webpage_view', 'datatables_view', 'video_view', 'audio_view'],
    config: { 'svc.views.default_views': ['image_view', 'text_view', 'datatables_view'] },
  });
  ({
    users: { v_editor: editor, v_member: member },
  } = await organizationWithTeam(t, { name: 'v-org' }, { v_editor: 'editor', v_member: 'member' }));
  outsider = await t.user('v_outsider');
  const pkg = await t.ok(
    'package_create',
    {
      name: 'v-pub',
      owner_org: 'v-org',
      resources: [
        { url: 'http://x.org/a.csv', format: 'CSV' },
        { url: 'http://x.org/p.png', format: 'PNG' },
      ],
    },
    as(editor),
  );
  [csv, png] = pkg.resources;
  const secret = await t.ok(
    'package_create',
    { name: 'v-secret', owner_org: 'v-org', private: true, resources: [{ url: 'http://x.org/s.txt', format: 'TXT' }] },
    as(editor),
  );
  secretRes = secret.resources[0];
});
after(async () => {
  await t?.close();
});

test('default views on dataset create and update, by format', async () => {
  assert.deepEqual(await t.ok('resource_view_list', { id: csv.id }), [], 'a CSV without data store data gets no view by default');
  const views = await t.ok('resource_view_list', { id: png.id }, { method: 'GET' });
  assert.equal(views.length, 1);
  assert.deepEqual(views[0], {
    id: views[0].id,
    resource_id: png.id,
    package_id: png.package_id,
    title: 'Image',
    description: '',
    view_type: 'image_view',
  });
  // a resource added later gets its default view too (dataset update)
  const txt = await t.ok('resource_create', { package_id: 'v-pub', url: 'http://x.org/readme.txt', format: 'TXT' }, as(editor));
  assert.deepEqual(
    (await t.ok('resource_view_list', { id: txt.id })).map((v: any) => v.view_type),
    ['text_view'],
  );
  // updating again creates no duplicate
  await t.ok('package_patch', { id: 'v-pub', notes: 'x' }, as(editor));
  assert.equal((await t.ok('resource_view_list', { id: png.id })).length, 1);
  // the data store views only with create_datastore_views, for resources with data
  await t.ok('datastore_create', { resource_id: csv.id, force: true, records: [{ a: 1 }] }, as(editor));
  assert.deepEqual(await t.ok('package_create_default_resource_views', { package: { id: 'v-pub' } }, as(editor)), []);
  const created = await t.ok(
    'package_create_default_resource_views',
    { package: { id: 'v-pub' }, create_datastore_views: true },
    as(editor),
  );
  assert.deepEqual(
    created.map((v: any) => [v.resource_id, v.view_type, v.title]),
    [[csv.id, 'datatables_view', 'Table']],
  );
  assert.equal(created[0].filterable, true);
  assert.equal(created[0].ellipsis_length, 100);
  assert.deepEqual(
    await t.ok('resource_create_default_resource_views', { resource: { id: csv.id }, create_datastore_views: true }, as(editor)),
    [],
  );
  const r = await t.call('resource_create_default_resource_views', { resource: { id: csv.id } }, as(outsider));
  assert.equal(r.status, 403);
});

test('create, show, update, reorder, delete; options and config', async () => {
  const v1 = await t.ok(
    'resource_view_create',
    { resource_id: csv.id, title: 'Web', view_type: 'webpage_view', page_url: 'http://x.org/page.html', extra_key: 'dropped' },
    as(editor),
  );
  assert.equal(v1.page_url, 'http://x.org/page.html');
  assert.equal(v1.extra_key, undefined);
  const v2 = await t.ok(
    'resource_view_create',
    { resource_id: csv.id, title: 'Vid', view_type: 'video_view', config: JSON.stringify({ video_url: 'http://x.org/v.mp4', custom: 1 }) },
    as(editor),
  );
  assert.equal(v2.video_url, 'http://x.org/v.mp4');
  assert.equal(v2.custom, 1);
  assert.deepEqual(await t.ok('resource_view_show', { id: v1.id }), v1);
  const before = (await t.ok('resource_view_list', { id: csv.id })).map((v: any) => v.id);
  assert.deepEqual(before.slice(-2), [v1.id, v2.id]);

  const u = await t.ok('resource_view_update', { id: v1.id, title: 'Web 2', view_type: 'image_view' }, as(editor));
  assert.equal(u.title, 'Web 2');
  assert.equal(u.view_type, 'webpage_view', 'the type cannot change');
  assert.equal(u.page_url, undefined, 'update replaces the options');

  const re = await t.ok('resource_view_reorder', { id: csv.id, order: [v2.id] }, as(editor));
  assert.deepEqual(re, { id: csv.id, order: [v2.id, ...before.filter((x: string) => x !== v2.id)] });
  assert.deepEqual(
    (await t.ok('resource_view_list', { id: csv.id })).map((v: any) => v.id),
    re.order,
  );

  assert.deepEqual(await t.ok('resource_view_delete', { id: v2.id }, as(editor)), { resource_id: csv.id });
  const r = await t.call('resource_view_show', { id: v2.id });
  assert.equal(r.status, 404);
});

test('bad input', async () => {
  let r = await t.call('resource_view_create', { resource_id: csv.id, title: 'x', view_type: 'pdf_view' }, as(editor));
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.view_type, ['No plugin found for view_type pdf_view']);
  r = await t.call('resource_view_create', { resource_id: csv.id, view_type: 'image_view' }, as(editor));
  assert.deepEqual(r.body.error!.title, ['Missing value']);
  r = await t.call('resource_view_create', { resource_id: 'nope', title: 'x', view_type: 'image_view' }, as(editor));
  assert.equal(r.status, 404);
  r = await t.call(
    'resource_view_create',
    { resource_id: csv.id, title: 'x', view_type: 'datatables_view', ellipsis_length: -3 },
    as(editor),
  );
  assert.deepEqual(r.body.error!.ellipsis_length, ['Must be a natural number']);
  r = await t.call('resource_view_create', { resource_id: csv.id, title: 'x', view_type: 'image_view', config: '{not json' }, as(editor));
  assert.equal(r.status, 409);
  assert.ok(r.body.error!.config);
  const views = (await t.ok('resource_view_list', { id: csv.id })).map((v: any) => v.id);
  r = await t.call('resource_view_reorder', { id: csv.id, order: [views[0], views[0]] }, as(editor));
  assert.deepEqual(r.body.error!.order, ['No duplicates allowed in order']);
  r = await t.call('resource_view_reorder', { id: csv.id, order: ['nope'] }, as(editor));
  assert.deepEqual(r.body.error!.order, ['View nope does not exist']);
  assert.deepEqual(
    (await t.ok('resource_view_list', { id: csv.id })).map((v: any) => v.id),
    views,
    'a failed reorder changes nothing',
  );
  r = await t.call('resource_view_list', { id: 'nope' });
  assert.equal(r.status, 404);
});

test('permissions: private datasets, editors only for writes, clear for sysadmins', async () => {
  const [sv] = await t.ok('resource_view_list', { id: secretRes.id }, as(member));
  assert.equal(sv.view_type, 'text_view');
  for (const opts of [{}, as(outsider)]) {
    let r = await t.call('resource_view_list', { id: secretRes.id }, opts);
    assert.equal(r.status, 403);
    r = await t.call('resource_view_show', { id: sv.id }, opts);
    assert.equal(r.status, 403);
  }
  let r = await t.call('resource_view_create', { resource_id: png.id, title: 'x', view_type: 'image_view' }, as(member));
  assert.equal(r.status, 403);
  r = await t.call('resource_view_delete', { id: sv.id }, as(member));
  assert.equal(r.status, 403);
  r = await t.call('resource_view_clear', {}, as(editor));
  assert.equal(r.status, 403);
  await t.ok('resource_view_clear', { view_types: ['text_view'] }, sys());
  assert.deepEqual(await t.ok('resource_view_list', { id: secretRes.id }, as(member)), []);
  assert.equal((await t.ok('resource_view_list', { id: png.id })).length, 1);
  await t.ok('resource_view_clear', {}, sys());
  assert.deepEqual(await t.ok('resource_view_list', { id: png.id }), []);
});

test('view plugins: off means no such view type; datatables_view needs the data store', async () => {
  const t2 = await startApp({ plugins: ['image_view'] });
  try {
    const ed = await t2.user('v2_editor');
    await t2.ok('organization_create', { name: 'v2-org', users: [{ name: ed.name, capacity: 'editor' }] }, { token: t2.sysadminToken });
    const pkg = await t2.ok(
      'package_create',
      { name: 'v2', owner_org: 'v2-org', resources: [{ url: 'http://x.org/a.txt', format: 'TXT' }] },
      { token: ed.token },
    );
    const r = await t2.call(
      'resource_view_create',
      { resource_id: pkg.resources[0].id, title: 'x', view_type: 'text_view' },
      { token: ed.token },
    );
    assert.deepEqual(r.body.error!.view_type, ['No plugin found for view_type text_view']);
  } finally {
    await t2.close();
  }
  const services = { config: { list: () => ['datatables_view'] } } as any;
  assert.throws(() => viewPlugins.datatables_view.setup(services), /needs the datastore plugin/);
});
