// Users: the only place that writes user SQL.
import { randomUUID } from 'node:crypto';
import { escapeLike } from '../db/sql.ts';
import type { Queryable } from '../db/database.ts';

export interface UserRow {
  id: string;
  name: string;
  fullname: string | null;
  about: string | null;
  email: string | null;
  password_hash: string | null;
  apikey: string | null;
  created: string;
  last_active: string | null;
  sysadmin: boolean;
  state: string;
  image_url: string | null;
  activity_streams_email_notifications: boolean;
  reset_key: string | null;
  plugin_extras: Record<string, unknown> | null;
}

export async function findUser(db: Queryable, idOrName: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>('SELECT * FROM users WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [idOrName]);
  return r.rows[0];
}

export async function findUserByApikey(db: Queryable, apikey: string): Promise<UserRow | undefined> {
  return (await db.query<UserRow>('SELECT * FROM users WHERE apikey = $1', [apikey])).rows[0];
}

/**
 * Holds the address (any case) until the transaction ends: e-mails have no unique index (old
 * data may repeat them), so the check that an address is free and the write that takes it must
 * not interleave with another user's.
 */
export async function lockEmail(db: Queryable, email: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('svc.user_email:' || lower($1), 0))", [email]);
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  return (await db.query<UserRow>("SELECT * FROM users WHERE lower(email) = lower($1) AND state <> 'deleted' LIMIT 1", [email])).rows[0];
}

export interface NewUser {
  id?: string;
  name: string;
  email?: string | null;
  password_hash?: string | null;
  fullname?: string | null;
  about?: string | null;
  image_url?: string | null;
  sysadmin?: boolean;
  state?: string;
  apikey?: string | null;
  plugin_extras?: Record<string, unknown> | null;
}

export async function insertUser(db: Queryable, u: NewUser): Promise<UserRow> {
  const r = await db.query<UserRow>(
    `INSERT INTO users (id, name, email, password_hash, fullname, about, image_url, sysadmin, state, apikey, plugin_extras)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      u.id ?? randomUUID(),
      u.name,
      u.email ?? null,
      u.password_hash ?? null,
      u.fullname ?? null,
      u.about ?? null,
      u.image_url ?? null,
      u.sysadmin ?? false,
      u.state ?? 'active',
      u.apikey ?? null,
      u.plugin_extras ?? null,
    ],
  );
  return r.rows[0];
}

const UPDATABLE = [
  'name',
  'email',
  'password_hash',
  'fullname',
  'about',
  'image_url',
  'sysadmin',
  'state',
  'apikey',
  'plugin_extras',
  'activity_streams_email_notifications',
  'last_active',
  'reset_key',
] as const;
export type UserChanges = Partial<Pick<UserRow, (typeof UPDATABLE)[number]>>;

export async function updateUser(db: Queryable, id: string, changes: UserChanges): Promise<UserRow> {
  const keys = UPDATABLE.filter((k) => k in changes);
  if (!keys.length) return (await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id])).rows[0];
  // Column names come from the fixed list above, never from input.
  const sets = keys.map((k, i) => `${k} = $${i + 2}`).join(', ');
  const r = await db.query<UserRow>(`UPDATE users SET ${sets} WHERE id = $1 RETURNING *`, [id, ...keys.map((k) => (changes as any)[k])]);
  return r.rows[0];
}

export interface UserListQuery {
  q?: string;
  email?: string;
  orderBy: string;
  limit?: number;
  offset?: number;
  includeSiteUser?: boolean;
  siteUserName?: string;
}

// user_list's order_by values and their ORDER BY (CKAN's: all ascending; fullname, about, sysadmin
// and number_created_packages then by name). The user's name ends every order, for stable pages.
const ORDER_COLUMNS: Record<string, string> = {
  id: 'u.id',
  name: 'u.name',
  fullname: 'u.fullname',
  display_name: "coalesce(nullif(u.fullname, ''), u.name)",
  created: 'u.created',
  about: 'u.about',
  sysadmin: 'u.sysadmin',
  number_created_packages: 'number_created_packages',
};
export const USER_ORDER_BY = Object.keys(ORDER_COLUMNS);

/** Active users, with the number of public active datasets each created. */
export async function listUsers(db: Queryable, query: UserListQuery): Promise<(UserRow & { number_created_packages: number })[]> {
  const where = ["u.state <> 'deleted'"];
  const params: unknown[] = [];
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    where.push(`(u.name ILIKE $${params.length} OR u.fullname ILIKE $${params.length} OR u.email ILIKE $${params.length})`);
  }
  if (query.email) {
    params.push(query.email);
    where.push(`lower(u.email) = lower($${params.length})`);
  }
  if (!query.includeSiteUser && query.siteUserName) {
    params.push(query.siteUserName);
    where.push(`u.name <> $${params.length}`);
  }
  let sql = `SELECT u.*, (SELECT count(*)::int FROM packages p WHERE p.creator_user_id = u.id AND p.state = 'active' AND NOT p.private) AS number_created_packages
    FROM users u WHERE ${where.join(' AND ')} ORDER BY ${ORDER_COLUMNS[query.orderBy] ?? ORDER_COLUMNS.display_name}, u.name`;
  if (query.limit !== undefined) {
    params.push(query.limit);
    sql += ` LIMIT $${params.length}`;
  }
  if (query.offset) {
    params.push(query.offset);
    sql += ` OFFSET $${params.length}`;
  }
  return (await db.query(sql, params)).rows;
}

/** Datasets the user created: public active for others; all but deleted for self and sysadmins. */
export async function countCreatedPackages(db: Queryable, userId: string, includePrivateAndDraft: boolean): Promise<number> {
  const r = await db.query<{ n: number }>(
    includePrivateAndDraft
      ? "SELECT count(*)::int AS n FROM packages WHERE creator_user_id = $1 AND state <> 'deleted'"
      : "SELECT count(*)::int AS n FROM packages WHERE creator_user_id = $1 AND state = 'active' AND NOT private",
    [userId],
  );
  return r.rows[0].n;
}

/** Removes the user's memberships and collaborations (user_delete). */
export async function removeUserMemberships(db: Queryable, userId: string): Promise<void> {
  await db.query("UPDATE members SET state = 'deleted' WHERE table_name = 'user' AND table_id = $1 AND state = 'active'", [userId]);
  await db.query('DELETE FROM package_members WHERE user_id = $1', [userId]);
}
