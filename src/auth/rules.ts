// Building blocks for auth functions. Sysadmins never reach these (checkAccess lets them through).
import type { AuthFunction } from '../actions/registry.ts';
import { AuthorizationError } from '../errors.ts';

export const anyone: AuthFunction = () => undefined;

/** Sysadmin-only rules answer with a bare "Access denied" (CKAN). */
export const sysadminOnly: AuthFunction = () => {
  throw new AuthorizationError();
};

export function requireLogin(action: string): AuthFunction {
  return (ctx) => {
    if (!ctx.identity.user) throw new AuthorizationError(`Action ${action} requires an authenticated user`);
  };
}

/** "User x not authorized to ..." with CKAN's rendering of anonymous callers (empty name). */
export function denied(ctx: { identity: { user: { name: string } | null } }, what: string): AuthorizationError {
  return new AuthorizationError(`User ${ctx.identity.user?.name ?? ''} not authorized to ${what}`);
}
