// Members: member_create/delete/list, group_/organization_member_create/delete, member_roles_list.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U; // admin of acme
let bob: U; // editor of acme
let dave: U; // outsider
let acme: any;
const as = (u: U) => ({ token: u.token });

before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('alice');
  bob = await t.user('bob');
  dave = await t.user('dave');
  acme = await t.ok('organization_create', { name: 'acme', users: [{ name: 'bob', capacity: 'editor' }] }, as(alice));
});
after(async () => {
  await t?.close();
});

describe('member_create / member_delete', () => {
  test('admins add users; the new capacity takes effect at once; capacity changes in place', async () => {
    assert.equal((await t.call('package_create', { name: 'dave-1', owner_org: 'acme' }, as(dave))).status, 403);
    const m = await t.ok('member_create', { id: 'acme', object: 'dave', object_type: 'user', capacity: 'editor' }, as(alice));
    assert.deepEqual(m, { capacity: 'editor', group_id: acme.id, id: m.id, state: 'active', table_id: dave.id, table_name: 'user' });
    await t.ok('package_create', { name: 'dave-1', owner_org: 'acme' }, as(dave));
    const again = await t.ok('member_create', { id: acme.id, object: dave.id, object_type: 'user', capacity: 'member' }, as(alice));
    assert.equal(again.id, m.id);
    assert.equal(again.capacity, 'member');
    assert.equal((await t.call('package_create', { name: 'dave-2', owner_org: 'acme' }, as(dave))).status, 403);
    assert.equal(await t.ok('member_delete', { id: 'acme', object: 'dave', object_type: 'user' }, as(alice)), null);
    assert.equal(
      await t.ok('member_delete', { id: 'acme', object: 'dave', object_type: 'user' }, as(alice)),
      null,
      'not a member: no error',
    );
    const list = await t.ok('member_list', { id: 'acme', object_type: 'user' });
    assert.ok(!list.some((r: any) => r[0] === dave.id));
  });

  test('errors: missing group or object, bad capacity, editors, anonymous', async () => {
    const noGroup = await t.call('member_create', { id: 'nope', object: 'dave', object_type: 'user', capacity: 'member' }, as(alice));
    assert.equal(noGroup.status, 404);
    assert.equal(noGroup.body.error!.message, 'Not found: Group was not found.');
    const noUser = await t.call('member_create', { id: 'acme', object: 'nobody', object_type: 'user', capacity: 'member' }, as(alice));
    assert.equal(noUser.body.error!.message, 'Not found: User was not found.');
    const badCap = await t.call('member_create', { id: 'acme', object: 'dave', object_type: 'user', capacity: 'owner' }, as(alice));
    assert.equal(badCap.status, 409);
    assert.deepEqual(badCap.body.error!.capacity, ['role does not exist.']);
    const badType = await t.call('member_create', { id: 'acme', object: 'dave', object_type: 'tag', capacity: 'member' }, as(alice));
    assert.equal(badType.status, 409);
    const missing = await t.call('member_create', {}, as(alice));
    assert.deepEqual(missing.body.error!.id, ['Missing value']);
    assert.deepEqual(missing.body.error!.object, ['Missing value']);
    const editor = await t.call('member_create', { id: 'acme', object: 'dave', object_type: 'user', capacity: 'admin' }, as(bob));
    assert.equal(editor.status, 403);
    assert.equal(editor.body.error!.message, `Access denied: User bob not authorized to edit organization ${acme.id}`);
    const anon = await t.call('member_delete', { id: 'acme', object: 'bob', object_type: 'user' });
    assert.equal(anon.body.error!.message, 'Access denied: Action member_delete requires an authenticated user');
  });
});

describe('sub-organizations through member_create', () => {
  test('object_type group puts the organization (id) under the object; admins of the sub-organization only; loops and mixed kinds refused', async () => {
    const child = await t.ok('organization_create', { name: 'acme-labs' }, as(alice));
    const m = await t.ok('member_create', { id: 'acme-labs', object: 'acme', object_type: 'group', capacity: 'parent' }, as(alice));
    assert.equal(m.table_name, 'group');
    assert.equal(m.group_id, child.id);
    assert.equal(m.table_id, acme.id);
    assert.deepEqual((await t.ok('organization_show', { id: 'acme-labs' })).groups, [{ name: 'acme', capacity: 'parent' }]);
    assert.deepEqual((await t.ok('organization_show', { id: 'acme' })).groups, []);
    assert.deepEqual(await t.ok('member_list', { id: 'acme-labs', object_type: 'group' }), [[acme.id, 'group', 'parent']]);
    const loop = await t.call('member_create', { id: 'acme', object: 'acme-labs', object_type: 'group', capacity: 'parent' }, as(alice));
    assert.equal(loop.status, 409);
    assert.deepEqual(loop.body.error!.object, ['This parent would create a loop in the hierarchy']);
    const self = await t.call('member_create', { id: 'acme', object: 'acme', object_type: 'group', capacity: 'parent' }, as(alice));
    assert.equal(self.status, 409);
    await t.ok('group_create', { name: 'a-group' }, as(alice));
    const mixed = await t.call(
      'member_create',
      { id: 'acme-labs', object: 'a-group', object_type: 'group', capacity: 'parent' },
      as(alice),
    );
    assert.equal(mixed.status, 409);
    assert.deepEqual(mixed.body.error!.object, ['The parent of an organization must be an organization']);
    // alice may not put dave's organization under hers (that would make her its admin)
    const daves = await t.ok('organization_create', { name: 'daves-org' }, as(dave));
    const grab = await t.call('member_create', { id: 'daves-org', object: 'acme', object_type: 'group', capacity: 'parent' }, as(alice));
    assert.equal(grab.status, 403);
    assert.equal(grab.body.error!.message, `Access denied: User alice not authorized to edit organization ${daves.id}`);
    // dave may; alice then administers daves-org through acme, bob (editor) does not
    await t.ok('member_create', { id: 'daves-org', object: 'acme', object_type: 'group', capacity: 'parent' }, as(dave));
    await t.ok('organization_patch', { id: 'daves-org', title: 'Dave' }, as(alice));
    assert.equal((await t.call('organization_patch', { id: 'daves-org', title: 'Bob' }, as(bob))).status, 403);
    await t.ok('member_delete', { id: 'acme-labs', object: 'acme', object_type: 'group' }, as(alice));
    assert.deepEqual((await t.ok('organization_show', { id: 'acme-labs' })).groups, []);
    await t.ok('organization_purge', { id: 'daves-org' }, { token: t.sysadminToken });
  });
});

describe('member_list', () => {
  test('labels for users; organization datasets you may see; filters', async () => {
    const pub = await t.ok('package_create', { name: 'pub', owner_org: 'acme' }, as(alice));
    const priv = await t.ok('package_create', { name: 'priv', owner_org: 'acme', private: true }, as(alice));
    const all = await t.ok('member_list', { id: 'acme' }, as(alice));
    assert.deepEqual(
      all
        .filter((r: any) => r[1] === 'user')
        .map((r: any) => r.slice(1))
        .sort(),
      [
        ['user', 'Admin'],
        ['user', 'Editor'],
      ],
    );
    const pkgs = (await t.ok('member_list', { id: 'acme', object_type: 'package' }, as(alice))).map((r: any) => r[0]);
    assert.ok(pkgs.includes(pub.id) && pkgs.includes(priv.id));
    const anonPkgs = await t.ok('member_list', { id: 'acme', object_type: 'package' });
    assert.ok(anonPkgs.every((r: any) => r[0] !== priv.id && r[2] === 'organization'));
    assert.deepEqual(await t.ok('member_list', { id: 'acme', capacity: 'editor' }), [[bob.id, 'user', 'Editor']]);
    assert.equal((await t.call('member_list', { id: 'nope' })).status, 404);
  });

  test('without svc.auth.public_user_details, users are listed to members only', async () => {
    t.services.config.set('svc.auth.public_user_details', false);
    try {
      const anon = await t.call('member_list', { id: 'acme' });
      assert.equal(anon.status, 403);
      assert.equal(anon.body.error!.message, `Access denied: User  not authorized to read organization ${acme.id}`);
      assert.equal((await t.call('member_list', { id: 'acme', object_type: 'user' }, as(dave))).status, 403);
      await t.ok('member_list', { id: 'acme', object_type: 'package' });
      assert.equal((await t.ok('member_list', { id: 'acme', object_type: 'user' }, as(bob))).length, 2);
    } finally {
      t.services.config.set('svc.auth.public_user_details', true);
    }
  });
});

describe('group_member_create / organization_member_create and _delete', () => {
  test('admins add users by name with a role', async () => {
    const m = await t.ok('organization_member_create', { id: 'acme', username: 'dave', role: 'member' }, as(alice));
    assert.equal(m.table_id, dave.id);
    assert.equal(m.capacity, 'member');
    const mine = await t.ok('organization_list_for_user', {}, as(dave));
    assert.deepEqual(
      mine.map((o: any) => [o.name, o.capacity]),
      [['acme', 'member']],
    );
    await t.ok('organization_member_delete', { id: 'acme', username: 'dave' }, as(alice));
    assert.deepEqual(await t.ok('organization_list_for_user', {}, as(dave)), []);
  });

  test('errors', async () => {
    const role = await t.call('organization_member_create', { id: 'acme', username: 'dave', role: 'boss' }, as(alice));
    assert.equal(role.status, 409);
    assert.deepEqual(role.body.error!.role, ['role does not exist.']);
    const user = await t.call('organization_member_create', { id: 'acme', username: 'ghost', role: 'member' }, as(alice));
    assert.equal(user.status, 409);
    assert.deepEqual(user.body.error!.username, ['User ghost does not exist.']);
    const org = await t.call('organization_member_create', { id: 'nope', username: 'dave', role: 'member' }, as(alice));
    assert.equal(org.status, 404);
    assert.equal(org.body.error!.message, 'Not found: Organization not found');
    const editor = await t.call('organization_member_create', { id: 'acme', username: 'dave', role: 'member' }, as(bob));
    assert.equal(editor.status, 403);
    assert.equal(editor.body.error!.message, 'Access denied: User bob not authorized to add members');
    const del = await t.call('organization_member_delete', { id: 'acme', username: 'alice' }, as(bob));
    assert.equal(del.status, 403);
    assert.equal(del.body.error!.message, `Access denied: User bob not authorized to delete organization ${acme.id} members`);
    assert.equal(
      (await t.call('group_member_create', { id: 'acme', username: 'dave', role: 'member' }, as(alice))).status,
      404,
      'acme is not a group',
    );
  });

  test('groups too', async () => {
    await t.ok('group_create', { name: 'maps' }, as(alice));
    await t.ok('group_member_create', { id: 'maps', username: 'dave', role: 'admin' }, as(alice));
    await t.ok('group_patch', { id: 'maps', title: 'Dave was here' }, as(dave));
    await t.ok('group_member_delete', { id: 'maps', username: 'dave' }, as(alice));
    assert.equal((await t.call('group_patch', { id: 'maps', title: 'again' }, as(dave))).status, 403);
  });
});

describe('member_roles_list', () => {
  test('organizations have editors, groups do not', async () => {
    assert.deepEqual(await t.ok('member_roles_list'), [
      { text: 'Admin', value: 'admin' },
      { text: 'Editor', value: 'editor' },
      { text: 'Member', value: 'member' },
    ]);
    assert.deepEqual(await t.ok('member_roles_list', { group_type: 'group' }, { method: 'GET' }), [
      { text: 'Admin', value: 'admin' },
      { text: 'Member', value: 'member' },
    ]);
  });
});
