// Who is calling: an API token (JWT) or a legacy API key, from Authorization or the api key header.
import type { Identity, Services } from '../context.ts';
import { ANONYMOUS } from '../context.ts';
import { AuthorizationError } from '../errors.ts';
import { findTokenUser } from '../model/api-tokens.ts';
import { findUserByApikey } from '../model/users.ts';
import { tokenSecret, verifyToken } from './tokens.ts';

/** Reads the credential from the headers: `Authorization: <token>`, `Authorization: Bearer <token>`, or the key header. */
export function credentialFrom(headers: Record<string, string | string[] | undefined>, keyHeader: string): string | undefined {
  const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();
  const auth = pick(headers.authorization);
  if (auth) return auth.replace(/^Bearer\s+/i, '').trim() || undefined;
  return pick(headers[keyHeader.toLowerCase()]) || undefined;
}

const REFUSED = 'the API token or key is invalid, revoked or expired';

/** Resolves a credential to a caller; a credential that does not check out is refused, never treated as anonymous. */
export async function resolveIdentity(services: Services, credential: string | undefined): Promise<Identity> {
  if (!credential) return ANONYMOUS;
  const { db, config } = services;
  const check = await verifyToken(await tokenSecret(db, config), credential);
  if (check.ok) {
    const user = await findTokenUser(db, check.jti);
    if (!user || user.state === 'deleted') throw new AuthorizationError(REFUSED);
    return { user, sysadmin: user.sysadmin, via: 'token', tokenId: check.jti };
  }
  if (check.reason === 'not-a-jwt') {
    const user = await findUserByApikey(db, credential);
    if (user && user.state !== 'deleted') return { user, sysadmin: user.sysadmin, via: 'apikey' };
  }
  throw new AuthorizationError(REFUSED);
}

export const SYSADMIN_INTERNAL: Identity = Object.freeze({ user: null, sysadmin: true, via: 'internal' });
