// The per-value dataset counts of the search index (package_search_value_counts, migration 011),
// kept exact by triggers in the transaction of every index change. A query that has nothing but
// the visibility of a counted class reads its count and facets here instead of scanning the index.
import type { Queryable } from '../db/database.ts';
import { COUNTED_COLUMNS, facetableField } from './fields.ts';
import { TS_CONFIG } from './sql-builder.ts';

/** 'public': active datasets that are not private (everyone); 'active': all active ones (sysadmins with include_private). */
export type CountedClass = 'public' | 'active';

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

/** The number of datasets of the class and the facets of the given (counted) fields, in one statement. */
export async function readCounts(
  db: Queryable,
  cls: CountedClass,
  facetFields: string[],
  query: { facetLimit: number; facetMincount: number },
): Promise<CountsResult> {
  const columns = ['', ...facetFields.map((f) => countedColumn(f)!)];
  const r = await db.query<{ i: number; name: string; n: string }>(
    `SELECT f.i::int AS i, c.value AS name, c.n FROM unnest($2::text[]) WITH ORDINALITY AS f (field, i)
     CROSS JOIN LATERAL (SELECT value, n FROM package_search_value_counts
       WHERE class = $1 AND field = f.field AND n >= CASE WHEN f.field = '' THEN 0 ELSE $3::bigint END
       ORDER BY n DESC, value LIMIT CASE WHEN f.field = '' OR $4::bigint < 0 THEN NULL ELSE $4::bigint END) c`,
    [cls, columns, Math.max(1, query.facetMincount), query.facetLimit],
  );
  const out: CountsResult = { count: 0, facets: Object.fromEntries(facetFields.map((f) => [f, []])) };
  for (const row of r.rows) {
    if (row.i === 1) out.count = Number(row.n);
    else out.facets[facetFields[row.i - 2]].push({ name: row.name, count: Number(row.n) });
  }
  return out;
}

/**
 * How many datasets of the class have the word in their text (the single-word query text:word),
 * or null when the word is more than one lexeme (or none).
 */
export async function wordCount(db: Queryable, cls: CountedClass, word: string): Promise<number | null> {
  const r = await db.query<{ n: string | null }>(
    `SELECT CASE WHEN cardinality(l) = 1 THEN coalesce((SELECT n FROM package_search_value_counts
       WHERE class = $1 AND field = 'doc' AND value = l[1]), 0) END AS n
     FROM (SELECT tsvector_to_array(to_tsvector('${TS_CONFIG}', $2)) AS l) x`,
    [cls, word],
  );
  const n = r.rows[0].n;
  return n === null ? null : Number(n);
}
