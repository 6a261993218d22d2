// The one module that decides permissions on catalog objects: capacities in organizations and
// groups (with cascade down the hierarchy), dataset visibility, creation and editing, collaborators,
// group management. Auth functions of the actions and the model's visibility filters call these;
// nothing else decides. Sysadmins may do everything.
//
// Capacities (docs/decisions.md): admin holds every permission in its organization/group; editor
// read, create/update/delete datasets and manage_group; member read and manage_group.
// Capacities listed in svc.auth.roles_that_cascade_to_sub_groups (default admin) also hold in
// every sub-group of the same kind, recursively (a sub-group's membership row names its parent:
// group_id = the sub-group, table_name 'group', table_id = the parent; see src/model/members.ts).
import type { ActionContext } from '../context.ts';
import type { Queryable } from '../db/database.ts';
import { AuthorizationError } from '../errors.ts';
import { membershipGeneration, membershipsChanged } from '../model/members.ts';
import { setDatasetVisibility } from '../model/package-dict.ts';

export type Capacity = 'admin' | 'editor' | 'member';
/**
 * Known permissions. 'update', 'delete' and 'membership' (CKAN's names for editing/deleting the
 * group itself and its members) are admin-only like any permission not listed for a capacity.
 */
export type Permission =
  | 'read'
  | 'manage_group'
  | 'create_dataset'
  | 'update_dataset'
  | 'delete_dataset'
  | 'admin'
  | 'update'
  | 'delete'
  | 'membership'
  | (string & {});

export const CAPACITIES: readonly Capacity[] = ['admin', 'editor', 'member'];

const PERMISSIONS: Record<Capacity, readonly string[]> = {
  admin: ['admin'], // everything
  editor: ['read', 'manage_group', 'create_dataset', 'update_dataset', 'delete_dataset'],
  member: ['read', 'manage_group'],
};

export function capacityAllows(capacity: string | undefined, permission: Permission): boolean {
  if (!capacity) return false;
  if (capacity === 'admin') return true;
  return (PERMISSIONS[capacity as Capacity] ?? []).includes(permission);
}

const RANK: Record<string, number> = { member: 1, editor: 2, admin: 3 };
const stronger = (a: string | undefined, b: string) => (!a || (RANK[b] ?? 0) > (RANK[a] ?? 0) ? b : a);

/**
 * The user's capacity in every active group and organization, by group id: direct memberships,
 * plus capacities listed in svc.auth.roles_that_cascade_to_sub_groups inherited by sub-groups
 * (active sub-groups of the same kind, through active group memberships, recursively).
 */
export async function userCapacities(db: Queryable, userId: string, cascadeRoles: string[]): Promise<Map<string, Capacity>> {
  const r = await db.query<{ group_id: string; capacity: Capacity }>(
    `WITH RECURSIVE direct AS (
       SELECT m.group_id, m.capacity FROM members m JOIN groups g ON g.id = m.group_id
       WHERE m.table_name = 'user' AND m.table_id = $1 AND m.state = 'active' AND g.state = 'active'
         AND m.capacity IN ('admin', 'editor', 'member')
     ), cascaded AS (
       SELECT group_id, capacity FROM direct WHERE capacity = ANY($2::text[])
       UNION
       SELECT sub.group_id, c.capacity FROM cascaded c
       JOIN members sub ON sub.table_id = c.group_id AND sub.table_name = 'group' AND sub.state = 'active'
       JOIN groups parent ON parent.id = c.group_id
       JOIN groups child ON child.id = sub.group_id AND child.state = 'active' AND child.is_organization = parent.is_organization
     )
     SELECT group_id, capacity FROM direct
     UNION ALL SELECT group_id, capacity FROM cascaded`,
    [userId, cascadeRoles],
  );
  const out = new Map<string, Capacity>();
  for (const row of r.rows) out.set(row.group_id, stronger(out.get(row.group_id), row.capacity) as Capacity);
  return out;
}

type CapacityCache = { gen: number; userId: string; map: Map<string, Capacity> };

/** Capacities of the caller, computed once per action context (and again after membership writes). */
export async function callerCapacities(ctx: ActionContext): Promise<Map<string, Capacity>> {
  const user = ctx.identity.user;
  if (!user || user.state !== 'active') return new Map();
  const holder = ctx as ActionContext & { _capacities?: CapacityCache };
  const c = holder._capacities;
  if (c && c.gen === membershipGeneration() && c.userId === user.id) return c.map;
  const gen = membershipGeneration();
  const map = await userCapacities(ctx.db, user.id, ctx.config.list('svc.auth.roles_that_cascade_to_sub_groups'));
  holder._capacities = { gen, userId: user.id, map };
  return map;
}

/** Forget cached capacities after membership changes within the same call. */
export function forgetCapacities(ctx: ActionContext): void {
  membershipsChanged();
  delete (ctx as ActionContext & { _capacities?: unknown })._capacities;
}

export async function hasGroupPermission(ctx: ActionContext, groupId: string | null | undefined, permission: Permission): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  if (!groupId) return false;
  return capacityAllows((await callerCapacities(ctx)).get(groupId), permission);
}

/** Ids of organizations/groups where the caller holds the permission (sysadmins: see hasGroupPermission). */
export async function groupsWithPermission(ctx: ActionContext, permission: Permission): Promise<string[]> {
  return [...(await callerCapacities(ctx)).entries()].filter(([, c]) => capacityAllows(c, permission)).map(([id]) => id);
}

/** Does the caller hold the permission in at least one organization? */
export async function hasPermissionInSomeOrganization(ctx: ActionContext, permission: Permission): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  const ids = await groupsWithPermission(ctx, permission);
  if (!ids.length) return false;
  const r = await ctx.db.query("SELECT 1 FROM groups WHERE id = ANY($1::text[]) AND is_organization AND state = 'active' LIMIT 1", [ids]);
  return r.rows.length > 0;
}

/** "User x not authorized to ..." (anonymous callers render as an empty name, as CKAN does). */
export function notAuthorized(ctx: ActionContext, what: string): AuthorizationError {
  return new AuthorizationError(`User ${ctx.identity.user?.name ?? ''} not authorized to ${what}`);
}

/** Non-anonymous rules answer anonymous callers with CKAN's message. */
export function requireUser(ctx: ActionContext, action: string): void {
  if (!ctx.identity.user) throw new AuthorizationError(`Action ${action} requires an authenticated user`);
}

// --- groups and organizations -------------------------------------------------------------

export interface GroupAuthFacts {
  id: string;
  state: string;
  is_organization: boolean;
}

/** group_show / organization_show / member_list: active groups for everyone, others for members. */
export async function canReadGroup(ctx: ActionContext, group: GroupAuthFacts, opts: { users?: boolean } = {}): Promise<boolean> {
  if (group.state === 'active' && (!opts.users || ctx.config.bool('svc.auth.public_user_details'))) return true;
  return hasGroupPermission(ctx, group.id, 'read');
}

/** group_update / organization_update / member management: admins of the group (or of a parent, by cascade). */
export async function canEditGroup(ctx: ActionContext, groupId: string): Promise<boolean> {
  return hasGroupPermission(ctx, groupId, 'update');
}

export function canCreateGroup(ctx: ActionContext, isOrganization: boolean): boolean {
  if (ctx.identity.sysadmin) return true;
  if (!ctx.identity.user) return false;
  return ctx.config.bool(isOrganization ? 'svc.auth.user_create_organizations' : 'svc.auth.user_create_groups');
}

/** Deleting needs the delete option and admin capacity. */
export async function canDeleteGroup(ctx: ActionContext, groupId: string, isOrganization: boolean): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  if (!ctx.config.bool(isOrganization ? 'svc.auth.user_delete_organizations' : 'svc.auth.user_delete_groups')) return false;
  return hasGroupPermission(ctx, groupId, 'delete');
}

/**
 * member_create / member_delete: admins manage a group's members; any member (manage_group) of a
 * group (not an organization) may add or remove datasets.
 */
export async function canManageMembers(ctx: ActionContext, group: GroupAuthFacts, objectType: string): Promise<boolean> {
  const permission = !group.is_organization && objectType === 'package' ? 'manage_group' : 'update';
  return hasGroupPermission(ctx, group.id, permission);
}

/** Every listed group (ids) lets the caller add datasets to it (manage_group). */
export async function canManageGroups(ctx: ActionContext, groupIds: string[]): Promise<boolean> {
  for (const id of groupIds) if (!(await hasGroupPermission(ctx, id, 'manage_group'))) return false;
  return true;
}

/** bulk_update_private/public/delete: admins of the organization. */
export async function canBulkUpdate(ctx: ActionContext, orgId: string): Promise<boolean> {
  return hasGroupPermission(ctx, orgId, 'update');
}

// --- datasets -----------------------------------------------------------------------------

export interface PackageAuthFacts {
  id: string;
  owner_org: string | null;
  private: boolean;
  state: string;
  creator_user_id: string | null;
}

export function collaboratorsEnabled(ctx: ActionContext): boolean {
  return ctx.config.bool('svc.auth.allow_dataset_collaborators');
}

/** Capacities a collaborator may have: editor and member, plus admin when allowed. */
export function collaboratorCapacities(ctx: ActionContext): string[] {
  return ctx.config.bool('svc.auth.allow_admin_collaborators') ? ['admin', 'editor', 'member'] : ['editor', 'member'];
}

/** The caller's collaborator capacity on a dataset, when collaborators are enabled. */
export async function collaboratorCapacity(ctx: ActionContext, packageId: string): Promise<string | undefined> {
  const user = ctx.identity.user;
  if (!user || !collaboratorsEnabled(ctx)) return undefined;
  const r = await ctx.db.query<{ capacity: string }>('SELECT capacity FROM package_members WHERE package_id = $1 AND user_id = $2', [
    packageId,
    user.id,
  ]);
  return r.rows[0]?.capacity;
}

/**
 * May the caller see this dataset? Active public datasets: everyone. Drafts: their creator (and
 * sysadmins) only. Otherwise (private or deleted) sysadmins, members of the owning organization
 * (any capacity), the creator of an unowned dataset, and collaborators.
 */
export async function canReadPackage(ctx: ActionContext, pkg: PackageAuthFacts): Promise<boolean> {
  if (pkg.state === 'active' && !pkg.private) return true;
  if (ctx.identity.sysadmin) return true;
  const user = ctx.identity.user;
  if (!user) return false;
  if (pkg.state === 'draft') return pkg.creator_user_id === user.id;
  if (pkg.owner_org ? await hasGroupPermission(ctx, pkg.owner_org, 'read') : pkg.creator_user_id === user.id) return true;
  return (await collaboratorCapacity(ctx, pkg.id)) !== undefined;
}

/**
 * May the caller change this dataset (update, patch, delete, resources)? Editors and admins of the
 * owning organization; for an unowned dataset, whoever may create datasets (package_create's
 * rule); collaborators with editor or admin.
 */
export async function canEditPackage(ctx: ActionContext, pkg: PackageAuthFacts): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  if (pkg.owner_org ? await hasGroupPermission(ctx, pkg.owner_org, 'update_dataset') : await mayCreatePackages(ctx)) return true;
  if (!ctx.identity.user) return false;
  const collab = await collaboratorCapacity(ctx, pkg.id);
  return collab === 'editor' || collab === 'admin';
}

/**
 * package_create's rule without owner_org and groups, which CKAN also applies to changing an
 * unowned dataset: both unowned flags (and anon_create_dataset for anonymous
 * callers), or editor/admin in some organization.
 */
async function mayCreatePackages(ctx: ActionContext): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  const c = ctx.config;
  const unowned = c.bool('svc.auth.create_dataset_if_not_in_organization') && c.bool('svc.auth.create_unowned_dataset');
  if (!ctx.identity.user) return unowned && c.bool('svc.auth.anon_create_dataset');
  return unowned || (await hasPermissionInSomeOrganization(ctx, 'create_dataset'));
}

/** package_delete: like editing, with the delete_dataset permission of the organization. */
export async function canDeletePackage(ctx: ActionContext, pkg: PackageAuthFacts): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  if (pkg.owner_org ? await hasGroupPermission(ctx, pkg.owner_org, 'delete_dataset') : await mayCreatePackages(ctx)) return true;
  if (!ctx.identity.user) return false;
  const collab = await collaboratorCapacity(ctx, pkg.id);
  return collab === 'editor' || collab === 'admin';
}

/**
 * May the caller add, remove and list the dataset's collaborators? Admins of the owning
 * organization; collaborators with the admin capacity (svc.auth.allow_admin_collaborators); the
 * creator of an unowned dataset when unowned datasets may be created.
 */
export async function canManageCollaborators(ctx: ActionContext, pkg: PackageAuthFacts): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  const user = ctx.identity.user;
  if (!user) return false;
  if (
    !pkg.owner_org &&
    pkg.creator_user_id === user.id &&
    ctx.config.bool('svc.auth.create_dataset_if_not_in_organization') &&
    ctx.config.bool('svc.auth.create_unowned_dataset')
  )
    return true;
  if (pkg.owner_org && (await hasGroupPermission(ctx, pkg.owner_org, 'membership'))) return true;
  return ctx.config.bool('svc.auth.allow_admin_collaborators') && (await collaboratorCapacity(ctx, pkg.id)) === 'admin';
}

/**
 * Why the caller may not create this dataset (CKAN's package_create rule), or null when allowed.
 * owner_org and groups are ids or names as sent; unknown ones are left to validation.
 */
export async function packageCreateDenial(ctx: ActionContext, data: { owner_org?: unknown; groups?: unknown }): Promise<string | null> {
  if (ctx.identity.sysadmin) return null;
  const allowed = await mayCreatePackages(ctx);
  const name = ctx.identity.user?.name ?? '';
  if (!allowed) return `User ${name} not authorized to create packages`;
  const groupIds = await resolveGroupRefs(ctx, data.groups);
  if (!(await canManageGroups(ctx, groupIds))) return `User ${name} not authorized to edit these groups`;
  if (typeof data.owner_org === 'string' && data.owner_org) {
    const org = await resolveGroupRef(ctx, data.owner_org);
    if (org && !(await hasGroupPermission(ctx, org, 'create_dataset')))
      return `User ${name} not authorized to add dataset to this organization`;
  }
  return null;
}

/** Throws the package_create Authorization Error. */
export async function checkPackageCreate(ctx: ActionContext, data: { owner_org?: unknown; groups?: unknown }): Promise<void> {
  const why = await packageCreateDenial(ctx, data);
  if (why) throw new AuthorizationError(why);
}

/**
 * The owner_org validator's verdict when a dataset (null: a new one) is put in organization
 * newOrgId (an existing organization's id): null when allowed, else CKAN's message.
 * Collaborators may not move a dataset unless svc.auth.allow_collaborators_to_change_owner_org.
 */
export async function ownerOrgChangeError(ctx: ActionContext, pkg: PackageAuthFacts | null, newOrgId: string): Promise<string | null> {
  if (ctx.identity.sysadmin || ctx.ignoreAuth) return null;
  if (pkg && pkg.owner_org === newOrgId) return null;
  if (pkg && collaboratorsEnabled(ctx) && !ctx.config.bool('svc.auth.allow_collaborators_to_change_owner_org')) {
    const collab = await collaboratorCapacity(ctx, pkg.id);
    if ((collab === 'editor' || collab === 'admin') && !(await hasGroupPermission(ctx, pkg.owner_org, 'update_dataset'))) {
      return 'You cannot move this dataset to another organization';
    }
  }
  if (!(await hasGroupPermission(ctx, newOrgId, 'create_dataset'))) return 'You cannot add a dataset to this organization';
  return null;
}

/**
 * Activity detail (the data/diff of an activity) of an object: shown to everyone when
 * svc.auth.public_activity_stream_detail, else to those who may edit the object.
 */
export function canSeeActivityDetail(ctx: ActionContext, mayEditObject: boolean): boolean {
  return ctx.identity.sysadmin || mayEditObject || ctx.config.bool('svc.auth.public_activity_stream_detail');
}

/** Permission labels of a dataset (CKAN's search labels). */
export function packagePermissionLabels(pkg: PackageAuthFacts, collaborators: boolean): string[] {
  if (pkg.state === 'active' && !pkg.private) return ['public'];
  // drafts: their creator only (docs/decisions.md); sysadmins skip labels
  if (pkg.state === 'draft') return [`creator-${pkg.creator_user_id}`];
  const labels = [pkg.owner_org ? `member-${pkg.owner_org}` : `creator-${pkg.creator_user_id}`];
  if (collaborators) labels.push(`collaborator-${pkg.id}`);
  return labels;
}

/** Labels the caller holds (sysadmins: see everything, check identity.sysadmin first). */
export async function userPermissionLabels(ctx: ActionContext): Promise<string[]> {
  const labels = ['public'];
  const user = ctx.identity.user;
  if (!user) return labels;
  labels.push(`creator-${user.id}`);
  for (const id of await groupsWithPermission(ctx, 'read')) labels.push(`member-${id}`);
  if (collaboratorsEnabled(ctx)) {
    const r = await ctx.db.query<{ package_id: string }>('SELECT package_id FROM package_members WHERE user_id = $1', [user.id]);
    for (const row of r.rows) labels.push(`collaborator-${row.package_id}`);
  }
  return labels;
}

/** SQL condition (over alias p) for datasets the caller may see, with its parameters appended to params. */
export async function visiblePackagesCondition(ctx: ActionContext, params: unknown[], alias = 'p'): Promise<string> {
  if (ctx.identity.sysadmin) return 'true';
  const user = ctx.identity.user;
  const publicActive = `(${alias}.state = 'active' AND NOT ${alias}.private)`;
  if (!user) return publicActive;
  const orgs = await groupsWithPermission(ctx, 'read');
  params.push(orgs);
  const orgParam = `$${params.length}`;
  params.push(user.id);
  const userParam = `$${params.length}`;
  const collab = collaboratorsEnabled(ctx)
    ? ` OR EXISTS (SELECT 1 FROM package_members pm WHERE pm.package_id = ${alias}.id AND pm.user_id = ${userParam})`
    : '';
  return `(${publicActive} OR (${alias}.state <> 'draft' AND (${alias}.owner_org = ANY(${orgParam}::text[])
    OR (${alias}.owner_org IS NULL AND ${alias}.creator_user_id = ${userParam})${collab})) OR (${alias}.state = 'draft' AND ${alias}.creator_user_id = ${userParam}))`;
}

// Package dicts (model/package-dict.ts) show what this rule lets the caller see.
setDatasetVisibility(visiblePackagesCondition);

// --- helpers ------------------------------------------------------------------------------

async function resolveGroupRef(ctx: ActionContext, ref: string): Promise<string | undefined> {
  const r = await ctx.db.query<{ id: string }>('SELECT id FROM groups WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [ref]);
  return r.rows[0]?.id;
}

/** Group ids from a package's `groups` input ([{id}|{name}] or strings); unknown refs are skipped. */
export async function resolveGroupRefs(ctx: ActionContext, groups: unknown): Promise<string[]> {
  if (!Array.isArray(groups)) return [];
  const out: string[] = [];
  for (const g of groups) {
    const ref = typeof g === 'string' ? g : g && typeof g === 'object' ? ((g as any).id ?? (g as any).name) : undefined;
    if (typeof ref !== 'string' || !ref) continue;
    const id = await resolveGroupRef(ctx, ref);
    if (id) out.push(id);
  }
  return out;
}
