import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, asSysadmin, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let alice: TestUser, bob: TestUser, carol: TestUser, member: TestUser;
const sys = () => asSysadmin(t);

before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('f_alice');
  bob = await t.user('f_bob');
  carol = await t.user('f_carol');
  ({
    users: { f_member: member },
  } = await organizationWithTeam(t, { name: 'f-org', title: 'Zeta Org' }, { f_member: 'editor' }));
  await t.ok('group_create', { name: 'f-group', title: 'Beta Group' }, sys());
  await t.ok('package_create', { name: 'f-public', title: 'Alpha Data', owner_org: 'f-org' }, as(member));
  await t.ok('package_create', { name: 'f-private', title: 'Hidden', owner_org: 'f-org', private: true }, as(member));
});
after(async () => {
  await t?.close();
});

test('follow and unfollow users, datasets, groups; counts', async () => {
  const rec = await t.ok('follow_user', { id: bob.name }, as(alice));
  assert.equal(rec.follower_id, alice.id);
  assert.equal(rec.object_id, bob.id);
  assert.ok(rec.datetime);
  // again: the same record, no error (CKAN 2.11)
  assert.deepEqual(await t.ok('follow_user', { id: bob.id }, as(alice)), rec);
  await t.ok('follow_user', { id: bob.name }, as(carol));
  assert.equal(await t.ok('user_follower_count', { id: bob.name }, { method: 'GET' }), 2);
  assert.equal(await t.ok('am_following_user', { id: bob.name }, as(alice)), true);
  assert.equal(await t.ok('am_following_user', { id: alice.name }, as(bob)), false);
  assert.equal((await t.ok('user_show', { id: bob.name, include_num_followers: true })).num_followers, 2);

  await t.ok('follow_dataset', { id: 'f-public' }, as(alice));
  await t.ok('follow_group', { id: 'f-group' }, as(alice));
  await t.ok('follow_group', { id: 'f-org' }, as(alice));
  assert.equal(await t.ok('dataset_follower_count', { id: 'f-public' }), 1);
  assert.equal(await t.ok('group_follower_count', { id: 'f-group' }), 1);
  assert.equal(await t.ok('organization_follower_count', { id: 'f-org' }), 1);
  assert.equal((await t.ok('group_show', { id: 'f-group' })).num_followers, 1);
  assert.equal((await t.ok('organization_show', { id: 'f-org' })).num_followers, 1);
  assert.equal(await t.ok('followee_count', { id: alice.name }), 4);
  assert.equal(await t.ok('user_followee_count', { id: alice.name }), 1);
  assert.equal(await t.ok('dataset_followee_count', { id: alice.name }), 1);
  assert.equal(await t.ok('group_followee_count', { id: alice.name }), 1);

  assert.equal(await t.ok('unfollow_user', { id: bob.name }, as(alice)), null);
  assert.equal(await t.ok('unfollow_user', { id: bob.name }, as(alice)), null, 'unfollowing again is a no-op');
  assert.equal(await t.ok('user_follower_count', { id: bob.name }), 1);
  assert.equal(await t.ok('am_following_user', { id: bob.name }, as(alice)), false);
  await t.ok('follow_user', { id: bob.name }, as(alice));
});

test('followee lists and their entry shape', async () => {
  const list = await t.ok('followee_list', { id: alice.name }, as(alice));
  assert.deepEqual(
    list.map((f: any) => [f.type, f.display_name]),
    [
      ['dataset', 'Alpha Data'],
      ['group', 'Beta Group'],
      ['organization', 'Zeta Org'],
      ['user', 'f_bob'],
    ],
  );
  assert.equal(list[0].dict.name, 'f-public');
  assert.equal(list[3].dict.id, bob.id);
  assert.deepEqual(
    (await t.ok('followee_list', { id: alice.name, q: 'BET' }, as(alice))).map((f: any) => f.dict.name),
    ['f-group'],
  );
  assert.deepEqual(await t.ok('followee_list', { id: alice.name, q: 'eta' }, as(alice)), [], 'q matches the start only');
  assert.deepEqual(
    (await t.ok('user_followee_list', { id: alice.name }, as(alice))).map((u: any) => u.name),
    ['f_bob'],
  );
  assert.deepEqual(
    (await t.ok('dataset_followee_list', { id: alice.name }, as(alice))).map((d: any) => d.name),
    ['f-public'],
  );
  assert.deepEqual(
    (await t.ok('group_followee_list', { id: alice.name }, as(alice))).map((d: any) => d.name),
    ['f-group'],
  );
  assert.deepEqual(
    (await t.ok('organization_followee_list', { id: alice.name }, sys())).map((d: any) => d.name),
    ['f-org'],
  );
  // someone else's followees: refused
  let r = await t.call('followee_list', { id: alice.name }, as(bob));
  assert.equal(r.status, 403);
  r = await t.call('dataset_followee_list', { id: alice.name });
  assert.equal(r.status, 403);
});

test('private datasets never leak through followers', async () => {
  // an outsider cannot follow or count a private dataset: it is "not found"
  let r = await t.call('follow_dataset', { id: 'f-private' }, as(bob));
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.id, ['Not found: Dataset']);
  r = await t.call('dataset_follower_count', { id: 'f-private' });
  assert.deepEqual(r.body.error!.id, ['Not found: Dataset']);
  // a member follows it; then leaves the organization: it disappears from their lists
  await t.ok('follow_dataset', { id: 'f-private' }, as(member));
  assert.equal(await t.ok('dataset_follower_count', { id: 'f-private' }, as(member)), 1);
  assert.deepEqual(
    (await t.ok('dataset_followee_list', { id: member.name }, as(member))).map((d: any) => d.name),
    ['f-private'],
  );
  assert.equal(await t.ok('dataset_followee_count', { id: member.name }), 0, 'an anonymous caller does not count it');
  await t.ok('organization_member_delete', { id: 'f-org', username: member.name }, sys());
  assert.deepEqual(await t.ok('dataset_followee_list', { id: member.name }, as(member)), []);
  assert.deepEqual(await t.ok('followee_list', { id: member.name }, as(member)), []);
  // follower lists are for sysadmins
  r = await t.call('dataset_follower_list', { id: 'f-public' }, as(alice));
  assert.equal(r.status, 403);
  assert.deepEqual(
    (await t.ok('dataset_follower_list', { id: 'f-private' }, sys())).map((u: any) => u.name),
    ['f_member'],
  );
  assert.deepEqual(
    (await t.ok('user_follower_list', { id: bob.name }, sys())).map((u: any) => u.name),
    ['f_alice', 'f_carol'],
  );
});

test('bad input and anonymous callers', async () => {
  let r = await t.call('follow_user', { id: alice.name }, as(alice));
  assert.equal(r.status, 409);
  assert.equal(r.body.error!.message, 'You cannot follow yourself');
  assert.deepEqual(r.body.error!.id, ['You cannot follow yourself']);
  r = await t.call('follow_user', { id: 'nobody' }, as(alice));
  assert.deepEqual(r.body.error!.id, ['Not found: User']);
  r = await t.call('follow_group', { id: 'nogroup' }, as(alice));
  assert.deepEqual(r.body.error!.id, ['Not found: Group']);
  r = await t.call('follow_dataset', {}, as(alice));
  assert.deepEqual(r.body.error!.id, ['Missing value']);
  r = await t.call('follow_dataset', { id: 'f-public' });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, 'Access denied: You must be logged in to follow datasets');
  r = await t.call('am_following_dataset', { id: 'f-public' });
  assert.equal(r.status, 403);
  r = await t.call('unfollow_group', { id: 'f-group' });
  assert.equal(r.status, 403);
  r = await t.call('followee_count', { id: 'nobody' });
  assert.deepEqual(r.body.error!.id, ['Not found: User']);
  r = await t.call('follow_user', { id: bob.name }, { method: 'GET', token: alice.token });
  assert.equal(r.status, 400, 'follow is POST only');
});

test('concurrent follows of the same object give one record', async () => {
  const results = await Promise.all([1, 2, 3, 4].map(() => t.call('follow_dataset', { id: 'f-public' }, as(carol))));
  for (const r of results) assert.equal(r.body.success, true, JSON.stringify(r.body));
  assert.equal(await t.ok('dataset_follower_count', { id: 'f-public' }), 2);
});
