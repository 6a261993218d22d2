// Group and organization actions. Groups and organizations share one table and one implementation,
// parametrised by isOrganization: groupActions(false) gives group_*, groupActions(true) (see
// organization.ts) organization_*. Permissions are decided in src/auth/authz.ts.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { compileParams, p, type ParamValues } from '../validation/params.ts';
import { datasetSchema, groupSchema, groupSummarySchema, listOf, organizationSummarySchema } from './result-schemas.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import {
  callerCapacities,
  canCreateGroup,
  canDeleteGroup,
  canEditGroup,
  canReadGroup,
  canReadPackage,
  capacityAllows,
  forgetCapacities,
  hasGroupPermission,
  notAuthorized,
  requireUser,
  userCapacities,
  visiblePackagesCondition,
  type Capacity,
} from '../auth/authz.ts';
import { sysadminOnly, anyone } from '../auth/rules.ts';
import {
  autocompleteGroups,
  countOrganizationDatasets,
  deleteGroup,
  disownDatasets,
  extrasOfGroups,
  findGroup,
  groupNameHolder,
  insertGroup,
  listGroups,
  purgeGroup,
  saveGroupExtras,
  updateGroup,
  type GroupRow,
} from '../model/groups.ts';
import {
  countUserMembers,
  lockHierarchy,
  parentGroups,
  replaceMembers,
  upsertMember,
  userMembers,
  wouldCreateLoop,
} from '../model/members.ts';
import { findUser } from '../model/users.ts';
import { findPackage, touchAndNotify, type PackageRow } from '../model/packages.ts';
import { reindexGroupDatasets } from '../search/service.ts';
import { afterCommit } from './registry.ts';
import { packageDicts } from '../model/package-dict.ts';
import { siteUrl } from '../config/site-url.ts';
import { Invalid, validateOrThrow, type Validator } from '../validation/validate.ts';
import { booleanValidator, defaultValue } from '../validation/validators.ts';
import { userDict } from './user-dict.ts';

// --- shared helpers ---------------------------------------------------------------------------

export const kindOf = (isOrg: boolean) => (isOrg ? 'organization' : 'group');
const titleKind = (isOrg: boolean) => (isOrg ? 'Organization' : 'Group');

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function groupImageDisplayUrl(ctx: ActionContext, url: string | null): string {
  if (!url) return '';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || url.startsWith('/')) return url;
  return `${siteUrl(ctx.config)}/uploads/group/${url}`;
}

/** A message-only Validation Error ({"message": "..."}), as CKAN raises for whole-request problems. */
export function validationMessage(message: string): ValidationError {
  return new ValidationError({ message }, message);
}

/** The group or organization named by id/name; 404 when missing or of the other kind. */
export async function groupOr404(ctx: ActionContext, idOrName: unknown, isOrg: boolean, message?: string): Promise<GroupRow> {
  const group = typeof idOrName === 'string' && idOrName ? await findGroup(ctx.db, idOrName) : undefined;
  if (!group || group.is_organization !== isOrg) throw new NotFoundError(message);
  return group;
}

/**
 * SQL (over group alias g) counting the datasets of a group that the caller may count: active
 * public ones for everyone; private ones too for members of that group who may see them.
 */
export async function packageCountSql(ctx: ActionContext, params: unknown[], alias = 'g'): Promise<string> {
  let memberCond: string;
  if (ctx.identity.sysadmin) memberCond = 'true';
  else {
    const readable = [...(await callerCapacities(ctx)).entries()].filter(([, c]) => capacityAllows(c, 'read')).map(([id]) => id);
    params.push(readable);
    const p = `$${params.length}`;
    const visible = await visiblePackagesCondition(ctx, params, 'p');
    memberCond = `(${alias}.id = ANY(${p}::text[]) AND ${visible})`;
  }
  // One count per kind, each by its own index (owner_org; members by group): a CASE inside one
  // WHERE would read every dataset once per group.
  const visible = `p.state = 'active' AND (NOT p.private OR ${memberCond})`;
  return `(CASE WHEN ${alias}.is_organization
    THEN (SELECT count(*)::int FROM packages p WHERE p.owner_org = ${alias}.id AND ${visible})
    ELSE (SELECT count(*)::int FROM members pm JOIN packages p ON p.id = pm.table_id
          WHERE pm.group_id = ${alias}.id AND pm.table_name = 'package' AND pm.state = 'active' AND ${visible}) END)`;
}

async function packageCounts(ctx: ActionContext, groupIds: string[]): Promise<Map<string, number>> {
  if (!groupIds.length) return new Map();
  const params: unknown[] = [groupIds];
  const expr = await packageCountSql(ctx, params);
  const r = await ctx.db.query<{ id: string; n: number }>(`SELECT g.id, ${expr} AS n FROM groups g WHERE g.id = ANY($1::text[])`, params);
  return new Map(r.rows.map((x) => [x.id, x.n]));
}

/** Ids of the group's datasets the caller may see in group_show (newest first). */
async function groupPackageIds(ctx: ActionContext, group: GroupRow, limit: number, publicOnly = false): Promise<string[]> {
  const params: unknown[] = [group.id];
  let visibility: string;
  if (publicOnly) visibility = 'NOT p.private';
  else {
    const member = await hasGroupPermission(ctx, group.id, 'read');
    visibility = member ? `(NOT p.private OR ${await visiblePackagesCondition(ctx, params, 'p')})` : 'NOT p.private';
  }
  params.push(limit);
  const membership = group.is_organization
    ? 'p.owner_org = $1'
    : "EXISTS (SELECT 1 FROM members m WHERE m.group_id = $1 AND m.table_name = 'package' AND m.table_id = p.id AND m.state = 'active')";
  const r = await ctx.db.query<{ id: string }>(
    `SELECT p.id FROM packages p WHERE p.state = 'active' AND ${membership} AND ${visibility}
     ORDER BY p.metadata_modified DESC, p.id LIMIT $${params.length}`,
    params,
  );
  return r.rows.map((x) => x.id);
}

/** The fields every group dict starts with (list_for_user / list_authz items, unvalidated). */
function baseDict(ctx: ActionContext, g: GroupRow): Record<string, unknown> {
  return {
    id: g.id,
    name: g.name,
    title: g.title,
    type: g.type,
    description: g.description,
    image_url: g.image_url,
    created: g.created,
    is_organization: g.is_organization,
    approval_status: g.approval_status,
    state: g.state,
    display_name: g.title || g.name,
    image_display_url: groupImageDisplayUrl(ctx, g.image_url),
  };
}

export interface ShowOptions {
  includeDatasets?: boolean;
  includeDatasetCount?: boolean;
  includeExtras?: boolean;
  includeUsers?: boolean;
  includeGroups?: boolean;
  includeTags?: boolean;
  includeFollowers?: boolean;
  includeMemberCount?: boolean;
  packageCount?: number;
  /** group_list/organization_list all_fields: num_followers only when includeFollowers (show always has it, 0 when not asked). */
  followersOnlyWhenAsked?: boolean;
}

/** The group dict of group_show / organization_show (CKAN's shape: counts, extras, and member lists on request). */
export async function groupDict(ctx: ActionContext, g: GroupRow, o: ShowOptions): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {
    ...baseDict(ctx, g),
    title: g.title ?? '',
    description: g.description ?? '',
    image_url: g.image_url ?? '',
  };
  if (o.includeExtras) {
    out.extras = (await extrasOfGroups(ctx.db, [g.id])).map((e) => ({
      id: e.id,
      group_id: e.group_id,
      key: e.key,
      value: e.value,
      state: e.state,
    }));
  }
  if (o.includeDatasets || o.includeDatasetCount) {
    out.package_count = o.packageCount ?? (await packageCounts(ctx, [g.id])).get(g.id) ?? 0;
  }
  if (o.includeDatasets) {
    const ids = await groupPackageIds(ctx, g, g.is_organization ? 10 : 1000);
    out.packages = await packageDicts(ctx, ids);
  }
  if (o.includeTags) out.tags = [];
  if (o.includeGroups) out.groups = (await parentGroups(ctx.db, g.id)).map((s) => ({ name: s.name, capacity: s.capacity }));
  if (o.includeUsers) {
    const users = await userMembers(ctx.db, g.id);
    const dicts: Record<string, unknown>[] = [];
    // One after another: the queries share the request's connection.
    for (const u of users) dicts.push(sortKeys({ ...(await userDict(ctx, u, { self: false })), capacity: u.capacity }));
    out.users = dicts;
  }
  if (o.includeMemberCount) out.member_count = await countUserMembers(ctx.db, g.id);
  if (o.includeFollowers) out.num_followers = await followerCount(ctx, g);
  else if (!o.followersOnlyWhenAsked) out.num_followers = 0;
  return sortKeys(out);
}

async function followerCount(ctx: ActionContext, g: GroupRow): Promise<number> {
  const action = g.is_organization ? 'organization_follower_count' : 'group_follower_count';
  if (!ctx.services.registry.has(action)) return 0;
  try {
    return Number(await ctx.call(action, { id: g.id }, { ignoreAuth: true })) || 0;
  } catch {
    return 0;
  }
}

// --- validation -------------------------------------------------------------------------------

/** Only sysadmins may send these (CKAN 2.11: ids). */
const sysadminField: Validator = (v, f) => {
  if (!f.context.identity.sysadmin && !f.context.ignoreAuth) throw new Invalid(`The input field ${f.key} was not expected.`);
  return v;
};

const groupNameAvailable: Validator = async (v, f) => {
  if (typeof v !== 'string') return v;
  const holder = await groupNameHolder(f.context.db, v);
  if (holder && holder.id !== f.context._editingGroupId) throw new Invalid('Group name already exists in database');
  return v;
};

const groupIdFree: Validator = async (v, f) => {
  if (await findGroup(f.context.db, v)) throw new Invalid('Group id already exists in database');
  return v;
};

const memberItem = (capacityDefault: string, capacities?: readonly string[]) => ({
  id: p.string('id'),
  name: p.string('name'),
  capacity: capacities ? p.enum(capacities, 'the capacity').default(capacityDefault) : p.string('the capacity').default(capacityDefault),
});

/** The fields of a group dict, shared by create and update. */
const groupFields = {
  title: p.string('the title'),
  description: p.string('the description'),
  image_url: p.string('URL of the image'),
  type: p.string('the type'),
  state: p.enum(['active', 'deleted', 'draft'], 'the state (honoured for sysadmins on create, for editors of the group on update)'),
  approval_status: p.string('the approval status'),
  extras: p.listOf(
    { key: p.string('the key').required(), value: p.any('the value'), deleted: p.any('ignored') },
    'custom fields: list of {key, value}',
  ),
  users: p.listOf(memberItem('member', ['admin', 'editor', 'member']), 'members: list of {name or id, capacity (admin, editor or member)}'),
  groups: p.listOf(
    memberItem('parent'),
    "the parents: list of {name or id, capacity (default 'parent')}; admins of a parent are admins here too (svc.auth.roles_that_cascade_to_sub_groups)",
  ),
  packages: p.listOf({ id: p.string('id'), name: p.string('name') }, 'datasets of a group: list of {id} or {name}'),
  tags: p.any('accepted, not stored').hidden(),
};

/** Records which group is being edited, for the name check. */
const editingGroup: Validator = async (v, f) => {
  const g = await findGroup(f.context.db, v);
  if (g) f.context._editingGroupId = g.id;
  return v;
};

const createParams = {
  id: p.uuid('the id (sysadmins only)').first(sysadminField).use(groupIdFree),
  name: p.name('unique among groups and organizations, deleted ones included').required().use(groupNameAvailable),
  ...groupFields,
};

const updateParams = {
  id: p.string('the id or name').required().use(editingGroup),
  name: p.name('a new name').use(groupNameAvailable),
  ...groupFields,
};
const updateSchema = compileParams(updateParams);
type UpdateParams = ParamValues<typeof updateParams>;

// --- writing members from a group dict --------------------------------------------------------

type Ref = { id?: string; name?: string; capacity: string };

async function saveUsers(ctx: ActionContext, group: GroupRow, users: Ref[]): Promise<void> {
  const entries: { id: string; capacity: string }[] = [];
  for (const u of users) {
    const ref = u.id || u.name;
    const row = ref ? await findUser(ctx.db, ref) : undefined;
    if (row && row.state !== 'deleted' && !entries.some((e) => e.id === row.id)) entries.push({ id: row.id, capacity: u.capacity });
  }
  await replaceMembers(ctx.db, group.id, 'user', entries);
}

/**
 * Sets the group's parents (the `groups` of a group dict, CKAN's hierarchy convention). Callers
 * are admins of the group (its update/create rule): putting a group under another hands its
 * control to the parent's admins (svc.auth.roles_that_cascade_to_sub_groups), which only the
 * group's own admins may decide.
 */
async function saveParents(ctx: ActionContext, group: GroupRow, groups: Ref[]): Promise<void> {
  if (groups.length) await lockHierarchy(ctx.db);
  const entries: { id: string; capacity: string }[] = [];
  const errors: Record<string, string[]>[] = [];
  const kind = kindOf(group.is_organization);
  for (const g of groups) {
    const ref = g.id || g.name;
    const row = ref ? await findGroup(ctx.db, ref) : undefined;
    const key = g.id ? 'id' : 'name';
    if (!row || row.state === 'deleted') errors.push({ [key]: [`${titleKind(group.is_organization)} not found: ${ref ?? ''}`] });
    else if (row.is_organization !== group.is_organization)
      errors.push({
        [key]: [
          `The parent of ${kind === 'organization' ? 'an organization' : 'a group'} must be ${kind === 'organization' ? 'an organization' : 'a group'}`,
        ],
      });
    else if (await wouldCreateLoop(ctx.db, group.id, row.id)) errors.push({ [key]: ['This parent would create a loop in the hierarchy'] });
    else {
      errors.push({});
      if (!entries.some((e) => e.id === row.id)) entries.push({ id: row.id, capacity: g.capacity });
    }
  }
  if (errors.some((e) => Object.keys(e).length)) throw new ValidationError({ groups: errors });
  await replaceMembers(ctx.db, group.id, 'group', entries);
}

async function savePackages(ctx: ActionContext, group: GroupRow, packages: { id?: string; name?: string }[]): Promise<void> {
  const entries: { id: string; capacity: string }[] = [];
  const errors: Record<string, string[]>[] = [];
  for (const p of packages) {
    const ref = p.id || p.name;
    const row = ref ? await findPackage(ctx.db, ref) : undefined;
    if (!row || row.state === 'deleted' || !(ctx.ignoreAuth || (await canReadPackage(ctx, row)))) {
      errors.push({ id: ['Not found: Dataset'] });
      continue;
    }
    errors.push({});
    if (!entries.some((e) => e.id === row.id)) entries.push({ id: row.id, capacity: 'public' });
  }
  if (errors.some((e) => Object.keys(e).length)) throw new ValidationError({ packages: errors });
  // Datasets of the group that the caller cannot see stay: nobody removes what they cannot see.
  if (!ctx.ignoreAuth && !ctx.identity.sysadmin) {
    const r = await ctx.db.query<PackageRow>(
      "SELECT p.* FROM members m JOIN packages p ON p.id = m.table_id WHERE m.group_id = $1 AND m.table_name = 'package' AND m.state = 'active'",
      [group.id],
    );
    for (const row of r.rows) {
      if (!entries.some((e) => e.id === row.id) && !(await canReadPackage(ctx, row))) entries.push({ id: row.id, capacity: 'public' });
    }
  }
  await touchAndNotify(ctx, await replaceMembers(ctx.db, group.id, 'package', entries));
}

// --- handlers ---------------------------------------------------------------------------------

const SHOW_ALL: ShowOptions = {
  includeDatasetCount: true,
  includeExtras: true,
  includeUsers: true,
  includeGroups: true,
  includeTags: true,
  includeFollowers: true,
};

/** What create/update/patch return: the show dict with everything but the datasets (users included). */
async function showAfterWrite(ctx: ActionContext, id: string): Promise<Record<string, unknown>> {
  const g = await findGroup(ctx.db, id);
  if (!g) throw new NotFoundError();
  return groupDict(ctx, g, SHOW_ALL);
}

async function createGroup(ctx: ActionContext, p: ParamValues<typeof createParams>, isOrg: boolean) {
  const type = p.type ?? kindOf(isOrg);
  if (!isOrg && type === 'organization') throw new ValidationError({ type: ['Trying to create an organization as a group'] });
  const group = await insertGroup(ctx.db, {
    id: p.id,
    name: p.name,
    title: p.title,
    type,
    description: p.description,
    image_url: p.image_url,
    is_organization: isOrg,
    approval_status: p.approval_status,
    state: ctx.identity.sysadmin || ctx.ignoreAuth ? p.state : undefined,
  });
  await saveGroupExtras(ctx.db, group.id, p.extras ?? []);
  if (p.users) await saveUsers(ctx, group, p.users);
  if (p.groups) await saveParents(ctx, group, p.groups);
  if (!isOrg && p.packages) await savePackages(ctx, group, p.packages);
  // The creator becomes an admin.
  if (ctx.identity.user) await upsertMember(ctx.db, group.id, 'user', ctx.identity.user.id, 'admin');
  forgetCapacities(ctx);
  return showAfterWrite(ctx, group.id);
}

/** group_update (partial=false: omitted users/groups are removed, title etc. cleared) and group_patch (partial=true). */
async function updateGroupFromDict(ctx: ActionContext, p: UpdateParams, isOrg: boolean, partial: boolean) {
  const group = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
  if (p.type !== undefined && p.type !== group.type) throw validationMessage('Type cannot be updated');
  const changes: Record<string, unknown> = {};
  if (p.name !== undefined) changes.name = p.name;
  for (const k of ['title', 'description', 'image_url'] as const) {
    if (p[k] !== undefined) changes[k] = p[k];
    else if (!partial) changes[k] = null;
  }
  if (p.approval_status !== undefined) changes.approval_status = p.approval_status;
  if (p.state !== undefined && (ctx.ignoreAuth || (await canEditGroup(ctx, group.id)))) changes.state = p.state;
  await updateGroup(ctx.db, group.id, changes as any);
  if ((changes.name ?? group.name) !== group.name || (changes.title !== undefined && changes.title !== group.title))
    await reindexGroupDatasets(ctx.services, ctx.db, group.id, (fn) => afterCommit(ctx, fn));
  await saveGroupExtras(ctx.db, group.id, p.extras ?? []);
  if (p.users !== undefined || !partial) await saveUsers(ctx, group, p.users ?? []);
  if (p.groups !== undefined || !partial) await saveParents(ctx, group, p.groups ?? []);
  if (!isOrg && p.packages !== undefined) await savePackages(ctx, group, p.packages);
  forgetCapacities(ctx);
  return showAfterWrite(ctx, group.id);
}

async function deleteGroupAction(ctx: ActionContext, p: { id: string }, isOrg: boolean, purge: boolean) {
  const group = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
  const changed: string[] = [];
  if (isOrg && (await countOrganizationDatasets(ctx.db, group.id)) > 0) {
    if (!ctx.config.bool('svc.auth.create_unowned_dataset'))
      throw validationMessage('Organization cannot be deleted while it still has datasets');
    changed.push(...(await disownDatasets(ctx.db, group.id, purge)));
  }
  changed.push(...(purge ? await purgeGroup(ctx.db, group.id) : await deleteGroup(ctx.db, group.id)));
  forgetCapacities(ctx);
  await touchAndNotify(ctx, changed);
  return null;
}

// --- list ---------------------------------------------------------------------------------------

const SORT_FIELDS = ['name', 'packages', 'package_count', 'title'];

/** CKAN's _unpick_search for one sort criterion. */
export function parseGroupSort(sort: string): { field: string; dir: 'asc' | 'desc' } {
  let s = sort.trim();
  if (s === 'packages' || s === 'package_count') s = 'package_count desc';
  const parts = s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const out: { field: string; dir: 'asc' | 'desc' }[] = [];
  for (const part of parts) {
    const [field, order = 'asc'] = part.split(/\s+/);
    if (!SORT_FIELDS.includes(field)) throw validationMessage(`Cannot sort by field \`${field}\``);
    const dir = order.toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw validationMessage(`Invalid sort direction \`${dir}\``);
    out.push({ field: field === 'packages' ? 'package_count' : field, dir });
  }
  if (out.length > 1) throw validationMessage('Too many sort criteria provided only 1 allowed');
  return out[0] ?? { field: 'title', dir: 'asc' };
}

async function listGroupsAction(ctx: ActionContext, p: ParamValues<ListParams>, isOrg: boolean) {
  const sort = parseGroupSort(p.sort || p.order_by || 'title');
  const max = ctx.config.int(p.all_fields ? 'svc.group_and_organization_list_all_fields_max' : 'svc.group_and_organization_list_max');
  const limit = !p.limit || p.limit > max ? max : p.limit;
  const params: unknown[] = [];
  const countExpr = sort.field === 'package_count' ? await packageCountSql(ctx, params) : undefined;
  const names = p[isOrg ? 'organizations' : 'groups'];
  const rows = await listGroups(ctx.db, {
    isOrganization: isOrg,
    type: p.type ?? kindOf(isOrg),
    q: p.q,
    names,
    sort,
    limit,
    offset: p.offset ?? 0,
    countExpr,
    params,
  });
  if (!p.all_fields) return rows.map((r) => r.name);
  const counts = p.include_dataset_count
    ? await packageCounts(
        ctx,
        rows.map((r) => r.id),
      )
    : new Map<string, number>();
  const out = [];
  for (const g of rows) {
    out.push(
      await groupDict(ctx, g, {
        includeDatasetCount: p.include_dataset_count,
        packageCount: counts.get(g.id),
        includeExtras: p.include_extras,
        includeTags: p.include_tags,
        includeGroups: p.include_groups,
        includeUsers: p.include_users,
        includeFollowers: p.include_followers,
        includeMemberCount: p.include_member_count,
        followersOnlyWhenAsked: true,
      }),
    );
  }
  return out;
}

// --- auth rules -------------------------------------------------------------------------------

const createAuth =
  (isOrg: boolean): AuthFunction =>
  (ctx) => {
    requireUser(ctx, `${kindOf(isOrg)}_create`);
    if (!canCreateGroup(ctx, isOrg)) throw notAuthorized(ctx, `create ${kindOf(isOrg)}s`);
  };

const updateAuth =
  (isOrg: boolean, action: string): AuthFunction =>
  async (ctx, p) => {
    const group = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
    requireUser(ctx, action);
    if (!(await canEditGroup(ctx, group.id))) throw notAuthorized(ctx, `edit ${kindOf(isOrg)} ${group.id}`);
  };

const deleteAuth =
  (isOrg: boolean): AuthFunction =>
  async (ctx, p) => {
    const group = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
    requireUser(ctx, `${kindOf(isOrg)}_delete`);
    if (!ctx.config.bool(isOrg ? 'svc.auth.user_delete_organizations' : 'svc.auth.user_delete_groups'))
      throw notAuthorized(ctx, `delete ${kindOf(isOrg)}s`);
    if (!(await canDeleteGroup(ctx, group.id, isOrg))) throw notAuthorized(ctx, `delete ${kindOf(isOrg)} ${group.id}`);
  };

const purgeAuth =
  (isOrg: boolean): AuthFunction =>
  async (ctx, p) => {
    await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
    requireUser(ctx, `${kindOf(isOrg)}_purge`);
    sysadminOnly(ctx, p);
  };

/** group_show / organization_show (also member_list, group_package_show): users need public_user_details or membership. */
export const showAuth =
  (isOrg: boolean | undefined, mode: 'show' | 'members' | 'packages' = 'show'): AuthFunction =>
  async (ctx, p) => {
    const group = await findGroup(ctx.db, String(p.id ?? ''));
    if (!group || (isOrg !== undefined && group.is_organization !== isOrg)) throw new NotFoundError();
    const users =
      mode === 'show' ? !!p.include_users : mode === 'members' ? p.object_type === undefined || p.object_type === 'user' : false;
    if (!(await canReadGroup(ctx, group, { users }))) throw notAuthorized(ctx, `read ${kindOf(group.is_organization)} ${group.id}`);
  };

// --- definitions ------------------------------------------------------------------------------

const showParams = {
  id: p.string('id or name').required(),
  include_datasets: p.boolean('list up to 1000 (organizations: 10) of its datasets you may see').default(false),
  include_dataset_count: p.boolean('package_count (private datasets count only for members)').default(true),
  include_extras: p.boolean('include the extras').default(true),
  // Missing or null: the configuration decides (svc.auth.public_user_details); "" is true.
  include_users: p.custom<boolean>(
    'include the users (default svc.auth.public_user_details)',
    [defaultValue(true), booleanValidator],
    Type.Boolean(),
    'bool',
  ),
  include_groups: p.boolean('include the parent groups (groups)').default(true),
  include_tags: p.boolean('include the tags').default(true),
  include_followers: p.boolean('include num_followers').default(true),
  include_member_count: p.boolean('include member_count').default(false),
};

const namesParam = p.stringList('only these names (a list, or one comma-separated string)', { split: true });
const listCommon = {
  type: p.string('the type (default: group or organization)'),
  sort: p.string("name, title or package_count, with asc/desc (default 'title asc'; 'packages' = package_count desc)"),
  order_by: p.string('deprecated, use sort'),
  limit: p.natural(
    'at most this many (default and maximum svc.group_and_organization_list_max, or svc.group_and_organization_list_all_fields_max with all_fields)',
  ),
  offset: p.natural('skip this many (default 0)'),
  q: p.string('only those whose name, title or description contains q'),
  all_fields: p.boolean('return dicts instead of names').default(false),
  include_dataset_count: p.boolean('include package_count (with all_fields)').default(true),
  include_extras: p.boolean('include the extras (with all_fields)').default(false),
  include_tags: p.boolean('include the tags (with all_fields)').default(false),
  include_groups: p.boolean('include the parent groups (groups; with all_fields)').default(false),
  include_users: p.boolean('include the users (with all_fields)').default(false),
  include_followers: p.boolean('include num_followers (with all_fields)').default(false),
  include_member_count: p.boolean('include member_count (with all_fields)').default(false),
};
/** group_list takes groups, organization_list organizations (the names to keep). */
type ListParams = typeof listCommon & { groups: typeof namesParam; organizations: typeof namesParam };
const listParams = (isOrg: boolean) => ({ ...listCommon, [isOrg ? 'organizations' : 'groups']: namesParam }) as ListParams;

const groupReturns = (k: string) => ({ description: `the ${k} (as ${k}_show)`, rtype: 'dictionary', schema: groupSchema });
const nullReturns = { description: 'null', schema: Type.Null() };

export function groupActions(isOrg: boolean): ActionDefinition<any, any>[] {
  const k = kindOf(isOrg);
  const ks = `${k}s`;
  return [
    defineAction({
      name: `${k}_create`,
      sideEffectFree: false,
      auth: createAuth(isOrg),
      authBeforeValidation: true,
      description: `Create a new ${k}. You become its admin. Needs a login${isOrg ? ' and svc.auth.user_create_organizations (default true)' : ' and svc.auth.user_create_groups (default true)'}.`,
      params: createParams,
      returns: groupReturns(k),
      handler: (ctx, p) => createGroup(ctx, p, isOrg),
    }),
    defineAction({
      name: `${k}_show`,
      sideEffectFree: true,
      auth: showAuth(isOrg),
      description: `Return a ${k}. Active ${ks} are public (their users only when svc.auth.public_user_details); deleted ones are shown to their members and sysadmins.`,
      params: showParams,
      returns: { description: `the ${k}`, rtype: 'dictionary', schema: groupSchema },
      handler: async (ctx, p) => {
        const g = await groupOr404(ctx, p.id, isOrg);
        const includeUsers = p.include_users ?? ctx.config.bool('svc.auth.public_user_details');
        return groupDict(ctx, g, {
          includeDatasets: p.include_datasets,
          includeDatasetCount: p.include_dataset_count,
          includeExtras: p.include_extras,
          includeUsers,
          includeGroups: p.include_groups,
          includeTags: p.include_tags,
          includeFollowers: p.include_followers,
          includeMemberCount: p.include_member_count,
        });
      },
    }),
    defineAction({
      name: `${k}_update`,
      sideEffectFree: false,
      auth: updateAuth(isOrg, `${k}_update`),
      description: `Replace a ${k} (admins of the ${k}). This is a full replace: users and groups not sent are removed (admins too, you included), title, description and image_url not sent are cleared; extras are replaced only when a non-empty list is sent${isOrg ? '' : '; datasets only when packages is sent'}. The type cannot change. Use ${k}_patch to change some fields only.`,
      params: updateParams,
      returns: groupReturns(k),
      handler: (ctx, p) => updateGroupFromDict(ctx, p, isOrg, false),
    }),
    defineAction({
      name: `${k}_patch`,
      sideEffectFree: false,
      auth: updateAuth(isOrg, `${k}_patch`),
      description: `Change some fields of a ${k} (those of ${k}_update), keeping the others (member lists not sent are kept). Admins of the ${k}.`,
      params: { id: p.string('id or name').required() },
      extras: 'keep',
      returns: groupReturns(k),
      handler: async (ctx, p) => {
        // The other fields are checked against update's declarations once the id is resolved.
        const g = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
        const data = await validateOrThrow<UpdateParams>(updateSchema, { ...p, id: g.id }, ctx);
        return updateGroupFromDict(ctx, data, isOrg, true);
      },
    }),
    defineAction({
      name: `${k}_delete`,
      sideEffectFree: false,
      auth: deleteAuth(isOrg),
      description: `Delete a ${k} (state deleted; its memberships end). Admins of the ${k}, when svc.auth.user_delete_${ks} (default true).${isOrg ? ' An organization that still has datasets cannot be deleted, unless svc.auth.create_unowned_dataset is true: its datasets then become unowned.' : ''}`,
      params: { id: p.string('id or name').required() },
      returns: nullReturns,
      handler: (ctx, p) => deleteGroupAction(ctx, p, isOrg, false),
    }),
    defineAction({
      name: `${k}_purge`,
      sideEffectFree: false,
      auth: purgeAuth(isOrg),
      description: `Remove a ${k} for good, with its extras and memberships. Sysadmin only.${isOrg ? ' As for organization_delete, datasets must be gone first unless svc.auth.create_unowned_dataset.' : ''}`,
      params: { id: p.string('id or name').required() },
      returns: nullReturns,
      handler: (ctx, p) => deleteGroupAction(ctx, p, isOrg, true),
    }),
    defineAction({
      name: `${k}_list`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return the active ${ks}: names, or dicts with all_fields.`,
      params: listParams(isOrg),
      returns: {
        description: `names, or ${k} dicts with all_fields`,
        rtype: 'list',
        schema: Type.Union([listOf(Type.String()), listOf(groupSchema)]),
      },
      handler: (ctx, p) => listGroupsAction(ctx, p, isOrg),
    }),
    defineAction({
      name: `${k}_autocomplete`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return active ${ks} whose name or title contains q.`,
      params: {
        q: p.string('the text').required(),
        limit: p.natural('at most this many').default(20).max(1000),
      },
      returns: {
        description: 'list of {id, name, title}',
        rtype: 'list',
        schema: listOf(Type.Object({ id: Type.String(), name: Type.String(), title: Type.String() }, { additionalProperties: true })),
      },
      handler: (ctx, p) => autocompleteGroups(ctx.db, isOrg, p.q, p.limit),
    }),
  ];
}

// --- group_list_authz, organization_list_for_user, group_package_show ------------------------------

function listItem(ctx: ActionContext, g: GroupRow, count?: number, capacity?: string): Record<string, unknown> {
  const out: Record<string, unknown> = baseDict(ctx, g);
  if (count !== undefined) out.package_count = count;
  if (capacity !== undefined) out.capacity = capacity;
  return sortKeys(out);
}

const byDisplayName = (a: GroupRow, b: GroupRow) => {
  const x = (a.title || a.name).toLowerCase();
  const y = (b.title || b.name).toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : 1;
};

async function activeGroups(ctx: ActionContext, isOrg: boolean, ids: string[] | 'all'): Promise<GroupRow[]> {
  const r =
    ids === 'all'
      ? await ctx.db.query<GroupRow>("SELECT * FROM groups WHERE is_organization = $1 AND state = 'active'", [isOrg])
      : await ctx.db.query<GroupRow>("SELECT * FROM groups WHERE is_organization = $1 AND state = 'active' AND id = ANY($2::text[])", [
          isOrg,
          ids,
        ]);
  return r.rows.sort(byDisplayName);
}

export const groupExtraActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'group_list_authz',
    sideEffectFree: true,
    auth: anyone,
    description:
      'Return the groups (not organizations) you may add datasets to: those where you are a member in any capacity (sysadmins: all groups). Anonymous callers get [].',
    params: {
      available_only: p.boolean('with package_id, leave out groups the dataset is already in').default(false),
      am_member: p.boolean('only groups you are a member of, also for sysadmins').default(false),
      include_dataset_count: p.boolean('add package_count').default(false),
      package_id: p.string('the dataset for available_only'),
    },
    returns: { description: 'the groups', rtype: 'list of dictionaries', schema: listOf(groupSummarySchema) },
    handler: async (ctx, p) => {
      if (!ctx.identity.user) return [];
      let ids: string[] | 'all';
      if (ctx.identity.sysadmin && !p.am_member) ids = 'all';
      else ids = [...(await callerCapacities(ctx)).entries()].filter(([, c]) => capacityAllows(c, 'manage_group')).map(([id]) => id);
      let groups = await activeGroups(ctx, false, ids);
      if (p.available_only && p.package_id) {
        const pkg = await findPackage(ctx.db, p.package_id);
        if (pkg) {
          const r = await ctx.db.query<{ group_id: string }>(
            "SELECT group_id FROM members WHERE table_name = 'package' AND table_id = $1 AND state = 'active'",
            [pkg.id],
          );
          const inGroups = new Set(r.rows.map((x) => x.group_id));
          groups = groups.filter((g) => !inGroups.has(g.id));
        }
      }
      const counts = p.include_dataset_count
        ? await packageCounts(
            ctx,
            groups.map((g) => g.id),
          )
        : undefined;
      return groups.map((g) => listItem(ctx, g, counts ? (counts.get(g.id) ?? 0) : undefined));
    },
  }),
  defineAction({
    name: 'organization_list_for_user',
    sideEffectFree: true,
    auth: anyone,
    description:
      "Return the organizations a user holds a permission in, each with the user's capacity (sysadmins: every organization, as admin). Capacities inherited down the organization hierarchy count (svc.auth.roles_that_cascade_to_sub_groups).",
    params: {
      id: p.string("the user's id or name (default: you; anonymous callers get [])"),
      permission: p
        .string(
          'read, manage_group, create_dataset, update_dataset, delete_dataset, admin... (manage_group: every organization the user belongs to)',
        )
        .default('manage_group'),
      include_dataset_count: p.boolean('add package_count').default(false),
    },
    returns: {
      description: 'the organizations, each with capacity',
      rtype: 'list of dictionaries',
      schema: listOf(organizationSummarySchema),
    },
    handler: async (ctx, p) => {
      let user = ctx.identity.user;
      if (p.id) {
        const u = await findUser(ctx.db, p.id);
        if (!u) throw new NotFoundError('User not found');
        user = u;
      }
      if (!user || user.state === 'deleted') return [];
      let pairs: [GroupRow, string][];
      if (user.sysadmin) pairs = (await activeGroups(ctx, true, 'all')).map((g) => [g, 'admin']);
      else {
        const caps = await userCapacities(ctx.db, user.id, ctx.config.list('svc.auth.roles_that_cascade_to_sub_groups'));
        const ids = [...caps.entries()].filter(([, c]) => capacityAllows(c, p.permission)).map(([id]) => id);
        pairs = (await activeGroups(ctx, true, ids)).map((g) => [g, caps.get(g.id) as Capacity]);
      }
      const counts = p.include_dataset_count
        ? await packageCounts(
            ctx,
            pairs.map(([g]) => g.id),
          )
        : undefined;
      return pairs.map(([g, c]) => listItem(ctx, g, counts ? (counts.get(g.id) ?? 0) : undefined, c));
    },
  }),
  defineAction({
    name: 'group_package_show',
    sideEffectFree: true,
    auth: showAuth(undefined, 'packages'),
    description: 'Return the active public datasets of a group or organization, newest first.',
    params: {
      id: p.string("the group's id or name").required(),
      limit: p.natural('at most this many').default(10).max(1000),
    },
    returns: { description: 'the datasets', rtype: 'list of dictionaries', schema: listOf(datasetSchema) },
    handler: async (ctx, p) => {
      const g = await findGroup(ctx.db, p.id);
      if (!g) throw new NotFoundError();
      return packageDicts(ctx, await groupPackageIds(ctx, g, p.limit, true));
    },
  }),
];
