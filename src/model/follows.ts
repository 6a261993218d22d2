// Who follows what: users following users, datasets and groups (organizations are groups).
import type { Queryable } from '../db/database.ts';

export type FollowType = 'user' | 'package' | 'group';

export interface FollowRow {
  follower_id: string;
  object_id: string;
  datetime: string;
}

/** Starts following (a second follow returns the first record; safe when two arrive at once). */
export async function follow(db: Queryable, followerId: string, type: FollowType, objectId: string): Promise<FollowRow> {
  const r = await db.query<FollowRow>(
    `INSERT INTO follows (follower_id, object_type, object_id) VALUES ($1, $2, $3)
     ON CONFLICT (follower_id, object_type, object_id) DO NOTHING RETURNING follower_id, object_id, datetime`,
    [followerId, type, objectId],
  );
  if (r.rows[0]) return r.rows[0];
  return (
    await db.query<FollowRow>(
      'SELECT follower_id, object_id, datetime FROM follows WHERE follower_id = $1 AND object_type = $2 AND object_id = $3',
      [followerId, type, objectId],
    )
  ).rows[0];
}

export async function unfollow(db: Queryable, followerId: string, type: FollowType, objectId: string): Promise<boolean> {
  const r = await db.query('DELETE FROM follows WHERE follower_id = $1 AND object_type = $2 AND object_id = $3 RETURNING 1', [
    followerId,
    type,
    objectId,
  ]);
  return r.rows.length > 0;
}

export async function isFollowing(db: Queryable, followerId: string, type: FollowType, objectId: string): Promise<boolean> {
  const r = await db.query('SELECT 1 FROM follows WHERE follower_id = $1 AND object_type = $2 AND object_id = $3', [
    followerId,
    type,
    objectId,
  ]);
  return r.rows.length > 0;
}

/** Active users following the object. */
export async function followerCount(db: Queryable, type: FollowType, objectId: string): Promise<number> {
  const r = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM follows f JOIN users u ON u.id = f.follower_id
     WHERE f.object_type = $1 AND f.object_id = $2 AND u.state = 'active'`,
    [type, objectId],
  );
  return Number(r.rows[0].n);
}

export async function followerIds(db: Queryable, type: FollowType, objectId: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT u.id FROM follows f JOIN users u ON u.id = f.follower_id
     WHERE f.object_type = $1 AND f.object_id = $2 AND u.state = 'active' ORDER BY u.name`,
    [type, objectId],
  );
  return r.rows.map((x) => x.id);
}

/** Ids of the active users a user follows. */
export async function followedUserIds(db: Queryable, followerId: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT u.id FROM follows f JOIN users u ON u.id = f.object_id
     WHERE f.follower_id = $1 AND f.object_type = 'user' AND u.state = 'active' ORDER BY u.name`,
    [followerId],
  );
  return r.rows.map((x) => x.id);
}

/** Ids of the active groups (organizations: true) a user follows. */
export async function followedGroupIds(db: Queryable, followerId: string, organizations: boolean): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT g.id FROM follows f JOIN groups g ON g.id = f.object_id
     WHERE f.follower_id = $1 AND f.object_type = 'group' AND g.state = 'active' AND g.is_organization = $2 ORDER BY g.name`,
    [followerId, organizations],
  );
  return r.rows.map((x) => x.id);
}

/**
 * Ids of the datasets a user follows that pass a visibility condition over alias p (its
 * parameters already in params, the follower id is appended).
 */
export async function followedPackageIds(db: Queryable, followerId: string, visible: string, params: unknown[]): Promise<string[]> {
  const all = [...params, followerId];
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM follows f JOIN packages p ON p.id = f.object_id
     WHERE f.follower_id = $${all.length} AND f.object_type = 'package' AND p.state <> 'deleted' AND ${visible} ORDER BY p.name`,
    all,
  );
  return r.rows.map((x) => x.id);
}
