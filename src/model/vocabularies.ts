// Vocabularies and their tags, and tag lookups by vocabulary (free tags have none).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { ValidationError } from '../errors.ts';

export interface TagRow {
  id: string;
  name: string;
  vocabulary_id: string | null;
}

export interface VocabularyRow {
  id: string;
  name: string;
}

/** A tag by id or name within a vocabulary (null: free tags). */
export async function findTag(db: Queryable, idOrName: string, vocabularyId: string | null): Promise<TagRow | undefined> {
  return (
    await db.query<TagRow>(
      `SELECT id, name, vocabulary_id FROM tags WHERE (id = $1 OR name = $1) AND coalesce(vocabulary_id, '') = $2
     ORDER BY (id = $1) DESC LIMIT 1`,
      [idOrName, vocabularyId ?? ''],
    )
  ).rows[0];
}

/** Creates a tag; a tag of that name in that vocabulary already there is a validation error. */
export async function insertTag(db: Queryable, name: string, vocabulary: VocabularyRow): Promise<TagRow> {
  const r = await db.query<TagRow>(
    `INSERT INTO tags (id, name, vocabulary_id) VALUES ($1, $2, $3)
     ON CONFLICT (name, coalesce(vocabulary_id, '')) DO NOTHING RETURNING id, name, vocabulary_id`,
    [randomUUID(), name, vocabulary.id],
  );
  if (!r.rows[0]) throw new ValidationError({ name: [`Tag ${name} already belongs to vocabulary ${vocabulary.name}`] });
  return r.rows[0];
}

/** Deletes a tag; returns the datasets that had it. */
export async function deleteTag(db: Queryable, tagId: string): Promise<string[]> {
  const r = await db.query<{ package_id: string }>('DELETE FROM package_tags WHERE tag_id = $1 RETURNING package_id', [tagId]);
  await db.query('DELETE FROM tags WHERE id = $1', [tagId]);
  return r.rows.map((x) => x.package_id);
}

export function tagDict(t: TagRow): Record<string, unknown> {
  return { display_name: t.name, id: t.id, name: t.name, vocabulary_id: t.vocabulary_id };
}

/** Active public datasets with this tag, by name (at most limit). */
export async function publicPackagesWithTag(db: Queryable, tagId: string, limit: number): Promise<string[]> {
  return (
    await db.query<{ id: string }>(
      `SELECT p.id FROM package_tags pt JOIN packages p ON p.id = pt.package_id
     WHERE pt.tag_id = $1 AND pt.state = 'active' AND p.state = 'active' AND NOT p.private ORDER BY p.name LIMIT $2`,
      [tagId, limit],
    )
  ).rows.map((x) => x.id);
}

export async function findVocabularyRow(db: Queryable, idOrName: string): Promise<VocabularyRow | undefined> {
  return (
    await db.query<VocabularyRow>('SELECT id, name FROM vocabularies WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [
      idOrName,
    ])
  ).rows[0];
}

export async function listVocabularies(db: Queryable): Promise<VocabularyRow[]> {
  return (await db.query<VocabularyRow>('SELECT id, name FROM vocabularies ORDER BY name')).rows;
}

export async function vocabularyTags(db: Queryable, vocabularyIds: string[]): Promise<TagRow[]> {
  if (!vocabularyIds.length) return [];
  return (
    await db.query<TagRow>('SELECT id, name, vocabulary_id FROM tags WHERE vocabulary_id = ANY($1::text[]) ORDER BY name', [vocabularyIds])
  ).rows;
}

const nameInUse = (e: unknown): never => {
  const err = e as { code?: string };
  if (err?.code === '23505') throw new ValidationError({ name: ['That vocabulary name is already in use.'] });
  throw e;
};

export async function insertVocabulary(db: Queryable, name: string): Promise<VocabularyRow> {
  const r = await db.query<VocabularyRow>(
    'INSERT INTO vocabularies (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING id, name',
    [randomUUID(), name],
  );
  if (!r.rows[0]) nameInUse({ code: '23505' });
  return r.rows[0];
}

export async function renameVocabulary(db: Queryable, id: string, name: string): Promise<void> {
  await db.query('UPDATE vocabularies SET name = $2 WHERE id = $1', [id, name]).catch(nameInUse);
}

/** Makes the vocabulary's tags exactly these names; returns the datasets that lost a tag. */
export async function setVocabularyTags(db: Queryable, vocabulary: VocabularyRow, names: string[]): Promise<string[]> {
  const wanted = [...new Set(names)];
  const gone = await db.query<{ id: string }>('SELECT id FROM tags WHERE vocabulary_id = $1 AND NOT (name = ANY($2::text[]))', [
    vocabulary.id,
    wanted,
  ]);
  const touched: string[] = [];
  for (const t of gone.rows) touched.push(...(await deleteTag(db, t.id)));
  await db.query(
    `INSERT INTO tags (id, name, vocabulary_id) SELECT gen_random_uuid()::text, n, $1 FROM unnest($2::text[]) AS n
     ON CONFLICT (name, coalesce(vocabulary_id, '')) DO NOTHING`,
    [vocabulary.id, wanted],
  );
  return touched;
}

/** Deletes the vocabulary and its tags; returns the datasets that had one of them. */
export async function deleteVocabulary(db: Queryable, id: string): Promise<string[]> {
  const r = await db.query<{ package_id: string }>(
    'DELETE FROM package_tags WHERE tag_id IN (SELECT id FROM tags WHERE vocabulary_id = $1) RETURNING package_id',
    [id],
  );
  await db.query('DELETE FROM vocabularies WHERE id = $1', [id]);
  return [...new Set(r.rows.map((x) => x.package_id))];
}
