// Organization and group hierarchy: parents through `groups`, loops, who may link, cascade of
// capacities to every descendant, group_tree and group_tree_section.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, asSysadmin, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let root: TestUser; // admin of gov (the top organization)
let edith: TestUser; // editor of gov
let mia: TestUser; // member of gov
let hal: TestUser; // admin of health (a sub-organization) only
let out: TestUser; // outsider
const sys = () => asSysadmin(t);

before(async () => {
  t = await startApp({ plugins: [] });
  root = await t.user('root');
  edith = await t.user('edith');
  mia = await t.user('mia');
  hal = await t.user('hal');
  out = await t.user('out');
  // gov > health > (clinics, hospitals); gov > transport; other (top level)
  await t.ok(
    'organization_create',
    {
      name: 'gov',
      title: 'Government',
      users: [
        { name: 'edith', capacity: 'editor' },
        { name: 'mia', capacity: 'member' },
      ],
    },
    as(root),
  );
  await t.ok('organization_create', { name: 'health', title: 'Health', groups: [{ name: 'gov' }] }, as(root));
  await t.ok('organization_patch', { id: 'health', users: [{ name: 'hal', capacity: 'admin' }] }, as(root));
  await t.ok('organization_create', { name: 'hospitals', title: 'Hospitals', groups: [{ name: 'health' }] }, as(hal));
  await t.ok('organization_create', { name: 'clinics', title: 'Clinics', groups: [{ name: 'health', capacity: 'parent' }] }, as(hal));
  await t.ok('organization_create', { name: 'transport', title: 'Transport', groups: [{ name: 'gov' }] }, as(root));
  await t.ok('organization_create', { name: 'other', title: 'Other' }, as(out));
});
after(async () => {
  await t?.close();
});

describe('parents', () => {
  test('`groups` lists the parents, stored as a membership of the sub-organization with capacity parent', async () => {
    const health = await t.ok('organization_show', { id: 'health' });
    assert.deepEqual(health.groups, [{ name: 'gov', capacity: 'parent' }]);
    assert.deepEqual((await t.ok('organization_show', { id: 'gov' })).groups, []);
    const gov = await t.ok('organization_show', { id: 'gov' });
    assert.deepEqual(await t.ok('member_list', { id: 'health', object_type: 'group' }), [[gov.id, 'group', 'parent']]);
  });

  test('bad parents are Validation Errors naming the field, and change nothing', async () => {
    const unknown = await t.call('organization_patch', { id: 'transport', title: 'Changed', groups: [{ name: 'nope' }] }, as(root));
    assert.equal(unknown.status, 409);
    assert.equal(unknown.body.error!.__type, 'Validation Error');
    assert.deepEqual(unknown.body.error!.groups, [{ name: ['Organization not found: nope'] }]);
    assert.equal((await t.ok('organization_show', { id: 'transport' })).title, 'Transport', 'rolled back');
    await t.ok('group_create', { name: 'a-group' }, as(root));
    const mixed = await t.call('organization_patch', { id: 'transport', groups: [{ name: 'a-group' }] }, as(root));
    assert.deepEqual(mixed.body.error!.groups, [{ name: ['The parent of an organization must be an organization'] }]);
    // loops, also through several levels, and to itself
    for (const [id, parent] of [
      ['gov', 'hospitals'],
      ['gov', 'health'],
      ['health', 'health'],
    ]) {
      const loop = await t.call('organization_patch', { id, title: 'Renamed', groups: [{ name: parent }] }, sys());
      assert.equal(loop.status, 409, `${id} under ${parent}`);
      assert.deepEqual(loop.body.error!.groups, [{ name: ['This parent would create a loop in the hierarchy'] }]);
      assert.notEqual((await t.ok('organization_show', { id })).title, 'Renamed', 'rolled back');
    }
    const byId = await t.call('member_create', { id: 'gov', object: 'clinics', object_type: 'group', capacity: 'parent' }, sys());
    assert.equal(byId.status, 409);
    assert.deepEqual(byId.body.error!.object, ['This parent would create a loop in the hierarchy']);
    assert.deepEqual((await t.ok('organization_show', { id: 'gov' })).groups, []);
  });

  test('only an admin of the sub-organization may put it under another', async () => {
    await t.ok('organization_create', { name: 'edith-org', users: [{ name: 'out', capacity: 'editor' }] }, as(edith));
    // root, admin of gov, may not take edith's organization in
    const grab = await t.call('organization_patch', { id: 'edith-org', groups: [{ name: 'gov' }] }, as(root));
    assert.equal(grab.status, 403);
    const grab2 = await t.call('member_create', { id: 'edith-org', object: 'gov', object_type: 'group', capacity: 'parent' }, as(root));
    assert.equal(grab2.status, 403);
    // an editor of it may not either
    assert.equal(
      (await t.call('member_create', { id: 'edith-org', object: 'other', object_type: 'group', capacity: 'parent' }, as(out))).status,
      403,
    );
    // its admin may; root then administers it (cascade)
    await t.ok('member_create', { id: 'edith-org', object: 'gov', object_type: 'group', capacity: 'parent' }, as(edith));
    await t.ok('organization_patch', { id: 'edith-org', description: 'by root' }, as(root));
    await t.ok('organization_purge', { id: 'edith-org' }, sys());
  });
});

describe('cascade (svc.auth.roles_that_cascade_to_sub_groups)', () => {
  test('admins of an ancestor hold admin on every descendant; editors and members do not', async () => {
    const list = await t.ok('organization_list_for_user', { permission: 'admin' }, as(root));
    assert.deepEqual(list.map((o: any) => [o.name, o.capacity]).sort(), [
      ['clinics', 'admin'],
      ['gov', 'admin'],
      ['health', 'admin'],
      ['hospitals', 'admin'],
      ['transport', 'admin'],
    ]);
    const hals = await t.ok('organization_list_for_user', { id: 'hal', permission: 'create_dataset' });
    assert.deepEqual(hals.map((o: any) => o.name).sort(), ['clinics', 'health', 'hospitals']);
    assert.deepEqual((await t.ok('organization_list_for_user', {}, as(edith))).map((o: any) => o.name).sort(), ['gov']);
    assert.deepEqual(
      (await t.ok('organization_list_for_user', {}, as(mia))).map((o: any) => o.name),
      ['gov'],
    );

    // datasets: hal creates a private one in hospitals; root (two levels up) reads, edits, deletes it
    const ds = await t.ok('package_create', { name: 'beds', owner_org: 'hospitals', private: true }, as(hal));
    assert.equal((await t.ok('package_show', { id: 'beds' }, as(root))).id, ds.id);
    await t.ok('package_patch', { id: 'beds', title: 'Beds' }, as(root));
    await t.ok('package_create', { name: 'root-clinics', owner_org: 'clinics', private: true }, as(root));
    // the private datasets of sub-organizations show in lists for root only
    const rootOrgs = await t.ok('organization_show', { id: 'hospitals', include_datasets: true }, as(root));
    assert.deepEqual(
      rootOrgs.packages.map((p: any) => p.name),
      ['beds'],
    );
    for (const u of [edith, mia, out]) {
      const r = await t.call('package_show', { id: 'beds' }, as(u));
      assert.equal(r.status, 403, u.name);
      assert.equal((await t.call('package_patch', { id: 'beds', title: 'x' }, as(u))).status, 403);
      assert.equal((await t.call('package_create', { name: `x-${u.name}`, owner_org: 'hospitals' }, as(u))).status, 403);
      assert.deepEqual((await t.ok('organization_show', { id: 'hospitals', include_datasets: true }, as(u))).packages, []);
    }
    // hal is admin of health, not of gov or transport
    assert.equal((await t.call('package_create', { name: 'hal-transport', owner_org: 'transport' }, as(hal))).status, 403);
    assert.equal((await t.call('organization_patch', { id: 'gov', title: 'x' }, as(hal))).status, 403);

    // member management in a descendant
    await t.ok('member_create', { id: 'hospitals', object: 'out', object_type: 'user', capacity: 'member' }, as(root));
    assert.equal((await t.ok('package_show', { id: 'beds' }, as(out))).name, 'beds', 'out is now a member of hospitals');
    await t.ok('organization_member_delete', { id: 'hospitals', username: 'out' }, as(root));
    assert.equal((await t.call('package_show', { id: 'beds' }, as(out))).status, 403);

    await t.ok('package_delete', { id: 'beds' }, as(root));
    await t.ok('dataset_purge', { id: 'beds' }, sys());
    await t.ok('dataset_purge', { id: 'root-clinics' }, sys());
  });

  test('roles listed in the option cascade; an unlinked sub-organization loses them', async () => {
    await t.ok('package_create', { name: 'wards', owner_org: 'clinics', private: true }, as(hal));
    assert.equal((await t.call('package_show', { id: 'wards' }, as(mia))).status, 403);
    t.services.config.set('svc.auth.roles_that_cascade_to_sub_groups', ['admin', 'editor', 'member']);
    try {
      assert.equal((await t.ok('package_show', { id: 'wards' }, as(mia))).name, 'wards');
      await t.ok('package_patch', { id: 'wards', notes: 'edith was here' }, as(edith));
      assert.equal((await t.call('package_patch', { id: 'wards', notes: 'mia' }, as(mia))).status, 403, 'members read only');
      const mias = await t.ok('organization_list_for_user', { permission: 'read' }, as(mia));
      assert.deepEqual(mias.map((o: any) => [o.name, o.capacity]).sort(), [
        ['clinics', 'member'],
        ['gov', 'member'],
        ['health', 'member'],
        ['hospitals', 'member'],
        ['transport', 'member'],
      ]);
    } finally {
      t.services.config.set('svc.auth.roles_that_cascade_to_sub_groups', ['admin']);
    }
    // clinics leaves the tree (its admin hal may, through health): root loses it
    await t.ok('organization_patch', { id: 'clinics', groups: [] }, as(hal));
    assert.equal((await t.call('package_show', { id: 'wards' }, as(root))).status, 403);
    assert.ok(!(await t.ok('organization_list_for_user', {}, as(root))).some((o: any) => o.name === 'clinics'));
    await t.ok('organization_patch', { id: 'clinics', groups: [{ name: 'health' }] }, as(hal));
    assert.equal((await t.ok('package_show', { id: 'wards' }, as(root))).name, 'wards');
    await t.ok('dataset_purge', { id: 'wards' }, sys());
  });
});

describe('group_tree / group_tree_section', () => {
  test('group_tree returns the forest of top-level organizations with children by title', async () => {
    const tree = await t.ok('group_tree', { type: 'organization' });
    const shape = (n: any): any => [n.name, n.children.map(shape)];
    assert.deepEqual(tree.map(shape), [
      [
        'gov',
        [
          [
            'health',
            [
              ['clinics', []],
              ['hospitals', []],
            ],
          ],
          ['transport', []],
        ],
      ],
      ['other', []],
    ]);
    const gov = await t.ok('organization_show', { id: 'gov' });
    assert.deepEqual(Object.keys(tree[0]).sort(), ['children', 'highlighted', 'id', 'name', 'title']);
    assert.equal(tree[0].id, gov.id);
    assert.equal(tree[0].title, 'Government');
    assert.equal(tree[0].highlighted, false);
    // groups by default; a GET works too
    const groups = await t.ok('group_tree', {}, { method: 'GET' });
    assert.ok(groups.some((g: any) => g.name === 'a-group'));
    assert.ok(!groups.some((g: any) => g.name === 'gov'));
    assert.deepEqual(await t.ok('group_tree', { type: 'nothing-of-this-type' }), []);
  });

  test('group_tree_section returns the tree holding the group, the group highlighted', async () => {
    const shape = (n: any): any => [n.name + (n.highlighted ? '*' : ''), n.children.map(shape)];
    const s = await t.ok('group_tree_section', { id: 'hospitals', type: 'organization' });
    assert.deepEqual(shape(s), [
      'gov',
      [
        [
          'health',
          [
            ['clinics', []],
            ['hospitals*', []],
          ],
        ],
        ['transport', []],
      ],
    ]);
    const noSiblings = await t.ok('group_tree_section', { id: 'health', type: 'organization', include_siblings: false });
    assert.deepEqual(shape(noSiblings), [
      'gov',
      [
        [
          'health*',
          [
            ['clinics', []],
            ['hospitals', []],
          ],
        ],
      ],
    ]);
    const noParents = await t.ok('group_tree_section', { id: 'health', type: 'organization', include_parents: false });
    assert.deepEqual(shape(noParents), [
      'health*',
      [
        ['clinics', []],
        ['hospitals', []],
      ],
    ]);
    assert.deepEqual(shape(await t.ok('group_tree_section', { id: 'other', type: 'organization' })), ['other*', []]);

    const wrongType = await t.call('group_tree_section', { id: 'gov' });
    assert.equal(wrongType.status, 409);
    assert.equal(wrongType.body.error!.message, 'Group type is "organization" not "group" that is filtered by default');
    const notFound = await t.call('group_tree_section', { id: 'nope', type: 'organization' });
    assert.equal(notFound.status, 404);
    const missing = await t.call('group_tree_section', {});
    assert.deepEqual(missing.body.error!.id, ['Missing value']);
  });

  test('groups nest too; deleting a parent makes its children top-level', async () => {
    await t.ok('group_create', { name: 'topics', title: 'Topics' }, as(out));
    await t.ok('group_create', { name: 'climate', title: 'Climate', groups: [{ name: 'topics' }] }, as(out));
    const mixed = await t.call('group_create', { name: 'mixed', groups: [{ name: 'gov' }] }, as(out));
    assert.deepEqual(mixed.body.error!.groups, [{ name: ['The parent of a group must be a group'] }]);
    assert.equal((await t.call('group_show', { id: 'mixed' })).status, 404, 'nothing created');
    const tree = await t.ok('group_tree', { type: 'group' });
    assert.deepEqual(
      tree.find((g: any) => g.name === 'topics').children.map((c: any) => c.name),
      ['climate'],
    );
    assert.deepEqual((await t.ok('group_show', { id: 'climate' })).groups, [{ name: 'topics', capacity: 'parent' }]);
    await t.ok('group_delete', { id: 'topics' }, as(out));
    const after = await t.ok('group_tree', {});
    assert.ok(after.some((g: any) => g.name === 'climate' && g.children.length === 0));
    assert.ok(!after.some((g: any) => g.name === 'topics'));
    assert.deepEqual((await t.ok('group_show', { id: 'climate' })).groups, []);
  });
});
