import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, asSysadmin, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let editor: TestUser, member: TestUser, outsider: TestUser, fan: TestUser;
const sys = () => asSysadmin(t);
const types = (list: any[]) => list.map((a) => `${a.activity_type}:${a.data?.package?.name ?? a.data?.group?.name ?? a.data?.user?.name}`);

before(async () => {
  t = await startApp({ plugins: ['activity', 'webpage_view'] });
  ({
    users: { a_editor: editor, a_member: member },
  } = await organizationWithTeam(t, { name: 'a-org' }, { a_editor: 'editor', a_member: 'member' }));
  outsider = await t.user('a_outsider');
  fan = await t.user('a_fan');
});
after(async () => {
  await t?.close();
});

test('dataset and resource writes record activities with the dict of the time', async () => {
  await t.ok('package_create', { name: 'a-pub', title: 'First', owner_org: 'a-org' }, as(editor));
  await t.ok('package_patch', { id: 'a-pub', title: 'Second' }, as(editor));
  const res = await t.ok('resource_create', { package_id: 'a-pub', url: 'http://x.org/a.csv', name: 'r1' }, as(editor));
  await t.ok('resource_delete', { id: res.id }, as(editor));
  const list = await t.ok('package_activity_list', { id: 'a-pub' }, { method: 'GET' });
  assert.deepEqual(
    list.map((a: any) => a.activity_type),
    ['changed package', 'changed package', 'changed package', 'new package'],
  );
  assert.deepEqual(Object.keys(list[0]).sort(), [
    'activity_type',
    'data',
    'id',
    'object_id',
    'permission_labels',
    'revision_id',
    'timestamp',
    'user_id',
  ]);
  assert.equal(list[3].user_id, editor.id);
  assert.equal(list[3].revision_id, null);
  assert.deepEqual(list[3].permission_labels, ['public']);
  // anonymous callers get a summary (svc.auth.public_activity_stream_detail is false)
  assert.deepEqual(list[3].data, { package: { id: list[3].object_id, name: 'a-pub', title: 'First', type: 'dataset' }, actor: 'a_editor' });
  // editors see the whole dict as it was
  const full = await t.ok('package_activity_list', { id: 'a-pub' }, as(editor));
  assert.equal(full[3].data.package.title, 'First');
  assert.equal(full[2].data.package.title, 'Second');
  assert.equal(full[1].data.package.resources.length, 1);
  assert.equal(full[0].data.package.resources.length, 0);

  // paging and filters
  assert.equal((await t.ok('package_activity_list', { id: 'a-pub', limit: 2 })).length, 2);
  assert.deepEqual(
    (await t.ok('package_activity_list', { id: 'a-pub', offset: 3 })).map((a: any) => a.activity_type),
    ['new package'],
  );
  assert.deepEqual((await t.ok('package_activity_list', { id: 'a-pub', activity_types: ['new package'] })).length, 1);
  assert.deepEqual(
    (await t.ok('package_activity_list', { id: 'a-pub', exclude_activity_types: 'changed package' }, { method: 'GET' })).length,
    1,
  );
  // milliseconds: one more than the (truncated) time of the activity is after it
  const ts = (a: any) => Date.parse(a.timestamp + 'Z') / 1000;
  const afterFirst = await t.ok('package_activity_list', { id: 'a-pub', after: ts(full[3]) + 0.001 });
  assert.equal(afterFirst.length, 3);
  const beforeLast = await t.ok('package_activity_list', { id: 'a-pub', before: ts(full[0]) });
  assert.equal(beforeLast.length, 3);
  assert.equal(
    (await t.ok('package_activity_list', { id: 'a-pub', after: ts(full[3]) + 0.001, limit: 1 }))[0].id,
    full[2].id,
    'after alone pages forward',
  );
});

test('bad input', async () => {
  let r = await t.call('package_activity_list', { id: 'a-pub', activity_types: ['new package'], exclude_activity_types: ['x'] });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.activity_types, ['Cannot be used together with `exclude_activity_types']);
  r = await t.call('package_activity_list', { id: 'a-pub', limit: -1 });
  assert.deepEqual(r.body.error!.limit, ['Must be a natural number']);
  r = await t.call('package_activity_list', { id: 'a-pub', after: 'yesterday' });
  assert.equal(r.status, 409);
  assert.ok(r.body.error!.after);
  r = await t.call('package_activity_list', { id: 'nope' });
  assert.equal(r.status, 404);
  r = await t.call('package_activity_list', {});
  assert.deepEqual(r.body.error!.id, ['Missing value']);
  r = await t.call('activity_show', { id: 'nope' });
  assert.equal(r.status, 404);
  const [a] = await t.ok('package_activity_list', { id: 'a-pub', limit: 1 });
  r = await t.call('activity_diff', { id: a.id, object_type: 'package', diff_type: 'word' }, sys());
  assert.deepEqual(r.body.error!.diff_type, ['diff_type not recognized']);
  r = await t.call('dashboard_mark_activities_old', {}, { method: 'GET', token: fan.token });
  assert.equal(r.status, 400);
  // limit is clamped to svc.activity_list_limit_max
  assert.ok((await t.ok('recently_changed_packages_activity_list', { limit: 100000 })).length <= 100);
});

test('private datasets: activity only for those who may read them', async () => {
  await t.ok('package_create', { name: 'a-secret', title: 'Secret', owner_org: 'a-org', private: true }, as(editor));
  let r = await t.call('package_activity_list', { id: 'a-secret' }, as(outsider));
  assert.equal(r.status, 403);
  r = await t.call('package_activity_list', { id: 'a-secret' });
  assert.equal(r.status, 403);
  const mine = await t.ok('package_activity_list', { id: 'a-secret' }, as(member));
  assert.equal(mine.length, 1);
  assert.deepEqual(mine[0].permission_labels.length, 1);
  assert.ok(mine[0].permission_labels[0].startsWith('member-'));
  const secretActivity = mine[0].id;

  for (const caller of [undefined, outsider]) {
    const opts = caller ? as(caller) : {};
    const recent = await t.ok('recently_changed_packages_activity_list', {}, opts);
    assert.ok(!recent.some((a: any) => a.object_id === mine[0].object_id), 'not in recently changed');
    const org = await t.ok('organization_activity_list', { id: 'a-org' }, opts);
    assert.ok(!org.some((a: any) => a.object_id === mine[0].object_id), 'not in the organization stream');
    const user = await t.ok('user_activity_list', { id: editor.name }, opts);
    assert.ok(!user.some((a: any) => a.object_id === mine[0].object_id), "not in the editor's stream");
    r = await t.call('activity_show', { id: secretActivity }, opts);
    assert.equal(r.status, 403);
    r = await t.call('activity_data_show', { id: secretActivity }, opts);
    assert.equal(r.status, 403);
  }
  assert.ok((await t.ok('organization_activity_list', { id: 'a-org' }, as(member))).some((a: any) => a.object_id === mine[0].object_id));
  // a member may see the activity but not its detail (only editors may)
  assert.equal((await t.ok('activity_show', { id: secretActivity, include_data: false }, as(member))).data.package.name, 'a-secret');
  r = await t.call('activity_data_show', { id: secretActivity }, as(member));
  assert.equal(r.status, 403);
  assert.equal((await t.ok('activity_data_show', { id: secretActivity, object_type: 'package' }, as(editor))).name, 'a-secret');

  // a fan following the public dataset and the editor never sees the private one on the dashboard
  await t.ok('follow_user', { id: editor.name }, as(fan));
  await t.ok('follow_group', { id: 'a-org' }, as(fan));
  const dash = await t.ok('dashboard_activity_list', {}, as(fan));
  assert.ok(dash.length > 0);
  assert.ok(!dash.some((a: any) => a.object_id === mine[0].object_id));
  // the dataset made public later shows up from then on; made private again it disappears everywhere
  await t.ok('package_patch', { id: 'a-secret', private: false }, as(editor));
  assert.equal((await t.ok('package_activity_list', { id: 'a-secret' })).length, 1, 'the activity from before stays hidden (its labels)');
  await t.ok('package_patch', { id: 'a-secret', private: true }, as(editor));
  assert.ok(!(await t.ok('recently_changed_packages_activity_list')).some((a: any) => a.object_id === mine[0].object_id));
});

test('groups, organizations and users record activities; user streams', async () => {
  await t.ok('group_create', { name: 'a-group', title: 'G1' }, as(editor));
  await t.ok('group_patch', { id: 'a-group', title: 'G2' }, as(editor));
  await t.ok('group_delete', { id: 'a-group' }, as(editor));
  const g = await t.ok('group_activity_list', { id: 'a-group' }, sys());
  assert.deepEqual(types(g), ['deleted group:a-group', 'changed group:a-group', 'new group:a-group']);
  assert.equal(g[1].data.group.title, 'G2');
  const o = await t.ok('organization_activity_list', { id: 'a-org' }, sys());
  assert.ok(o.some((a: any) => a.activity_type === 'new organization'));
  assert.ok(
    o.some((a: any) => a.activity_type === 'new package'),
    'the datasets of the organization are in its stream',
  );
  const r = await t.call('organization_activity_list', { id: 'a-group' });
  assert.equal(r.status, 404);

  const created = await t.ok('user_create', { name: 'a_new', email: 'n@example.org', password: 'abcdefgh1' }, sys());
  await t.ok('user_patch', { id: created.id, fullname: 'New Person' }, sys());
  const u = await t.ok('user_activity_list', { id: 'a_new' });
  assert.deepEqual(
    u.map((a: any) => a.activity_type),
    ['changed user', 'new user'],
  );
  assert.equal(u[0].data.user.email, undefined, 'no email in the stream');
  const full = await t.ok('user_activity_list', { id: 'a_new' }, sys());
  assert.equal(full[0].data.user.fullname, 'New Person');
  assert.equal(full[0].data.user.email, undefined);
  const editorStream = await t.ok('user_activity_list', { id: editor.name });
  assert.ok(editorStream.every((a: any) => a.user_id === editor.id || a.object_id === editor.id));
});

test('dashboard: is_new, new count, mark old', async () => {
  await t.ok('dashboard_mark_activities_old', {}, as(fan));
  assert.equal(await t.ok('dashboard_new_activities_count', {}, as(fan)), 0);
  await t.ok('package_create', { name: 'a-new-one', owner_org: 'a-org' }, as(editor));
  await t.ok('follow_dataset', { id: 'a-new-one' }, as(fan));
  const dash = await t.ok('dashboard_activity_list', { limit: 5 }, as(fan));
  assert.equal(dash[0].data.package.name, 'a-new-one');
  assert.equal(dash[0].is_new, true);
  assert.equal(await t.ok('dashboard_new_activities_count', {}, as(fan)), 1);
  await t.ok('dashboard_mark_activities_old', {}, as(fan));
  assert.equal(await t.ok('dashboard_new_activities_count', {}, as(fan)), 0);
  // own activity is never new
  const own = await t.ok('dashboard_activity_list', {}, as(editor));
  assert.ok(own.every((a: any) => a.is_new === false));
  const r = await t.call('dashboard_activity_list', {});
  assert.equal(r.status, 403);
});

test('activity_show, activity_data_show, activity_diff', async () => {
  const list = await t.ok('package_activity_list', { id: 'a-pub' }, sys());
  const [latest, prev] = list;
  const shown = await t.ok('activity_show', { id: prev.id }, as(editor));
  assert.equal(shown.data.package.resources.length, 1);
  const data = await t.ok('activity_data_show', { id: prev.id, object_type: 'package' }, as(editor));
  assert.equal(data.name, 'a-pub');
  let r = await t.call('activity_data_show', { id: prev.id, object_type: 'group' }, as(editor));
  assert.equal(r.status, 404);
  const diff = await t.ok('activity_diff', { id: latest.id, object_type: 'package' }, as(editor));
  assert.equal(diff.activities.length, 2);
  assert.equal(diff.activities[1].id, latest.id);
  assert.match(diff.diff, /^--- \n\+\+\+ \n@@ /);
  assert.match(diff.diff, /-\s+"name": "r1"/);
  const html = await t.ok('activity_diff', { id: latest.id, object_type: 'package', diff_type: 'html' }, as(editor));
  assert.match(html.diff, /^<table/);
  const first = list[list.length - 1];
  r = await t.call('activity_diff', { id: first.id, object_type: 'package' }, as(editor));
  assert.equal(r.status, 404);
  // detail needs edit rights unless public_activity_stream_detail
  r = await t.call('activity_data_show', { id: latest.id });
  assert.equal(r.status, 403);
  r = await t.call('activity_diff', { id: latest.id, object_type: 'package' }, as(outsider));
  assert.equal(r.status, 403);
  assert.equal((await t.ok('activity_show', { id: latest.id, include_data: false })).data.package.name, 'a-pub');
});

test('activity_diff of a dataset version compares it with the dataset version before, past its views\u2019 activities', async () => {
  const res = await t.ok('resource_create', { package_id: 'a-pub', url: 'https://example.org/page', name: 'page' }, sys());
  await t.ok('package_patch', { id: 'a-pub', title: 'Before the view' }, sys());
  await t.ok(
    'resource_view_create',
    { resource_id: res.id, view_type: 'webpage_view', title: 'A page', page_url: 'https://example.org/' },
    sys(),
  );
  await t.ok('package_patch', { id: 'a-pub', title: 'After the view' }, sys());
  const [latest, view] = await t.ok('package_activity_list', { id: 'a-pub' }, sys());
  assert.equal(view.activity_type, 'new resource view');
  const diff = await t.ok('activity_diff', { id: latest.id, object_type: 'package' }, sys());
  assert.match(diff.diff, /-\s+"title": "Before the view"/);
  assert.match(diff.diff, /\+\s+"title": "After the view"/);
  assert.equal(diff.activities[0].activity_type, 'changed package');
});

test('resource view writes are activities of their dataset', async () => {
  await t.ok('package_create', { name: 'a-views', owner_org: 'a-org', resources: [{ url: 'http://x.org/p.html' }] }, as(editor));
  const res = (await t.ok('package_show', { id: 'a-views' })).resources[0];
  const view = await t.ok('resource_view_create', { resource_id: res.id, title: 'Page', view_type: 'webpage_view' }, as(editor));
  await t.ok('resource_view_update', { id: view.id, title: 'Page 2' }, as(editor));
  await t.ok('resource_view_delete', { id: view.id }, as(editor));
  const list = await t.ok('package_activity_list', { id: 'a-views', limit: 3 });
  assert.deepEqual(
    list.map((a: any) => a.activity_type),
    ['deleted resource view', 'changed resource view', 'new resource view'],
  );
  assert.equal(list[1].data.title, 'Page 2');
  assert.equal(list[1].object_id, res.package_id);
  assert.equal(list[0].data.resource_id, res.id);
  await t.ok('package_delete', { id: 'a-views' }, as(editor));
  const [deleted] = await t.ok('package_activity_list', { id: 'a-views', limit: 1 }, as(editor));
  assert.equal(deleted.activity_type, 'deleted package');
  assert.equal(deleted.data.package.state, 'deleted');
  // a deleted dataset is no longer public (CKAN's labels): its deletion is shown to its organization
  assert.equal((await t.ok('recently_changed_packages_activity_list', { limit: 1 }, as(member)))[0].activity_type, 'deleted package');
  assert.notEqual((await t.ok('recently_changed_packages_activity_list', { limit: 1 }))[0].id, deleted.id);
});

test('svc.auth.public_activity_stream_detail gives everyone the detail', async () => {
  const t2 = await startApp({
    plugins: ['activity'],
    config: { 'svc.auth.public_activity_stream_detail': true, 'svc.activity_list_limit': 2 },
  });
  try {
    const ed = await t2.user('d_editor');
    await t2.ok('organization_create', { name: 'd-org', users: [{ name: ed.name, capacity: 'editor' }] }, { token: t2.sysadminToken });
    for (const title of ['a', 'b', 'c']) {
      if (title === 'a') await t2.ok('package_create', { name: 'd-pub', title, owner_org: 'd-org', notes: 'n' }, { token: ed.token });
      else await t2.ok('package_patch', { id: 'd-pub', title }, { token: ed.token });
    }
    const list = await t2.ok('package_activity_list', { id: 'd-pub' });
    assert.equal(list.length, 2, 'svc.activity_list_limit is the default page size');
    assert.equal(list[0].data.package.notes, 'n');
    assert.equal((await t2.ok('activity_data_show', { id: list[0].id, object_type: 'package' })).title, 'c');
  } finally {
    await t2.close();
  }
});
