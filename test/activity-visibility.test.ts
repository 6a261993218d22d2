// Who sees a dataset's activities: every activity listing against every kind of caller, for a
// private and a public dataset of an organization (collaborators on).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';

type Role = 'anon' | 'plain' | 'member' | 'editor' | 'admin' | 'other_admin' | 'collab_member' | 'sysadmin';
const ROLES: Role[] = ['anon', 'plain', 'member', 'editor', 'admin', 'other_admin', 'collab_member', 'sysadmin'];
const READERS: Role[] = ['member', 'editor', 'admin', 'collab_member', 'sysadmin'];
let t: TestApp;
const users: Partial<Record<Role, { id: string; name: string; token: string }>> = {};
let org: any, grp: any;
const sys = () => asSysadmin(t);

before(async () => {
  t = await startApp({ plugins: ['activity'], config: { 'svc.auth.allow_dataset_collaborators': true } });
  for (const role of ROLES) if (role !== 'anon' && role !== 'sysadmin') users[role] = await t.user(`vis_${role}`);
  const roleUsers = (['admin', 'editor', 'member'] as const).map((c) => ({ name: users[c]!.name, capacity: c }));
  org = await t.ok('organization_create', { name: 'vis-org', users: roleUsers }, sys());
  grp = await t.ok('group_create', { name: 'vis-group', users: roleUsers }, sys());
  await t.ok('organization_create', { name: 'vis-other' }, { token: users.other_admin!.token });
});
after(async () => {
  await t?.close();
});

const LISTINGS: { label: string; action: string; params: () => Record<string, unknown> }[] = [
  { label: 'recently changed', action: 'recently_changed_packages_activity_list', params: () => ({}) },
  { label: 'organization stream', action: 'organization_activity_list', params: () => ({ id: org.id }) },
  { label: 'group stream', action: 'group_activity_list', params: () => ({ id: grp.id }) },
  { label: "the editor's stream", action: 'user_activity_list', params: () => ({ id: users.editor!.id }) },
  { label: 'dashboard (following the editor and the organization)', action: 'dashboard_activity_list', params: () => ({}) },
];

test('activities of a private dataset reach only those who may read it', async () => {
  for (const role of ROLES) {
    if (role === 'anon') continue;
    const opts = role === 'sysadmin' ? sys() : { token: users[role]!.token };
    if (role !== 'editor') await t.ok('follow_user', { id: users.editor!.name }, opts);
    await t.ok('follow_group', { id: org.id }, opts);
  }
  const failures: string[] = [];
  for (const vis of ['private', 'public'] as const) {
    const ds = await t.ok(
      'package_create',
      { name: `vis-${vis}`, owner_org: org.id, private: vis === 'private', groups: [{ id: grp.id }] },
      { token: users.editor!.token },
    );
    await t.ok('package_collaborator_create', { id: ds.id, user_id: users.collab_member!.id, capacity: 'member' }, sys());
    await t.ok('package_patch', { id: ds.id, notes: 'changed' }, { token: users.editor!.token });
    const expected = new Set(vis === 'public' ? ROLES : READERS);
    for (const row of LISTINGS) {
      for (const role of ROLES) {
        if (row.action === 'dashboard_activity_list' && role === 'anon') continue;
        const opts = role === 'anon' ? {} : role === 'sysadmin' ? sys() : { token: users[role]!.token };
        const r = await t.call(row.action, { ...row.params(), limit: 100 }, opts);
        if (!r.body.success) {
          failures.push(`${row.label} | ${vis} | ${role}: call failed (${r.status} ${r.body.error?.message})`);
          continue;
        }
        const seen = r.body.result.some((a: any) => a.object_id === ds.id);
        if (seen !== expected.has(role))
          failures.push(`${row.label} | ${vis} | ${role}: expected ${expected.has(role) ? 'sees' : 'does not see'}`);
      }
    }
    // package_activity_list itself: readers only (403 for the others)
    for (const role of ROLES) {
      const opts = role === 'anon' ? {} : role === 'sysadmin' ? sys() : { token: users[role]!.token };
      const r = await t.call('package_activity_list', { id: ds.id }, opts);
      if (r.body.success !== expected.has(role)) failures.push(`package_activity_list | ${vis} | ${role}: ${r.status}`);
    }
  }
  assert.deepEqual(failures, [], `cells that differ:\n${failures.join('\n')}`);
});
