// The authorization matrix: every catalog action against every kind of caller, on a private and a
// public dataset of the organization "own". A cell is "allow" (the call succeeds) or "deny" (403).
// Collaborators are switched on (svc.auth.allow_dataset_collaborators); other svc.auth.* options
// keep their defaults. Actions that change things get a fresh dataset/organization/group after
// every successful call.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

type Role = 'anon' | 'plain' | 'member' | 'editor' | 'admin' | 'other_admin' | 'collab_editor' | 'collab_member' | 'sysadmin';
const ROLES: Role[] = ['anon', 'plain', 'member', 'editor', 'admin', 'other_admin', 'collab_editor', 'collab_member', 'sysadmin'];
type Vis = 'private' | 'public';

let t: TestApp;
const tokens: Partial<Record<Role, string>> = {};
const users: Record<string, { id: string; name: string; token: string }> = {};
let own: any; // the owning organization: admin / editor / member
let oth: any; // the other organization: other_admin
let grp: any; // a group with the same admin / editor / member
let related: any; // a public dataset of "own" (collab_editor collaborates on it too), for relationships
let hsource: any; // a harvest source of "own"
let hjob: any; // its job
let counter = 0;
const uniq = (p: string) => `${p}-${++counter}`;

before(async () => {
  t = await startApp({ plugins: ['harvest'], config: { 'svc.auth.allow_dataset_collaborators': true } });
  for (const [role, name] of [
    ['plain', 'pat'],
    ['member', 'meg'],
    ['editor', 'ed'],
    ['admin', 'ada'],
    ['other_admin', 'otto'],
    ['collab_editor', 'cole'],
    ['collab_member', 'colm'],
  ] as const) {
    users[role] = await t.user(name);
    tokens[role] = users[role].token;
  }
  tokens.sysadmin = t.sysadminToken;
  own = await freshOrg('organization');
  oth = await t.ok('organization_create', { name: 'other-org' }, { token: tokens.other_admin });
  grp = await freshOrg('group');
  related = await t.ok('package_create', { name: 'related', owner_org: own.id }, sys());
  await t.ok('package_collaborator_create', { id: related.id, user_id: users.collab_editor.id, capacity: 'editor' }, sys());
  // harvesting: a source of "own" with a job (not run) and an object that made the public dataset "related"
  hsource = await freshHarvestSource(own);
  hjob = await t.ok('harvest_job_create', { source_id: hsource.id, run: false }, sys());
  await t.services.db.query(
    `INSERT INTO harvest_object (id, guid, harvest_job_id, harvest_source_id, package_id, state, operation, report_status)
     VALUES ('hobj-1', 'remote-1', $1, $2, $3, 'ERROR', 'create', 'errored')`,
    [hjob.id, hsource.id, related.id],
  );
});
after(async () => {
  await t?.close();
});

const sys = () => ({ token: t.sysadminToken });
const roleUsers = () => [
  { name: users.admin.name, capacity: 'admin' },
  { name: users.editor.name, capacity: 'editor' },
  { name: users.member.name, capacity: 'member' },
];

/** An organization or group with admin / editor / member (created by the sysadmin). */
async function freshOrg(kind: 'organization' | 'group') {
  return t.ok(`${kind}_create`, { name: uniq(kind), users: roleUsers() }, sys());
}

/** A dataset of "own" with one resource, two collaborators, and a place in the group. */
async function freshDataset(vis: Vis) {
  const ds = await t.ok(
    'package_create',
    {
      name: uniq('ds'),
      owner_org: own.id,
      private: vis === 'private',
      resources: [{ url: 'http://example.com/a.csv', name: 'a' }],
    },
    sys(),
  );
  await t.ok('package_collaborator_create', { id: ds.id, user_id: users.collab_editor.id, capacity: 'editor' }, sys());
  await t.ok('package_collaborator_create', { id: ds.id, user_id: users.collab_member.id, capacity: 'member' }, sys());
  await t.ok('member_create', { id: grp.id, object: ds.id, object_type: 'package', capacity: 'public' }, sys());
  // a load's log about the resource (task_status_show: read like the resource)
  await t.ok('task_status_update', { ...loadLog(ds.resources[0].id), entity_type: 'resource', value: 'columns: a, b' }, sys());
  return ds;
}

const loadLog = (entity_id: string) => ({ entity_id, task_type: 'xloader', key: 'xloader' });

interface Fixture {
  ds: any;
  res: any;
  org: any;
  group: any;
  /** harvest rows that change things: a source of org, with an unfinished job */
  source?: any;
  job?: any;
}

async function freshHarvestSource(org: any) {
  const name = uniq('hsrc');
  return t.ok('harvest_source_create', { name, url: `http://example.org/${name}`, source_type: 'ckan', owner_org: org.id }, sys());
}

const everyone = (): Role[] => [...ROLES];
const loggedIn = (): Role[] => ROLES.filter((r) => r !== 'anon');
const readers = (vis: Vis): Role[] =>
  vis === 'public' ? everyone() : ['member', 'editor', 'admin', 'collab_editor', 'collab_member', 'sysadmin'];
const datasetEditors = (): Role[] => ['editor', 'admin', 'collab_editor', 'sysadmin'];
const orgEditors = (): Role[] => ['editor', 'admin', 'sysadmin'];
const orgMembers = (): Role[] => ['member', 'editor', 'admin', 'sysadmin'];
const admins = (): Role[] => ['admin', 'sysadmin'];
const sysadmins = (): Role[] => ['sysadmin'];

interface Row {
  action: string;
  /** Test name when the action appears more than once. */
  label?: string;
  /** Needs a fresh fixture after a successful call. */
  mutates?: boolean;
  /** Runs on both datasets (default) or once, on organization/group level. */
  perDataset?: boolean;
  params: (f: Fixture, vis: Vis) => Record<string, unknown>;
  allow: (vis: Vis) => Role[];
  /** Prepares a fresh fixture (e.g. a relationship to update). */
  setup?: (f: Fixture) => Promise<void>;
}

const DATASET = true;
const ROWS: Row[] = [
  // --- datasets and resources (the datasets engineer's actions) ---
  { action: 'package_show', perDataset: DATASET, params: (f) => ({ id: f.ds.id }), allow: readers },
  { action: 'resource_show', perDataset: DATASET, params: (f) => ({ id: f.res.id }), allow: readers },
  {
    action: 'package_create',
    perDataset: DATASET,
    mutates: true,
    params: (_f, vis) => ({ name: uniq('new'), owner_org: own.id, private: vis === 'private' }),
    allow: orgEditors,
  },
  {
    action: 'package_update',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.ds.id, name: f.ds.name, notes: 'updated' }),
    allow: datasetEditors,
  },
  {
    action: 'package_patch',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.ds.id, notes: 'patched' }),
    allow: datasetEditors,
  },
  {
    action: 'package_revise',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ match: { id: f.ds.id }, update: { notes: 'revised' } }),
    allow: datasetEditors,
  },
  { action: 'package_delete', perDataset: DATASET, mutates: true, params: (f) => ({ id: f.ds.id }), allow: datasetEditors },
  { action: 'dataset_purge', perDataset: DATASET, mutates: true, params: (f) => ({ id: f.ds.id }), allow: sysadmins },
  {
    action: 'resource_create',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ package_id: f.ds.id, url: 'http://example.com/b.csv' }),
    allow: datasetEditors,
  },
  {
    action: 'resource_update',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.res.id, url: 'http://example.com/c.csv' }),
    allow: datasetEditors,
  },
  {
    action: 'resource_patch',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.res.id, name: 'renamed' }),
    allow: datasetEditors,
  },
  { action: 'resource_delete', perDataset: DATASET, mutates: true, params: (f) => ({ id: f.res.id }), allow: datasetEditors },
  {
    action: 'package_resource_reorder',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.ds.id, order: [f.res.id] }),
    allow: datasetEditors,
  },
  {
    action: 'package_owner_org_update',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.ds.id, organization_id: oth.id }),
    allow: sysadmins,
  },
  {
    action: 'bulk_update_private',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ org_id: own.id, datasets: [f.ds.id] }),
    allow: admins,
  },
  {
    action: 'bulk_update_public',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ org_id: own.id, datasets: [f.ds.id] }),
    allow: admins,
  },
  {
    action: 'bulk_update_delete',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ org_id: own.id, datasets: [f.ds.id] }),
    allow: admins,
  },
  // --- relationships (edit rights on both datasets) ---
  {
    action: 'package_relationship_create',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ subject: f.ds.id, object: related.id, type: 'links_to' }),
    allow: datasetEditors,
  },
  {
    action: 'package_relationship_update',
    perDataset: DATASET,
    mutates: true,
    setup: addRelationship,
    params: (f) => ({ subject: f.ds.id, object: related.id, type: 'links_to', comment: 'changed' }),
    allow: datasetEditors,
  },
  {
    action: 'package_relationship_delete',
    perDataset: DATASET,
    mutates: true,
    setup: addRelationship,
    params: (f) => ({ subject: f.ds.id, object: related.id, type: 'links_to' }),
    allow: datasetEditors,
  },
  { action: 'package_relationships_list', perDataset: DATASET, params: (f) => ({ id: f.ds.id }), allow: readers },
  // --- task statuses (a resource's load log is read like the resource; CKAN lets anyone read it) ---
  { action: 'task_status_show', perDataset: DATASET, params: (f) => loadLog(f.res.id), allow: readers },
  {
    action: 'task_status_update',
    perDataset: DATASET,
    params: (f) => ({ ...loadLog(f.res.id), entity_type: 'resource', value: 'changed' }),
    allow: sysadmins,
  },
  {
    action: 'task_status_delete',
    perDataset: DATASET,
    mutates: true,
    setup: async (f) => {
      f.res.task_status_id = (await t.ok('task_status_show', loadLog(f.res.id), sys())).id;
    },
    params: (f) => ({ id: f.res.task_status_id }),
    allow: sysadmins,
  },
  // --- collaborators ---
  { action: 'package_collaborator_list', perDataset: DATASET, params: (f) => ({ id: f.ds.id }), allow: admins },
  {
    action: 'package_collaborator_create',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.ds.id, user_id: users.plain.id, capacity: 'member' }),
    allow: admins,
  },
  {
    action: 'package_collaborator_delete',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.ds.id, user_id: users.collab_member.id }),
    allow: admins,
  },
  {
    action: 'package_collaborator_list_for_user',
    params: () => ({ id: users.collab_editor.id }),
    allow: () => ['collab_editor', 'sysadmin'],
  },
  // --- datasets in groups ---
  {
    action: 'member_create',
    label: 'member_create (dataset into group)',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: f.group.id, object: f.ds.id, object_type: 'package', capacity: 'public' }),
    allow: orgMembers,
  },
  {
    action: 'member_delete',
    label: 'member_delete (dataset from group)',
    perDataset: DATASET,
    mutates: true,
    params: (f) => ({ id: grp.id, object: f.ds.id, object_type: 'package' }),
    allow: orgMembers,
  },
  { action: 'group_show', perDataset: DATASET, params: () => ({ id: grp.id, include_datasets: true }), allow: everyone },
  { action: 'group_package_show', params: () => ({ id: grp.id }), allow: everyone },
  // --- organizations and groups ---
  ...(['organization', 'group'] as const).flatMap((k): Row[] => [
    { action: `${k}_show`, params: (f) => ({ id: (k === 'group' ? f.group : f.org).id }), allow: everyone },
    { action: `${k}_list`, params: () => ({ all_fields: true }), allow: everyone },
    { action: `${k}_autocomplete`, params: () => ({ q: k }), allow: everyone },
    { action: `${k}_create`, mutates: true, params: () => ({ name: uniq(`new-${k}`) }), allow: loggedIn },
    {
      action: `${k}_update`,
      mutates: true,
      params: (f) => {
        const g = k === 'group' ? f.group : f.org;
        return { id: g.id, name: g.name, users: roleUsers() };
      },
      allow: admins,
    },
    { action: `${k}_patch`, mutates: true, params: (f) => ({ id: (k === 'group' ? f.group : f.org).id, title: 'Patched' }), allow: admins },
    { action: `${k}_delete`, mutates: true, params: (f) => ({ id: (k === 'group' ? f.group : f.org).id }), allow: admins },
    { action: `${k}_purge`, mutates: true, params: (f) => ({ id: (k === 'group' ? f.group : f.org).id }), allow: sysadmins },
    {
      action: `${k}_member_create`,
      mutates: true,
      params: (f) => ({ id: (k === 'group' ? f.group : f.org).id, username: users.plain.name, role: 'member' }),
      allow: admins,
    },
    {
      action: `${k}_member_delete`,
      mutates: true,
      params: (f) => ({ id: (k === 'group' ? f.group : f.org).id, username: users.member.name }),
      allow: admins,
    },
    {
      action: 'member_create',
      label: `member_create (user in ${k})`,
      mutates: true,
      params: (f) => ({ id: (k === 'group' ? f.group : f.org).id, object: users.plain.id, object_type: 'user', capacity: 'editor' }),
      allow: admins,
    },
    {
      action: 'member_delete',
      label: `member_delete (user from ${k})`,
      mutates: true,
      params: (f) => ({ id: (k === 'group' ? f.group : f.org).id, object: users.member.id, object_type: 'user' }),
      allow: admins,
    },
    { action: 'member_list', label: `member_list (${k})`, params: (f) => ({ id: (k === 'group' ? f.group : f.org).id }), allow: everyone },
  ]),
  { action: 'group_list_authz', params: () => ({}), allow: everyone },
  { action: 'organization_list_for_user', params: () => ({}), allow: everyone },
  { action: 'member_roles_list', params: () => ({}), allow: everyone },
  // --- hierarchy: admins of a sub-organization put it under another (its parent: oth) ---
  {
    action: 'member_create',
    label: 'member_create (organization under a parent)',
    mutates: true,
    params: (f) => ({ id: f.org.id, object: oth.id, object_type: 'group', capacity: 'parent' }),
    allow: admins,
  },
  {
    action: 'organization_patch',
    label: 'organization_patch (groups: a parent)',
    mutates: true,
    params: (f) => ({ id: f.org.id, groups: [{ name: oth.name }] }),
    allow: admins,
  },
  { action: 'group_tree', params: () => ({ type: 'organization' }), allow: everyone },
  { action: 'group_tree_section', params: (f) => ({ id: f.org.id, type: 'organization' }), allow: everyone },
  // --- custom schemas (none configured here: the lists are empty; show is tested in scheming-actions.test.ts) ---
  { action: 'scheming_dataset_schema_list', params: () => ({}), allow: everyone },
  { action: 'scheming_group_schema_list', params: () => ({}), allow: everyone },
  { action: 'scheming_organization_schema_list', params: () => ({}), allow: everyone },
  // --- harvesting: sysadmins and the owning organization's admins manage sources and jobs ---
  {
    action: 'harvest_source_create',
    mutates: true,
    params: (f) => ({ name: uniq('hnew'), url: `http://example.org/${uniq('h')}`, source_type: 'ckan', owner_org: f.org.id }),
    allow: admins,
  },
  { action: 'harvest_source_show', params: () => ({ id: hsource.id }), allow: everyone },
  { action: 'harvest_source_show_status', params: () => ({ id: hsource.id }), allow: everyone },
  { action: 'harvest_source_list', params: () => ({}), allow: everyone },
  {
    action: 'harvest_source_update',
    mutates: true,
    params: (f) => ({ id: f.source.id, name: f.source.name, url: f.source.url, source_type: 'ckan', notes: 'updated' }),
    allow: admins,
  },
  { action: 'harvest_source_patch', mutates: true, params: (f) => ({ id: f.source.id, notes: 'patched' }), allow: admins },
  { action: 'harvest_source_delete', mutates: true, params: (f) => ({ id: f.source.id }), allow: admins },
  { action: 'harvest_source_clear', mutates: true, params: (f) => ({ id: f.source.id }), allow: admins },
  { action: 'harvest_source_reindex', params: () => ({ id: hsource.id }), allow: admins },
  { action: 'harvest_job_create', mutates: true, params: (f) => ({ source_id: f.source.id, run: false }), allow: admins },
  { action: 'harvest_job_show', params: () => ({ id: hjob.id }), allow: admins },
  { action: 'harvest_job_list', params: () => ({ source_id: hsource.id }), allow: admins },
  { action: 'harvest_job_report', params: () => ({ id: hjob.id }), allow: admins },
  { action: 'harvest_job_abort', mutates: true, params: (f) => ({ id: f.job.id }), allow: admins },
  { action: 'harvest_object_show', params: () => ({ id: 'hobj-1' }), allow: everyone },
  { action: 'harvest_objects_import', params: () => ({ harvest_object_id: 'hobj-1' }), allow: admins },
];

async function addRelationship(f: Fixture): Promise<void> {
  await t.ok('package_relationship_create', { subject: f.ds.id, object: related.id, type: 'links_to' }, sys());
}

/** Fixtures: a dataset (with resource) and its organization/group; fresh ones for changing actions. */
async function makeFixture(row: Row, vis: Vis): Promise<Fixture> {
  if (row.action.startsWith('harvest_') && row.mutates) {
    const org = await freshOrg('organization');
    const source = await freshHarvestSource(org);
    const job =
      row.action === 'harvest_job_abort' ? await t.ok('harvest_job_create', { source_id: source.id, run: false }, sys()) : undefined;
    return { ds: undefined, res: undefined, org, group: grp, source, job };
  }
  if (row.perDataset) {
    const ds = await freshDataset(vis);
    const f = { ds, res: ds.resources[0], org: own, group: row.action === 'member_create' ? await freshOrg('group') : grp };
    await row.setup?.(f);
    return f;
  }
  if (row.mutates) return { ds: undefined, res: undefined, org: await freshOrg('organization'), group: await freshOrg('group') };
  return { ds: undefined, res: undefined, org: own, group: grp };
}

/** Fixtures that are only read are made once per (kind, visibility). */
const shared = new Map<string, Fixture>();

describe('authorization matrix', () => {
  for (const row of ROWS) {
    const label = row.label ?? (row.perDataset ? `${row.action} (private and public dataset)` : row.action);
    test(label, async () => {
      const failures: string[] = [];
      const visibilities: Vis[] = row.perDataset ? ['private', 'public'] : ['public'];
      for (const vis of visibilities) {
        const allowed = new Set(row.allow(vis));
        let fixture: Fixture | undefined;
        for (const role of ROLES) {
          if (!fixture) {
            const key = `${row.perDataset ? 'ds' : 'org'}-${vis}`;
            if (!row.mutates && shared.has(key)) fixture = shared.get(key)!;
            else {
              fixture = await makeFixture(row, vis);
              if (!row.mutates) shared.set(key, fixture);
            }
          }
          const r = await t.call(row.action, row.params(fixture, vis), tokens[role] ? { token: tokens[role] } : {});
          const expect = allowed.has(role) ? 'allow' : 'deny';
          const got = r.body.success ? 'allow' : r.status === 403 ? 'deny' : `error ${r.status}`;
          if (got !== expect) {
            failures.push(
              `${row.action} | ${row.perDataset ? vis : '-'} | ${role}: expected ${expect}, got ${got}${r.body.success ? '' : ` (${r.body.error?.message})`}`,
            );
          }
          if (r.body.success && row.mutates) fixture = undefined;
        }
      }
      assert.deepEqual(failures, [], `cells that differ:\n${failures.join('\n')}`);
    });
  }

  test('every catalog action of the registry is in the matrix', () => {
    const inMatrix = new Set(ROWS.map((r) => r.action));
    const catalog = t.services.registry
      .names()
      .filter(
        (n) =>
          /^(package_|resource_(create|show|update|patch|delete)$|dataset_purge|bulk_update_|group_|organization_|member_|task_status_(show|update|delete)$|harvest_)/.test(
            n,
          ) &&
          !/^(package_(list|search|autocomplete|activity|follower|create_default)|resource_(view|search)|.*_(follower|followee|activity))/.test(
            n,
          ),
      );
    assert.deepEqual(
      catalog.filter((n) => !inMatrix.has(n)),
      [],
    );
  });
});

// Who finds the dataset in listings: for each listing, the roles that see a private / public dataset.
interface SeesRow {
  label: string;
  action: string;
  params: (f: Fixture) => Record<string, unknown>;
  /** The dataset ids the result shows. */
  ids: (result: any) => string[];
  sees: (vis: Vis) => Role[];
}

const orgMembersSee = (vis: Vis): Role[] => (vis === 'public' ? everyone() : orgMembers());
const SEES: SeesRow[] = [
  {
    label: 'organization_show include_datasets',
    action: 'organization_show',
    params: () => ({ id: own.id, include_datasets: true }),
    ids: (r) => r.packages.map((p: any) => p.id),
    sees: orgMembersSee,
  },
  {
    label: 'group_show include_datasets',
    action: 'group_show',
    params: () => ({ id: grp.id, include_datasets: true }),
    ids: (r) => r.packages.map((p: any) => p.id),
    sees: orgMembersSee,
  },
  {
    label: 'group_package_show (public datasets only)',
    action: 'group_package_show',
    params: () => ({ id: grp.id, limit: 1000 }),
    ids: (r) => r.map((p: any) => p.id),
    sees: (vis) => (vis === 'public' ? everyone() : []),
  },
  {
    label: 'member_list of the organization',
    action: 'member_list',
    params: () => ({ id: own.id, object_type: 'package' }),
    ids: (r) => r.map((m: any) => m[0]),
    sees: readers,
  },
  {
    label: 'member_list of the group',
    action: 'member_list',
    params: () => ({ id: grp.id, object_type: 'package' }),
    ids: (r) => r.map((m: any) => m[0]),
    sees: readers,
  },
  {
    label: 'package_search include_private',
    action: 'package_search',
    params: (f) => ({ q: `name:${f.ds.name}`, include_private: true }),
    ids: (r) => r.results.map((p: any) => p.id),
    sees: readers,
  },
  {
    label: 'package_list (public only)',
    action: 'package_list',
    params: () => ({}),
    ids: (r) => r,
    sees: (vis) => (vis === 'public' ? everyone() : []),
  },
];

describe('who sees the dataset in listings', () => {
  for (const row of SEES) {
    test(row.label, async (ctx) => {
      if (!t.services.registry.has(row.action)) {
        ctx.skip(`${row.action} does not exist yet`);
        return;
      }
      const failures: string[] = [];
      for (const vis of ['private', 'public'] as Vis[]) {
        const ds = await freshDataset(vis);
        const f: Fixture = { ds, res: ds.resources[0], org: own, group: grp };
        const expected = new Set(row.sees(vis));
        for (const role of ROLES) {
          const r = await t.call(row.action, row.params(f), tokens[role] ? { token: tokens[role] } : {});
          const ids = r.body.success ? row.ids(r.body.result) : [];
          const seen = ids.includes(ds.id) || ids.includes(ds.name);
          if (!r.body.success) failures.push(`${row.label} | ${vis} | ${role}: call failed (${r.status} ${r.body.error?.message})`);
          else if (seen !== expected.has(role))
            failures.push(`${row.label} | ${vis} | ${role}: expected ${expected.has(role) ? 'sees' : 'does not see'}, got the opposite`);
        }
      }
      assert.deepEqual(failures, [], `cells that differ:\n${failures.join('\n')}`);
    });
  }
});
