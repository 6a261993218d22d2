// The one place where identifiers are quoted. Values are never concatenated: bind them ($1, $2, ...).

/** Quotes an SQL identifier (table, column, view, function, role name). */
export function quoteIdent(name: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new Error('empty identifier');
  if (name.includes('\u0000')) throw new Error('identifier contains NUL');
  return '"' + name.replace(/"/g, '""') + '"';
}

/** Quotes an SQL string literal, for the few statements that cannot take parameters (DDL defaults, COMMENT). */
export function quoteLiteral(value: string): string {
  if (value.includes('\u0000')) throw new Error('literal contains NUL');
  return "'" + value.replace(/'/g, "''") + "'";
}

/** Text matched literally by LIKE/ILIKE (its \\, % and _ escaped with the default escape character). */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => '\\' + c);

/** A list query: its SELECT and the ORDER BY of its rows (column names of the SELECT's output). */
export interface ListSql {
  select: string;
  order?: string;
}

/** The list query as one statement. */
export const listSql = (l: ListSql): string => (l.order ? `${l.select} ORDER BY ${l.order}` : l.select);

/** The list query as a JSON array of its rows in its order (a scalar subquery; '[]' when empty). */
export const jsonListSql = (l: ListSql): string =>
  `(SELECT coalesce(json_agg(x${l.order ? ` ORDER BY ${l.order}` : ''}), '[]'::json) FROM (${l.select}) x)`;

/**
 * A statement of ids ($1 text[]) made the statement of one id ($1 text, the one-item array
 * ARRAY[$1::text]). A prepared statement is planned at each execution while its generic plan looks
 * dearer than its custom plans; with an array parameter the generic plan counts on 10 ids, so a
 * statement run for one id was planned every time. The array of one known item is costed as one
 * id: from its sixth execution on a connection, the statement runs the generic plan, unplanned.
 */
export function oneIdSql(sql: string): string {
  const one = sql.replaceAll('$1::text[]', 'ARRAY[$1::text]');
  if (/\$1(?!\d)/.test(one.replaceAll('ARRAY[$1::text]', ''))) throw new Error('$1 used other than as $1::text[]');
  return one;
}
