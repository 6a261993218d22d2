// Managing the catalog through the web forms: datasets and resources (with a file upload),
// organizations and their members, and the sysadmin pages (configuration, trash, users).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
let orgId: string;
before(async () => {
  t = await startApp({ plugins: [] });
  const owner = await t.user('wm_owner');
  await t.user('wm_editor');
  await t.user('wm_outsider');
  await t.user('wm_newbie');
  const org = await t.ok('organization_create', { name: 'wm-org', title: 'Manage Org' }, { token: owner.token });
  orgId = org.id;
  await t.ok('organization_member_create', { id: 'wm-org', username: 'wm_editor', role: 'editor' }, { token: owner.token });
});
after(async () => {
  await t?.close();
});

async function signedIn(name: string): Promise<WebClient> {
  const web = new WebClient(t.app);
  await web.login(name);
  return web;
}

/** The text between an element's tags (tags removed, entities of the test data decoded). */
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

test('a member of an organization creates a dataset through the two-stage form, with a CSV upload', async () => {
  const web = await signedIn('wm_editor');
  const form = await web.get('/dataset/new');
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<label for="field-title">Title<\/label>/);
  assert.match(form.body, new RegExp(`<option value="${orgId}"[^>]*>Manage Org</option>`), 'the organization is offered');
  assert.match(form.body, /name="license_id"/);
  assert.match(form.body, /name="extras__0__key"/);
  assert.match(form.body, /src="\/static\/[0-9a-f]{12}\/js\/manage\.js"/);

  const created = await web.post('/dataset/new', {
    title: 'Bus stops',
    name: 'wm-bus-stops',
    notes: 'All **bus** stops.',
    tag_string: 'transport, buses',
    license_id: 'cc-by',
    owner_org: orgId,
    private: 'False',
    author: 'City',
    version: '1.0',
    extras__0__key: 'source',
    extras__0__value: 'survey',
    extras__1__key: '',
    extras__1__value: '',
  });
  assert.equal(created.statusCode, 303, created.body);
  assert.equal(created.headers.location, '/dataset/wm-bus-stops/resource/new');
  const draft = await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken });
  assert.equal(draft.state, 'draft');
  assert.deepEqual(draft.tags.map((x: { name: string }) => x.name).sort(), ['buses', 'transport']);
  assert.deepEqual(draft.extras, [{ key: 'source', value: 'survey' }]);
  assert.equal(draft.license_id, 'cc-by');

  const stage2 = await web.get('/dataset/wm-bus-stops/resource/new');
  assert.equal(stage2.statusCode, 200);
  assert.match(stage2.body, /enctype="multipart\/form-data"/);
  assert.match(stage2.body, /value="go-metadata"/);
  // Finishing without any data is refused (CKAN: at least one resource).
  const empty = await web.post('/dataset/wm-bus-stops/resource/new', { save: 'go-metadata' });
  assert.equal(empty.statusCode, 400);
  assert.match(empty.body, /You must add at least one data resource/);

  const csv = 'stop,lat,lon\nMain St,1.5,2.5\nHigh St,1.6,2.6\n';
  const upload = await web.postMultipart(
    '/dataset/wm-bus-stops/resource/new',
    { name: 'Stops', description: 'The stops', format: '', url: '', save: 'go-metadata' },
    { upload: { filename: 'stops.csv', content: csv, type: 'text/csv' } },
  );
  assert.equal(upload.statusCode, 303, upload.body);
  assert.equal(upload.headers.location, '/dataset/wm-bus-stops');
  const done = await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken });
  assert.equal(done.state, 'active');
  assert.equal(done.resources.length, 1);
  const res = done.resources[0];
  assert.equal(res.url_type, 'upload');
  assert.equal(res.format, 'CSV', 'the format is guessed from the file');
  assert.equal(res.name, 'Stops');
  // The file is stored: the download route serves it.
  const download = await t.app.inject({ method: 'GET', url: new URL(res.url).pathname });
  assert.equal(download.statusCode, 200);
  assert.equal(download.body, csv);
});

test('validation errors from the action are shown next to the fields, the input kept', async () => {
  const web = await signedIn('wm_editor');
  const taken = await web.post(
    '/dataset/new',
    {
      title: 'Another <b>title</b>',
      name: 'wm-bus-stops',
      notes: 'kept notes',
      owner_org: orgId,
      private: 'False',
      author_email: 'not-an-email',
    },
    { from: '/dataset/new' },
  );
  assert.equal(taken.statusCode, 400);
  assert.match(taken.body, /<p class="field-error" id="name-error">That URL is already in use\.<\/p>/);
  assert.match(taken.body, /aria-describedby="name-help name-error"/);
  assert.match(taken.body, /id="author_email-error"/);
  assert.ok(taken.body.includes('value="Another &lt;b&gt;title&lt;/b&gt;"'), 'title kept, escaped');
  assert.match(taken.body, />kept notes<\/textarea>/);
  assert.match(taken.body, /role="alert"/);
  // Neither title nor name (CKAN: the title defaults to the name, the name is required).
  const blank = await web.post('/dataset/new', { title: '', name: '', owner_org: orgId, private: 'False' }, { from: '/dataset/new' });
  assert.equal(blank.statusCode, 400);
  assert.match(blank.body, /<p class="field-error" id="name-error">Missing value<\/p>/);
  assert.equal((await t.call('package_show', { id: 'another' }, { token: t.sysadminToken })).status, 404);
  // A name without a title: the title is the name.
  const untitled = await web.post(
    '/dataset/new',
    { title: '', name: 'wm-untitled', owner_org: orgId, private: 'True' },
    { from: '/dataset/new' },
  );
  assert.equal(untitled.statusCode, 303, untitled.body);
  const pkg = await t.ok('package_show', { id: 'wm-untitled' }, { token: t.sysadminToken });
  assert.equal(pkg.title, 'wm-untitled');
  assert.equal(pkg.private, true);
});

test('editing a dataset keeps what the form does not show; resources are edited and deleted', async () => {
  const web = await signedIn('wm_editor');
  const form = await web.get('/dataset/edit/wm-bus-stops');
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /value="Bus stops"/);
  assert.match(form.body, /value="buses, transport"|value="transport, buses"/);
  assert.match(form.body, /name="extras__0__key" type="text" value="source"/);
  const saved = await web.post('/dataset/edit/wm-bus-stops', {
    title: 'Bus stops (2024)',
    name: 'wm-bus-stops',
    notes: 'Updated.',
    tag_string: 'transport',
    license_id: 'cc-by',
    owner_org: orgId,
    private: 'False',
    extras__0__key: 'source',
    extras__0__value: 'census',
  });
  assert.equal(saved.statusCode, 303, saved.body);
  assert.equal(saved.headers.location, '/dataset/wm-bus-stops');
  const pkg = await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken });
  assert.equal(pkg.title, 'Bus stops (2024)');
  assert.deepEqual(
    pkg.tags.map((x: { name: string }) => x.name),
    ['transport'],
  );
  assert.deepEqual(pkg.extras, [{ key: 'source', value: 'census' }]);
  assert.equal(pkg.resources.length, 1, 'the resources stay');
  assert.equal(pkg.author, '', 'a field emptied in the form is cleared');

  // The uploaded file is replaced through the edit form.
  const upload = pkg.resources[0];
  const replaceForm = await web.get(`/dataset/wm-bus-stops/resource/${upload.id}/edit`);
  assert.match(replaceForm.body, /Current file:/);
  assert.match(replaceForm.body, /<input id="field-url" name="url" type="url" value=""/, 'the link field starts empty for an upload');
  const replaced = await web.postMultipart(
    `/dataset/wm-bus-stops/resource/${upload.id}/edit`,
    { name: 'Stops', description: '', format: '', url: '' },
    { upload: { filename: 'stops2.csv', content: 'stop\nNew St\n', type: 'text/csv' } },
  );
  assert.equal(replaced.statusCode, 303, replaced.body);
  const afterReplace = await t.ok('resource_show', { id: upload.id }, { token: t.sysadminToken });
  assert.match(afterReplace.url, /stops2\.csv$/);
  assert.equal((await t.app.inject({ method: 'GET', url: new URL(afterReplace.url).pathname })).body, 'stop\nNew St\n');
  // Saving without a new file keeps the file.
  const kept = await web.post(`/dataset/wm-bus-stops/resource/${upload.id}/edit`, {
    name: 'Stops (kept)',
    description: '',
    format: 'CSV',
    url: '',
  });
  assert.equal(kept.statusCode, 303, kept.body);
  const afterKeep = await t.ok('resource_show', { id: upload.id }, { token: t.sysadminToken });
  assert.equal(afterKeep.url_type, 'upload');
  assert.equal(afterKeep.url, afterReplace.url);
  assert.equal(afterKeep.name, 'Stops (kept)');

  // A resource by link, then edited, then deleted.
  const added = await web.post('/dataset/wm-bus-stops/resource/new', {
    url: 'https://example.org/timetable.json',
    name: 'Timetable',
    description: '',
    format: '',
    save: 'add',
  });
  assert.equal(added.statusCode, 303, added.body);
  assert.equal(added.headers.location, '/dataset/wm-bus-stops');
  const withLink = await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken });
  const link = withLink.resources[1];
  assert.equal(link.format, 'JSON');
  const editForm = await web.get(`/dataset/wm-bus-stops/resource/${link.id}/edit`);
  assert.equal(editForm.statusCode, 200);
  assert.match(editForm.body, /value="https:\/\/example.org\/timetable.json"/);
  const edited = await web.post(`/dataset/wm-bus-stops/resource/${link.id}/edit`, {
    url: 'https://example.org/timetable.json',
    name: 'Timetable 2',
    description: 'Weekdays',
    format: 'JSON',
  });
  assert.equal(edited.statusCode, 303, edited.body);
  assert.equal(edited.headers.location, `/dataset/wm-bus-stops/resource/${link.id}`);
  assert.equal((await t.ok('resource_show', { id: link.id }, { token: t.sysadminToken })).name, 'Timetable 2');
  const badUrl = await web.post(
    `/dataset/wm-bus-stops/resource/${link.id}/edit`,
    { url: '', name: 'X', format: 'JSON' },
    { from: `/dataset/wm-bus-stops/resource/${link.id}/edit` },
  );
  assert.ok([303, 400].includes(badUrl.statusCode));
  const removed = await web.post(
    `/dataset/wm-bus-stops/resource/${link.id}/delete`,
    {},
    { from: `/dataset/wm-bus-stops/resource/${link.id}/edit` },
  );
  assert.equal(removed.statusCode, 303);
  assert.equal((await t.call('resource_show', { id: link.id }, { token: t.sysadminToken })).status, 404);
});

test('an outsider gets 403 on the edit and new-resource forms of the dataset; anonymous visitors are sent to log in', async () => {
  const web = await signedIn('wm_outsider');
  assert.equal((await web.get('/dataset/edit/wm-bus-stops')).statusCode, 403);
  assert.equal((await web.get('/dataset/wm-bus-stops/resource/new')).statusCode, 403);
  assert.equal((await web.get('/dataset/delete/wm-bus-stops')).statusCode, 403);
  const post = await web.post('/dataset/edit/wm-bus-stops', { title: 'Hacked', name: 'wm-bus-stops' }, { from: '/' });
  assert.equal(post.statusCode, 403);
  const upload = await web.postMultipart(
    '/dataset/wm-bus-stops/resource/new',
    { name: 'x' },
    { upload: { filename: 'x.csv', content: 'a\n1\n' } },
    { from: '/' },
  );
  assert.equal(upload.statusCode, 403);
  const pkg = await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken });
  assert.equal(pkg.title, 'Bus stops (2024)');
  assert.equal(pkg.resources.length, 1);
  // Not in any organization: may not create datasets at all.
  assert.equal((await web.get('/dataset/new')).statusCode, 403);
  const anonymous = await new WebClient(t.app).get('/dataset/edit/wm-bus-stops');
  assert.equal(anonymous.statusCode, 303);
  assert.match(String(anonymous.headers.location), /^\/user\/login\?came_from=%2Fdataset%2Fedit%2Fwm-bus-stops/);
  assert.equal((await web.get('/dataset/edit/no-such-dataset')).statusCode, 404);
});

test('a create form posted without a valid CSRF token is refused and creates nothing', async () => {
  const web = await signedIn('wm_editor');
  const res = await web.post('/dataset/new', { title: 'Forged', name: 'wm-forged', owner_org: orgId, private: 'False' }, { csrf: null });
  assert.equal(res.statusCode, 403);
  const forged = await web.post('/dataset/new', { title: 'Forged', name: 'wm-forged', owner_org: orgId, private: 'False' }, { csrf: 'x' });
  assert.equal(forged.statusCode, 403);
  assert.equal((await t.call('package_show', { id: 'wm-forged' }, { token: t.sysadminToken })).status, 404);
});

test('deleting a dataset asks first, then deletes; the sysadmin purges it from the trash for good', async () => {
  const web = await signedIn('wm_editor');
  const confirm = await web.get('/dataset/delete/wm-bus-stops');
  assert.equal(confirm.statusCode, 200);
  assert.match(confirm.body, /action="\/dataset\/delete\/wm-bus-stops"/);
  const deleted = await web.post('/dataset/delete/wm-bus-stops', {});
  assert.equal(deleted.statusCode, 303);
  assert.equal(deleted.headers.location, '/dataset');
  assert.equal((await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken })).state, 'deleted');

  assert.equal((await web.get('/ckan-admin/trash')).statusCode, 403, 'not for non-sysadmins');
  const admin = await signedIn('test_sysadmin');
  const trash = await admin.get('/ckan-admin/trash');
  assert.equal(trash.statusCode, 200);
  assert.match(text(trash.body), /Bus stops \(2024\) \(wm-bus-stops\)/);
  const id = (await t.ok('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken })).id;
  const purge = await admin.post('/ckan-admin/trash', { type: 'package', id });
  assert.equal(purge.statusCode, 303);
  assert.equal((await t.call('package_show', { id: 'wm-bus-stops' }, { token: t.sysadminToken })).status, 404);
  const after = await admin.get('/ckan-admin/trash');
  assert.match(after.body, /1 item purged\./);
  assert.doesNotMatch(after.body, /wm-bus-stops/);

  // Purge all: datasets, organizations and groups at once; only for sysadmins.
  await t.ok('organization_create', { name: 'wm-gone-org' }, { token: t.sysadminToken });
  await t.ok('group_create', { name: 'wm-gone-group' }, { token: t.sysadminToken });
  await t.ok('package_create', { name: 'wm-gone-ds', owner_org: 'wm-org' }, { token: t.sysadminToken });
  await t.ok('package_delete', { id: 'wm-gone-ds' }, { token: t.sysadminToken });
  await t.ok('organization_delete', { id: 'wm-gone-org' }, { token: t.sysadminToken });
  await t.ok('group_delete', { id: 'wm-gone-group' }, { token: t.sysadminToken });
  const full = await admin.get('/ckan-admin/trash');
  for (const name of ['wm-gone-ds', 'wm-gone-org', 'wm-gone-group']) assert.ok(full.body.includes(`(${name})`), name);
  const refused = await web.post('/ckan-admin/trash', { type: 'all' }, { from: '/' });
  assert.equal(refused.statusCode, 403);
  assert.equal((await t.ok('package_show', { id: 'wm-gone-ds' }, { token: t.sysadminToken })).state, 'deleted');
  const all = await admin.post('/ckan-admin/trash', { type: 'all' });
  assert.equal(all.statusCode, 303);
  assert.equal((await t.call('package_show', { id: 'wm-gone-ds' }, { token: t.sysadminToken })).status, 404);
  assert.equal((await t.call('organization_show', { id: 'wm-gone-org' }, { token: t.sysadminToken })).status, 404);
  assert.equal((await t.call('group_show', { id: 'wm-gone-group' }, { token: t.sysadminToken })).status, 404);
  assert.match((await admin.get('/ckan-admin/trash')).body, /3 items purged\.[\s\S]*The trash is empty\./);
});

test('organization admins add members by user name, change their role and remove them', async () => {
  const web = await signedIn('wm_owner');
  const page = await web.get('/organization/members/wm-org');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /href="\/user\/wm_editor"/);
  const added = await web.post(
    '/organization/member_new/wm-org',
    { username: 'wm_newbie', role: 'member' },
    { from: '/organization/members/wm-org' },
  );
  assert.equal(added.statusCode, 303, added.body);
  assert.equal(added.headers.location, '/organization/members/wm-org');
  let members = await t.ok('member_list', { id: 'wm-org', object_type: 'user' }, { token: t.sysadminToken });
  const newbieId = (await t.ok('user_show', { id: 'wm_newbie' }, { token: t.sysadminToken })).id;
  assert.deepEqual(
    members.find((m: string[]) => m[0] === newbieId),
    [newbieId, 'user', 'Member'],
  );
  const listed = await web.get('/organization/members/wm-org');
  assert.match(listed.body, /href="\/user\/wm_newbie"/);
  const changed = await web.post(
    '/organization/member_new/wm-org',
    { username: 'wm_newbie', role: 'editor' },
    { from: '/organization/members/wm-org' },
  );
  assert.equal(changed.statusCode, 303);
  members = await t.ok('member_list', { id: 'wm-org', object_type: 'user' }, { token: t.sysadminToken });
  assert.equal(members.find((m: string[]) => m[0] === newbieId)[2], 'Editor');
  const unknown = await web.post(
    '/organization/member_new/wm-org',
    { username: 'nobody_here', role: 'member' },
    { from: '/organization/members/wm-org' },
  );
  assert.equal(unknown.statusCode, 400);
  assert.match(unknown.body, /User nobody_here does not exist\./);
  assert.match(unknown.body, /value="nobody_here"/);
  const removed = await web.post('/organization/member_delete/wm-org', { username: 'wm_newbie' }, { from: '/organization/members/wm-org' });
  assert.equal(removed.statusCode, 303);
  members = await t.ok('member_list', { id: 'wm-org', object_type: 'user' }, { token: t.sysadminToken });
  assert.equal(
    members.find((m: string[]) => m[0] === newbieId),
    undefined,
  );
  // An editor may not manage members.
  const editor = await signedIn('wm_editor');
  assert.equal((await editor.get('/organization/members/wm-org')).statusCode, 403);
  const sneaky = await editor.post('/organization/member_new/wm-org', { username: 'wm_outsider', role: 'admin' }, { from: '/' });
  assert.equal(sneaky.statusCode, 403);
});

test('organizations and groups are created, edited and deleted through forms', async () => {
  const web = await signedIn('wm_newbie');
  const form = await web.get('/organization/new');
  assert.equal(form.statusCode, 200);
  const created = await web.post('/organization/new', { title: 'New Org', name: 'wm-new-org', description: 'About *us*', image_url: '' });
  assert.equal(created.statusCode, 303, created.body);
  assert.equal(created.headers.location, '/organization/wm-new-org');
  const taken = await web.post('/organization/new', { title: 'Dup', name: 'wm-org' }, { from: '/organization/new' });
  assert.equal(taken.statusCode, 400);
  assert.match(taken.body, /id="name-error"/);
  const edit = await web.get('/organization/edit/wm-new-org');
  assert.equal(edit.statusCode, 200);
  assert.match(edit.body, /value="New Org"/);
  const saved = await web.post('/organization/edit/wm-new-org', { title: 'Renamed Org', name: 'wm-new-org', description: 'About us' });
  assert.equal(saved.statusCode, 303);
  assert.equal((await t.ok('organization_show', { id: 'wm-new-org' })).title, 'Renamed Org');
  assert.equal((await (await signedIn('wm_outsider')).get('/organization/edit/wm-new-org')).statusCode, 403);
  const del = await web.post('/organization/delete/wm-new-org', {}, { from: '/organization/delete/wm-new-org' });
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/organization');

  const group = await web.post('/group/new', { title: 'Transport', name: 'wm-transport', description: '' }, { from: '/group/new' });
  assert.equal(group.statusCode, 303, group.body);
  const members = await web.get('/group/members/wm-transport');
  assert.equal(members.statusCode, 200);
  assert.doesNotMatch(members.body, /<option value="editor"/, 'groups have no editors');
  const add = await web.post(
    '/group/member_new/wm-transport',
    { username: 'wm_outsider', role: 'member' },
    { from: '/group/members/wm-transport' },
  );
  assert.equal(add.statusCode, 303);
  const group2 = await t.ok('group_show', { id: 'wm-transport', include_users: true }, { token: t.sysadminToken });
  assert.ok(group2.users.some((u: { name: string }) => u.name === 'wm_outsider'));
});

test('the sysadmin changes the site title on /ckan-admin and the home page shows it; others get 403', async () => {
  const anonymous = await new WebClient(t.app).get('/ckan-admin');
  assert.equal(anonymous.statusCode, 303);
  assert.match(String(anonymous.headers.location), /^\/user\/login/);
  const user = await signedIn('wm_editor');
  assert.equal((await user.get('/ckan-admin')).statusCode, 403);
  assert.equal((await user.get('/ckan-admin/users')).statusCode, 403);
  const forged = await user.post('/ckan-admin', { svc_site_title: 'Hijacked' }, { from: '/' });
  assert.equal(forged.statusCode, 403);

  const admin = await signedIn('test_sysadmin');
  const form = await admin.get('/ckan-admin');
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<label for="field-svc_site_title">Site title<\/label>/);
  assert.match(form.body, /name="svc_site_intro_text"/);
  assert.match(form.body, /name="svc_site_custom_css"/);
  try {
    const bad = await admin.post('/ckan-admin', { svc_site_title: 'Ok', svc_homepage_style: '9' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /id="svc_homepage_style-error"/);
    const saved = await admin.post('/ckan-admin', {
      svc_site_title: 'Open City Data',
      svc_site_description: 'Data of the city',
      svc_site_about: '',
      svc_site_intro_text: 'Welcome',
      svc_site_custom_css: '',
      svc_homepage_style: '1',
    });
    assert.equal(saved.statusCode, 303, saved.body);
    const home = await new WebClient(t.app).get('/');
    assert.match(home.body, /<title>Open City Data<\/title>/);
    assert.equal(await t.ok('config_option_show', { key: 'svc.site_title' }, { token: t.sysadminToken }), 'Open City Data');
  } finally {
    await t.ok(
      'config_option_update',
      { 'svc.site_title': 'svc', 'svc.site_description': '', 'svc.site_intro_text': '' },
      { token: t.sysadminToken },
    );
  }
});

test('the sysadmin lists and searches users and grants and revokes the sysadmin flag', async () => {
  const admin = await signedIn('test_sysadmin');
  const list = await admin.get('/ckan-admin/users?q=wm_');
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /href="\/user\/wm_outsider"/);
  const main = list.body.slice(list.body.indexOf('<main'));
  assert.doesNotMatch(main, /href="\/user\/test_sysadmin"/, 'only users matching the search');
  const promote = await admin.post('/ckan-admin/sysadmin', { username: 'wm_outsider', status: '1' }, { from: '/ckan-admin/users' });
  assert.equal(promote.statusCode, 303);
  assert.equal((await t.ok('user_show', { id: 'wm_outsider' }, { token: t.sysadminToken })).sysadmin, true);
  const revoke = await admin.post('/ckan-admin/sysadmin', { username: 'wm_outsider', status: '0' }, { from: '/ckan-admin/users' });
  assert.equal(revoke.statusCode, 303);
  assert.equal((await t.ok('user_show', { id: 'wm_outsider' }, { token: t.sysadminToken })).sysadmin, false);
  const user = await signedIn('wm_outsider');
  const self = await user.post('/ckan-admin/sysadmin', { username: 'wm_outsider', status: '1' }, { from: '/' });
  assert.equal(self.statusCode, 403);
  assert.equal((await t.ok('user_show', { id: 'wm_outsider' }, { token: t.sysadminToken })).sysadmin, false);
});

test('an upload the loader takes leads to the resource page (the loader status is shown there)', async () => {
  const withLoader = await startApp({ plugins: ['datastore', 'loader'], config: { 'svc.loader.auto': false } });
  try {
    const owner = await withLoader.user('wl_owner');
    await withLoader.ok('organization_create', { name: 'wl-org' }, { token: owner.token });
    await withLoader.ok('package_create', { name: 'wl-ds', owner_org: 'wl-org' }, { token: owner.token });
    const web = new WebClient(withLoader.app);
    await web.login('wl_owner');
    const csv = await web.postMultipart(
      '/dataset/wl-ds/resource/new',
      { name: 'Table', format: '', url: '', save: 'add' },
      { upload: { filename: 'table.csv', content: 'a,b\n1,2\n', type: 'text/csv' } },
    );
    assert.equal(csv.statusCode, 303, csv.body);
    const id = (await withLoader.ok('package_show', { id: 'wl-ds' }, { token: owner.token })).resources[0].id;
    assert.equal(csv.headers.location, `/dataset/wl-ds/resource/${id}`);
    const pdf = await web.postMultipart(
      '/dataset/wl-ds/resource/new',
      { name: 'Report', format: '', url: '', save: 'add' },
      { upload: { filename: 'report.pdf', content: '%PDF-1.4', type: 'application/pdf' } },
    );
    assert.equal(pdf.headers.location, '/dataset/wl-ds', 'a format the loader does not take: the dataset page');
  } finally {
    await withLoader.close();
  }
});
