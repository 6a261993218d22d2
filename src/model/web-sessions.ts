// Web sessions: the only place that writes session SQL.
import type { Queryable } from '../db/database.ts';
import type { UserRow } from './users.ts';

export async function insertSession(db: Queryable, idHash: string, userId: string, lifetimeSeconds: number): Promise<void> {
  await db.query(`INSERT INTO web_session (id, user_id, expires) VALUES ($1, $2, (now() AT TIME ZONE 'utc') + make_interval(secs => $3))`, [
    idHash,
    userId,
    lifetimeSeconds,
  ]);
}

/** The active user of a session that has not expired. */
export async function findSessionUser(db: Queryable, idHash: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>(
    `SELECT u.* FROM web_session s JOIN users u ON u.id = s.user_id
     WHERE s.id = $1 AND s.expires > (now() AT TIME ZONE 'utc') AND u.state = 'active'`,
    [idHash],
  );
  return r.rows[0];
}

export async function deleteSession(db: Queryable, idHash: string): Promise<void> {
  await db.query('DELETE FROM web_session WHERE id = $1', [idHash]);
}

/** Ends every session of a user (password changed or reset, user deleted). */
export async function deleteUserSessions(db: Queryable, userId: string): Promise<void> {
  await db.query('DELETE FROM web_session WHERE user_id = $1', [userId]);
}

export async function deleteExpiredSessions(db: Queryable): Promise<number> {
  const r = await db.query(`DELETE FROM web_session WHERE expires <= (now() AT TIME ZONE 'utc')`);
  return r.rowCount ?? 0;
}
