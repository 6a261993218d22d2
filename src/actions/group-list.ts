// Listing groups and organizations: group_list/organization_list, group_list_authz,
// organization_list_for_user and group_package_show.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p, type ParamValues } from '../validation/params.ts';
import { datasetSchema, groupSummarySchema, listOf, organizationSummarySchema } from './result-schemas.ts';
import { NotFoundError } from '../errors.ts';
import { callerCapacities, capacityAllows, userCapacities, type Capacity } from '../auth/authz.ts';
import { anyone } from '../auth/rules.ts';
import { findGroup, listGroups, type GroupRow } from '../model/groups.ts';
import { findUser } from '../model/users.ts';
import { findPackage } from '../model/packages.ts';
import { packageDicts } from '../model/package-dict.ts';
import { activeGroupsOfKind, datasetCountSql, groupIdsOfDataset } from '../model/group-datasets.ts';
import {
  byDisplayName,
  groupDict,
  kindOf,
  listItem,
  packageCounts,
  groupPackageIds,
  privateDatasetReaders,
  validationMessage,
} from './group-dict.ts';
import { showAuth } from './group-auth.ts';

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
export type ListParams = typeof listCommon & { groups: typeof namesParam; organizations: typeof namesParam };
export const listParams = (isOrg: boolean) => ({ ...listCommon, [isOrg ? 'organizations' : 'groups']: namesParam }) as ListParams;

// --- list ---------------------------------------------------------------------------------------

const SORT_FIELDS = ['name', 'packages', 'package_count', 'title'];

/** CKAN's _unpick_search for one sort criterion. */
function parseGroupSort(sort: string): { field: string; dir: 'asc' | 'desc' } {
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

export async function listGroupsAction(ctx: ActionContext, p: ParamValues<ListParams>, isOrg: boolean) {
  const sort = parseGroupSort(p.sort || p.order_by || 'title');
  const max = ctx.config.int(p.all_fields ? 'svc.group_and_organization_list_all_fields_max' : 'svc.group_and_organization_list_max');
  const limit = !p.limit || p.limit > max ? max : p.limit;
  const params: unknown[] = [];
  const countExpr = sort.field === 'package_count' ? await datasetCountSql(await privateDatasetReaders(ctx), params) : undefined;
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
// --- group_list_authz, organization_list_for_user, group_package_show ------------------------------

async function activeGroups(ctx: ActionContext, isOrg: boolean, ids: string[] | 'all'): Promise<GroupRow[]> {
  return (await activeGroupsOfKind(ctx.db, isOrg, ids)).sort(byDisplayName);
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
          const inGroups = new Set(await groupIdsOfDataset(ctx.db, pkg.id));
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
