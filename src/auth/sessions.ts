// Web sessions and CSRF tokens. The cookie holds a random value; the database keeps its SHA-256.
// A form's CSRF token is an HMAC of the session (or, before sign-in, of a random cookie): a page of
// another site can neither read it nor make a valid one, and a cookie planted from a sibling domain
// does not help it once the visitor is signed in.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/load.ts';
import type { Queryable } from '../db/database.ts';
import type { UserRow } from '../model/users.ts';
import { findUser, findUserByEmail } from '../model/users.ts';
import { deleteExpiredSessions, deleteSession, findSessionUser, insertSession } from '../model/web-sessions.ts';
import { tokenSecret } from './tokens.ts';
import { hashPassword, verifyPassword } from './passwords.ts';

export const SESSION_COOKIE = 'svc_session';
export const CSRF_COOKIE = 'svc_csrf';
/** Form field and header that carry the CSRF token (the names CKAN's clients use). */
export const CSRF_FIELD = '_csrf_token';
export const CSRF_HEADER = 'x-csrftoken';

const hashOf = (raw: string) => createHash('sha256').update(raw).digest('hex');

export function newCookieValue(): string {
  return randomBytes(32).toString('base64url');
}

/** Starts a session for a user; returns the cookie value. */
export async function startSession(db: Queryable, config: Config, userId: string): Promise<string> {
  const raw = newCookieValue();
  await deleteExpiredSessions(db);
  await insertSession(db, hashOf(raw), userId, config.int('svc.auth.session_timeout'));
  return raw;
}

export async function sessionUser(db: Queryable, raw: string | undefined): Promise<UserRow | undefined> {
  if (!raw || raw.length > 100) return undefined;
  return findSessionUser(db, hashOf(raw));
}

export async function endSession(db: Queryable, raw: string | undefined): Promise<void> {
  if (raw && raw.length <= 100) await deleteSession(db, hashOf(raw));
}

// A hash to compare against when the user does not exist, so both answers take the same time.
let dummyHash: Promise<string> | undefined;

/** The account a login names: the user's id when there is one (name and e-mail count as one), else the login itself. */
export async function loginAccount(db: Queryable, login: string): Promise<{ user: UserRow | undefined; account: string }> {
  const user = login.includes('@') ? ((await findUserByEmail(db, login)) ?? (await findUser(db, login))) : await findUser(db, login);
  return { user, account: user ? `user:${user.id}` : `login:${login.trim().toLowerCase()}` };
}

/** The active user whose name or e-mail and password these are (`found`: the account's user, when looked up already). */
export async function checkLogin(
  db: Queryable,
  login: string,
  password: string,
  found?: { user: UserRow | undefined },
): Promise<UserRow | undefined> {
  const { user } = found ?? (await loginAccount(db, login));
  if (!user || user.state !== 'active' || !user.password_hash) {
    dummyHash ??= hashPassword('not a password');
    await verifyPassword(password, await dummyHash);
    return undefined;
  }
  return (await verifyPassword(password, user.password_hash)) ? user : undefined;
}

/** The CSRF token for forms of a visitor whose session (or anonymous CSRF cookie) is `basis`. */
export async function csrfToken(db: Queryable, config: Config, basis: string): Promise<string> {
  const secret = await tokenSecret(db, config);
  return createHmac('sha256', secret).update(`csrf:${basis}`).digest('base64url');
}

export async function csrfTokenMatches(db: Queryable, config: Config, basis: string | undefined, token: unknown): Promise<boolean> {
  if (!basis || typeof token !== 'string' || !token) return false;
  const expected = Buffer.from(await csrfToken(db, config, basis));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
