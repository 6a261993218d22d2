// Groups: create/show/update with datasets, list, list_authz, package_show, delete/purge, autocomplete.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { onPackageChange } from '../src/model/packages.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U; // admin of org "acme" and of group "maps"
let gina: U; // member of group "maps", outsider of acme
let dave: U; // outsider
const as = (u: U) => ({ token: u.token });
let priv: any;

before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('alice');
  gina = await t.user('gina');
  dave = await t.user('dave');
  await t.ok('organization_create', { name: 'acme' }, as(alice));
  await t.ok('package_create', { name: 'pub-ds', owner_org: 'acme' }, as(alice));
  priv = await t.ok('package_create', { name: 'priv-ds', owner_org: 'acme', private: true }, as(alice));
  await t.ok(
    'group_create',
    {
      name: 'maps',
      title: 'Maps',
      packages: [{ name: 'pub-ds' }, { id: priv.id }],
      users: [{ name: 'gina', capacity: 'member' }],
    },
    as(alice),
  );
});
after(async () => {
  await t?.close();
});

describe('group_create / group_show', () => {
  test('a group dict with its datasets; private ones only for who may see them', async () => {
    const anon = await t.ok('group_show', { id: 'maps', include_datasets: true });
    assert.equal(anon.type, 'group');
    assert.equal(anon.is_organization, false);
    assert.equal(anon.package_count, 1);
    assert.deepEqual(
      anon.packages.map((p: any) => p.name),
      ['pub-ds'],
    );
    assert.equal(anon.packages[0].organization.name, 'acme');
    // gina is a group member but may not see acme's private dataset
    assert.equal((await t.ok('group_show', { id: 'maps' }, as(gina))).package_count, 1);
    const admin = await t.ok('group_show', { id: 'maps', include_datasets: true }, as(alice));
    assert.equal(admin.package_count, 2);
    assert.deepEqual(admin.packages.map((p: any) => p.name).sort(), ['priv-ds', 'pub-ds']);
    assert.deepEqual(
      admin.users.map((u: any) => [u.name, u.capacity]),
      [
        ['alice', 'admin'],
        ['gina', 'member'],
      ],
    );
    const ds = await t.ok('package_show', { id: 'pub-ds' });
    assert.deepEqual(
      ds.groups.map((g: any) => g.name),
      ['maps'],
    );
  });

  test('group_create refuses organizations and honours svc.auth.user_create_groups', async () => {
    const r = await t.call('group_create', { name: 'sneaky', type: 'organization' }, as(dave));
    assert.equal(r.status, 409);
    assert.equal((await t.call('organization_show', { id: 'sneaky' })).status, 404);
    t.services.config.set('svc.auth.user_create_groups', false);
    try {
      const denied = await t.call('group_create', { name: 'daves' }, as(dave));
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error!.message, 'Access denied: User dave not authorized to create groups');
    } finally {
      t.services.config.set('svc.auth.user_create_groups', true);
    }
    const custom = await t.ok('group_create', { name: 'themes', type: 'theme' }, as(dave));
    assert.equal(custom.type, 'theme');
    assert.deepEqual(await t.ok('group_list', { type: 'theme' }), ['themes']);
    assert.ok(!(await t.ok('group_list')).includes('themes'));
  });

  test('a dataset that does not exist (or that you cannot see) is refused', async () => {
    const r = await t.call('group_create', { name: 'bad-pkgs', packages: [{ name: 'no-such' }, { name: 'priv-ds' }] }, as(dave));
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error!.packages, [{ id: ['Not found: Dataset'] }, { id: ['Not found: Dataset'] }]);
  });
});

describe('group_update', () => {
  test('datasets change only when packages is sent; users go when omitted', async () => {
    await t.ok('group_create', { name: 'upd', packages: [{ name: 'pub-ds' }], users: [{ name: 'gina', capacity: 'member' }] }, as(alice));
    const u1 = await t.ok(
      'group_update',
      { id: 'upd', name: 'upd', title: 'Updated', users: [{ name: 'alice', capacity: 'admin' }] },
      as(alice),
    );
    assert.equal(u1.package_count, 1);
    assert.deepEqual(
      u1.users.map((u: any) => u.name),
      ['alice'],
    );
    const u2 = await t.ok(
      'group_update',
      { id: 'upd', name: 'upd', packages: [], users: [{ name: 'alice', capacity: 'admin' }] },
      as(alice),
    );
    assert.equal(u2.package_count, 0);
    assert.equal(u2.title, '');
  });
});

describe('group_update and datasets you cannot see', () => {
  test('a group admin replacing the datasets keeps the private ones they cannot see', async () => {
    await t.ok('group_create', { name: 'ginas' }, as(gina));
    await t.ok('member_create', { id: 'ginas', object: 'priv-ds', object_type: 'package', capacity: 'public' }, { token: t.sysadminToken });
    const r = await t.ok(
      'group_update',
      { id: 'ginas', name: 'ginas', packages: [{ name: 'pub-ds' }], users: [{ name: 'gina', capacity: 'admin' }] },
      as(gina),
    );
    assert.equal(r.package_count, 1, 'gina counts what she may see');
    const all = await t.ok('group_show', { id: 'ginas', include_datasets: true }, { token: t.sysadminToken });
    assert.deepEqual(all.packages.map((p: any) => p.name).sort(), ['priv-ds', 'pub-ds']);
    await t.ok('group_purge', { id: 'ginas' }, { token: t.sysadminToken });
  });
});

describe('datasets in groups through member_create', () => {
  test('any member of a group may add and remove datasets; outsiders may not', async () => {
    const other = await t.ok('package_create', { name: 'other-ds', owner_org: 'acme' }, as(alice));
    const denied = await t.call('member_create', { id: 'maps', object: other.id, object_type: 'package', capacity: 'public' }, as(dave));
    assert.equal(denied.status, 403);
    const groupId = (await t.ok('group_show', { id: 'maps' })).id;
    assert.equal(denied.body.error!.message, `Access denied: User dave not authorized to edit group ${groupId}`);
    const m = await t.ok('member_create', { id: 'maps', object: 'other-ds', object_type: 'package', capacity: 'public' }, as(gina));
    assert.deepEqual(Object.keys(m).sort(), ['capacity', 'group_id', 'id', 'state', 'table_id', 'table_name']);
    assert.equal(m.table_id, other.id);
    assert.ok((await t.ok('package_show', { id: 'other-ds' })).groups.some((g: any) => g.name === 'maps'));
    await t.ok('member_delete', { id: 'maps', object: 'other-ds', object_type: 'package' }, as(gina));
    assert.deepEqual((await t.ok('package_show', { id: 'other-ds' })).groups, []);
    // but members may not add users
    const users = await t.call('member_create', { id: 'maps', object: 'dave', object_type: 'user', capacity: 'member' }, as(gina));
    assert.equal(users.status, 403);
  });
});

describe('group_list_authz / group_package_show', () => {
  test('groups you may add datasets to', async () => {
    assert.deepEqual(await t.ok('group_list_authz'), []);
    const ginas = await t.ok('group_list_authz', {}, as(gina));
    assert.deepEqual(
      ginas.map((g: any) => g.name),
      ['maps'],
    );
    assert.equal(ginas[0].package_count, undefined);
    const counted = await t.ok('group_list_authz', { include_dataset_count: true }, as(gina));
    assert.equal(counted[0].package_count, 1);
    assert.deepEqual(
      await t
        .ok('group_list_authz', {}, as(dave))
        .then((x: any[]) => x.map((g) => g.name))
        .then((n) => n.includes('maps')),
      false,
    );
    const sys = await t.ok('group_list_authz', {}, { token: t.sysadminToken });
    assert.ok(sys.some((g: any) => g.name === 'maps'));
    assert.ok(sys.every((g: any) => g.is_organization === false));
    assert.deepEqual(await t.ok('group_list_authz', { am_member: true }, { token: t.sysadminToken }), []);
    const available = await t.ok('group_list_authz', { available_only: true, package_id: 'pub-ds' }, as(gina));
    assert.deepEqual(available, []);
  });

  test('group_package_show lists public datasets, newest first, up to limit', async () => {
    const r = await t.ok('group_package_show', { id: 'maps' }, as(alice));
    assert.deepEqual(
      r.map((p: any) => p.name),
      ['pub-ds'],
    );
    assert.equal((await t.ok('group_package_show', { id: 'maps', limit: 0 })).length, 0);
    assert.equal((await t.call('group_package_show', { id: 'nope' })).status, 404);
  });
});

describe('group_list', () => {
  test('names; all_fields; package_count sort', async () => {
    await t.ok('group_create', { name: 'empty-group', title: 'AAA first' }, as(dave));
    const names: string[] = await t.ok('group_list');
    assert.equal(names[0], 'empty-group');
    const byCount: string[] = await t.ok('group_list', { sort: 'packages' });
    assert.equal(byCount[0], 'maps');
    const asc: string[] = await t.ok('group_list', { sort: 'package_count asc' });
    assert.equal(asc[asc.length - 1], 'maps');
    const full = await t.ok('group_list', { all_fields: true, groups: ['maps'] });
    assert.equal(full[0].package_count, 1);
    assert.equal(full[0].display_name, 'Maps');
    const bad = await t.call('group_list', { sort: 'title sideways' });
    assert.equal(bad.status, 409);
    assert.equal(bad.body.error!.message, 'Invalid sort direction `sideways`');
    assert.deepEqual((await t.call('group_list', { limit: -1 })).body.error!.limit, ['Must be a natural number']);
  });
});

describe('group_delete / group_purge / group_autocomplete', () => {
  test('delete: admins only (and svc.auth.user_delete_groups); datasets leave the group', async () => {
    await t.ok(
      'group_create',
      { name: 'doomed', packages: [{ name: 'pub-ds' }], users: [{ name: 'gina', capacity: 'member' }] },
      as(alice),
    );
    const r = await t.call('group_delete', { id: 'doomed' }, as(gina));
    assert.equal(r.status, 403);
    assert.match(r.body.error!.message, /^Access denied: User gina not authorized to delete group /);
    t.services.config.set('svc.auth.user_delete_groups', false);
    try {
      const off = await t.call('group_delete', { id: 'doomed' }, as(alice));
      assert.equal(off.body.error!.message, 'Access denied: User alice not authorized to delete groups');
    } finally {
      t.services.config.set('svc.auth.user_delete_groups', true);
    }
    await t.ok('group_delete', { id: 'doomed' }, as(alice));
    assert.ok(!(await t.ok('package_show', { id: 'pub-ds' })).groups.some((g: any) => g.name === 'doomed'));
    assert.ok(!(await t.ok('group_list')).includes('doomed'));
    assert.equal((await t.call('group_delete', { id: 'never-was' }, as(alice))).status, 404);
    assert.equal((await t.call('organization_delete', { id: 'maps' }, as(alice))).status, 404, 'a group is not an organization');
  });

  test('purge: sysadmins only', async () => {
    await t.ok('group_create', { name: 'purged', packages: [{ name: 'pub-ds' }] }, as(alice));
    assert.equal((await t.call('group_purge', { id: 'purged' }, as(alice))).status, 403);
    await t.ok('group_purge', { id: 'purged' }, { token: t.sysadminToken });
    assert.equal((await t.call('group_show', { id: 'purged' }, { token: t.sysadminToken })).status, 404);
    assert.ok((await t.ok('package_show', { id: 'pub-ds' })).groups.every((g: any) => g.name !== 'purged'));
  });

  test('autocomplete', async () => {
    assert.deepEqual(
      (await t.ok('group_autocomplete', { q: 'map' })).map((g: any) => g.name),
      ['maps'],
    );
    assert.deepEqual(await t.ok('group_autocomplete', { q: 'acme' }), []);
    assert.deepEqual((await t.call('group_autocomplete', {})).body.error!.q, ['Missing value']);
  });
});

describe('group writes that change datasets', () => {
  test('member_create/_delete, group_update packages, group_delete and group_purge touch the datasets and notify', async () => {
    const notified: string[] = [];
    onPackageChange(t.services, (_db, id) => {
      notified.push(id);
    });
    const ds = await t.ok('package_create', { name: 'touched-ds', owner_org: 'acme' }, as(alice));
    const sys = { token: t.sysadminToken };
    let last = ds.metadata_modified;
    const expectTouched = async (what: string) => {
      const now = (await t.ok('package_show', { id: ds.id }, sys)).metadata_modified;
      assert.ok(now > last, `${what}: metadata_modified ${now} should be after ${last}`);
      assert.ok(notified.includes(ds.id), `${what}: listener called`);
      last = now;
      notified.length = 0;
    };
    notified.length = 0;
    await t.ok('member_create', { id: 'maps', object: 'touched-ds', object_type: 'package', capacity: 'public' }, as(alice));
    await expectTouched('member_create');
    await t.ok('member_delete', { id: 'maps', object: 'touched-ds', object_type: 'package' }, as(alice));
    await expectTouched('member_delete');
    await t.ok('group_create', { name: 'touching' }, as(alice));
    await t.ok('group_patch', { id: 'touching', packages: [{ id: ds.id }] }, as(alice));
    await expectTouched('group_patch adding');
    await t.ok('group_patch', { id: 'touching', packages: [] }, as(alice));
    await expectTouched('group_patch removing');
    await t.ok('group_patch', { id: 'touching', packages: [{ id: ds.id }] }, as(alice));
    await expectTouched('group_patch adding again');
    await t.ok('group_delete', { id: 'touching' }, as(alice));
    await expectTouched('group_delete');
    await t.ok('group_create', { name: 'touching-purged', packages: [{ id: ds.id }] }, as(alice));
    await expectTouched('group_create with packages');
    await t.ok('group_purge', { id: 'touching-purged' }, sys);
    await expectTouched('group_purge');
  });
});
