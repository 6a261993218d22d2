// Organizations: create, show, update/patch, list, delete/purge, list_for_user, autocomplete, hierarchy.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { onPackageChange } from '../src/model/packages.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U; // admin of acme
let bob: U; // editor of acme
let carol: U; // member of acme
let dave: U; // outsider
before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('alice');
  bob = await t.user('bob');
  carol = await t.user('carol');
  dave = await t.user('dave');
  await t.ok(
    'organization_create',
    {
      name: 'acme',
      title: 'Acme Corp',
      description: 'Makers of things',
      extras: [{ key: 'region', value: 'north' }],
      users: [
        { name: 'bob', capacity: 'editor' },
        { name: 'carol', capacity: 'member' },
      ],
    },
    { token: alice.token },
  );
});
after(async () => {
  await t?.close();
});

const as = (u: U) => ({ token: u.token });

describe('organization_create', () => {
  test('the creator becomes admin; the dict has the reference shape', async () => {
    const org = await t.ok('organization_show', { id: 'acme' });
    assert.deepEqual(Object.keys(org).sort(), [
      'approval_status',
      'created',
      'description',
      'display_name',
      'extras',
      'groups',
      'id',
      'image_display_url',
      'image_url',
      'is_organization',
      'name',
      'num_followers',
      'package_count',
      'state',
      'tags',
      'title',
      'type',
      'users',
    ]);
    assert.equal(org.type, 'organization');
    assert.equal(org.is_organization, true);
    assert.equal(org.display_name, 'Acme Corp');
    assert.equal(org.image_url, '');
    assert.deepEqual(org.tags, []);
    assert.deepEqual(
      org.extras.map((e: any) => [e.key, e.value]),
      [['region', 'north']],
    );
    assert.deepEqual(
      org.users.map((u: any) => [u.name, u.capacity]),
      [
        ['alice', 'admin'],
        ['bob', 'editor'],
        ['carol', 'member'],
      ],
    );
    assert.equal(org.users[0].email, undefined, 'embedded users never show emails');
  });

  test('anonymous callers and disabled creation are refused', async () => {
    const anon = await t.call('organization_create', { name: 'anon-org' });
    assert.equal(anon.status, 403);
    assert.equal(anon.body.error!.message, 'Access denied: Action organization_create requires an authenticated user');
    t.services.config.set('svc.auth.user_create_organizations', false);
    try {
      const r = await t.call('organization_create', { name: 'dave-org' }, as(dave));
      assert.equal(r.status, 403);
      assert.equal(r.body.error!.message, 'Access denied: User dave not authorized to create organizations');
      // sysadmins still may
      await t.ok('organization_create', { name: 'sys-org' }, { token: t.sysadminToken });
    } finally {
      t.services.config.set('svc.auth.user_create_organizations', true);
    }
  });

  test('names are unique across groups and organizations, deleted ones included', async () => {
    await t.ok('group_create', { name: 'taken-by-group' }, as(dave));
    const r = await t.call('organization_create', { name: 'taken-by-group' }, as(dave));
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error!.name, ['Group name already exists in database']);
    await t.ok('organization_create', { name: 'short-lived' }, as(dave));
    await t.ok('organization_delete', { id: 'short-lived' }, as(dave));
    const again = await t.call('organization_create', { name: 'short-lived' }, as(dave));
    assert.deepEqual(again.body.error!.name, ['Group name already exists in database']);
    const bad = await t.call('organization_create', { name: 'Bad Name' }, as(dave));
    assert.deepEqual(bad.body.error!.name, ['Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_']);
    const missing = await t.call('organization_create', {}, as(dave));
    assert.deepEqual(missing.body.error!.name, ['Missing value']);
  });

  test('only sysadmins may choose the id', async () => {
    const r = await t.call('organization_create', { name: 'with-id', id: '3f1c8d5e-9a43-4e55-8b0b-2a4c1d0e9f10' }, as(dave));
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error!.id, ['The input field id was not expected.']);
    const ok = await t.ok(
      'organization_create',
      { name: 'with-id', id: '3f1c8d5e-9a43-4e55-8b0b-2a4c1d0e9f10' },
      { token: t.sysadminToken },
    );
    assert.equal(ok.id, '3f1c8d5e-9a43-4e55-8b0b-2a4c1d0e9f10');
  });
});

describe('organization_show', () => {
  test('an organization is not found through group_show, and a missing one is 404', async () => {
    assert.equal((await t.call('group_show', { id: 'acme' })).status, 404);
    const r = await t.call('organization_show', { id: 'nope' });
    assert.equal(r.status, 404);
    assert.equal(r.body.error!.__type, 'Not Found Error');
  });

  test('users are hidden unless svc.auth.public_user_details (members still see them)', async () => {
    t.services.config.set('svc.auth.public_user_details', false);
    try {
      const anon = await t.ok('organization_show', { id: 'acme' });
      assert.equal(anon.users, undefined);
      const denied = await t.call('organization_show', { id: 'acme', include_users: true });
      assert.equal(denied.status, 403);
      const member = await t.ok('organization_show', { id: 'acme', include_users: true }, as(carol));
      assert.equal(member.users.length, 3);
    } finally {
      t.services.config.set('svc.auth.public_user_details', true);
    }
  });

  test('package_count and listed datasets: private ones only for members; at most 10 datasets', async () => {
    await t.ok('organization_create', { name: 'bigorg' }, as(alice));
    for (let i = 0; i < 12; i++) {
      await t.ok('package_create', { name: `big-${i}`, owner_org: 'bigorg', private: i < 3 }, as(alice));
    }
    const anon = await t.ok('organization_show', { id: 'bigorg', include_datasets: true });
    assert.equal(anon.package_count, 9);
    assert.equal(anon.packages.length, 9);
    assert.ok(anon.packages.every((p: any) => p.private === false));
    const admin = await t.ok('organization_show', { id: 'bigorg', include_datasets: true }, as(alice));
    assert.equal(admin.package_count, 12);
    assert.equal(admin.packages.length, 10);
    const outsider = await t.ok('organization_show', { id: 'bigorg' }, as(dave));
    assert.equal(outsider.package_count, 9);
    const noCount = await t.ok('organization_show', { id: 'bigorg', include_dataset_count: false });
    assert.equal(noCount.package_count, undefined);
    const counted = await t.ok('organization_show', {
      id: 'acme',
      include_member_count: true,
      include_extras: false,
      include_groups: false,
    });
    assert.equal(counted.member_count, 3);
    assert.equal(counted.extras, undefined);
    assert.equal(counted.groups, undefined);
  });
});

describe('organization_update / organization_patch', () => {
  test('update is a full replace: omitted users (admins too) are removed, title and description cleared', async () => {
    await t.ok(
      'organization_create',
      { name: 'replace-me', title: 'Old', description: 'Old text', users: [{ name: 'bob', capacity: 'editor' }] },
      as(alice),
    );
    const updated = await t.ok('organization_update', { id: 'replace-me', name: 'replace-me' }, as(alice));
    assert.deepEqual(updated.users, []);
    assert.equal(updated.title, '');
    assert.equal(updated.description, '');
    // alice is no longer admin
    const r = await t.call('organization_update', { id: 'replace-me', name: 'replace-me' }, as(alice));
    assert.equal(r.status, 403);
  });

  test('patch keeps what is not sent; update cannot change the type', async () => {
    await t.ok(
      'organization_create',
      { name: 'patch-me', title: 'Patch', users: [{ name: 'bob', capacity: 'editor' }], extras: [{ key: 'a', value: '1' }] },
      as(alice),
    );
    const patched = await t.ok('organization_patch', { id: 'patch-me', description: 'new' }, as(alice));
    assert.equal(patched.title, 'Patch');
    assert.equal(patched.description, 'new');
    assert.deepEqual(
      patched.users.map((u: any) => [u.name, u.capacity]),
      [
        ['alice', 'admin'],
        ['bob', 'editor'],
      ],
    );
    assert.deepEqual(
      patched.extras.map((e: any) => e.key),
      ['a'],
    );
    const renamed = await t.ok('organization_patch', { id: 'patch-me', name: 'patched' }, as(alice));
    assert.equal(renamed.name, 'patched');
    const type = await t.call(
      'organization_update',
      { id: 'patched', name: 'patched', type: 'other', users: [{ name: 'alice', capacity: 'admin' }] },
      as(alice),
    );
    assert.equal(type.status, 409);
    assert.equal(type.body.error!.message, 'Type cannot be updated');
    const clash = await t.call('organization_patch', { id: 'patched', name: 'acme' }, as(alice));
    assert.deepEqual(clash.body.error!.name, ['Group name already exists in database']);
  });

  test('editors, members and outsiders may not update', async () => {
    for (const u of [bob, carol, dave]) {
      const r = await t.call('organization_patch', { id: 'acme', title: 'Hacked' }, as(u));
      assert.equal(r.status, 403, u.name);
      assert.match(r.body.error!.message, new RegExp(`^Access denied: User ${u.name} not authorized to edit organization `));
    }
    const anon = await t.call('organization_update', { id: 'acme', name: 'acme' });
    assert.equal(anon.body.error!.message, 'Access denied: Action organization_update requires an authenticated user');
  });
});

describe('organization_list', () => {
  before(async () => {
    await t.ok('organization_create', { name: 'zeta', title: 'Alpha Zeta', description: 'the first by title' }, as(dave));
    await t.ok('organization_create', { name: 'alpha', title: 'Zulu Alpha' }, as(dave));
  });

  test('names sorted by title by default; name sort; q; organizations filter', async () => {
    const names: string[] = await t.ok('organization_list');
    assert.equal(names.indexOf('zeta') < names.indexOf('alpha'), true);
    assert.ok(!names.includes('short-lived'), 'deleted organizations are not listed');
    const byName: string[] = await t.ok('organization_list', { sort: 'name desc' });
    assert.deepEqual(byName, [...byName].sort().reverse());
    assert.deepEqual(await t.ok('organization_list', { q: 'FIRST' }), ['zeta']);
    assert.deepEqual(await t.ok('organization_list', { organizations: ['zeta', 'alpha'], sort: 'name' }), ['alpha', 'zeta']);
    assert.deepEqual(await t.ok('organization_list', { organizations: 'alpha' }, { method: 'GET' }), ['alpha']);
    assert.deepEqual(await t.ok('group_list', { q: 'zeta' }), [], 'organizations are not groups');
  });

  test('bad sort is a 409; packages / order_by sort by dataset count', async () => {
    const r = await t.call('organization_list', { sort: 'created' });
    assert.equal(r.status, 409);
    assert.equal(r.body.error!.message, 'Cannot sort by field `created`');
    const byCount: string[] = await t.ok('organization_list', { sort: 'package_count desc' });
    assert.equal(byCount[0], 'bigorg');
    assert.deepEqual(await t.ok('organization_list', { order_by: 'packages' }), byCount);
  });

  test('limits: defaults from the options, larger values clamped; offset pages', async () => {
    const all: string[] = await t.ok('organization_list');
    assert.ok(all.length > 3);
    assert.deepEqual(await t.ok('organization_list', { limit: 2, offset: 1 }), all.slice(1, 3));
    t.services.config.set('svc.group_and_organization_list_max', 2);
    t.services.config.set('svc.group_and_organization_list_all_fields_max', 1);
    try {
      assert.deepEqual(await t.ok('organization_list'), all.slice(0, 2));
      assert.deepEqual(await t.ok('organization_list', { limit: 50 }), all.slice(0, 2));
      const full = await t.ok('organization_list', { all_fields: true, limit: 10 });
      assert.equal(full.length, 1);
    } finally {
      t.services.config.set('svc.group_and_organization_list_max', 1000);
      t.services.config.set('svc.group_and_organization_list_all_fields_max', 25);
    }
  });

  test('all_fields dicts, with users/extras only when asked', async () => {
    const [org] = await t.ok('organization_list', { all_fields: true, organizations: ['acme'] });
    assert.equal(org.name, 'acme');
    assert.equal(typeof org.package_count, 'number');
    assert.equal(org.users, undefined);
    assert.equal(org.extras, undefined);
    const [withAll] = await t.ok('organization_list', {
      all_fields: true,
      organizations: ['acme'],
      include_users: true,
      include_extras: true,
      include_dataset_count: false,
    });
    assert.equal(withAll.users.length, 3);
    assert.equal(withAll.extras.length, 1);
    assert.equal(withAll.package_count, undefined);
  });

  test('all_fields: tags and num_followers only with include_tags / include_followers (default false)', async () => {
    const [org] = await t.ok('organization_list', { all_fields: true, organizations: ['acme'] });
    assert.ok(!('tags' in org), 'no tags by default');
    assert.ok(!('num_followers' in org), 'no num_followers by default');
    const [asked] = await t.ok('organization_list', {
      all_fields: true,
      organizations: ['acme'],
      include_tags: true,
      include_followers: true,
    });
    assert.deepEqual(asked.tags, []);
    assert.equal(asked.num_followers, 0);
    const [group] = await t.ok('group_list', { all_fields: true });
    if (group) assert.ok(!('tags' in group) && !('num_followers' in group));
    const shown = await t.ok('organization_show', { id: 'acme' });
    assert.deepEqual(shown.tags, []);
    assert.equal(shown.num_followers, 0, 'organization_show keeps them (include_tags/include_followers default true)');
  });
});

describe('organization_list_for_user and the hierarchy', () => {
  test('by default every organization the user belongs to, with the capacity; permission filters', async () => {
    const mine = await t.ok('organization_list_for_user', {}, as(carol));
    assert.deepEqual(
      mine.map((o: any) => [o.name, o.capacity]),
      [['acme', 'member']],
    );
    assert.deepEqual(await t.ok('organization_list_for_user', { permission: 'create_dataset' }, as(carol)), []);
    const bobs = await t.ok('organization_list_for_user', { id: 'bob', permission: 'create_dataset' });
    assert.ok(bobs.some((o: any) => o.name === 'acme' && o.capacity === 'editor'));
    assert.deepEqual(await t.ok('organization_list_for_user'), [], 'anonymous: nothing');
    const sys = await t.ok('organization_list_for_user', { permission: 'admin' }, { token: t.sysadminToken });
    assert.ok(sys.length >= 5 && sys.every((o: any) => o.capacity === 'admin'));
    const withCount = await t.ok('organization_list_for_user', { include_dataset_count: true }, as(carol));
    assert.equal(typeof withCount[0].package_count, 'number');
    assert.equal((await t.call('organization_list_for_user', { id: 'nobody' })).status, 404);
  });

  test('admins of a parent organization are admins of its sub-organizations (svc.auth.roles_that_cascade_to_sub_groups)', async () => {
    const erin = await t.user('erin');
    const frank = await t.user('frank');
    await t.ok('organization_create', { name: 'parent-org', users: [{ name: 'frank', capacity: 'editor' }] }, as(erin));
    await t.ok('organization_create', { name: 'child-org' }, as(erin));
    await t.ok('organization_patch', { id: 'child-org', groups: [{ name: 'parent-org', capacity: 'parent' }] }, as(erin));
    await t.ok('organization_patch', { id: 'child-org', users: [] }, as(erin)); // erin leaves the child
    // erin still administers the child through the parent; frank (editor) does not inherit
    await t.ok('organization_patch', { id: 'child-org', title: 'Child' }, as(erin));
    const list = await t.ok('organization_list_for_user', { permission: 'admin' }, as(erin));
    assert.deepEqual(list.map((o: any) => o.name).sort(), ['child-org', 'parent-org']);
    assert.equal((await t.call('organization_patch', { id: 'child-org', title: 'x' }, as(frank))).status, 403);
    assert.equal((await t.call('package_create', { name: 'frank-child', owner_org: 'child-org' }, as(frank))).status, 403);
    await t.ok('package_create', { name: 'erin-child', owner_org: 'child-org', private: true }, as(erin));
    assert.deepEqual((await t.ok('organization_show', { id: 'child-org' })).groups, [{ name: 'parent-org', capacity: 'parent' }]);
    // editors cascade once configured
    t.services.config.set('svc.auth.roles_that_cascade_to_sub_groups', ['admin', 'editor']);
    try {
      await t.ok('package_create', { name: 'frank-child', owner_org: 'child-org' }, as(frank));
    } finally {
      t.services.config.set('svc.auth.roles_that_cascade_to_sub_groups', ['admin']);
    }
    // loops are refused
    const loop = await t.call('organization_patch', { id: 'parent-org', groups: [{ name: 'child-org' }] }, as(erin));
    assert.equal(loop.status, 409);
    assert.deepEqual(loop.body.error!.groups, [{ name: ['This parent would create a loop in the hierarchy'] }]);
    // an organization cannot be taken over by putting it under one of yours
    const grab = await t.call('organization_patch', { id: 'acme', groups: [{ name: 'parent-org' }] }, as(erin));
    assert.equal(grab.status, 403);
  });
});

describe('organization_delete / organization_purge', () => {
  test('an organization with datasets cannot be deleted unless svc.auth.create_unowned_dataset', async () => {
    await t.ok('organization_create', { name: 'has-data', users: [{ name: 'bob', capacity: 'editor' }] }, as(alice));
    const pkg = await t.ok('package_create', { name: 'has-data-ds', owner_org: 'has-data' }, as(alice));
    const denied = await t.call('organization_delete', { id: 'has-data' }, as(bob));
    assert.equal(denied.status, 403, 'editors may not delete');
    assert.match(denied.body.error!.message, /User bob not authorized to delete organization /);
    const r = await t.call('organization_delete', { id: 'has-data' }, as(alice));
    assert.equal(r.status, 409);
    assert.equal(r.body.error!.message, 'Organization cannot be deleted while it still has datasets');
    t.services.config.set('svc.auth.create_unowned_dataset', true);
    try {
      assert.equal(await t.ok('organization_delete', { id: 'has-data' }, as(alice)), null);
    } finally {
      t.services.config.set('svc.auth.create_unowned_dataset', false);
    }
    const ds = await t.ok('package_show', { id: pkg.id }, { token: t.sysadminToken });
    assert.equal(ds.owner_org, null);
    const org = await t.ok('organization_show', { id: 'has-data' }, { token: t.sysadminToken });
    assert.equal(org.state, 'deleted');
    assert.deepEqual(org.users, [], 'memberships end with the organization');
    assert.equal((await t.call('organization_show', { id: 'has-data' }, as(alice))).status, 403);
    assert.ok(!(await t.ok('organization_list')).includes('has-data'));
  });

  test('svc.auth.user_delete_organizations=false leaves deleting to sysadmins', async () => {
    await t.ok('organization_create', { name: 'keep-me' }, as(alice));
    t.services.config.set('svc.auth.user_delete_organizations', false);
    try {
      const r = await t.call('organization_delete', { id: 'keep-me' }, as(alice));
      assert.equal(r.status, 403);
      assert.equal(r.body.error!.message, 'Access denied: User alice not authorized to delete organizations');
      await t.ok('organization_delete', { id: 'keep-me' }, { token: t.sysadminToken });
    } finally {
      t.services.config.set('svc.auth.user_delete_organizations', true);
    }
  });

  test('purge is for sysadmins, removes the organization and its memberships, frees the name', async () => {
    await t.ok('organization_create', { name: 'purge-me', users: [{ name: 'carol', capacity: 'member' }] }, as(alice));
    const r = await t.call('organization_purge', { id: 'purge-me' }, as(alice));
    assert.equal(r.status, 403);
    assert.equal(r.body.error!.message, 'Access denied');
    assert.equal(await t.ok('organization_purge', { id: 'purge-me' }, { token: t.sysadminToken }), null);
    assert.equal((await t.call('organization_show', { id: 'purge-me' }, { token: t.sysadminToken })).status, 404);
    const carols = await t.ok('organization_list_for_user', {}, as(carol));
    assert.ok(!carols.some((o: any) => o.name === 'purge-me'));
    await t.ok('organization_create', { name: 'purge-me' }, as(alice));
    assert.equal((await t.call('organization_purge', { id: 'nothing-here' }, { token: t.sysadminToken })).status, 404);
  });
});

describe('organization_delete / organization_purge of an organization with datasets', () => {
  test('the datasets made unowned are touched and the change listener is called', async () => {
    const notified: string[] = [];
    onPackageChange(t.services, (_db, id) => {
      notified.push(id);
    });
    const sys = { token: t.sysadminToken };
    t.services.config.set('svc.auth.create_unowned_dataset', true);
    try {
      for (const action of ['organization_delete', 'organization_purge']) {
        const name = `disowning-${action.split('_')[1]}`;
        await t.ok('organization_create', { name }, as(alice));
        const pkg = await t.ok('package_create', { name: `${name}-ds`, owner_org: name }, as(alice));
        notified.length = 0;
        await t.ok(action, { id: name }, sys);
        const after = await t.ok('package_show', { id: pkg.id }, sys);
        assert.equal(after.owner_org, null);
        assert.ok(after.metadata_modified > pkg.metadata_modified, `${action}: metadata_modified changes`);
        assert.deepEqual(notified, [pkg.id], `${action}: listener called`);
      }
    } finally {
      t.services.config.set('svc.auth.create_unowned_dataset', false);
    }
  });
});

describe('organization_autocomplete', () => {
  test('active organizations whose name or title contains q', async () => {
    const r = await t.ok('organization_autocomplete', { q: 'acm' });
    assert.deepEqual(r, [{ id: r[0].id, name: 'acme', title: 'Acme Corp' }]);
    assert.deepEqual(await t.ok('organization_autocomplete', { q: 'zulu' }).then((x: any[]) => x.map((o) => o.name)), ['alpha']);
    assert.deepEqual(await t.ok('organization_autocomplete', { q: 'taken-by' }), [], 'groups are not organizations');
    assert.equal((await t.ok('organization_autocomplete', { q: 'a', limit: 1 })).length, 1);
  });
});
