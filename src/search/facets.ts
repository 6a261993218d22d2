// Facets (and the count) of a query by one scan of the matching index rows: each row gives its
// values of every facet field at once, so a broad query reads the index once, not once per field.
import type { Queryable } from '../db/database.ts';
import { SearchQueryError } from '../errors.ts';
import { columnSql, facetableField } from './fields.ts';
import { SqlBuilder, vocabularyTagsSql } from './sql-builder.ts';

export interface FacetItem {
  name: string;
  count: number;
}

/** How one facet field's values come from a row (alias s): a FROM item giving v, and the columns it reads. */
function valuesOf(field: string, b: SqlBuilder): { from: string; columns: string[] } {
  const f = facetableField(field);
  if (!f) throw new SearchQueryError(`Can not facet on field "${field}"`);
  switch (f.type) {
    case 'strings':
      return { from: `unnest(${columnSql(f.column)}) v`, columns: [f.column] };
    case 'extra': {
      const k = b.param(f.key);
      return {
        // a list's values each once (a dataset counts once per value, as Solr's facets)
        from: `unnest(CASE WHEN jsonb_typeof(s.extras -> ${k}::text) = 'array'
          THEN ARRAY(SELECT DISTINCT jsonb_array_elements_text(s.extras -> ${k}::text)) ELSE ARRAY[s.extras ->> ${k}::text] END) v`,
        columns: ['extras'],
      };
    }
    case 'vocab':
      return { from: `LATERAL (${vocabularyTagsSql(b.param(f.vocabulary))}) x (v)`, columns: ['package_id'] };
    case 'fulltext':
    case 'constant':
      throw new SearchQueryError(`Can not facet on field "${field}"`);
    default:
      // capacity is an expression over private
      return {
        from: `LATERAL (SELECT ${columnSql(f.column)}::text AS v) x`,
        columns: [f.column.startsWith('(') ? 'private' : f.column],
      };
  }
}

/**
 * The number of rows matching where (over alias s, its parameters in params) and the facets of
 * fields: per field the values found at least mincount times, most frequent first, at most limit
 * (negative: all). The matching rows are read once, only the columns the facets need.
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
  const sources = fields.map((field) => valuesOf(field, b));
  const columns = [...new Set(sources.flatMap((x) => x.columns))].map((c) => `s.${c}`);
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = query.facetLimit < 0 ? '' : ` LIMIT ${b.param(query.facetLimit)}`;
  const branches = sources.map(
    (x, i) => `UNION ALL (SELECT ${i + 1}, v, count(*) FROM m s, ${x.from} WHERE v IS NOT NULL AND v <> ''
      GROUP BY v HAVING count(*) >= ${min} ORDER BY count(*) DESC, v${limit})`,
  );
  const r = await db.query<{ f: number; name: string; n: string }>(
    `WITH m AS MATERIALIZED (SELECT ${columns.join(', ') || 'NULL'} FROM package_search_index s WHERE ${where})
     SELECT 0 AS f, NULL::text AS name, count(*) AS n FROM m
     ${branches.join('\n     ')}`,
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

/** The facet of one field over the rows matching where, by its own scan (statements side by side on a pool). */
export async function scanFacet(
  db: Queryable,
  where: string,
  params: unknown[],
  field: string,
  query: { facetLimit: number; facetMincount: number },
): Promise<FacetItem[]> {
  const p = [...params];
  const b = new SqlBuilder(p);
  const source = valuesOf(field, b);
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = query.facetLimit < 0 ? '' : ` LIMIT ${b.param(query.facetLimit)}`;
  const r = await db.query<{ name: string; n: string }>(
    `SELECT v AS name, count(*) AS n FROM package_search_index s, ${source.from} WHERE ${where} AND v IS NOT NULL AND v <> ''
     GROUP BY v HAVING count(*) >= ${min} ORDER BY count(*) DESC, v${limit}`,
    p,
  );
  return r.rows.map((x) => ({ name: x.name, count: Number(x.n) }));
}

/** Names and titles of the groups and organizations of these names (the display names of facet values). */
export async function groupTitles(db: Queryable, names: string[]): Promise<{ name: string; title: string | null }[]> {
  return (await db.query<{ name: string; title: string | null }>('SELECT name, title FROM groups WHERE name = ANY($1::text[])', [names]))
    .rows;
}
