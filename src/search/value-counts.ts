// The per-value dataset counts of the search index (package_search_value_counts, migration 011),
// kept exact by triggers in the transaction of every index change. A query that has nothing but
// the visibility of a counted class reads its count and facets here instead of scanning the index.
import type { Database, Queryable } from '../db/database.ts';
import { COUNTED_COLUMNS, facetableField } from './fields.ts';
import { lexemeQuery } from './sql-builder.ts';

/**
 * 'public': active datasets that are not private (everyone); 'active': all active ones (sysadmins
 * with include_private); 'public:<lexeme>': the public ones whose text has a counted word (migration 012).
 */
export type CountedClass = 'public' | 'active' | `public:${string}`;

/** The counted column of a facet field, or null when it has to be counted by a scan. */
export function countedColumn(field: string): string | null {
  const f = facetableField(field);
  if (!f || (f.type !== 'string' && f.type !== 'strings')) return null;
  return COUNTED_COLUMNS.includes(f.column) ? f.column : null;
}

export interface CountsResult {
  count: number;
  facets: Record<string, { name: string; count: number }[]>;
}

/**
 * The number of datasets of the class and the facets of the given (counted) fields, in one
 * statement: facet columns from package_search_value_counts, custom fields (those without a
 * counted column, listed in package_search_counted_fields: classes 'public' and 'active' only)
 * from package_search_field_counts.
 */
export async function readCounts(
  db: Queryable,
  cls: CountedClass,
  facetFields: string[],
  query: { facetLimit: number; facetMincount: number },
): Promise<CountsResult> {
  const columns = ['', ...facetFields.map((f) => countedColumn(f) ?? f)];
  const custom = [false, ...facetFields.map((f) => countedColumn(f) === null)];
  const r = await db.query<{ i: number; name: string; n: string }>(
    `SELECT f.i::int AS i, c.value AS name, c.n FROM unnest($2::text[], $5::boolean[]) WITH ORDINALITY AS f (field, custom, i)
     CROSS JOIN LATERAL (SELECT value, n FROM (
         SELECT value, n FROM package_search_value_counts WHERE NOT f.custom AND class = $1 AND field = f.field
         UNION ALL SELECT value, n FROM package_search_field_counts WHERE f.custom AND class = $1 AND field = f.field) x
       WHERE n >= CASE WHEN f.field = '' THEN 0 ELSE $3::bigint END
       ORDER BY n DESC, value LIMIT CASE WHEN f.field = '' OR $4::bigint < 0 THEN NULL ELSE $4::bigint END) c`,
    [cls, columns, Math.max(1, query.facetMincount), query.facetLimit, custom],
  );
  const out: CountsResult = { count: 0, facets: Object.fromEntries(facetFields.map((f) => [f, []])) };
  for (const row of r.rows) {
    if (row.i === 1) out.count = Number(row.n);
    else out.facets[facetFields[row.i - 2]].push({ name: row.name, count: Number(row.n) });
  }
  return out;
}

/**
 * Starts counting the facets of a word (a lexeme of the index's text), migration 012: under a
 * SHARE lock on the index, so that no write is in flight, the word is listed (from then on every
 * write counts it) and its counts are taken from one scan. Gives false when the lock was not had
 * within lockTimeoutMs (writes kept it; the query scans, a later one tries again).
 */
export async function countWord(db: Database, word: string, lockTimeoutMs = 1000): Promise<boolean> {
  try {
    await db.transaction(
      async (tx) => {
        await tx.query('LOCK TABLE package_search_index IN SHARE MODE');
        const listed = await tx.query('INSERT INTO package_search_counted_words (word) VALUES ($1) ON CONFLICT DO NOTHING', [word]);
        if (!listed.rowCount) return;
        await tx.query('DELETE FROM package_search_value_counts WHERE class = $1', [`public:${word}`]);
        await tx.query(
          `INSERT INTO package_search_value_counts (class, field, value, n)
           SELECT 'public:' || $1, t.field, t.value, count(*) FROM package_search_index r,
             package_search_field_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, NULL) t
           WHERE r.state = 'active' AND NOT r.private AND r.doc @@ $2::tsquery AND t.class = 'public'
           GROUP BY 2, 3`,
          [word, lexemeQuery(word)],
        );
      },
      { settings: { lock_timeout: String(lockTimeoutMs) } },
    );
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === '55P03') return false; // lock_not_available
    throw e;
  }
}

/**
 * Starts counting the values of custom facet fields (migration 017), as countWord does for a
 * word: under a SHARE lock on the index they are listed and counted from one scan. False when the
 * lock was not had within lockTimeoutMs (the query scans, a later one tries again).
 */
export async function countFields(db: Database, fields: string[], lockTimeoutMs = 1000): Promise<boolean> {
  try {
    await db.transaction(
      async (tx) => {
        await tx.query('LOCK TABLE package_search_index IN SHARE MODE');
        const listed = await tx.query<{ field: string }>(
          'INSERT INTO package_search_counted_fields (field) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING RETURNING field',
          [fields],
        );
        const added = listed.rows.map((r) => r.field);
        if (!added.length) return;
        await tx.query('DELETE FROM package_search_field_counts WHERE field = ANY($1::text[])', [added]);
        await tx.query(
          `INSERT INTO package_search_field_counts (class, field, value, n)
           SELECT t.class, t.field, t.value, count(*) FROM package_search_index r,
             package_search_custom_triples(r.state, r.private, r.extras) t
           WHERE t.field = ANY($1::text[]) GROUP BY 1, 2, 3`,
          [added],
        );
      },
      { settings: { lock_timeout: String(lockTimeoutMs) } },
    );
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === '55P03') return false; // lock_not_available
    throw e;
  }
}
