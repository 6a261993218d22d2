// Building blocks for auth functions. Sysadmins never reach these (checkAccess lets them through).
import type { AuthFunction } from '../actions/registry.ts';
import { AuthorizationError } from '../errors.ts';

export const anyone: AuthFunction = () => undefined;

/** Sysadmin-only rules answer with a bare "Access denied" (CKAN). */
export const sysadminOnly: AuthFunction = () => {
  throw new AuthorizationError();
};

/** "User x not authorized to ..." with CKAN's rendering of anonymous callers (empty name). */
export function denied(ctx: { identity: { user: { name: string } | null } }, what: string): AuthorizationError {
  return new AuthorizationError(`User ${ctx.identity.user?.name ?? ''} not authorized to ${what}`);
}
