// Who may do what with harvest sources: sysadmins and the admins of the owning organization
// manage sources and run jobs; anyone reads a public source, members of its organization a
// private one (ckanext-harvest forwards these to package_update and package_show).
import type { ActionContext } from '../../actions/context.ts';
import { hasGroupPermission, notAuthorized, requireUser } from '../../auth/authz.ts';
import { findGroup } from '../../model/groups.ts';
import type { HarvestSourceRow } from '../../model/harvest-sources.ts';
import { NotFoundError } from '../../errors.ts';

export async function canManageSource(ctx: ActionContext, ownerOrg: string | null): Promise<boolean> {
  if (ctx.identity.sysadmin || ctx.ignoreAuth) return true;
  return !!ownerOrg && (await hasGroupPermission(ctx, ownerOrg, 'admin'));
}

export async function canReadSource(ctx: ActionContext, s: HarvestSourceRow): Promise<boolean> {
  if (await canManageSource(ctx, s.owner_org)) return true;
  if (s.state !== 'active') return false;
  return !s.private || (!!s.owner_org && (await hasGroupPermission(ctx, s.owner_org, 'read')));
}

/** harvest_source_create: sysadmins, and admins of the organization named. */
export async function authSourceCreate(ctx: ActionContext, params: Record<string, any>): Promise<void> {
  requireUser(ctx, 'harvest_source_create');
  const ref = typeof params.owner_org === 'string' && params.owner_org ? params.owner_org : null;
  const org = ref ? await findGroup(ctx.db, ref) : undefined;
  if (!org || !(await canManageSource(ctx, org.id))) throw notAuthorized(ctx, 'create harvest sources');
}

/** Managing an existing source (update, delete, clear, jobs): its organization's admins. */
export async function requireSourceManager(ctx: ActionContext, s: HarvestSourceRow, what: string): Promise<void> {
  if (!(await canManageSource(ctx, s.owner_org))) throw notAuthorized(ctx, `${what} harvest source ${s.id}`);
}

export async function requireSourceReader(ctx: ActionContext, s: HarvestSourceRow): Promise<void> {
  if (!(await canReadSource(ctx, s))) {
    if (s.state !== 'active' && !s.private) throw new NotFoundError('Harvest source not found');
    throw notAuthorized(ctx, `read harvest source ${s.id}`);
  }
}
