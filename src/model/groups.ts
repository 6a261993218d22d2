// Groups and organizations (one table, is_organization tells them apart): the only place that
// writes group and group-extra SQL.
import { randomUUID } from 'node:crypto';
import { escapeLike } from '../db/sql.ts';
import type { Queryable } from '../db/database.ts';

export interface GroupRow {
  id: string;
  name: string;
  title: string | null;
  type: string;
  description: string | null;
  image_url: string | null;
  created: string;
  is_organization: boolean;
  approval_status: string;
  state: string;
  /** A group or organization schema's own fields (svc.scheming.*_schemas), as typed JSON. */
  custom_fields?: Record<string, unknown> | null;
}

export interface GroupExtraRow {
  id: string;
  group_id: string;
  key: string;
  value: string | null;
  state: string;
}

/** By id, then by name; any state. */
export async function findGroup(db: Queryable, idOrName: string): Promise<GroupRow | undefined> {
  return (await db.query<GroupRow>('SELECT * FROM groups WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [idOrName])).rows[0];
}

/** Names are unique across groups and organizations, deleted ones included. */
export async function groupNameHolder(db: Queryable, name: string): Promise<GroupRow | undefined> {
  return (await db.query<GroupRow>('SELECT * FROM groups WHERE name = $1', [name])).rows[0];
}

export async function groupById(db: Queryable, id: string): Promise<GroupRow | undefined> {
  return (await db.query<GroupRow>('SELECT * FROM groups WHERE id = $1', [id])).rows[0];
}

/** Active groups (or organizations) named by id or name in refs. */
export async function activeGroupsByRefs(db: Queryable, refs: string[], organizations: boolean): Promise<{ id: string; name: string }[]> {
  if (!refs.length) return [];
  return (
    await db.query<{ id: string; name: string }>(
      {
        // (named: one a harvest import; planned once per connection)
        name: 'svc_active_groups_by_refs',
        text: `SELECT id, name FROM groups WHERE (id = ANY($1::text[]) OR name = ANY($1::text[])) AND is_organization = $2 AND state = 'active'`,
      },
      [refs, organizations],
    )
  ).rows;
}

export interface NewGroup {
  id?: string;
  name: string;
  title?: string | null;
  type: string;
  description?: string | null;
  image_url?: string | null;
  is_organization: boolean;
  approval_status?: string | null;
  state?: string | null;
  custom_fields?: Record<string, unknown> | null;
}

export async function insertGroup(db: Queryable, g: NewGroup): Promise<GroupRow> {
  const r = await db.query<GroupRow>(
    `INSERT INTO groups (id, name, title, type, description, image_url, is_organization, approval_status, state, custom_fields)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [
      g.id ?? randomUUID(),
      g.name,
      g.title ?? null,
      g.type,
      g.description ?? null,
      g.image_url ?? null,
      g.is_organization,
      g.approval_status ?? 'approved',
      g.state ?? 'active',
      g.custom_fields ? JSON.stringify(g.custom_fields) : null,
    ],
  );
  return r.rows[0];
}

const UPDATABLE = ['name', 'title', 'description', 'image_url', 'approval_status', 'state', 'custom_fields'] as const;
export type GroupChanges = Partial<Pick<GroupRow, (typeof UPDATABLE)[number]>>;

export async function updateGroup(db: Queryable, id: string, changes: GroupChanges): Promise<GroupRow> {
  const keys = UPDATABLE.filter((k) => k in changes);
  if (!keys.length) return (await groupById(db, id))!;
  // Column names come from the fixed list above, never from input.
  const sets = keys.map((k, i) => `${k} = $${i + 2}`).join(', ');
  const values = keys.map((k) => {
    const v = (changes as Record<string, unknown>)[k];
    return v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
  });
  const r = await db.query<GroupRow>(`UPDATE groups SET ${sets} WHERE id = $1 RETURNING *`, [id, ...values]);
  return r.rows[0];
}

/** The group read again under a row lock held to the end of the transaction (a patch merges what it read). */
export async function lockedGroup(db: Queryable, id: string): Promise<GroupRow | undefined> {
  return (await db.query<GroupRow>('SELECT * FROM groups WHERE id = $1 FOR NO KEY UPDATE', [id])).rows[0];
}

export async function extrasOfGroups(db: Queryable, groupIds: string[]): Promise<GroupExtraRow[]> {
  if (!groupIds.length) return [];
  return (
    await db.query<GroupExtraRow>(
      "SELECT id, group_id, key, value, state FROM group_extras WHERE group_id = ANY($1::text[]) AND state = 'active' ORDER BY key",
      [groupIds],
    )
  ).rows;
}

/**
 * Applies an extras list as CKAN's group save does: keys not listed are removed, listed ones set,
 * items with `deleted` removed. An empty list changes nothing.
 */
export async function saveGroupExtras(
  db: Queryable,
  groupId: string,
  extras: { key: string; value?: unknown; deleted?: unknown }[],
): Promise<void> {
  if (!extras.length) return;
  const keep = extras.filter((e) => !e.deleted);
  await db.query('DELETE FROM group_extras WHERE group_id = $1 AND NOT (key = ANY($2::text[]))', [groupId, keep.map((e) => e.key)]);
  for (const e of extras) {
    if (e.deleted) continue;
    const value = e.value === null || e.value === undefined ? null : typeof e.value === 'string' ? e.value : JSON.stringify(e.value);
    await db.query(
      `INSERT INTO group_extras (id, group_id, key, value, state) VALUES ($1, $2, $3, $4, 'active')
       ON CONFLICT (group_id, key) DO UPDATE SET value = EXCLUDED.value, state = 'active'`,
      [randomUUID(), groupId, e.key, value],
    );
  }
}

export interface GroupListQuery {
  isOrganization: boolean;
  type: string;
  q?: string;
  names?: string[];
  /** 'name' | 'title' (display title: the name when there is none) | 'package_count', with direction. */
  sort: { field: string; dir: 'asc' | 'desc' };
  limit: number;
  offset: number;
  /** SQL expression giving a group's dataset count (over alias g), for sorting. */
  countExpr?: string;
  params?: unknown[];
}

/** Active groups of a kind and type, filtered and sorted (group_list / organization_list). */
export async function listGroups(db: Queryable, query: GroupListQuery): Promise<GroupRow[]> {
  const params: unknown[] = [...(query.params ?? [])];
  const where = ["g.state = 'active'"];
  params.push(query.isOrganization);
  where.push(`g.is_organization = $${params.length}`);
  params.push(query.type);
  where.push(`g.type = $${params.length}`);
  if (query.names) {
    params.push(query.names);
    where.push(`g.name = ANY($${params.length}::text[])`);
  }
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    const p = `$${params.length}`;
    where.push(`(g.name ILIKE ${p} OR g.title ILIKE ${p} OR g.description ILIKE ${p})`);
  }
  const dir = query.sort.dir === 'desc' ? 'DESC' : 'ASC';
  const order =
    query.sort.field === 'package_count' && query.countExpr
      ? `${query.countExpr} ${dir}, g.name COLLATE "C"`
      : query.sort.field === 'name'
        ? `g.name COLLATE "C" ${dir}`
        : `lower(coalesce(nullif(g.title, ''), g.name)) COLLATE "C" ${dir}, g.name COLLATE "C" ${dir}`;
  params.push(query.limit);
  const lim = `$${params.length}`;
  params.push(query.offset);
  const off = `$${params.length}`;
  return (
    await db.query<GroupRow>(`SELECT g.* FROM groups g WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${lim} OFFSET ${off}`, params)
  ).rows;
}

/** group_/organization_autocomplete: active groups whose name or title contains q. */
export async function autocompleteGroups(
  db: Queryable,
  isOrganization: boolean,
  q: string,
  limit: number,
): Promise<{ id: string; name: string; title: string | null }[]> {
  const like = `%${escapeLike(q.trim())}%`;
  return (
    await db.query(
      `SELECT id, name, title FROM groups
     WHERE state = 'active' AND is_organization = $1 AND (name ILIKE $2 OR title ILIKE $2)
     ORDER BY (name ILIKE $3) DESC, lower(coalesce(title, name)) COLLATE "C", name COLLATE "C" LIMIT $4`,
      [isOrganization, like, `${escapeLike(q.trim())}%`, Math.max(0, limit)],
    )
  ).rows;
}

/** State deleted; the group's memberships (users, datasets, sub- and parent groups) go too. Returns the ids of the datasets that left it. */
export async function deleteGroup(db: Queryable, groupId: string): Promise<string[]> {
  const r = await db.query<{ table_name: string; table_id: string }>(
    "UPDATE members SET state = 'deleted' WHERE (group_id = $1 OR (table_name = 'group' AND table_id = $1)) AND state = 'active' RETURNING table_name, table_id",
    [groupId],
  );
  await db.query("UPDATE groups SET state = 'deleted' WHERE id = $1", [groupId]);
  return r.rows.filter((m) => m.table_name === 'package').map((m) => m.table_id);
}

/** Datasets of an organization that are not deleted. */
export async function countOrganizationDatasets(db: Queryable, orgId: string): Promise<number> {
  return (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM packages WHERE owner_org = $1 AND state <> 'deleted'", [orgId]))
    .rows[0].n;
}

/** Makes the organization's datasets unowned (all of them when includeDeleted). Returns their ids. */
export async function disownDatasets(db: Queryable, orgId: string, includeDeleted: boolean): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `UPDATE packages SET owner_org = NULL WHERE owner_org = $1${includeDeleted ? '' : " AND state <> 'deleted'"} RETURNING id`,
    [orgId],
  );
  return r.rows.map((x) => x.id);
}

/** Hard delete of the group, its extras and every membership it is part of. Returns the ids of the datasets that were in it or owned by it. */
export async function purgeGroup(db: Queryable, groupId: string): Promise<string[]> {
  const m = await db.query<{ table_name: string; table_id: string; state: string }>(
    "DELETE FROM members WHERE group_id = $1 OR (table_name = 'group' AND table_id = $1) RETURNING table_name, table_id, state",
    [groupId],
  );
  await db.query('DELETE FROM group_extras WHERE group_id = $1', [groupId]);
  const owned = await db.query<{ id: string }>('UPDATE packages SET owner_org = NULL WHERE owner_org = $1 RETURNING id', [groupId]);
  await db.query('DELETE FROM groups WHERE id = $1', [groupId]);
  const ids = m.rows.filter((x) => x.table_name === 'package' && x.state === 'active').map((x) => x.table_id);
  return [...new Set([...ids, ...owned.rows.map((x) => x.id)])];
}
