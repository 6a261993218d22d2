// The trash: deleted datasets, organizations and groups (what a sysadmin may purge for good).
import type { Queryable } from '../db/database.ts';

export interface TrashItem {
  id: string;
  name: string;
  title: string | null;
  /** When it last changed (datasets) or was created (groups and organizations). */
  changed: string;
}

export async function deletedPackages(db: Queryable, limit: number): Promise<TrashItem[]> {
  const r = await db.query<TrashItem>(
    `SELECT id, name, title, metadata_modified AS changed FROM packages WHERE state = 'deleted'
     ORDER BY metadata_modified DESC, id LIMIT $1`,
    [limit],
  );
  return r.rows;
}

export async function deletedGroups(db: Queryable, isOrganization: boolean, limit: number): Promise<TrashItem[]> {
  const r = await db.query<TrashItem>(
    `SELECT id, name, title, created AS changed FROM groups WHERE state = 'deleted' AND is_organization = $1
     ORDER BY name, id LIMIT $2`,
    [isOrganization, limit],
  );
  return r.rows;
}
