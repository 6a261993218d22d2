// Facets (and the count) of a query by one scan of the matching index rows: each row gives its
// values of every facet field at once, so a broad query reads the index once, not once per field.
import type { Queryable } from '../db/database.ts';
import { SearchQueryError } from '../errors.ts';
import { columnSql, facetableField } from './fields.ts';
import { SqlBuilder } from './sql-builder.ts';

export interface FacetItem {
  name: string;
  count: number;
}

/** The values of one facet field in an index row (alias s), as a SELECT list producing v. */
function valuesOf(field: string, b: SqlBuilder): string {
  const f = facetableField(field);
  if (!f) throw new SearchQueryError(`Can not facet on field "${field}"`);
  switch (f.type) {
    case 'strings':
      return `unnest(${columnSql(f.column)})`;
    case 'extra': {
      const k = b.param(f.key);
      return `unnest(CASE WHEN jsonb_typeof(s.extras -> ${k}::text) = 'array'
        THEN ARRAY(SELECT jsonb_array_elements_text(s.extras -> ${k}::text)) ELSE ARRAY[s.extras ->> ${k}::text] END)`;
    }
    case 'fulltext':
    case 'constant':
      throw new SearchQueryError(`Can not facet on field "${field}"`);
    default:
      return `${columnSql(f.column)}::text`;
  }
}

/**
 * The number of rows matching where (over alias s, its parameters in params) and the facets of
 * fields: per field the values found at least mincount times, most frequent first, at most limit
 * (negative: all).
 */
export async function scanCountAndFacets(
  db: Queryable,
  where: string,
  params: unknown[],
  fields: string[],
  query: { facetLimit: number; facetMincount: number },
): Promise<{ count: number; facets: Record<string, FacetItem[]> }> {
  const p = [...params];
  const b = new SqlBuilder(p);
  const branches = fields.map((field, i) => `UNION ALL SELECT ${i + 1}, ${valuesOf(field, b)}`).join('\n    ');
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = b.param(query.facetLimit);
  const r = await db.query<{ f: number; name: string; n: string }>(
    `SELECT f, name, n FROM (
       SELECT f, name, n, row_number() OVER (PARTITION BY f ORDER BY n DESC, name) AS r FROM (
         SELECT x.f, x.v AS name, count(*) AS n FROM package_search_index s CROSS JOIN LATERAL (
           SELECT 0 AS f, NULL::text AS v
           ${branches}
         ) x
         WHERE ${where} AND (x.f = 0 OR (x.v IS NOT NULL AND x.v <> ''))
         GROUP BY x.f, x.v
       ) g WHERE f = 0 OR n >= ${min}
     ) t WHERE f = 0 OR ${limit}::int < 0 OR r <= ${limit}::int
     ORDER BY f, r`,
    p,
  );
  const facets: Record<string, FacetItem[]> = Object.fromEntries(fields.map((f) => [f, []]));
  let count = 0;
  for (const row of r.rows) {
    if (row.f === 0) count = Number(row.n);
    else facets[fields[row.f - 1]].push({ name: row.name, count: Number(row.n) });
  }
  return { count, facets };
}
