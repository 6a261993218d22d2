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

/**
 * One facet field's values of a row (alias s) as a text[] expression: a list's values each once
 * (a dataset counts once per value, as Solr's facets). A custom field's value is read from the
 * row's extras once: extras is often stored out of line (TOAST), and each mention of it in an
 * expression fetches it again (three fetches a row made a facet over 11,000 matches twice as slow).
 */
function valuesArray(field: string, b: SqlBuilder): string {
  const f = facetableField(field);
  if (!f) throw new SearchQueryError(`Can not facet on field "${field}"`);
  switch (f.type) {
    case 'strings':
      return columnSql(f.column);
    case 'extra':
      // lax [*]: an array's items, or the value itself when it is not an array (none when missing)
      return `ARRAY(SELECT DISTINCT x #>> '{}' FROM jsonb_path_query(jsonb_build_object('v', s.extras -> ${b.param(f.key)}::text), 'lax $.v[*]') x)`;
    case 'vocab':
      return `ARRAY(${vocabularyTagsSql(b.param(f.vocabulary))})`;
    case 'fulltext':
    case 'constant':
      throw new SearchQueryError(`Can not facet on field "${field}"`);
    default:
      // capacity is an expression over private
      return `ARRAY[${columnSql(f.column)}::text]`;
  }
}

/**
 * Facets computed from the matching rows once they are read: the values of each field as columns
 * f1, f2, ... of the rows (arrays: what a CTE m of the matches materializes), and per field a
 * UNION ALL branch over m giving (field number, value, count) and then `extra` (more columns, to
 * match the statement's first row), the values found at least mincount times, most frequent
 * first, at most limit (negative: all).
 */
export function facetsOfMatches(
  fields: string[],
  b: SqlBuilder,
  query: { facetLimit: number; facetMincount: number },
  extra = '',
): { columns: string[]; branches: string[] } {
  // (no parameter is bound that the statement would not use: it would have no type)
  if (!fields.length) return { columns: [], branches: [] };
  const columns = fields.map((field, i) => `${valuesArray(field, b)} AS f${i + 1}`);
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = query.facetLimit < 0 ? '' : ` LIMIT ${b.param(query.facetLimit)}`;
  const branches = fields.map(
    (_, i) => `UNION ALL (SELECT ${i + 1}, v, count(*)${extra} FROM m, unnest(m.f${i + 1}) v WHERE v IS NOT NULL AND v <> ''
      GROUP BY v HAVING count(*) >= ${min} ORDER BY count(*) DESC, v${limit})`,
  );
  return { columns, branches };
}

/** The count (row f = 0) and facets (rows f = field number) of facetsOfMatches' statement. */
export function readFacetRows(
  rows: { f: number; name: string | null; n: string }[],
  fields: string[],
): { count: number; facets: Record<string, FacetItem[]> } {
  const facets: Record<string, FacetItem[]> = Object.fromEntries(fields.map((f) => [f, []]));
  let count = 0;
  for (const row of rows) {
    if (row.f === 0) count = Number(row.n);
    else facets[fields[row.f - 1]].push({ name: row.name!, count: Number(row.n) });
  }
  return { count, facets };
}

/**
 * The number of rows matching where (over alias s, its parameters in params) and the facets of
 * fields: per field the values found at least mincount times, most frequent first, at most limit
 * (negative: all). The matching rows are read once, only the values the facets need.
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
  const { columns, branches } = facetsOfMatches(fields, b, query);
  const r = await db.query<{ f: number; name: string | null; n: string }>(
    `WITH m AS MATERIALIZED (SELECT ${columns.join(', ') || 'NULL'} FROM package_search_index s WHERE ${where})
     SELECT 0 AS f, NULL::text AS name, count(*) AS n FROM m
     ${branches.join('\n     ')}`,
    p,
  );
  return readFacetRows(r.rows, fields);
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
  const values = valuesArray(field, b);
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = query.facetLimit < 0 ? '' : ` LIMIT ${b.param(query.facetLimit)}`;
  const r = await db.query<{ name: string; n: string }>(
    `SELECT v AS name, count(*) AS n FROM package_search_index s, unnest(${values}) v WHERE ${where} AND v IS NOT NULL AND v <> ''
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
