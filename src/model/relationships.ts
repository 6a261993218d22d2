// Relationships between datasets. Stored once in the forward direction; each type has a reverse
// form that is shown when the relationship is seen from its object.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { listSql, type ListSql } from '../db/sql.ts';

export const FORWARD_TYPES = ['depends_on', 'derives_from', 'links_to', 'child_of'] as const;
const REVERSE: Record<string, string> = {
  depends_on: 'dependency_of',
  dependency_of: 'depends_on',
  derives_from: 'has_derivation',
  has_derivation: 'derives_from',
  links_to: 'linked_from',
  linked_from: 'links_to',
  child_of: 'parent_of',
  parent_of: 'child_of',
};
export const RELATIONSHIP_TYPES = Object.keys(REVERSE);

export function reverseType(type: string): string {
  return REVERSE[type] ?? type;
}

/** (subject, type, object) in stored (forward) form. */
export function forwardForm(subjectId: string, type: string, objectId: string): { subject: string; type: string; object: string } {
  if ((FORWARD_TYPES as readonly string[]).includes(type)) return { subject: subjectId, type, object: objectId };
  return { subject: objectId, type: REVERSE[type], object: subjectId };
}

export interface RelationshipRow {
  id: string;
  subject_package_id: string;
  object_package_id: string;
  type: string;
  comment: string | null;
  state: string;
}

export async function findRelationship(
  db: Queryable,
  subjectId: string,
  type: string,
  objectId: string,
): Promise<RelationshipRow | undefined> {
  const f = forwardForm(subjectId, type, objectId);
  return (
    await db.query<RelationshipRow>(
      "SELECT * FROM package_relationships WHERE subject_package_id = $1 AND type = $2 AND object_package_id = $3 AND state = 'active'",
      [f.subject, f.type, f.object],
    )
  ).rows[0];
}

/** Creates the relationship, or updates the comment of an existing one. */
export async function saveRelationship(
  db: Queryable,
  subjectId: string,
  type: string,
  objectId: string,
  comment: string | null,
): Promise<RelationshipRow> {
  const existing = await findRelationship(db, subjectId, type, objectId);
  if (existing) {
    const updated = (
      await db.query<RelationshipRow>('UPDATE package_relationships SET comment = $2 WHERE id = $1 RETURNING *', [existing.id, comment])
    ).rows[0];
    // (gone meanwhile when the caller did not lock both datasets: written anew)
    if (updated) return updated;
  }
  const f = forwardForm(subjectId, type, objectId);
  return (
    await db.query<RelationshipRow>(
      "INSERT INTO package_relationships (id, subject_package_id, object_package_id, type, comment, state) VALUES ($1, $2, $3, $4, $5, 'active') RETURNING *",
      [randomUUID(), f.subject, f.object, f.type, comment],
    )
  ).rows[0];
}

export async function deleteRelationship(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM package_relationships WHERE id = $1', [id]);
}

/** The active relationships of the datasets of $1 (either side), by id. */
export const relationshipsOfSql: ListSql = {
  select: `SELECT * FROM package_relationships WHERE state = 'active' AND (subject_package_id = ANY($1::text[]) OR object_package_id = ANY($1::text[]))`,
  order: 'id',
};

export async function relationshipsOf(db: Queryable, packageIds: string[]): Promise<RelationshipRow[]> {
  return (await db.query<RelationshipRow>(listSql(relationshipsOfSql), [packageIds])).rows;
}

/**
 * Relationships of one dataset seen from it: [{subject, type, object, comment}] with the dataset
 * as subject (reverse types when it is the stored object). Optionally only those with `otherId`
 * and of type `rel` (in the dataset's point of view).
 */
export async function relationshipsFrom(
  db: Queryable,
  packageId: string,
  otherId?: string,
  rel?: string,
): Promise<{ subject: string; type: string; object: string; comment: string | null; other: string }[]> {
  const rows = await relationshipsOf(db, [packageId]);
  const out = [];
  for (const r of rows) {
    if (r.subject_package_id === packageId)
      out.push({ subject: packageId, type: r.type, object: r.object_package_id, comment: r.comment, other: r.object_package_id });
    if (r.object_package_id === packageId)
      out.push({
        subject: packageId,
        type: reverseType(r.type),
        object: r.subject_package_id,
        comment: r.comment,
        other: r.subject_package_id,
      });
  }
  return out.filter((x) => (!otherId || x.other === otherId) && (!rel || x.type === rel));
}
