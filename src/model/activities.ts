// The activity stream: one row per change of a dataset, group, organization or user, holding the
// object's dict at that time and the permission labels that say who may see it.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export interface ActivityRow {
  id: string;
  timestamp: string;
  user_id: string | null;
  object_id: string;
  activity_type: string;
  data: Record<string, any> | null;
  permission_labels: string[];
}

/** Activities about a dataset: its own and those of its resource views. */
export const DATASET_ACTIVITY = "(a.activity_type LIKE '% package' OR a.activity_type LIKE '% resource view')";

const COLUMNS = 'a.id, a.timestamp, a.user_id, a.object_id, a.activity_type, a.data, a.permission_labels';

const insertActivitySql = (type: string) =>
  `INSERT INTO activities (id, user_id, object_id, activity_type, data, permission_labels) VALUES ($1, $2, $3, ${type}, $5, $6::text[])`;
/** Prepared once per connection (0.1 ms of planning a write). */
const ACTIVITY_INSERT = { name: 'svc_activity_insert', text: insertActivitySql('$4') };
/** The same when the object's first activity has another type ($7). */
const FIRST_ACTIVITY_INSERT = {
  name: 'svc_activity_insert_first',
  text: insertActivitySql('CASE WHEN EXISTS (SELECT 1 FROM activities WHERE object_id = $3) THEN $4 ELSE $7 END'),
};

/**
 * firstActivityType: the type instead of activity_type when the object has no activity yet
 * ('new package' beside 'changed package'), decided by the insert itself.
 */
export async function insertActivity(
  db: Queryable,
  a: Omit<ActivityRow, 'id' | 'timestamp'> & { firstActivityType?: string },
): Promise<string> {
  const id = randomUUID();
  const params = [id, a.user_id, a.object_id, a.activity_type, JSON.stringify(a.data), a.permission_labels];
  if (a.firstActivityType === undefined) await db.query(ACTIVITY_INSERT, params);
  else await db.query(FIRST_ACTIVITY_INSERT, [...params, a.firstActivityType]);
  return id;
}

/** A second change of the same object in the same call: the activity keeps its type unless deleted, and takes the newest dict. */
export async function updateActivity(
  db: Queryable,
  id: string,
  a: Pick<ActivityRow, 'activity_type' | 'data' | 'permission_labels'>,
): Promise<void> {
  await db.query(
    `UPDATE activities SET data = $2, permission_labels = $3::text[],
       activity_type = CASE WHEN $4 LIKE 'deleted %' THEN $4 ELSE activity_type END WHERE id = $1`,
    [id, JSON.stringify(a.data), a.permission_labels, a.activity_type],
  );
}

export async function hasActivity(db: Queryable, objectId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM activities WHERE object_id = $1 LIMIT 1', [objectId])).rows.length > 0;
}

export async function findActivity(db: Queryable, id: string): Promise<ActivityRow | undefined> {
  return (await db.query<ActivityRow>(`SELECT ${COLUMNS} FROM activities a WHERE a.id = $1`, [id])).rows[0];
}

/** The activity of the same object just before this one. */
/**
 * The activity before `a` on the same object whose data holds an object of that type (a dataset's
 * stream also has activities of its resource views, which hold no dataset).
 */
export async function previousActivity(db: Queryable, a: ActivityRow, objectType: string): Promise<ActivityRow | undefined> {
  return (
    await db.query<ActivityRow>(
      `SELECT ${COLUMNS} FROM activities a WHERE a.object_id = $1 AND a.timestamp < $2 AND a.data ? $3
       ORDER BY a.timestamp DESC LIMIT 1`,
      [a.object_id, a.timestamp, objectType],
    )
  ).rows[0];
}

/** Which activities a list covers. */
export type ActivityScope =
  | { kind: 'package'; id: string }
  | { kind: 'user'; id: string }
  | { kind: 'group'; id: string }
  | { kind: 'organization'; id: string }
  | { kind: 'recent_packages' }
  | { kind: 'dashboard'; userId: string };

export interface ActivityQuery {
  scope: ActivityScope;
  /** The caller's permission labels; null: sees everything (sysadmin). */
  labels: string[] | null;
  /** SQL condition over alias p for datasets the caller may read now, with its parameters (null: all). */
  visible: { cond: string; params: unknown[] } | null;
  hiddenUserIds: string[];
  types?: string[];
  excludeTypes?: string[];
  /** Unix timestamps (seconds). */
  after?: number;
  before?: number;
  limit: number;
  offset: number;
}

function scopeCondition(scope: ActivityScope, params: unknown[]): string {
  const add = (v: unknown) => `$${params.push(v)}`;
  switch (scope.kind) {
    case 'package':
      return `a.object_id = ${add(scope.id)}`;
    case 'user': {
      const id = add(scope.id);
      return `(a.user_id = ${id} OR a.object_id = ${id})`;
    }
    case 'group': {
      const id = add(scope.id);
      return `(a.object_id = ${id} OR a.object_id IN (SELECT m.table_id FROM members m
        WHERE m.group_id = ${id} AND m.table_name = 'package' AND m.state = 'active'))`;
    }
    case 'organization': {
      const id = add(scope.id);
      return `(a.object_id = ${id} OR a.object_id IN (SELECT o.id FROM packages o WHERE o.owner_org = ${id}))`;
    }
    case 'recent_packages':
      return "a.activity_type LIKE '% package'";
    case 'dashboard': {
      const me = add(scope.userId);
      // own activity, activity about me, by users I follow, about things I follow, and about
      // datasets of groups and organizations I follow
      return `(a.user_id = ${me} OR a.object_id = ${me}
        OR a.user_id IN (SELECT f.object_id FROM follows f WHERE f.follower_id = ${me} AND f.object_type = 'user')
        OR a.object_id IN (SELECT f.object_id FROM follows f WHERE f.follower_id = ${me})
        OR a.object_id IN (SELECT m.table_id FROM members m JOIN follows f ON f.object_id = m.group_id AND f.object_type = 'group'
             WHERE f.follower_id = ${me} AND m.table_name = 'package' AND m.state = 'active')
        OR a.object_id IN (SELECT o.id FROM packages o JOIN follows f ON f.object_id = o.owner_org AND f.object_type = 'group'
             WHERE f.follower_id = ${me}))`;
    }
  }
}

/**
 * A page of activities, newest first. A dataset activity is shown only when the caller holds one
 * of its labels and, if the dataset is private now, may read it now.
 */
export async function listActivities(db: Queryable, q: ActivityQuery): Promise<ActivityRow[]> {
  const params: unknown[] = [];
  const where = [scopeCondition(q.scope, params)];
  const add = (v: unknown) => `$${params.push(v)}`;
  if (q.labels) where.push(`a.permission_labels && ${add(q.labels)}::text[]`);
  if (q.visible) {
    // renumber the visibility condition's parameters after ours
    const offset = params.length;
    const cond = q.visible.cond.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + offset}`);
    params.push(...q.visible.params);
    where.push(`NOT EXISTS (SELECT 1 FROM packages p WHERE p.id = a.object_id AND ${DATASET_ACTIVITY}
      AND (p.private OR p.state = 'draft') AND NOT ${cond})`);
  }
  if (q.hiddenUserIds.length) where.push(`(a.user_id IS NULL OR NOT (a.user_id = ANY(${add(q.hiddenUserIds)}::text[])))`);
  if (q.types) where.push(`a.activity_type = ANY(${add(q.types)}::text[])`);
  if (q.excludeTypes) where.push(`NOT (a.activity_type = ANY(${add(q.excludeTypes)}::text[]))`);
  const at = (t: number) => `(to_timestamp(${add(t)}::float8) at time zone 'utc')`;
  if (q.after !== undefined) where.push(`a.timestamp > ${at(q.after)}`);
  if (q.before !== undefined) where.push(`a.timestamp < ${at(q.before)}`);
  // "after" alone pages forward from that time: take the oldest ones, then show them newest first
  const forward = q.after !== undefined && q.before === undefined;
  const rows = (
    await db.query<ActivityRow>(
      `SELECT ${COLUMNS} FROM activities a WHERE ${where.join(' AND ')}
     ORDER BY a.timestamp ${forward ? 'ASC' : 'DESC'}, a.id LIMIT ${add(q.limit)} OFFSET ${add(q.offset)}`,
      params,
    )
  ).rows;
  return forward ? rows.reverse() : rows;
}

export async function dashboardLastViewed(db: Queryable, userId: string): Promise<string | null> {
  return (
    (await db.query<{ t: string }>('SELECT activity_stream_last_viewed AS t FROM dashboards WHERE user_id = $1', [userId])).rows[0]?.t ??
    null
  );
}

export async function markDashboardViewed(db: Queryable, userId: string): Promise<void> {
  await db.query(
    `INSERT INTO dashboards (user_id, activity_stream_last_viewed) VALUES ($1, now() at time zone 'utc')
     ON CONFLICT (user_id) DO UPDATE SET activity_stream_last_viewed = EXCLUDED.activity_stream_last_viewed`,
    [userId],
  );
}
