// API tokens: the JWT carries only the id (jti); the row decides whether it is still valid.
import type { Queryable } from '../db/database.ts';
import type { UserRow } from './users.ts';

export interface ApiTokenRow {
  id: string;
  user_id: string;
  name: string;
  created_at: string;
  last_access: string | null;
  expires_at: string | null;
  plugin_extras: Record<string, unknown> | null;
}

export async function insertToken(
  db: Queryable,
  t: { id: string; userId: string; name: string; expiresAt?: Date | null },
): Promise<ApiTokenRow> {
  const r = await db.query<ApiTokenRow>(
    `INSERT INTO api_tokens (id, user_id, name, expires_at) VALUES ($1, $2, $3, $4::timestamptz at time zone 'utc') RETURNING *`,
    [t.id, t.userId, t.name, t.expiresAt ? t.expiresAt.toISOString() : null],
  );
  return r.rows[0];
}

export async function findToken(db: Queryable, id: string): Promise<ApiTokenRow | undefined> {
  return (await db.query<ApiTokenRow>('SELECT * FROM api_tokens WHERE id = $1', [id])).rows[0];
}

export async function listTokens(db: Queryable, userId: string): Promise<ApiTokenRow[]> {
  return (await db.query<ApiTokenRow>('SELECT * FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id', [userId])).rows;
}

export async function deleteToken(db: Queryable, id: string): Promise<boolean> {
  return (await db.query('DELETE FROM api_tokens WHERE id = $1', [id])).rowCount > 0;
}

/**
 * The user of an unexpired token, in one round trip. Records the use at most once a minute, so
 * reads do not turn every request into a write.
 */
export async function findTokenUser(db: Queryable, id: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>(
    {
      name: 'svc_token_user',
      text: `WITH touch AS (
       UPDATE api_tokens SET last_access = now() at time zone 'utc'
       WHERE id = $1 AND (last_access IS NULL OR last_access < (now() at time zone 'utc') - interval '1 minute')
         AND (expires_at IS NULL OR expires_at > now() at time zone 'utc'))
     SELECT u.* FROM api_tokens t JOIN users u ON u.id = t.user_id
     WHERE t.id = $1 AND (t.expires_at IS NULL OR t.expires_at > now() at time zone 'utc')`,
    },
    [id],
  );
  return r.rows[0];
}

/** Removes every API token of a user (a deleted account's tokens stop working). */
export async function deleteUserTokens(db: Queryable, userId: string): Promise<void> {
  await db.query('DELETE FROM api_tokens WHERE user_id = $1', [userId]);
}
