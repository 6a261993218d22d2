import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };

before(async () => {
  t = await startApp({ plugins: [] });
  editor = await t.user('rel_editor');
  outsider = await t.user('rel_outsider');
  await t.ok('organization_create', { name: 'rel-org', users: [{ name: editor.name, capacity: 'editor' }] }, { token: t.sysadminToken });
  for (const n of ['rel-a', 'rel-b', 'rel-c']) await t.ok('package_create', { name: n, owner_org: 'rel-org' }, { token: editor.token });
  await t.ok('package_create', { name: 'rel-private', owner_org: 'rel-org', private: true }, { token: editor.token });
});
after(async () => {
  await t?.close();
});

const TYPES: [string, string][] = [
  ['depends_on', 'dependency_of'],
  ['dependency_of', 'depends_on'],
  ['derives_from', 'has_derivation'],
  ['has_derivation', 'derives_from'],
  ['links_to', 'linked_from'],
  ['linked_from', 'links_to'],
  ['child_of', 'parent_of'],
  ['parent_of', 'child_of'],
];

test('all eight types, seen from both sides', async () => {
  for (const [type, reverse] of TYPES) {
    const created = await t.ok(
      'package_relationship_create',
      { subject: 'rel-a', object: 'rel-b', type, comment: 'c1' },
      { token: editor.token },
    );
    assert.deepEqual(created, { subject: 'rel-a', type, object: 'rel-b', comment: 'c1' });
    assert.deepEqual(await t.ok('package_relationships_list', { id: 'rel-a', id2: 'rel-b' }), [
      { subject: 'rel-a', type, object: 'rel-b', comment: 'c1' },
    ]);
    assert.deepEqual(await t.ok('package_relationships_list', { id: 'rel-b' }, { method: 'GET' }), [
      { subject: 'rel-b', type: reverse, object: 'rel-a', comment: 'c1' },
    ]);
    assert.deepEqual(await t.ok('package_relationships_list', { id: 'rel-b', id2: 'rel-a', rel: reverse }), [
      { subject: 'rel-b', type: reverse, object: 'rel-a', comment: 'c1' },
    ]);
    // creating the same again updates the comment
    await t.ok('package_relationship_create', { subject: 'rel-a', object: 'rel-b', type, comment: 'c2' }, { token: editor.token });
    const upd = await t.ok(
      'package_relationship_update',
      { subject: 'rel-a', object: 'rel-b', type, comment: 'c3' },
      { token: editor.token },
    );
    assert.equal(upd.comment, 'c3');
    assert.equal((await t.ok('package_relationships_list', { id: 'rel-a' })).length, 1);
    // the reverse form names the same relationship
    assert.equal(
      await t.ok('package_relationship_delete', { subject: 'rel-b', object: 'rel-a', type: reverse }, { token: editor.token }),
      null,
    );
    assert.deepEqual(await t.ok('package_relationships_list', { id: 'rel-a' }), []);
  }
});

test('relationships in package dicts, errors and auth', async () => {
  await t.ok('package_relationship_create', { subject: 'rel-a', object: 'rel-c', type: 'child_of' }, { token: editor.token });
  const a = await t.ok('package_show', { id: 'rel-a' });
  const c = await t.ok('package_show', { id: 'rel-c' });
  assert.equal(a.relationships_as_subject.length, 1);
  assert.equal(a.relationships_as_subject[0].type, 'child_of');
  assert.deepEqual(a.relationships_as_subject[0].__extras, { subject_package_id: a.id, object_package_id: c.id });
  assert.equal(c.relationships_as_object.length, 1);
  let r = await t.call('package_relationship_create', { subject: 'rel-a', object: 'rel-c', type: 'likes' }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.type, ['Relationship type likes does not exist.']);
  r = await t.call('package_relationship_create', { subject: 'rel-a', object: 'nope', type: 'links_to' }, { token: editor.token });
  assert.equal(r.status, 404);
  r = await t.call('package_relationship_create', { subject: 'rel-a', object: 'rel-b', type: 'links_to' }, { token: outsider.token });
  assert.equal(r.status, 403);
  r = await t.call('package_relationship_update', { subject: 'rel-a', object: 'rel-b', type: 'links_to' }, { token: editor.token });
  assert.equal(r.status, 404);
  r = await t.call('package_relationships_list', { id: 'rel-private' });
  assert.equal(r.status, 403);
  r = await t.call('package_relationships_list', { id: 'rel-a', id2: 'rel-b', rel: 'links_to' });
  assert.equal(r.status, 404);
  // relationships given inline on create
  const d = await t.ok(
    'package_create',
    { name: 'rel-d', owner_org: 'rel-org', relationships_as_subject: [{ object: 'rel-a', type: 'derives_from', comment: 'x' }] },
    { token: editor.token },
  );
  assert.equal(d.relationships_as_subject[0].type, 'derives_from');
  assert.deepEqual(await t.ok('package_relationships_list', { id: 'rel-a', id2: 'rel-d' }), [
    { subject: 'rel-a', type: 'has_derivation', object: 'rel-d', comment: 'x' },
  ]);
  // an inline relationship needs edit rights on the other dataset
  const stranger = await t.user('rel_stranger');
  await t.ok('organization_create', { name: 'rel-org2' }, { token: stranger.token });
  r = await t.call(
    'package_create',
    { name: 'rel-e', owner_org: 'rel-org2', relationships_as_object: [{ subject: 'rel-a', type: 'links_to' }] },
    { token: stranger.token },
  );
  assert.equal(r.status, 403);
  assert.equal((await t.call('package_show', { id: 'rel-e' }, { token: t.sysadminToken })).status, 404);
  // purge removes them
  await t.ok('dataset_purge', { id: 'rel-d' }, { token: t.sysadminToken });
  assert.deepEqual(await t.ok('package_relationships_list', { id: 'rel-a', rel: undefined as any, id2: 'rel-c' }), [
    { subject: 'rel-a', type: 'child_of', object: 'rel-c', comment: '' },
  ]);
});
