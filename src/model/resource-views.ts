// Resource views: how a resource is shown (image, table, text, ...), in an order per resource.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export interface ResourceViewRow {
  id: string;
  resource_id: string;
  package_id: string;
  title: string | null;
  description: string | null;
  view_type: string;
  order: number;
  config: Record<string, unknown>;
}

const SELECT = `SELECT v.id, v.resource_id, r.package_id, v.title, v.description, v.view_type, v."order", v.config
  FROM resource_views v JOIN resources r ON r.id = v.resource_id`;

export async function findView(db: Queryable, id: string): Promise<ResourceViewRow | undefined> {
  return (await db.query<ResourceViewRow>(`${SELECT} WHERE v.id = $1`, [id])).rows[0];
}

export async function viewsOf(db: Queryable, resourceIds: string[]): Promise<ResourceViewRow[]> {
  if (!resourceIds.length) return [];
  return (
    await db.query<ResourceViewRow>(`${SELECT} WHERE v.resource_id = ANY($1::text[]) ORDER BY v.resource_id, v."order", v.id`, [
      resourceIds,
    ])
  ).rows;
}

export interface ViewWrite {
  title: string | null;
  description: string | null;
  config: Record<string, unknown>;
}

/** Appends a view after the resource's others (the resource row is locked so concurrent appends get distinct places). */
export async function insertView(db: Queryable, resourceId: string, viewType: string, v: ViewWrite): Promise<string> {
  await db.query('SELECT 1 FROM resources WHERE id = $1 FOR UPDATE', [resourceId]);
  const id = randomUUID();
  await db.query(
    `INSERT INTO resource_views (id, resource_id, title, description, view_type, "order", config)
     VALUES ($1, $2, $3, $4, $5, (SELECT coalesce(max("order") + 1, 0) FROM resource_views WHERE resource_id = $2), $6)`,
    [id, resourceId, v.title, v.description, viewType, JSON.stringify(v.config)],
  );
  return id;
}

export async function updateView(db: Queryable, id: string, v: ViewWrite): Promise<void> {
  await db.query('UPDATE resource_views SET title = $2, description = $3, config = $4 WHERE id = $1', [
    id,
    v.title,
    v.description,
    JSON.stringify(v.config),
  ]);
}

export async function deleteView(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM resource_views WHERE id = $1', [id]);
}

/** Deletes every view, or those of the given types. */
export async function clearViews(db: Queryable, viewTypes: string[]): Promise<void> {
  if (viewTypes.length) await db.query('DELETE FROM resource_views WHERE view_type = ANY($1::text[])', [viewTypes]);
  else await db.query('DELETE FROM resource_views');
}

/** Sets the order of the resource's views to the ids given. */
export async function setViewOrder(db: Queryable, resourceId: string, ids: string[]): Promise<void> {
  await db.query('SELECT 1 FROM resources WHERE id = $1 FOR UPDATE', [resourceId]);
  await db.query(
    `UPDATE resource_views v SET "order" = t.n FROM unnest($2::text[]) WITH ORDINALITY AS t(id, n)
     WHERE v.id = t.id AND v.resource_id = $1`,
    [resourceId, ids],
  );
}
