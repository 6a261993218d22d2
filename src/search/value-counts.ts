// The per-value dataset counts of the search index (package_search_value_counts, migration 011),
// kept exact by triggers in the transaction of every index change. A query that has nothing but
// the visibility of a counted class reads its count and facets here instead of scanning the index.
import type { Queryable } from '../db/database.ts';
import { COUNTED_COLUMNS, facetableField } from './fields.ts';

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
