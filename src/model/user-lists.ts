// Lists of users: found by text (user_autocomplete), the sysadmins (the CLI, the server at start).
import type { Queryable } from '../db/database.ts';
import { escapeLike } from '../db/sql.ts';

/** Active users whose name or full name contains q, name matches first; never the site user, nor exceptId. */
export async function autocompleteUsers(
  db: Queryable,
  q: string,
  limit: number,
  siteUserName: string,
  exceptId?: string,
): Promise<{ id: string; name: string; fullname: string | null }[]> {
  const params: unknown[] = [`%${escapeLike(q)}%`, Math.max(0, limit), siteUserName];
  let extra = '';
  if (exceptId) {
    params.push(exceptId);
    extra = ` AND id <> $${params.length}`;
  }
  const r = await db.query<{ id: string; name: string; fullname: string | null }>(
    `SELECT id, name, fullname FROM users WHERE state = 'active' AND name <> $3 AND (name ILIKE $1 OR fullname ILIKE $1)${extra}
     ORDER BY (name ILIKE $1) DESC, name LIMIT $2`,
    params,
  );
  return r.rows;
}

/** Sysadmins that are not deleted, by name (never the site user). */
export async function listSysadmins(
  db: Queryable,
  siteUserName: string,
): Promise<{ name: string; email: string | null; sysadmin: boolean; state: string }[]> {
  const r = await db.query<{ name: string; email: string | null; sysadmin: boolean; state: string }>(
    "SELECT name, email, sysadmin, state FROM users WHERE sysadmin AND state <> 'deleted' AND name <> $1 ORDER BY name",
    [siteUserName],
  );
  return r.rows;
}

/** How many active sysadmins there are (the site user not counted). */
export async function countActiveSysadmins(db: Queryable, siteUserName: string): Promise<number> {
  const r = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE sysadmin AND name <> $1 AND state = 'active'", [
    siteUserName,
  ]);
  return r.rows[0].n;
}
