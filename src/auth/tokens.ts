// API tokens are HS256 JWTs {jti, iat[, exp]}; the jti must still exist in api_tokens.
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Config } from '../config/load.ts';
import type { Queryable } from '../db/database.ts';
import { getSystemInfo, setSystemInfo } from '../model/system-info.ts';

const SECRET_KEY = 'api_token_secret';

const storedSecrets = new WeakMap<Queryable, Uint8Array>();

/** The signing secret: svc.secret, else one generated at first use and kept in the database. */
export async function tokenSecret(db: Queryable, config: Config): Promise<Uint8Array> {
  const configured = config.str('svc.secret');
  if (configured) return new TextEncoder().encode(configured);
  const known = storedSecrets.get(db);
  if (known) return known;
  let stored = await getSystemInfo(db, SECRET_KEY);
  if (!stored) {
    stored = randomBytes(32).toString('base64url');
    await db.query('INSERT INTO system_info (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [SECRET_KEY, stored]);
    stored = (await getSystemInfo(db, SECRET_KEY))!;
  }
  const secret = new TextEncoder().encode(stored);
  // Once stored the secret never changes: read it once per database.
  storedSecrets.set(db, secret);
  return secret;
}

/** A random id that never starts with '-' (a command line would read it as an option). */
export function newTokenId(): string {
  for (;;) {
    const id = randomBytes(24).toString('base64url');
    if (id[0] !== '-') return id;
  }
}

export async function signToken(secret: Uint8Array, jti: string, expiresAt?: Date | null): Promise<string> {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setJti(jti).setIssuedAt();
  if (expiresAt) jwt.setExpirationTime(Math.floor(expiresAt.getTime() / 1000));
  return jwt.sign(secret);
}

export type TokenCheck = { ok: true; jti: string } | { ok: false; reason: 'invalid' | 'expired' } | { ok: false; reason: 'not-a-jwt' };

/** Tokens whose signature was verified, by their text (a client sends the same one call after call). */
const verified = new Map<string, { secret: Uint8Array; jti: string; exp?: number }>();
const VERIFIED_MAX = 1000;

/** Verifies signature and expiry; does not look at the database. */
export async function verifyToken(secret: Uint8Array, token: string): Promise<TokenCheck> {
  if (token.split('.').length !== 3) return { ok: false, reason: 'not-a-jwt' };
  const known = verified.get(token);
  if (known && known.secret === secret) {
    if (known.exp !== undefined && known.exp * 1000 <= Date.now()) return { ok: false, reason: 'expired' };
    return { ok: true, jti: known.jti };
  }
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'] });
    if (typeof payload.jti !== 'string') return { ok: false, reason: 'invalid' };
    if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
    verified.set(token, { secret, jti: payload.jti, exp: payload.exp });
    return { ok: true, jti: payload.jti };
  } catch (e) {
    if (e instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
    return { ok: false, reason: 'invalid' };
  }
}

export { setSystemInfo };
