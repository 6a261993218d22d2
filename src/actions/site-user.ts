import { randomBytes } from 'node:crypto';
import type { Config } from '../config/load.ts';
import type { Queryable } from '../db/database.ts';
import { findUser, insertUser, type UserRow } from '../model/users.ts';

/** The site's own sysadmin user, named after svc.site_id; created on first use. */
export async function ensureSiteUser(db: Queryable, config: Config): Promise<UserRow> {
  const name = config.str('svc.site_id');
  const existing = await findUser(db, name);
  if (existing) return existing;
  return insertUser(db, { name, sysadmin: true, apikey: randomBytes(24).toString('hex'), password_hash: null });
}
