// A page of matches sorted first by a typed custom field (a date or number the schema types): a
// dataset sorts by its least value of the field, datasets without one come last. The flagged rows
// of those least values (package_search_field_values, migration 018) have an index in that order,
// which the page walks, testing each dataset's index row, until it has its rows; the datasets
// without a value follow, in the order of the remaining sort keys.
import type { Queryable } from '../db/database.ts';

export interface TypedSortKey {
  /** SQL of the field's name (a bound parameter) */
  field: string;
  column: 'ts' | 'num';
  desc: boolean;
  /** the sort keys after this one (over alias s), '' when none */
  rest: string;
}

export async function typedSortPage(
  db: Queryable,
  where: string,
  params: unknown[],
  key: TypedSortKey,
  start: number,
  rows: number,
): Promise<string[]> {
  const flag = key.column === 'ts' ? 'least_ts' : 'least_num';
  const n = params.length;
  const valued = `FROM package_search_field_values v JOIN package_search_index s ON s.package_id = v.package_id
    WHERE v.field = ${key.field}::text AND v.${flag} AND ${where}`;
  const order = `v.${key.column} ${key.desc ? 'DESC' : 'ASC'}${key.rest ? `, ${key.rest}` : ''}`;
  const ids = (
    await db.query<{ id: string }>(`SELECT s.package_id AS id ${valued} ORDER BY ${order} LIMIT $${n + 1} OFFSET $${n + 2}`, [
      ...params,
      rows,
      start,
    ])
  ).rows.map((r) => r.id);
  if (ids.length === rows) return ids;
  // the page reaches past the datasets with a value: where they end (known when the page has some)
  // (the count names the sort too: a parameter a statement does not name has no type)
  const withValue =
    ids.length > 0
      ? start + ids.length
      : Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 ${valued} ORDER BY ${order}) c`, params)).rows[0].n);
  const rest = await db.query<{ id: string }>(
    `SELECT s.package_id AS id FROM package_search_index s WHERE ${where}
       AND NOT EXISTS (SELECT 1 FROM package_search_field_values v WHERE v.package_id = s.package_id AND v.field = ${key.field}::text AND v.${flag})
     ORDER BY ${key.rest || 's.package_id'} LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...params, rows - ids.length, Math.max(0, start - withValue)],
  );
  return [...ids, ...rest.rows.map((r) => r.id)];
}
