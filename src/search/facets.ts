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
 * One facet field's values of a row (alias s): a text[] expression (a list column, a value), or
 * for a custom field its jsonb value (`json`), whose items the facet's query takes apart (see
 * jsonItems). A custom field's value is read from the row's extras once: extras is often stored
 * out of line (TOAST), and each mention of it in an expression fetches it again (three fetches a
 * row made a facet over 11,000 matches twice as slow).
 */
function valuesOf(field: string, b: SqlBuilder): { sql: string; json: boolean } {
  const f = facetableField(field);
  if (!f) throw new SearchQueryError(`Can not facet on field "${field}"`);
  switch (f.type) {
    case 'strings':
      return { sql: columnSql(f.column), json: false };
    case 'extra':
      return { sql: `s.extras -> ${b.param(f.key)}::text`, json: true };
    case 'vocab':
      return { sql: `ARRAY(${vocabularyTagsSql(b.param(f.vocabulary))})`, json: false };
    case 'fulltext':
    case 'constant':
      throw new SearchQueryError(`Can not facet on field "${field}"`);
    default:
      // capacity is an expression over private
      return { sql: `ARRAY[${columnSql(f.column)}::text]`, json: false };
  }
}

/**
 * The facet values of a custom field's jsonb value v: an array's items, or the value itself when
 * it is not an array (a JSON null or a missing value: one NULL), each as text (`#>> '{}'`), as
 * `jsonb_path_query(jsonb_build_object('v', v), 'lax $.v[*]')` gives them. A set-returning
 * expression for the FROM list: a dataset counts once per value when its (row, value) pairs are
 * made distinct by one hash over all of them. Before, each row made its own array of distinct
 * values (a subquery with a hash table of its own per row): 11,492 matches of `q=data AND
 * theme:health` with the theme facet spent about 10 µs a row there, 2-4 times the rest.
 */
const jsonItems = (v: string) =>
  `jsonb_array_elements_text(CASE WHEN jsonb_typeof(${v}) = 'array' THEN ${v} ELSE jsonb_build_array(${v}) END)`;

/**
 * Facets computed from the matching rows once they are read: the values of each field as columns
 * f1, f2, ... of the rows (what a CTE m of the matches materializes, with the row's ctid as t),
 * and per field a UNION ALL branch over m giving (field number, value, count) and then `extra`
 * (more columns, to match the statement's first row), the values found at least mincount times,
 * most frequent first, at most limit (negative: all).
 */
export function facetsOfMatches(
  fields: string[],
  b: SqlBuilder,
  query: { facetLimit: number; facetMincount: number },
  extra = '',
): { columns: string[]; branches: string[] } {
  // (no parameter is bound that the statement would not use: it would have no type)
  if (!fields.length) return { columns: [], branches: [] };
  const values = fields.map((field) => valuesOf(field, b));
  const columns = values.map((v, i) => `${v.sql} AS f${i + 1}`);
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = query.facetLimit < 0 ? '' : ` LIMIT ${b.param(query.facetLimit)}`;
  const branches = values.map((v, i) => {
    const f = `m.f${i + 1}`;
    const from = v.json
      ? `(SELECT DISTINCT m.t, v FROM m, ${jsonItems(f)} v WHERE ${f} IS NOT NULL AND v IS NOT NULL AND v <> '') d`
      : `m, unnest(${f}) v WHERE v IS NOT NULL AND v <> ''`;
    return `UNION ALL (SELECT ${i + 1}, v, count(*)${extra} FROM ${from}
      GROUP BY v HAVING count(*) >= ${min} ORDER BY count(*) DESC, v${limit})`;
  });
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
    `WITH m AS MATERIALIZED (SELECT ${['s.ctid AS t', ...columns].join(', ')} FROM package_search_index s WHERE ${where})
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
  const values = valuesOf(field, b);
  const min = b.param(Math.max(1, query.facetMincount));
  const limit = query.facetLimit < 0 ? '' : ` LIMIT ${b.param(query.facetLimit)}`;
  const r = await db.query<{ name: string; n: string }>(
    values.json
      ? `WITH m AS MATERIALIZED (SELECT s.ctid AS t, ${values.sql} AS f FROM package_search_index s WHERE ${where})
     SELECT v AS name, count(*) AS n FROM (SELECT DISTINCT m.t, v FROM m, ${jsonItems('m.f')} v WHERE m.f IS NOT NULL AND v IS NOT NULL AND v <> '') d
     GROUP BY v HAVING count(*) >= ${min} ORDER BY count(*) DESC, v${limit}`
      : `SELECT v AS name, count(*) AS n FROM package_search_index s, unnest(${values.sql}) v WHERE ${where} AND v IS NOT NULL AND v <> ''
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
