// Writing groups and organizations: the parameters of create/update, members from a group dict
// (users, parents, datasets), and the create, update and delete handlers.
import type { ActionContext } from './context.ts';
import { compileParams, p, type ParamValues } from '../validation/params.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { canEditGroup, canReadPackage, forgetCapacities } from '../auth/authz.ts';
import {
  countOrganizationDatasets,
  deleteGroup,
  disownDatasets,
  findGroup,
  groupNameHolder,
  insertGroup,
  lockedGroup,
  purgeGroup,
  saveGroupExtras,
  updateGroup,
  type GroupRow,
} from '../model/groups.ts';
import { lockHierarchy, replaceMembers, upsertMember, wouldCreateLoop } from '../model/members.ts';
import { findUser } from '../model/users.ts';
import { findPackage, touchAndNotify } from '../model/packages.ts';
import { reindexGroupDatasets } from '../search/service.ts';
import { afterCommit } from './registry.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { groupMemberDatasets } from '../model/group-datasets.ts';
import { groupDict, groupOr404, kindOf, titleKind, validationMessage, type ShowOptions } from './group-dict.ts';
import { groupSchemaFor, validateGroupFields } from '../scheming/schema-validation.ts';

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

export const createParams = {
  id: p.uuid('the id (sysadmins only)').first(sysadminField).use(groupIdFree),
  name: p.name('unique among groups and organizations, deleted ones included').required().use(groupNameAvailable),
  ...groupFields,
};

export const updateParams = {
  id: p.string('the id or name').required().use(editingGroup),
  name: p.name('a new name').use(groupNameAvailable),
  ...groupFields,
};
/** Other keys are kept: a group or organization schema may name them (its custom fields). */
export const updateSchema = compileParams(updateParams, 'keep');

/** Keys of a group dict that are svc's own (never custom fields). */
const CORE_GROUP_KEYS = new Set([...Object.keys(createParams), ...Object.keys(updateParams)]);

/** The fields svc stores in its own columns, as a group schema may convert them. */
const SCHEMA_CORE_COLUMNS = ['name', 'title', 'description', 'image_url'] as const;

/**
 * A group dict checked by the schema of its type (svc.scheming.group_schemas /
 * organization_schemas): the core columns as its validators leave them, and its custom fields.
 * Undefined when no schema applies.
 */
async function schemaFields(
  ctx: ActionContext,
  type: string,
  isOrg: boolean,
  input: Record<string, unknown>,
  group?: GroupRow,
): Promise<{ core: Record<string, unknown>; custom: Record<string, unknown> } | undefined> {
  const gs = groupSchemaFor(ctx, type, isOrg);
  if (!gs) return undefined;
  return validateGroupFields(ctx, gs, input, { create: !group, group, core: CORE_GROUP_KEYS });
}

function applyCore(p: Record<string, unknown>, core: Record<string, unknown>): void {
  for (const k of SCHEMA_CORE_COLUMNS) if (k in core) p[k] = core[k];
}
export type UpdateParams = ParamValues<typeof updateParams>;
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
    for (const row of await groupMemberDatasets(ctx.db, group.id)) {
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

export async function createGroup(ctx: ActionContext, p: ParamValues<typeof createParams>, isOrg: boolean) {
  const type = p.type ?? kindOf(isOrg);
  if (!isOrg && type === 'organization') throw new ValidationError({ type: ['Trying to create an organization as a group'] });
  const checked = await schemaFields(ctx, type, isOrg, p as Record<string, unknown>);
  if (checked) applyCore(p as Record<string, unknown>, checked.core);
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
    custom_fields: checked && Object.keys(checked.custom).length ? checked.custom : null,
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
export async function updateGroupFromDict(ctx: ActionContext, p: UpdateParams, isOrg: boolean, partial: boolean) {
  const found = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
  if (p.type !== undefined && p.type !== found.type) throw validationMessage('Type cannot be updated');
  // Read again under its lock: a patch keeps the custom fields it read.
  const group = (await lockedGroup(ctx.db, found.id)) ?? found;
  const changes: Record<string, unknown> = {};
  const sent = p as Record<string, unknown>;
  const checked = await schemaFields(
    ctx,
    group.type,
    isOrg,
    partial
      ? {
          name: group.name,
          title: group.title,
          description: group.description,
          image_url: group.image_url,
          ...(group.custom_fields ?? {}),
          ...sent,
        }
      : { name: group.name, ...sent },
    group,
  );
  if (checked) {
    applyCore(sent, checked.core);
    changes.custom_fields = Object.keys(checked.custom).length ? checked.custom : null;
  }
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

export async function deleteGroupAction(ctx: ActionContext, p: { id: string }, isOrg: boolean, purge: boolean) {
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
