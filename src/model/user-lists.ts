// Users found by text (user_autocomplete).
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
