import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let sys: string;
let editor: { id: string; name: string; token: string };
let member: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let orgId: string;
let otherOrgId: string;

/** An organization (or group) made by a sysadmin, with these users as members. */
async function makeGroup(name: string, members: [string, string][] = [], isOrg = true): Promise<string> {
  const users = members.map(([userName, capacity]) => ({ name: userName, capacity }));
  const g = await t.ok(isOrg ? 'organization_create' : 'group_create', { name, title: name.toUpperCase(), users }, { token: sys });
  return g.id;
}

before(async () => {
  t = await startApp({ plugins: [] });
  sys = t.sysadminToken;
  editor = await t.user('ed');
  member = await t.user('mem');
  outsider = await t.user('outsider');
  orgId = await makeGroup('org1', [
    [editor.name, 'editor'],
    [member.name, 'member'],
  ]);
  otherOrgId = await makeGroup('org2', [[member.name, 'admin']]);
});
after(async () => {
  await t?.close();
});

test('package_create returns the full dict, package_show shows it', async () => {
  const pkg = await t.ok(
    'package_create',
    {
      name: 'first-ds',
      owner_org: 'org1',
      notes: 'About it',
      license_id: 'cc-by',
      version: '1.0',
      tags: [{ name: 'economy' }, { name: 'health care' }],
      extras: [
        { key: 'z', value: '1' },
        { key: 'a', value: '2' },
      ],
      resources: [{ url: 'http://example.org/a.csv' }, { url: 'http://example.org/b', format: 'json', name: 'B' }],
    },
    { token: editor.token },
  );
  assert.deepEqual(Object.keys(pkg), [...Object.keys(pkg)].sort());
  for (const k of [
    'author',
    'author_email',
    'creator_user_id',
    'extras',
    'groups',
    'id',
    'isopen',
    'license_id',
    'license_title',
    'license_url',
    'maintainer',
    'maintainer_email',
    'metadata_created',
    'metadata_modified',
    'name',
    'notes',
    'num_resources',
    'num_tags',
    'organization',
    'owner_org',
    'private',
    'relationships_as_object',
    'relationships_as_subject',
    'resources',
    'state',
    'tags',
    'title',
    'type',
    'url',
    'version',
  ]) {
    assert.ok(k in pkg, `missing ${k}`);
  }
  assert.equal(pkg.title, 'first-ds');
  assert.equal(pkg.owner_org, orgId);
  assert.equal(pkg.organization.name, 'org1');
  assert.equal(pkg.creator_user_id, editor.id);
  assert.equal(pkg.isopen, true);
  assert.equal(pkg.license_title, 'Creative Commons Attribution');
  assert.equal(pkg.type, 'dataset');
  assert.equal(pkg.state, 'active');
  assert.equal(pkg.private, false);
  assert.equal(pkg.author, null);
  assert.deepEqual(pkg.extras, [
    { key: 'a', value: '2' },
    { key: 'z', value: '1' },
  ]);
  assert.deepEqual(
    pkg.tags.map((x: any) => x.name),
    ['economy', 'health care'],
  );
  assert.equal(pkg.num_tags, 2);
  assert.equal(pkg.num_resources, 2);
  assert.equal(pkg.resources[0].format, 'CSV');
  assert.equal(pkg.resources[1].format, 'JSON');
  assert.equal(pkg.resources[1].position, 1);
  assert.equal(pkg.resources[0].datastore_active, false);
  assert.equal(pkg.resources[0].package_id, pkg.id);
  const shown = await t.ok('package_show', { id: 'first-ds' }, { method: 'GET' });
  assert.deepEqual(shown, pkg);
  const byId = await t.ok('package_show', { id: pkg.id });
  assert.equal(byId.name, 'first-ds');
});

test('name rules: messages accumulate; URL in use; title defaults to name', async () => {
  let r = await t.call('package_create', { name: 'x', owner_org: 'org1' }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.equal(r.body.error!.__type, 'Validation Error');
  assert.deepEqual(r.body.error!.name, ['Must be at least 2 characters long', 'Name "x" length is less than minimum 2']);
  r = await t.call('package_create', { name: 'Bad Name', owner_org: 'org1' }, { token: editor.token });
  assert.deepEqual(r.body.error!.name, ['Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_']);
  r = await t.call('package_create', { owner_org: 'org1' }, { token: editor.token });
  assert.deepEqual(r.body.error!.name, ['Missing value']);
  r = await t.call('package_create', { name: 'a'.repeat(101), owner_org: 'org1' }, { token: editor.token });
  assert.deepEqual(r.body.error!.name, [
    'Name must be a maximum of 100 characters long',
    `Name "${'a'.repeat(101)}" length is more than maximum 100`,
  ]);
  r = await t.call('package_create', { name: 'edit', owner_org: 'org1' }, { token: editor.token });
  assert.deepEqual(r.body.error!.name, ['That name cannot be used']);
  await t.ok('package_create', { name: 'taken', owner_org: 'org1' }, { token: editor.token });
  r = await t.call('package_create', { name: 'taken', owner_org: 'org1', version: 'v'.repeat(101) }, { token: editor.token });
  assert.deepEqual(r.body.error!.name, ['That URL is already in use.']);
  assert.deepEqual(r.body.error!.version, ['Version must be a maximum of 100 characters long']);
  const shown = await t.ok('package_show', { id: 'taken' });
  assert.equal(shown.title, 'taken');
});

test('owner_org rules', async () => {
  let r = await t.call('package_create', { name: 'no-org' }, { token: sys });
  assert.deepEqual(r.body.error!.owner_org, ['An organization must be provided']);
  r = await t.call('package_create', { name: 'no-org', owner_org: 'nope' }, { token: sys });
  assert.deepEqual(r.body.error!.owner_org, ['Organization does not exist']);
  // a member may not create datasets (needs editor or admin somewhere)
  r = await t.call('package_create', { name: 'by-member', owner_org: 'org1' }, { token: outsider.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, 'Access denied: User outsider not authorized to create packages');
  // member is admin of org2 but only member of org1
  r = await t.call('package_create', { name: 'by-member', owner_org: 'org1' }, { token: member.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, 'Access denied: User mem not authorized to add dataset to this organization');
  // moving a dataset needs create_dataset in the new organization
  await t.ok('package_create', { name: 'stay-home', owner_org: 'org1' }, { token: editor.token });
  r = await t.call('package_patch', { id: 'stay-home', owner_org: 'org2' }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.owner_org, ['You cannot add a dataset to this organization']);
  assert.equal((await t.ok('package_show', { id: 'stay-home' })).owner_org, orgId);
  r = await t.call('package_create', { name: 'anon', owner_org: 'org1' });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, 'Access denied: User  not authorized to create packages');
});

test('unowned datasets when svc.auth.create_unowned_dataset is on', async () => {
  const t2 = await startApp({ plugins: [], config: { 'svc.auth.create_unowned_dataset': true } });
  try {
    const u = await t2.user('loner');
    const pkg = await t2.ok('package_create', { name: 'unowned' }, { token: u.token });
    assert.equal(pkg.owner_org, null);
    assert.equal(pkg.organization, null);
    const r = await t2.call('package_create', { name: 'unowned-private', private: true }, { token: u.token });
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error!.private, ["Datasets with no organization can't be private."]);
    // anonymous still may not (anon_create_dataset is off)
    assert.equal((await t2.call('package_create', { name: 'anon-ds' })).status, 403);
    await t2.ok('package_update', { id: 'unowned', notes: 'mine' }, { token: u.token });
  } finally {
    await t2.close();
  }
});

test('unowned datasets: the package_create rule decides who may change them (reference §6.4)', async () => {
  const loner = await t.user('loner-main');
  t.services.config.set('svc.auth.create_unowned_dataset', true);
  let pkg: any;
  try {
    pkg = await t.ok('package_create', { name: 'unowned-rule' }, { token: loner.token });
    // both unowned flags on: anyone logged in may create, so may change it
    await t.ok('package_patch', { id: pkg.id, notes: 'by outsider' }, { token: outsider.token });
    assert.equal((await t.call('package_patch', { id: pkg.id, notes: 'anon' })).status, 403, 'anonymous needs anon_create_dataset');
    t.services.config.set('svc.auth.anon_create_dataset', true);
    try {
      await t.ok('package_patch', { id: pkg.id, notes: 'anon' });
    } finally {
      t.services.config.set('svc.auth.anon_create_dataset', false);
    }
  } finally {
    t.services.config.set('svc.auth.create_unowned_dataset', false);
  }
  // flags off: editors/admins of some organization, not the creator who is in none
  const r = await t.call('package_patch', { id: pkg.id, notes: 'by creator' }, { token: loner.token });
  assert.equal(r.status, 403);
  assert.equal((await t.call('package_patch', { id: pkg.id, notes: 'x' }, { token: outsider.token })).status, 403);
  // the editor gets past auth; without create_unowned_dataset the dataset then needs an organization
  const byEditor = await t.call('package_patch', { id: pkg.id, notes: 'by editor' }, { token: editor.token });
  assert.equal(byEditor.status, 409);
  assert.deepEqual(byEditor.body.error!.owner_org, ['An organization must be provided']);
  assert.equal((await t.call('package_delete', { id: pkg.id }, { token: loner.token })).status, 403);
  await t.ok('package_delete', { id: pkg.id }, { token: member.token }); // admin of org2
});

test('id and state only for sysadmins', async () => {
  const id = randomUUID();
  let r = await t.call('package_create', { id, name: 'with-id', owner_org: 'org1' }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.id, ['The input field id was not expected.']);
  const mine = await t.ok('package_create', { name: 'draft-try', owner_org: 'org1', state: 'draft' }, { token: editor.token });
  assert.equal(mine.state, 'active');
  const pkg = await t.ok('package_create', { id, name: 'with-id', owner_org: 'org1', state: 'draft' }, { token: sys });
  assert.equal(pkg.id, id);
  assert.equal(pkg.state, 'draft');
  r = await t.call('package_create', { id, name: 'with-id-2', owner_org: 'org1' }, { token: sys });
  assert.deepEqual(r.body.error!.id, ['Dataset id already exists']);
  r = await t.call('package_create', { id: 'nope', name: 'with-id-3', owner_org: 'org1' }, { token: sys });
  assert.deepEqual(r.body.error!.id, ['Invalid id provided']);
});

test('state on update: anyone who may update the dataset may change it (draft -> active)', async () => {
  const draft = await t.ok('package_create', { name: 'editor-draft', owner_org: 'org1', state: 'draft' }, { token: sys });
  assert.equal(draft.state, 'draft');
  const activated = await t.ok('package_patch', { id: 'editor-draft', state: 'active' }, { token: editor.token });
  assert.equal(activated.state, 'active');
  const back = await t.ok('package_update', { id: 'editor-draft', name: 'editor-draft', state: 'draft' }, { token: editor.token });
  assert.equal(back.state, 'draft');
  assert.equal((await t.call('package_patch', { id: 'editor-draft', state: 'active' }, { token: member.token })).status, 403);
  assert.equal((await t.ok('package_show', { id: 'editor-draft' }, { token: sys })).state, 'draft');
});

test('tags, tag_string, extras validation', async () => {
  const r = await t.call(
    'package_create',
    {
      name: 'tagged',
      owner_org: 'org1',
      tags: [{ name: 'ok' }, { name: 'x' }, { name: 'bad!' }],
      extras: [
        { key: 'k', value: '1' },
        { key: 'k', value: '2' },
        { key: 'title', value: 'x' },
      ],
    },
    { token: editor.token },
  );
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.tags, [
    'Tag "x" length is less than minimum 2',
    'Tag "bad!" can only contain alphanumeric characters, spaces (" "), hyphens ("-"), underscores ("_") or dots (".")',
  ]);
  assert.deepEqual(r.body.error!.extras_validation, ['Duplicate key "k"']);
  assert.deepEqual(r.body.error!.extras, [{}, {}, { key: ['There is a schema field with the same name'] }]);
  assert.equal((await t.call('package_show', { id: 'tagged' })).status, 404);
  const pkg = await t.ok('package_create', { name: 'tagged', owner_org: 'org1', tag_string: 'alpha, beta,gamma' }, { token: editor.token });
  assert.deepEqual(
    pkg.tags.map((x: any) => x.name),
    ['alpha', 'beta', 'gamma'],
  );
  assert.deepEqual(Object.keys(pkg.tags[0]).sort(), ['display_name', 'id', 'name', 'state', 'vocabulary_id']);
  const tags = await t.ok('tag_list', {}, { method: 'GET' });
  for (const n of ['alpha', 'beta', 'gamma', 'economy']) assert.ok(tags.includes(n), n);
  assert.deepEqual(await t.ok('tag_list', { query: 'alp' }), ['alpha']);
  const full = await t.ok('tag_list', { query: 'alp', all_fields: true });
  assert.equal(full[0].name, 'alpha');
  const missing = await t.call('package_show', {});
  assert.deepEqual(missing.body.error!.name_or_id, ['Missing value']);
});

test('private, draft and deleted datasets: 403 for outsiders', async () => {
  const priv = await t.ok('package_create', { name: 'secret', owner_org: 'org1', private: true }, { token: editor.token });
  assert.equal(priv.private, true);
  let r = await t.call('package_show', { id: 'secret' }, { token: outsider.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.__type, 'Authorization Error');
  assert.equal(r.body.error!.message, 'Access denied: User outsider not authorized to read package secret');
  r = await t.call('package_show', { id: 'secret' });
  assert.equal(r.status, 403);
  assert.equal((await t.call('package_show', { id: 'secret' }, { token: member.token })).status, 200);
  assert.equal((await t.call('package_show', { id: 'does-not-exist' })).status, 404);
  await t.ok('package_create', { name: 'drafty', owner_org: 'org1', state: 'draft' }, { token: sys });
  assert.equal((await t.call('package_show', { id: 'drafty' }, { token: outsider.token })).status, 403);
  assert.ok(!(await t.ok('package_list', {})).includes('secret'));
  assert.ok(!(await t.ok('package_list', {})).includes('drafty'));
});

test('package_update replaces; package_patch merges; metadata_modified moves', async () => {
  const group = await makeGroup('grp-a', [[editor.name, 'member']], false);
  const pkg = await t.ok(
    'package_create',
    {
      name: 'upd',
      owner_org: 'org1',
      notes: 'n',
      author: 'A',
      tags: [{ name: 'keep' }],
      extras: [{ key: 'e', value: 'v' }],
      resources: [{ url: 'http://x.org/1.csv', description: 'd', name: 'one', hash: 'h' }],
      groups: [{ name: 'grp-a' }],
      custom_thing: { a: [1, 2] },
    },
    { token: editor.token },
  );
  assert.deepEqual(
    pkg.groups.map((g: any) => g.id),
    [group],
  );
  assert.deepEqual(Object.keys(pkg.groups[0]).sort(), ['description', 'display_name', 'id', 'image_display_url', 'name', 'title']);
  assert.deepEqual(pkg.custom_thing, { a: [1, 2] });
  await new Promise((res) => setTimeout(res, 5));
  const updated = await t.ok(
    'package_update',
    { id: pkg.id, title: 'New', resources: [{ id: pkg.resources[0].id, url: 'http://x.org/2.csv' }] },
    { token: editor.token },
  );
  assert.equal(updated.name, 'upd');
  assert.equal(updated.title, 'New');
  assert.equal(updated.notes, null);
  assert.equal(updated.author, null);
  assert.deepEqual(updated.tags, []);
  assert.deepEqual(updated.extras, []);
  assert.deepEqual(updated.groups, []);
  assert.equal(updated.custom_thing, undefined);
  assert.equal(updated.owner_org, orgId);
  assert.equal(updated.resources.length, 1);
  assert.equal(updated.resources[0].description, '');
  assert.equal(updated.resources[0].name, 'one');
  assert.equal(updated.resources[0].hash, 'h');
  assert.equal(updated.resources[0].url, 'http://x.org/2.csv');
  assert.ok(updated.metadata_modified > pkg.metadata_modified);
  assert.equal(updated.metadata_created, pkg.metadata_created);
  const patched = await t.ok('package_patch', { id: 'upd', notes: 'patched', tags: [{ name: 'p1' }] }, { token: editor.token });
  assert.equal(patched.title, 'New');
  assert.equal(patched.notes, 'patched');
  assert.deepEqual(
    patched.tags.map((x: any) => x.name),
    ['p1'],
  );
  assert.equal(patched.resources.length, 1);
  assert.equal(patched.resources[0].id, pkg.resources[0].id);
  // omitting resources on update removes them
  const bare = await t.ok('package_update', { id: 'upd', name: 'upd-renamed' }, { token: editor.token });
  assert.equal(bare.name, 'upd-renamed');
  assert.deepEqual(bare.resources, []);
  // outsiders may not
  const r = await t.call('package_patch', { id: 'upd-renamed', notes: 'x' }, { token: outsider.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, `Access denied: User outsider not authorized to edit package ${pkg.id}`);
  assert.equal((await t.call('package_update', { id: 'nope-nope' }, { token: editor.token })).status, 404);
  assert.deepEqual((await t.call('package_update', {}, { token: editor.token })).body.error!.id, ['Missing value']);
  // private flag kept when not sent; editors may set it
  const priv = await t.ok('package_patch', { id: 'upd-renamed', private: true }, { token: editor.token });
  assert.equal(priv.private, true);
  assert.equal((await t.ok('package_update', { id: 'upd-renamed' }, { token: editor.token })).private, true);
});

test('groups need manage_group; an unknown group is a Validation Error and saves nothing', async () => {
  await makeGroup('grp-closed', [], false);
  let r = await t.call('package_create', { name: 'grouped', owner_org: 'org1', groups: [{ name: 'grp-closed' }] }, { token: editor.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, 'Access denied: User ed not authorized to edit these groups');
  r = await t.call('package_create', { name: 'grouped', owner_org: 'org1', groups: [{ name: 'no-such-group' }] }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.groups, ['Group no-such-group was not found.']);
  assert.equal((await t.call('package_show', { id: 'grouped' }, { token: sys })).status, 404);
  const pkg = await t.ok('package_create', { name: 'grouped', owner_org: 'org1', groups: [{ name: 'grp-closed' }] }, { token: sys });
  assert.equal(pkg.groups[0].name, 'grp-closed');
  // an editor may keep a group they cannot manage (it is not added by them)
  const kept = await t.ok('package_patch', { id: 'grouped', notes: 'x' }, { token: editor.token });
  assert.equal(kept.groups.length, 1);
});

test('package_delete, package_list, dataset_purge', async () => {
  const pkg = await t.ok(
    'package_create',
    { name: 'doomed', owner_org: 'org1', tags: [{ name: 'only-here' }], groups: [{ name: 'grp-a' }] },
    { token: editor.token },
  );
  assert.equal(pkg.groups.length, 1);
  await t.services.db.query("INSERT INTO package_members (package_id, user_id, capacity) VALUES ($1, $2, 'editor')", [pkg.id, outsider.id]);
  assert.ok((await t.ok('package_list', {})).includes('doomed'));
  let r = await t.call('package_delete', { id: 'doomed' }, { token: outsider.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, `Access denied: User outsider not authorized to delete package ${pkg.id}`);
  assert.equal(await t.ok('package_delete', { id: 'doomed' }, { token: editor.token }), null);
  const left = await t.services.db.query(
    "SELECT (SELECT count(*) FROM members WHERE table_name = 'package' AND table_id = $1)::int AS m, (SELECT count(*) FROM package_members WHERE package_id = $1)::int AS c",
    [pkg.id],
  );
  assert.deepEqual(left.rows[0], { m: 0, c: 0 });
  assert.ok(!(await t.ok('package_list', {})).includes('doomed'));
  assert.equal((await t.call('package_show', { id: 'doomed' }, { token: outsider.token })).status, 403);
  assert.equal((await t.ok('package_show', { id: 'doomed' }, { token: editor.token })).state, 'deleted');
  // the name can be reused: the deleted dataset is renamed to its id
  const again = await t.ok('package_create', { name: 'doomed', owner_org: 'org1' }, { token: editor.token });
  assert.notEqual(again.id, pkg.id);
  assert.equal((await t.ok('package_show', { id: pkg.id }, { token: sys })).name, pkg.id);
  r = await t.call('dataset_purge', { id: pkg.id }, { token: editor.token });
  assert.equal(r.status, 403);
  assert.equal(await t.ok('dataset_purge', { id: pkg.id }, { token: sys }), null);
  assert.equal((await t.call('package_show', { id: pkg.id }, { token: sys })).status, 404);
  const tags = await t.services.db.query("SELECT 1 FROM tags WHERE name = 'only-here'");
  assert.equal(tags.rows.length, 0);
});

test('package_list paging and current_package_list_with_resources', async () => {
  const all = await t.ok('package_list', {});
  assert.deepEqual(all, [...all].sort());
  const page = await t.ok('package_list', { limit: 2, offset: 1 }, { method: 'GET' });
  assert.deepEqual(page, all.slice(1, 3));
  await t.ok('package_patch', { id: 'first-ds', notes: 'touched' }, { token: editor.token });
  const recent = await t.ok('current_package_list_with_resources', { limit: 3 });
  assert.equal(recent.length, 3);
  assert.equal(recent[0].name, 'first-ds');
  assert.ok(recent[0].resources.length === 2);
  for (let i = 1; i < recent.length; i++) assert.ok(recent[i - 1].metadata_modified >= recent[i].metadata_modified);
  const second = await t.ok('current_package_list_with_resources', { limit: 1, page: 2 });
  assert.equal(second[0].name, recent[1].name);
  // page without limit is ignored (CKAN: offset 0), the default limit applies
  const noLimit = await t.ok('current_package_list_with_resources', { page: 2 });
  const firstTen = await t.ok('current_package_list_with_resources', {});
  assert.ok(firstTen.length > 0);
  assert.deepEqual(
    noLimit.map((p: any) => p.name),
    firstTen.map((p: any) => p.name),
  );
  const asUser = await t.ok('current_package_list_with_resources', { limit: 1000 }, { token: editor.token });
  assert.ok(!asUser.some((p: any) => p.private));
  const asSys = await t.ok('current_package_list_with_resources', { limit: 1000 }, { token: sys });
  assert.ok(asSys.some((p: any) => p.private));
  assert.ok(!asSys.some((p: any) => p.state !== 'active'));
});

test('autocompletes and license_list', async () => {
  await t.ok('package_create', { name: 'river-levels', title: 'Water of the Thames', owner_org: 'org1' }, { token: editor.token });
  const byName = await t.ok('package_autocomplete', { q: 'river' }, { method: 'GET' });
  assert.deepEqual(byName[0], { name: 'river-levels', title: 'Water of the Thames', match_field: 'name', match_displayed: 'river-levels' });
  const byTitle = await t.ok('package_autocomplete', { q: 'thames' });
  assert.deepEqual(byTitle[0], {
    name: 'river-levels',
    title: 'Water of the Thames',
    match_field: 'title',
    match_displayed: 'Water of the Thames (river-levels)',
  });
  assert.deepEqual(await t.ok('format_autocomplete', { q: 'cs' }), ['csv']);
  const licenses = await t.ok('license_list', {}, { method: 'GET' });
  assert.equal(licenses.length, 15);
  assert.deepEqual(
    licenses.map((l: any) => l.id),
    [
      'notspecified',
      'odc-pddl',
      'odc-odbl',
      'odc-by',
      'cc-zero',
      'cc-by',
      'cc-by-sa',
      'gfdl',
      'other-open',
      'other-pd',
      'other-at',
      'uk-ogl',
      'cc-nc',
      'other-nc',
      'other-closed',
    ],
  );
  for (const l of licenses) {
    assert.equal(Object.keys(l).length, 12);
    for (const v of Object.values(l)) assert.equal(typeof v, 'string');
  }
  assert.equal(licenses.find((l: any) => l.id === 'cc-by').od_conformance, 'approved');
  assert.equal(licenses.find((l: any) => l.id === 'cc-nc').is_generic, 'False');
});

test('bulk updates and package_owner_org_update', async () => {
  const a = await t.ok('package_create', { name: 'bulk-a', owner_org: 'org2' }, { token: member.token });
  const b = await t.ok('package_create', { name: 'bulk-b', owner_org: 'org1' }, { token: editor.token });
  // member is admin of org2: only org2's dataset changes
  assert.equal(await t.ok('bulk_update_private', { datasets: [a.id, b.id], org_id: otherOrgId }, { token: member.token }), null);
  assert.equal((await t.ok('package_show', { id: a.id }, { token: sys })).private, true);
  assert.equal((await t.ok('package_show', { id: b.id }, { token: sys })).private, false);
  // editor is not admin of org1
  assert.equal((await t.call('bulk_update_private', { datasets: [b.id], org_id: orgId }, { token: editor.token })).status, 403);
  await t.ok('bulk_update_public', { datasets: [a.id], org_id: otherOrgId }, { token: member.token });
  assert.equal((await t.ok('package_show', { id: a.id })).private, false);
  await t.ok('bulk_update_delete', { datasets: [a.id], org_id: otherOrgId }, { token: member.token });
  assert.equal((await t.ok('package_show', { id: a.id }, { token: sys })).state, 'deleted');
  assert.equal((await t.call('package_owner_org_update', { id: b.id, organization_id: 'org2' }, { token: editor.token })).status, 403);
  await t.ok('package_owner_org_update', { id: b.id, organization_id: 'org2' }, { token: sys });
  assert.equal((await t.ok('package_show', { id: b.id })).organization.name, 'org2');
});

test('bulk updates on an organization that does not exist: 404', async () => {
  for (const action of ['bulk_update_private', 'bulk_update_public', 'bulk_update_delete']) {
    const r = await t.call(action, { datasets: ['whatever'], org_id: 'no-such-org' }, { token: editor.token });
    assert.equal(r.status, 404, action);
    assert.equal(r.body.error!.__type, 'Not Found Error');
  }
});

test('ckanapi dump lines round-trip their custom fields', async () => {
  const fs = await import('node:fs');
  const lines = fs
    .readFileSync(new URL('./fixtures/open-canada-obd-dataset.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n');
  const first = JSON.parse(lines[0]);
  await makeGroup(first.owner_org);
  const created = await t.ok('package_create', first, { token: sys });
  assert.equal(created.id, first.id);
  const shown = await t.ok('package_show', { id: first.id });
  for (const k of ['notes_translated', 'title_translated', 'keywords', 'subject', 'jurisdiction', 'org_section', 'audience']) {
    if (k in first) assert.deepEqual(shown[k], first[k], k);
  }
  assert.equal(shown.type, first.type);
  assert.equal(shown.resources.length, first.resources.length);
  assert.deepEqual(shown.resources[0].name_translated, first.resources[0].name_translated);
  assert.deepEqual(shown.resources[0].language, first.resources[0].language);
  assert.equal(shown.resources[0].url, first.resources[0].url);
  // show -> update round trip changes nothing but metadata_modified
  const again = await t.ok('package_update', shown, { token: sys });
  const { metadata_modified: _a, ...x } = again;
  const { metadata_modified: _b, ...y } = shown;
  const strip = (o: any) => ({ ...o, resources: o.resources.map(({ metadata_modified: _m, ...r }: any) => r) });
  assert.deepEqual(strip(x), strip(y));
});

test('change listeners hear every write to a dataset, inside its transaction', async () => {
  const { onPackageChange } = await import('../src/model/packages.ts');
  const heard: [string, string][] = [];
  onPackageChange(t.services, async (db, id, change) => {
    const r = await db.query('SELECT name FROM packages WHERE id = $1', [id]);
    heard.push([r.rows[0]?.name ?? id, change]);
  });
  const pkg = await t.ok('package_create', { name: 'heard', owner_org: 'org1' }, { token: editor.token });
  const res = await t.ok('resource_create', { package_id: pkg.id, url: 'http://h/1' }, { token: editor.token });
  await t.ok('resource_delete', { id: res.id }, { token: editor.token });
  await t.ok('package_delete', { id: pkg.id }, { token: editor.token });
  await t.ok('dataset_purge', { id: pkg.id }, { token: sys });
  assert.deepEqual(heard, [
    ['heard', 'changed'],
    ['heard', 'changed'],
    ['heard', 'changed'],
    ['heard', 'deleted'],
    ['heard', 'purged'],
  ]);
});
