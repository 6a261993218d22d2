// Membership actions: member_create, member_delete, member_list, group_/organization_member_create
// and _delete, member_roles_list. Who may do what is decided in src/auth/authz.ts.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { p } from '../validation/params.ts';
import { listOf } from './result-schemas.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import {
  canEditGroup,
  canManageMembers,
  canReadPackage,
  CAPACITIES,
  forgetCapacities,
  notAuthorized,
  requireUser,
  visiblePackagesCondition,
} from '../auth/authz.ts';
import { anyone } from '../auth/rules.ts';
import { findGroup, type GroupRow } from '../model/groups.ts';
import {
  listMembers,
  lockHierarchy,
  wouldCreateLoop,
  removeMember,
  upsertMember,
  type MemberRow,
  type MemberTable,
} from '../model/members.ts';
import { findUser } from '../model/users.ts';
import { organizationDatasetIds, visibleDatasetIds } from '../model/group-datasets.ts';
import { findPackage, lockPackages, touchAndNotify } from '../model/packages.ts';
import { unicodeString } from '../validation/validators.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { kindOf } from './group-dict.ts';
import { showAuth } from './group-auth.ts';

const OBJECT_TYPES = ['user', 'package', 'group'] as const;
const titleKind = (isOrg: boolean) => (isOrg ? 'Organization' : 'Group');
const LABELS: Record<string, string> = { admin: 'Admin', editor: 'Editor', member: 'Member' };

const roleExists: Validator = (v) => {
  if (!(CAPACITIES as readonly string[]).includes(v)) throw new Invalid('role does not exist.');
  return v;
};

const roleParam = (description: string) =>
  p.custom<string>(description, [unicodeString, roleExists], Type.Union(CAPACITIES.map((c) => Type.Literal(c))));

const memberSchema = Type.Object(
  {
    id: Type.String(),
    table_name: Type.String(),
    table_id: Type.String(),
    capacity: Type.String(),
    group_id: Type.String(),
    state: Type.String(),
  },
  { additionalProperties: true, title: 'Member' },
);
const memberReturns = {
  description: 'the member {id, table_name, table_id, capacity, group_id, state}',
  rtype: 'dictionary',
  schema: memberSchema,
};
const nullReturns = { description: 'null', schema: Type.Null() };

function memberDict(m: MemberRow): Record<string, unknown> {
  return { capacity: m.capacity, group_id: m.group_id, id: m.id, state: m.state, table_id: m.table_id, table_name: m.table_name };
}

async function groupOrNotFound(ctx: ActionContext, id: string, message = 'Group was not found.'): Promise<GroupRow> {
  const g = await findGroup(ctx.db, id);
  if (!g) throw new NotFoundError(message);
  return g;
}

/** The member object's id, or 404 ("User was not found." ...). */
async function objectId(ctx: ActionContext, type: MemberTable, ref: string): Promise<string> {
  let id: string | undefined;
  if (type === 'user') {
    const u = await findUser(ctx.db, ref);
    id = u && u.state !== 'deleted' ? u.id : undefined;
  } else if (type === 'package') {
    const p = await findPackage(ctx.db, ref);
    // A private dataset you may not see is refused as reading it would be (403, not 404).
    if (p && !ctx.ignoreAuth && !(await canReadPackage(ctx, p))) throw notAuthorized(ctx, `read package ${p.id}`);
    id = p?.id;
  } else id = (await findGroup(ctx.db, ref))?.id;
  if (!id) throw new NotFoundError(`${type[0].toUpperCase()}${type.slice(1)} was not found.`);
  return id;
}

const memberAuth =
  (action: string): AuthFunction =>
  async (ctx, p) => {
    const group = await groupOrNotFound(ctx, p.id);
    await objectId(ctx, p.object_type, p.object);
    requireUser(ctx, action);
    if (!(await canManageMembers(ctx, group, p.object_type))) throw notAuthorized(ctx, `edit ${kindOf(group.is_organization)} ${group.id}`);
  };

/** Adds (or changes) a membership; shared by member_create and group_/organization_member_create. */
async function createMember(
  ctx: ActionContext,
  group: GroupRow,
  type: MemberTable,
  ref: string,
  capacity: string,
): Promise<Record<string, unknown>> {
  const id = await objectId(ctx, type, ref);
  if (type === 'user' && !(CAPACITIES as readonly string[]).includes(capacity))
    throw new ValidationError({ capacity: ['role does not exist.'] });
  if (type === 'package' && group.is_organization) {
    throw new ValidationError({
      object_type: ['Datasets belong to an organization through their owner_org (package_create/package_update)'],
    });
  }
  if (type === 'group') {
    // The group (id) goes under the object (its parent); only the group's admins may (memberAuth).
    const parent = await groupOrNotFound(ctx, id);
    if (parent.is_organization !== group.is_organization)
      throw new ValidationError({
        object: [
          `The parent of ${group.is_organization ? 'an organization' : 'a group'} must be ${group.is_organization ? 'an organization' : 'a group'}`,
        ],
      });
    if (parent.state === 'deleted') throw new NotFoundError('Group was not found.');
    await lockHierarchy(ctx.db);
    if (await wouldCreateLoop(ctx.db, group.id, id))
      throw new ValidationError({ object: ['This parent would create a loop in the hierarchy'] });
  }
  if (type === 'package') await lockPackages(ctx.db, [id]);
  const { member, changed } = await upsertMember(ctx.db, group.id, type, id, capacity);
  forgetCapacities(ctx);
  if (type === 'package' && changed) await touchAndNotify(ctx, [id]);
  return memberDict(member);
}

async function memberRows(
  ctx: ActionContext,
  group: GroupRow,
  objectType?: string,
  capacity?: string,
): Promise<[string, string, string][]> {
  const out: [string, string, string][] = [];
  const rows = await listMembers(ctx.db, group.id, { objectType, capacity });
  const pkgIds = rows.filter((r) => r.table_name === 'package').map((r) => r.table_id);
  const canSee = (params: unknown[], alias: string) => visiblePackagesCondition(ctx, params, alias);
  const visible = await visibleDatasetIds(ctx.db, pkgIds, canSee);
  for (const m of rows) {
    if (m.table_name === 'package' && !visible.has(m.table_id)) continue;
    if (m.table_name === 'user') {
      const u = await findUser(ctx.db, m.table_id);
      if (!u || u.state === 'deleted') continue;
    }
    out.push([m.table_id, m.table_name, LABELS[m.capacity] ?? m.capacity]);
  }
  // An organization's datasets are those it owns.
  if (group.is_organization && (!objectType || objectType === 'package') && (!capacity || capacity === 'organization')) {
    for (const id of await organizationDatasetIds(ctx.db, group.id, canSee)) out.push([id, 'package', 'organization']);
  }
  return out;
}

const groupMemberAuth =
  (isOrg: boolean, verb: 'create' | 'delete'): AuthFunction =>
  async (ctx, p) => {
    const group = await groupOrNotFound(ctx, p.id, `${isOrg ? 'Organization' : 'Group'} not found`);
    if (group.is_organization !== isOrg) throw new NotFoundError(`${isOrg ? 'Organization' : 'Group'} not found`);
    requireUser(ctx, `${kindOf(isOrg)}_member_${verb}`);
    if (!(await canEditGroup(ctx, group.id))) {
      throw notAuthorized(ctx, verb === 'create' ? 'add members' : `delete ${kindOf(isOrg)} ${group.id} members`);
    }
  };

function groupMemberActions(isOrg: boolean): ActionDefinition<any, any>[] {
  const k = kindOf(isOrg);
  return [
    defineAction({
      name: `${k}_member_create`,
      sideEffectFree: false,
      auth: groupMemberAuth(isOrg, 'create'),
      description: `Make a user a member of ${isOrg ? 'an organization' : 'a group'}, or change their role. Admins of the ${k}.`,
      params: {
        id: p.string(`the ${k}'s id or name`).required(),
        username: p.string("the user's name or id").required(),
        role: roleParam('admin, editor or member').required(),
      },
      returns: memberReturns,
      handler: async (ctx, p) => {
        const group = await groupOrNotFound(ctx, p.id, `${titleKind(isOrg)} not found`);
        const u = await findUser(ctx.db, p.username);
        if (!u || u.state === 'deleted') throw new ValidationError({ username: [`User ${p.username} does not exist.`] });
        return createMember(ctx, group, 'user', u.id, p.role);
      },
    }),
    defineAction({
      name: `${k}_member_delete`,
      sideEffectFree: false,
      auth: groupMemberAuth(isOrg, 'delete'),
      description: `Remove a user from ${isOrg ? 'an organization' : 'a group'}. Admins of the ${k}.`,
      params: {
        id: p.string(`the ${k}'s id or name`).required(),
        username: p.string("the user's name or id (this or user_id)"),
        user_id: p.string('another name of username'),
      },
      returns: nullReturns,
      handler: async (ctx, p) => {
        const ref = p.username ?? p.user_id;
        if (!ref) throw new ValidationError({ username: ['Missing value'] });
        const group = await groupOrNotFound(ctx, p.id, `${titleKind(isOrg)} not found`);
        const u = await findUser(ctx.db, ref);
        if (!u) throw new NotFoundError('User was not found.');
        await removeMember(ctx.db, group.id, 'user', u.id);
        forgetCapacities(ctx);
        return null;
      },
    }),
  ];
}

export const memberActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'member_create',
    sideEffectFree: false,
    auth: memberAuth('member_create'),
    description:
      "Add an object to a group or organization, or change its capacity. Users (capacity admin, editor or member): admins of the group. object_type group puts the group (id) under the object, its parent (capacity 'parent'): admins of the group (id). Datasets (capacity public) into a group: any member of the group.",
    params: {
      id: p.string("the group's id or name").required(),
      object: p.string('the id or name of the user, dataset or group').required(),
      object_type: p.enum(OBJECT_TYPES, 'user, package or group').required(),
      // Which capacities are allowed depends on object_type: createMember checks.
      capacity: p.string('the capacity (admin, editor or member for users; public for datasets; parent for groups)').required(),
    },
    returns: memberReturns,
    handler: async (ctx, p) => createMember(ctx, await groupOrNotFound(ctx, p.id), p.object_type, p.object, p.capacity),
  }),
  defineAction({
    name: 'member_delete',
    sideEffectFree: false,
    auth: memberAuth('member_delete'),
    description: 'Remove an object from a group or organization (no error when it is not a member). Same rules as member_create.',
    params: {
      id: p.string("the group's id or name").required(),
      object: p.string('the id or name of the user, dataset or group').required(),
      object_type: p.enum(OBJECT_TYPES, 'user, package or group').required(),
    },
    returns: nullReturns,
    handler: async (ctx, p) => {
      const group = await groupOrNotFound(ctx, p.id);
      const id = await objectId(ctx, p.object_type, p.object);
      if (p.object_type === 'package') await lockPackages(ctx.db, [id]);
      const removed = await removeMember(ctx.db, group.id, p.object_type, id);
      forgetCapacities(ctx);
      if (removed && p.object_type === 'package') await touchAndNotify(ctx, [id]);
      return null;
    },
  }),
  defineAction({
    name: 'member_list',
    sideEffectFree: true,
    auth: showAuth(undefined, 'members'),
    description:
      "Return the members of a group or organization as [id, type, capacity] lists. User capacities are shown as 'Admin', 'Editor', 'Member'; datasets of a group as 'public', of an organization as 'organization' (only datasets you may see). Same access as group_show (users need svc.auth.public_user_details or membership).",
    params: {
      id: p.string("the group's id or name").required(),
      object_type: p.enum(OBJECT_TYPES, 'only user, package or group members'),
      capacity: p.string('only this capacity (admin, editor, member, public, organization)'),
    },
    returns: {
      description: '[id, type, capacity] lists',
      rtype: 'list',
      schema: listOf(Type.Tuple([Type.String(), Type.String(), Type.String()])),
    },
    handler: async (ctx, p) => memberRows(ctx, await groupOrNotFound(ctx, p.id), p.object_type, p.capacity),
  }),
  defineAction({
    name: 'member_roles_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the roles a user can have: Admin, Editor and Member for organizations; Admin and Member for groups.',
    params: { group_type: p.string('organization or group').default('organization') },
    returns: {
      description: 'list of {text, value}',
      rtype: 'list',
      schema: listOf(Type.Object({ text: Type.String(), value: Type.String() })),
    },
    handler: (_ctx, p) => {
      const roles = [
        { text: 'Admin', value: 'admin' },
        { text: 'Editor', value: 'editor' },
        { text: 'Member', value: 'member' },
      ];
      return p.group_type === 'group' ? roles.filter((r) => r.value !== 'editor') : roles;
    },
  }),
  ...groupMemberActions(false),
  ...groupMemberActions(true),
];
