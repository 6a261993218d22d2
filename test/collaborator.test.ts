// Dataset collaborators: package_collaborator_create/delete/list, package_collaborator_list_for_user.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { onPackageChange } from '../src/model/packages.ts';

let t: TestApp;
let alice: TestUser; // admin of acme
let bob: TestUser; // editor of acme
let cora: TestUser; // collaborator
let dave: TestUser; // outsider
let ds: any;
const on = (key: string, value: unknown) => t.services.config.set(key, value);

before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('alice');
  dave = await t.user('dave');
  ({
    users: { bob },
  } = await organizationWithTeam(t, { name: 'acme' }, { bob: 'editor' }, alice));
  ({
    users: { cora },
  } = await organizationWithTeam(t, { name: 'other' }, { cora: 'editor' }, dave));
  ds = await t.ok('package_create', { name: 'secret', owner_org: 'acme', private: true }, as(alice));
});
after(async () => {
  await t?.close();
});

describe('collaborators switched off (default)', () => {
  test('every collaborator action says so', async () => {
    for (const [action, data] of [
      ['package_collaborator_create', { id: 'secret', user_id: 'cora', capacity: 'member' }],
      ['package_collaborator_list', { id: 'secret' }],
      ['package_collaborator_delete', { id: 'secret', user_id: 'cora' }],
      ['package_collaborator_list_for_user', { id: 'cora' }],
    ] as const) {
      const r = await t.call(action, data, { token: t.sysadminToken });
      assert.equal(r.status, 409, action);
      assert.equal(r.body.error!.message, 'Dataset collaborators not enabled');
    }
  });
});

describe('collaborators switched on', () => {
  before(() => on('svc.auth.allow_dataset_collaborators', true));
  after(() => on('svc.auth.allow_dataset_collaborators', false));

  test('member collaborators read, editor collaborators edit and delete', async () => {
    assert.equal((await t.call('package_show', { id: 'secret' }, as(cora))).status, 403);
    const c = await t.ok('package_collaborator_create', { id: 'secret', user_id: 'cora', capacity: 'member' }, as(alice));
    assert.deepEqual(Object.keys(c).sort(), ['capacity', 'modified', 'package_id', 'user_id']);
    assert.equal(c.package_id, ds.id);
    assert.equal(c.user_id, cora.id);
    assert.match(c.modified, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    await t.ok('package_show', { id: 'secret' }, as(cora));
    assert.equal((await t.call('package_patch', { id: 'secret', notes: 'x' }, as(cora))).status, 403);
    await t.ok('package_collaborator_create', { id: ds.id, user_id: cora.id, capacity: 'editor' }, as(alice));
    const patched = await t.ok('package_patch', { id: 'secret', notes: 'by cora' }, as(cora));
    assert.equal(patched.notes, 'by cora');
    // the collaborator may not manage collaborators
    const denied = await t.call('package_collaborator_create', { id: 'secret', user_id: 'dave', capacity: 'member' }, as(cora));
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error!.message, 'Access denied: User cora not authorized to add collaborators to this dataset');
    // nor may an editor of the organization
    const editor = await t.call('package_collaborator_list', { id: 'secret' }, as(bob));
    assert.equal(editor.status, 403);
    assert.equal(editor.body.error!.message, 'Access denied: User bob not authorized to list collaborators of this dataset');
  });

  test('list, list_for_user, delete', async () => {
    const list = await t.ok('package_collaborator_list', { id: 'secret' }, as(alice));
    assert.equal(list.length, 1);
    assert.equal(list[0].capacity, 'editor');
    assert.match(list[0].modified, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    assert.deepEqual(await t.ok('package_collaborator_list', { id: 'secret', capacity: 'member' }, as(alice)), []);
    const mine = await t.ok('package_collaborator_list_for_user', { id: 'cora' }, as(cora));
    assert.deepEqual(
      mine.map((x: any) => [x.package_id, x.capacity]),
      [[ds.id, 'editor']],
    );
    assert.deepEqual(Object.keys(mine[0]).sort(), ['capacity', 'modified', 'package_id']);
    const other = await t.call('package_collaborator_list_for_user', { id: 'cora' }, as(dave));
    assert.equal(other.status, 403);
    assert.equal((await t.call('package_collaborator_list_for_user', { id: 'cora' })).status, 403);
    await t.ok('package_collaborator_list_for_user', { id: cora.id }, { token: t.sysadminToken });
    assert.equal(await t.ok('package_collaborator_delete', { id: 'secret', user_id: 'cora' }, as(alice)), null);
    const again = await t.call('package_collaborator_delete', { id: 'secret', user_id: 'cora' }, as(alice));
    assert.equal(again.status, 404);
    assert.equal(again.body.error!.message, 'Not found: User cora is not a collaborator on this dataset');
    assert.equal((await t.call('package_show', { id: 'secret' }, as(cora))).status, 403);
  });

  test('capacities: admin only with svc.auth.allow_admin_collaborators; admin collaborators manage collaborators', async () => {
    const bad = await t.call('package_collaborator_create', { id: 'secret', user_id: 'cora', capacity: 'admin' }, as(alice));
    assert.equal(bad.status, 409);
    assert.equal(bad.body.error!.message, 'Role must be one of "editor, member"');
    on('svc.auth.allow_admin_collaborators', true);
    try {
      await t.ok('package_collaborator_create', { id: 'secret', user_id: 'cora', capacity: 'admin' }, as(alice));
      await t.ok('package_collaborator_create', { id: 'secret', user_id: 'dave', capacity: 'member' }, as(cora));
      assert.equal((await t.ok('package_collaborator_list', { id: 'secret' }, as(cora))).length, 2);
      const owner = await t.call('package_collaborator_create', { id: 'secret', user_id: 'bob', capacity: 'owner' }, as(alice));
      assert.equal(owner.body.error!.message, 'Role must be one of "admin, editor, member"');
    } finally {
      on('svc.auth.allow_admin_collaborators', false);
    }
    // with admin collaborators switched off again, cora manages nothing
    assert.equal((await t.call('package_collaborator_list', { id: 'secret' }, as(cora))).status, 403);
  });

  test('missing dataset or user', async () => {
    const noDs = await t.call('package_collaborator_create', { id: 'nope', user_id: 'cora', capacity: 'member' }, as(alice));
    assert.equal(noDs.status, 404);
    assert.equal(noDs.body.error!.message, 'Not found: Dataset not found');
    const noUser = await t.call('package_collaborator_create', { id: 'secret', user_id: 'ghost', capacity: 'member' }, as(alice));
    assert.equal(noUser.status, 404);
    assert.equal(noUser.body.error!.message, 'Not found: User not found');
    const anon = await t.call('package_collaborator_create', { id: 'secret', user_id: 'cora', capacity: 'member' });
    assert.equal(anon.body.error!.message, 'Access denied: Action package_collaborator_create requires an authenticated user');
  });

  // The owner_org check lives in the dataset schema (src/validation/package-schema.ts), which asks authz.ownerOrgChangeError.
  test('collaborators may not move the dataset unless svc.auth.allow_collaborators_to_change_owner_org', async () => {
    await t.ok('package_create', { name: 'movable', owner_org: 'acme', private: true }, as(alice));
    await t.ok('package_collaborator_create', { id: 'movable', user_id: 'cora', capacity: 'editor' }, as(alice));
    // cora is an editor of "other", so only the collaborator rule stops her
    const r = await t.call('package_patch', { id: 'movable', owner_org: 'other' }, as(cora));
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error!.owner_org, ['You cannot move this dataset to another organization']);
    on('svc.auth.allow_collaborators_to_change_owner_org', true);
    try {
      await t.ok('package_patch', { id: 'movable', owner_org: 'other' }, as(cora));
    } finally {
      on('svc.auth.allow_collaborators_to_change_owner_org', false);
    }
  });

  test('the creator of an unowned dataset manages its collaborators (svc.auth.create_unowned_dataset)', async () => {
    on('svc.auth.create_unowned_dataset', true);
    try {
      await t.ok('package_create', { name: 'unowned-by-dave' }, as(dave));
      await t.ok('package_collaborator_create', { id: 'unowned-by-dave', user_id: 'cora', capacity: 'editor' }, as(dave));
      await t.ok('package_patch', { id: 'unowned-by-dave', notes: 'cora was here' }, as(cora));
      assert.equal((await t.call('package_collaborator_list', { id: 'unowned-by-dave' }, as(bob))).status, 403);
    } finally {
      on('svc.auth.create_unowned_dataset', false);
    }
    assert.equal(
      (await t.call('package_collaborator_list', { id: 'unowned-by-dave' }, as(dave))).status,
      403,
      'only while unowned datasets may be created',
    );
  });

  test('adding and removing a collaborator touches the dataset and calls the change listener', async () => {
    const notified: string[] = [];
    onPackageChange(t.services, (_db, id) => {
      notified.push(id);
    });
    const d = await t.ok('package_create', { name: 'collab-touched', owner_org: 'acme' }, as(alice));
    notified.length = 0;
    await t.ok('package_collaborator_create', { id: d.id, user_id: 'cora', capacity: 'member' }, as(alice));
    const added = (await t.ok('package_show', { id: d.id }, as(alice))).metadata_modified;
    assert.ok(added > d.metadata_modified, 'create touches');
    assert.deepEqual(notified, [d.id]);
    await t.ok('package_collaborator_delete', { id: d.id, user_id: 'cora' }, as(alice));
    assert.ok((await t.ok('package_show', { id: d.id }, as(alice))).metadata_modified > added, 'delete touches');
    assert.deepEqual(notified, [d.id, d.id]);
  });

  test('a deleted dataset loses its collaborators', async () => {
    const d = await t.ok('package_create', { name: 'going', owner_org: 'acme', private: true }, as(alice));
    await t.ok('package_collaborator_create', { id: 'going', user_id: 'cora', capacity: 'editor' }, as(alice));
    await t.ok('package_delete', { id: 'going' }, as(cora));
    const mine = await t.ok('package_collaborator_list_for_user', { id: 'cora' }, as(cora));
    assert.ok(!mine.some((x: any) => x.package_id === d.id));
  });
});
