// Password reset keys: a random key mailed to the user; the users.reset_key column keeps its
// SHA-256 and its expiry ("<expires epoch seconds>:<hash>"). A key works once.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/load.ts';
import type { Queryable } from '../db/database.ts';
import { findUser, findUserByEmail, updateUser, type UserRow } from '../model/users.ts';
import { deleteUserSessions } from '../model/web-sessions.ts';
import { hashPassword } from './passwords.ts';

const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');

/** The active user a reset request names (user name or e-mail), if any. */
export async function resetTarget(db: Queryable, login: string): Promise<UserRow | undefined> {
  const user = login.includes('@') ? await findUserByEmail(db, login) : await findUser(db, login);
  return user && user.state === 'active' && user.email ? user : undefined;
}

/** Makes a new key for the user (an earlier one stops working); returns the key for the link. */
export async function createResetKey(db: Queryable, config: Config, user: UserRow): Promise<string> {
  const key = randomBytes(24).toString('base64url');
  const expires = Math.floor(Date.now() / 1000) + config.int('svc.auth.reset_key_lifetime');
  await updateUser(db, user.id, { reset_key: `${expires}:${hashOf(key)}` });
  return key;
}

/** The user whose unexpired reset key this is. */
export async function userOfResetKey(db: Queryable, userId: string, key: unknown): Promise<UserRow | undefined> {
  if (typeof key !== 'string' || !key || key.length > 100) return undefined;
  const user = await findUser(db, userId);
  const [expires, hash] = (user?.reset_key ?? '').split(':');
  if (!user || !hash || Number(expires) * 1000 < Date.now() || user.state !== 'active') return undefined;
  const given = Buffer.from(hashOf(key));
  const stored = Buffer.from(hash);
  return stored.length === given.length && timingSafeEqual(stored, given) ? user : undefined;
}

/** Sets the new password, spends the key and ends every session of the user. */
export async function resetPassword(db: Queryable, user: UserRow, password: string): Promise<void> {
  await updateUser(db, user.id, { password_hash: await hashPassword(password), reset_key: null });
  await deleteUserSessions(db, user.id);
}
