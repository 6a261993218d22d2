// Who may create, edit, delete, purge and read a group or organization (decided in src/auth/authz.ts).
import type { AuthFunction } from './registry.ts';
import { NotFoundError } from '../errors.ts';
import { canCreateGroup, canDeleteGroup, canEditGroup, canReadGroup, notAuthorized, requireUser } from '../auth/authz.ts';
import { sysadminOnly } from '../auth/rules.ts';
import { findGroup } from '../model/groups.ts';
import { groupOr404, kindOf, titleKind } from './group-dict.ts';

// --- auth rules -------------------------------------------------------------------------------

export const createAuth =
  (isOrg: boolean): AuthFunction =>
  (ctx) => {
    requireUser(ctx, `${kindOf(isOrg)}_create`);
    if (!canCreateGroup(ctx, isOrg)) throw notAuthorized(ctx, `create ${kindOf(isOrg)}s`);
  };

export const updateAuth =
  (isOrg: boolean, action: string): AuthFunction =>
  async (ctx, p) => {
    const group = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
    requireUser(ctx, action);
    if (!(await canEditGroup(ctx, group.id))) throw notAuthorized(ctx, `edit ${kindOf(isOrg)} ${group.id}`);
  };

export const deleteAuth =
  (isOrg: boolean): AuthFunction =>
  async (ctx, p) => {
    const group = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
    requireUser(ctx, `${kindOf(isOrg)}_delete`);
    if (!ctx.config.bool(isOrg ? 'svc.auth.user_delete_organizations' : 'svc.auth.user_delete_groups'))
      throw notAuthorized(ctx, `delete ${kindOf(isOrg)}s`);
    if (!(await canDeleteGroup(ctx, group.id, isOrg))) throw notAuthorized(ctx, `delete ${kindOf(isOrg)} ${group.id}`);
  };

export const purgeAuth =
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
