// Group and organization dicts (group_show's shape, list items), the datasets a caller may count or
// see in a group, and the helpers every group action file shares.
import type { ActionContext } from './context.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { callerCapacities, capacityAllows, hasGroupPermission, visiblePackagesCondition } from '../auth/authz.ts';
import { extrasOfGroups, findGroup, type GroupRow } from '../model/groups.ts';
import { countUserMembers, parentGroups, userMembers } from '../model/members.ts';
import { packageDicts } from '../model/package-dict.ts';
import { siteUrl } from '../config/site-url.ts';
import { userDict } from './user-dict.ts';
import { groupDatasetCounts, groupDatasetIds, type PrivateDatasetReaders } from '../model/group-datasets.ts';
import { outputGroupDict } from '../scheming/output.ts';

// --- shared helpers ---------------------------------------------------------------------------

export const kindOf = (isOrg: boolean) => (isOrg ? 'organization' : 'group');
export const titleKind = (isOrg: boolean) => (isOrg ? 'Organization' : 'Group');

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function groupImageDisplayUrl(ctx: ActionContext, url: string | null): string {
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

/** Who may count a group's private datasets besides its public ones (sysadmins: all). */
export async function privateDatasetReaders(ctx: ActionContext): Promise<PrivateDatasetReaders> {
  if (ctx.identity.sysadmin) return 'all';
  const groupIds = [...(await callerCapacities(ctx)).entries()].filter(([, c]) => capacityAllows(c, 'read')).map(([id]) => id);
  return { groupIds, visible: (params, alias) => visiblePackagesCondition(ctx, params, alias) };
}

export async function packageCounts(ctx: ActionContext, groupIds: string[]): Promise<Map<string, number>> {
  return groupDatasetCounts(ctx.db, groupIds, await privateDatasetReaders(ctx));
}

/** Ids of the group's datasets the caller may see in group_show (newest first). */
export async function groupPackageIds(ctx: ActionContext, group: GroupRow, limit: number, publicOnly = false): Promise<string[]> {
  const member = !publicOnly && (await hasGroupPermission(ctx, group.id, 'read'));
  const visible = member ? (params: unknown[], alias: string) => visiblePackagesCondition(ctx, params, alias) : undefined;
  return groupDatasetIds(ctx.db, group, limit, visible);
}

/** The fields every group dict starts with (list_for_user / list_authz items, unvalidated). */
function baseDict(ctx: ActionContext, g: GroupRow): Record<string, unknown> {
  return {
    // a group or organization schema's own fields, as top-level keys
    ...(g.custom_fields ?? {}),
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
  await outputGroupDict(ctx, out, g.is_organization);
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
export function listItem(ctx: ActionContext, g: GroupRow, count?: number, capacity?: string): Record<string, unknown> {
  const out: Record<string, unknown> = baseDict(ctx, g);
  if (count !== undefined) out.package_count = count;
  if (capacity !== undefined) out.capacity = capacity;
  return sortKeys(out);
}

export const byDisplayName = (a: GroupRow, b: GroupRow) => {
  const x = (a.title || a.name).toLowerCase();
  const y = (b.title || b.name).toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : 1;
};
