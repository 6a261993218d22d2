// Tags of datasets (free tags and vocabulary tags).
import { randomUUID } from 'node:crypto';
import { escapeLike, type ListSql } from '../db/sql.ts';
import type { Queryable } from '../db/database.ts';

export interface PackageTagRow {
  package_id: string;
  id: string;
  name: string;
  vocabulary_id: string | null;
  state: string;
}

/** The tag's id, creating the tag when it does not exist. */
export async function ensureTag(db: Queryable, name: string, vocabularyId: string | null): Promise<string> {
  const find = () =>
    db.query<{ id: string }>("SELECT id FROM tags WHERE name = $1 AND coalesce(vocabulary_id, '') = $2", [name, vocabularyId ?? '']);
  const found = await find();
  if (found.rows[0]) return found.rows[0].id;
  // Another transaction may create the same tag meanwhile: the insert then waits for it and does
  // nothing, and the next statement sees its row.
  const inserted = await db.query<{ id: string }>(
    "INSERT INTO tags (id, name, vocabulary_id) VALUES ($1, $2, $3) ON CONFLICT (name, coalesce(vocabulary_id, '')) DO NOTHING RETURNING id",
    [randomUUID(), name, vocabularyId],
  );
  return inserted.rows[0]?.id ?? (await find()).rows[0].id;
}

/** Replaces the dataset's tags. */
export async function setPackageTags(
  db: Queryable,
  packageId: string,
  tags: { name: string; vocabulary_id?: string | null }[],
): Promise<void> {
  await db.query('DELETE FROM package_tags WHERE package_id = $1', [packageId]);
  const seen = new Set<string>();
  for (const t of tags) {
    const id = await ensureTag(db, t.name, t.vocabulary_id ?? null);
    if (seen.has(id)) continue;
    seen.add(id);
    await db.query("INSERT INTO package_tags (package_id, tag_id, state) VALUES ($1, $2, 'active') ON CONFLICT DO NOTHING", [
      packageId,
      id,
    ]);
  }
}

/** The active tags of the datasets of $1, by name. */
export const tagsOfSql: ListSql = {
  select: `SELECT pt.package_id, t.id, t.name, t.vocabulary_id, pt.state FROM package_tags pt JOIN tags t ON t.id = pt.tag_id
     WHERE pt.package_id = ANY($1::text[]) AND pt.state = 'active'`,
  order: 'name',
};

/** Deletes free tags (of the given ids) that no dataset uses any more (vocabulary tags stay). */
export async function deleteUnusedTags(db: Queryable, tagIds: string[]): Promise<void> {
  if (!tagIds.length) return;
  await db.query(
    'DELETE FROM tags t WHERE t.id = ANY($1::text[]) AND t.vocabulary_id IS NULL AND NOT EXISTS (SELECT 1 FROM package_tags pt WHERE pt.tag_id = t.id)',
    [tagIds],
  );
}

/**
 * Free tags in use by active datasets (or tags of a vocabulary), optionally containing query.
 * visible: an SQL condition over the dataset alias p (the caller's read rule, src/auth/authz.ts)
 * whose parameters are already in params.
 */
export async function listTags(
  db: Queryable,
  opts: { query?: string; vocabularyId?: string | null; visible: string; params: unknown[] },
): Promise<{ id: string; name: string; vocabulary_id: string | null }[]> {
  const params = opts.params;
  params.push(opts.vocabularyId ?? '');
  let cond = `coalesce(t.vocabulary_id, '') = $${params.length}`;
  if (opts.query) {
    params.push(`%${escapeLike(opts.query)}%`);
    cond += ` AND t.name ILIKE $${params.length}`;
  }
  // Free tags: only those in use; vocabulary tags exist on their own.
  const inUse = opts.vocabularyId
    ? ''
    : ` AND EXISTS (SELECT 1 FROM package_tags pt JOIN packages p ON p.id = pt.package_id
         WHERE pt.tag_id = t.id AND pt.state = 'active' AND p.state = 'active' AND ${opts.visible})`;
  return (await db.query(`SELECT t.id, t.name, t.vocabulary_id FROM tags t WHERE ${cond}${inUse} ORDER BY t.name`, params)).rows;
}

export async function findVocabulary(db: Queryable, idOrName: string): Promise<{ id: string; name: string } | undefined> {
  return (await db.query('SELECT id, name FROM vocabularies WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [idOrName]))
    .rows[0];
}
