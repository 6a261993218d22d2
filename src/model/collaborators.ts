// Dataset collaborators (package_members): the only place that writes collaborator SQL, apart from
// the clean-up on dataset delete/purge and user delete.
import type { Queryable } from '../db/database.ts';

export interface CollaboratorRow {
  package_id: string;
  user_id: string;
  capacity: string;
  modified: string;
}

/** Adds the collaborator or changes its capacity; modified = now. */
export async function upsertCollaborator(db: Queryable, packageId: string, userId: string, capacity: string): Promise<CollaboratorRow> {
  return (
    await db.query<CollaboratorRow>(
      `INSERT INTO package_members (package_id, user_id, capacity, modified) VALUES ($1, $2, $3, now() at time zone 'utc')
     ON CONFLICT (package_id, user_id) DO UPDATE SET capacity = EXCLUDED.capacity, modified = EXCLUDED.modified
     RETURNING package_id, user_id, capacity, modified`,
      [packageId, userId, capacity],
    )
  ).rows[0];
}

export async function removeCollaborator(db: Queryable, packageId: string, userId: string): Promise<boolean> {
  const r = await db.query('DELETE FROM package_members WHERE package_id = $1 AND user_id = $2 RETURNING user_id', [packageId, userId]);
  return r.rows.length > 0;
}

export async function collaboratorsOf(db: Queryable, packageId: string, capacity?: string): Promise<CollaboratorRow[]> {
  const params: unknown[] = [packageId];
  let extra = '';
  if (capacity) {
    params.push(capacity);
    extra = ' AND capacity = $2';
  }
  return (
    await db.query<CollaboratorRow>(
      `SELECT package_id, user_id, capacity, modified FROM package_members WHERE package_id = $1${extra} ORDER BY modified, user_id`,
      params,
    )
  ).rows;
}

/** The user's collaborations on datasets that are not deleted. */
export async function collaborationsOf(db: Queryable, userId: string, capacity?: string): Promise<CollaboratorRow[]> {
  const params: unknown[] = [userId];
  let extra = '';
  if (capacity) {
    params.push(capacity);
    extra = ' AND pm.capacity = $2';
  }
  return (
    await db.query<CollaboratorRow>(
      `SELECT pm.package_id, pm.user_id, pm.capacity, pm.modified FROM package_members pm JOIN packages p ON p.id = pm.package_id
     WHERE pm.user_id = $1 AND p.state <> 'deleted'${extra} ORDER BY pm.modified, pm.package_id`,
      params,
    )
  ).rows;
}
