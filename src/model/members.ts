// Memberships of users, datasets and groups in groups/organizations (the members table): the only
// place that writes member SQL for users and groups (datasets in groups: see also packages.ts).
// Removed memberships keep their row with state 'deleted', as CKAN does.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import type { UserRow } from './users.ts';
import type { GroupRow } from './groups.ts';

// Membership writes of users and groups bump this; the permission layer recomputes a caller's
// capacities cached under an older generation (src/auth/authz.ts).
let generation = 0;
export const membershipGeneration = (): number => generation;
export function membershipsChanged(): void {
  generation++;
}

export type MemberTable = 'user' | 'package' | 'group';

export interface MemberRow {
  id: string;
  group_id: string;
  table_name: MemberTable;
  table_id: string;
  capacity: string;
  state: string;
  created: string;
}

export async function findMember(db: Queryable, groupId: string, table: MemberTable, tableId: string): Promise<MemberRow | undefined> {
  return (
    await db.query<MemberRow>("SELECT * FROM members WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active'", [
      groupId,
      table,
      tableId,
    ])
  ).rows[0];
}

/** Adds the membership or changes its capacity; changed is false when it was already so. */
export async function upsertMember(
  db: Queryable,
  groupId: string,
  table: MemberTable,
  tableId: string,
  capacity: string,
): Promise<{ member: MemberRow; changed: boolean }> {
  if (table !== 'package') membershipsChanged();
  // One statement, so a concurrent add of the same member waits for it instead of failing.
  const written = (
    await db.query<MemberRow>(
      `INSERT INTO members (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, $3, $4, $5, 'active')
     ON CONFLICT (group_id, table_name, table_id) WHERE state = 'active'
     DO UPDATE SET capacity = EXCLUDED.capacity WHERE members.capacity IS DISTINCT FROM EXCLUDED.capacity
     RETURNING *`,
      [randomUUID(), groupId, table, tableId, capacity],
    )
  ).rows[0];
  if (written) return { member: written, changed: true };
  return { member: (await findMember(db, groupId, table, tableId))!, changed: false };
}

/** Ends a membership; false when there was none. */
export async function removeMember(db: Queryable, groupId: string, table: MemberTable, tableId: string): Promise<boolean> {
  if (table !== 'package') membershipsChanged();
  const r = await db.query<{ id: string }>(
    "UPDATE members SET state = 'deleted' WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active' RETURNING id",
    [groupId, table, tableId],
  );
  return r.rows.length > 0;
}

/**
 * Makes the group's members of one table exactly the given (id, capacity) pairs: others are
 * removed, capacities changed, new ones added (group_create/group_update's users/groups/packages).
 * Returns the ids of the objects whose membership changed.
 */
export async function replaceMembers(
  db: Queryable,
  groupId: string,
  table: MemberTable,
  entries: { id: string; capacity: string }[],
): Promise<string[]> {
  const wanted = new Map(entries.map((e) => [e.id, e.capacity]));
  const current = (
    await db.query<MemberRow>("SELECT * FROM members WHERE group_id = $1 AND table_name = $2 AND state = 'active'", [groupId, table])
  ).rows;
  const changed: string[] = [];
  for (const m of current) {
    if (!wanted.has(m.table_id)) {
      await removeMember(db, groupId, table, m.table_id);
      changed.push(m.table_id);
    }
  }
  for (const [id, capacity] of wanted) {
    if ((await upsertMember(db, groupId, table, id, capacity)).changed) changed.push(id);
  }
  if (table !== 'package') membershipsChanged();
  return changed;
}

export interface MemberListQuery {
  objectType?: string;
  capacity?: string;
}

/** Active memberships of a group (member_list), oldest first. */
export async function listMembers(db: Queryable, groupId: string, q: MemberListQuery = {}): Promise<MemberRow[]> {
  const params: unknown[] = [groupId];
  let where = "group_id = $1 AND state = 'active'";
  if (q.objectType) {
    params.push(q.objectType);
    where += ` AND table_name = $${params.length}`;
  }
  if (q.capacity) {
    params.push(q.capacity);
    where += ` AND capacity = $${params.length}`;
  }
  return (await db.query<MemberRow>(`SELECT * FROM members WHERE ${where} ORDER BY created, id`, params)).rows;
}

/** The active user members of a group with their capacity, by name. */
export async function userMembers(db: Queryable, groupId: string): Promise<(UserRow & { capacity: string })[]> {
  return (
    await db.query(
      `SELECT u.*, m.capacity FROM members m JOIN users u ON u.id = m.table_id
     WHERE m.group_id = $1 AND m.table_name = 'user' AND m.state = 'active' AND u.state <> 'deleted'
     ORDER BY u.name COLLATE "C"`,
      [groupId],
    )
  ).rows;
}

export async function countUserMembers(db: Queryable, groupId: string): Promise<number> {
  return (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM members m JOIN users u ON u.id = m.table_id
     WHERE m.group_id = $1 AND m.table_name = 'user' AND m.state = 'active' AND u.state <> 'deleted'`,
      [groupId],
    )
  ).rows[0].n;
}

// Hierarchy, as CKAN (and ckanext-hierarchy) store it: the membership row of a sub-group belongs
// to the sub-group (group_id) and names its parent (table_name 'group', table_id = the parent,
// capacity usually 'parent'). So a group dict's `groups` lists its parents.

/** Active parent groups of a group with the capacity of the link, by name. */
export async function parentGroups(db: Queryable, groupId: string): Promise<(GroupRow & { capacity: string })[]> {
  return (
    await db.query(
      `SELECT g.*, m.capacity FROM members m JOIN groups g ON g.id = m.table_id
     WHERE m.group_id = $1 AND m.table_name = 'group' AND m.state = 'active' AND g.state = 'active'
     ORDER BY g.name COLLATE "C"`,
      [groupId],
    )
  ).rows;
}

/** Would putting groupId under parentId make a loop (parentId is groupId itself or one of its descendants)? */
export async function wouldCreateLoop(db: Queryable, groupId: string, parentId: string): Promise<boolean> {
  if (groupId === parentId) return true;
  const r = await db.query(
    `WITH RECURSIVE down AS (
       SELECT group_id FROM members WHERE table_name = 'group' AND table_id = $1 AND state = 'active'
       UNION
       SELECT m.group_id FROM members m JOIN down ON m.table_id = down.group_id WHERE m.table_name = 'group' AND m.state = 'active'
     ) SELECT 1 FROM down WHERE group_id = $2 LIMIT 1`,
    [groupId, parentId],
  );
  return r.rows.length > 0;
}

/**
 * Serialises changes to the hierarchy within the transaction (PostgreSQL), so that two
 * concurrent links cannot each pass the loop check and close a loop together.
 */
export async function lockHierarchy(db: Queryable): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(7340032, 8)');
}
