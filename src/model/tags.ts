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

const WANTED = 'unnest($2::text[], $3::text[]) AS w(name, vocabulary)';
const SAME_TAG = "t.name = w.name AND coalesce(t.vocabulary_id, '') = w.vocabulary";

/**
 * Replaces the dataset's tags (isNew: a dataset inserted by this transaction, which has none).
 * One statement links the tags that exist (and unlinks the others); the tags that do not exist
 * yet are created and linked by a second one. Another transaction may create one of them
 * meanwhile: the insert then waits for it and leaves that tag alone, and a third statement (a
 * new snapshot, which sees its row) links it. Tags are inserted in one order (vocabulary, name),
 * so two such writers never wait on each other crosswise.
 */
export async function setPackageTags(
  db: Queryable,
  packageId: string,
  tags: { name: string; vocabulary_id?: string | null }[],
  opts: { isNew?: boolean } = {},
): Promise<void> {
  const wanted = new Map<string, { name: string; vocabulary: string }>();
  for (const t of tags) wanted.set(`${t.vocabulary_id ?? ''}\n${t.name}`, { name: t.name, vocabulary: t.vocabulary_id ?? '' });
  if (!wanted.size) {
    if (!opts.isNew) await db.query('DELETE FROM package_tags WHERE package_id = $1', [packageId]);
    return;
  }
  const sorted = [...wanted.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
  const names = sorted.map((t) => t.name);
  const vocabularies = sorted.map((t) => t.vocabulary);
  // (unlinking and linking touch different tags, so their order within the statement does not matter)
  const unlink = opts.isNew
    ? ''
    : `gone AS (DELETE FROM package_tags pt WHERE pt.package_id = $1
         AND NOT EXISTS (SELECT 1 FROM ${WANTED} JOIN tags t ON ${SAME_TAG} WHERE t.id = pt.tag_id)),`;
  const missing = (
    await db.query<{ name: string; vocabulary: string }>(
      {
        // (two texts, two names: planned once per connection each)
        name: opts.isNew ? 'svc_package_tags_link_new' : 'svc_package_tags_link',
        text: `WITH ${unlink} linked AS (INSERT INTO package_tags (package_id, tag_id, state)
         SELECT $1, t.id, 'active' FROM ${WANTED} JOIN tags t ON ${SAME_TAG}
         ON CONFLICT (package_id, tag_id) DO UPDATE SET state = 'active' WHERE package_tags.state <> 'active')
       SELECT w.name, w.vocabulary FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS w(name, vocabulary, n)
       WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE ${SAME_TAG}) ORDER BY w.n`,
      },
      [packageId, names, vocabularies],
    )
  ).rows;
  if (!missing.length) return;
  const created = await db.query(
    `WITH made AS (INSERT INTO tags (id, name, vocabulary_id)
       SELECT w.id, w.name, nullif(w.vocabulary, '') FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(name, vocabulary, id, n)
       ORDER BY w.n
       ON CONFLICT (name, coalesce(vocabulary_id, '')) DO NOTHING RETURNING id)
     INSERT INTO package_tags (package_id, tag_id, state) SELECT $1, id, 'active' FROM made RETURNING tag_id`,
    [packageId, missing.map((t) => t.name), missing.map((t) => t.vocabulary), missing.map(() => randomUUID())],
  );
  if (created.rows.length === missing.length) return;
  await db.query(
    `INSERT INTO package_tags (package_id, tag_id, state) SELECT $1, t.id, 'active' FROM ${WANTED} JOIN tags t ON ${SAME_TAG}
     ON CONFLICT DO NOTHING`,
    [packageId, missing.map((t) => t.name), missing.map((t) => t.vocabulary)],
  );
}

/** The active tags of the datasets of $1, by name. */
export const tagsOfSql: ListSql = {
  select: `SELECT pt.package_id, t.id, t.name, t.vocabulary_id, pt.state FROM package_tags pt JOIN tags t ON t.id = pt.tag_id
     WHERE pt.package_id = ANY($1::text[]) AND pt.state = 'active'`,
  order: 'name',
};

/**
 * Deletes free tags (of the given ids) that no dataset uses any more (vocabulary tags stay); in a
 * transaction (READ COMMITTED). The tags are locked first: that waits for the writes linking them
 * at this moment to end, and the next statement sees their links. A DELETE alone waits for them
 * too, then deletes the tag it had found unused, and its cascade their new links.
 */
export async function deleteUnusedTags(tx: Queryable, tagIds: string[]): Promise<void> {
  if (!tagIds.length) return;
  await tx.query('SELECT 1 FROM tags WHERE id = ANY($1::text[]) AND vocabulary_id IS NULL ORDER BY id FOR UPDATE', [tagIds]);
  await tx.query(
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
