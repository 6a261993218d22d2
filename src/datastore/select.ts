// The SELECT of a datastore_search (and of its dumps): fields, filters, full text, sort, and the
// forms of it that count matching rows. Values are bound ($n), identifiers quoted.
import type { Queryable } from '../db/database.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import type { DatastoreField, SearchInput } from './backend.ts';
import { METADATA_VIEW, visibleColumns, type Column, type Table } from './catalog.ts';
import { columnVector, digitLexemeFilter, digitsVerbatim, FTS_COLUMN, regconfig, rowVector, rowVectorMatch } from './fts.ts';
import { JSON_DOMAIN, csvCell, outValue, reportedType, type Kind } from './types.ts';

export interface Plan {
  sql: string;
  /** The same query continuing after a given _id (dumps on PGlite). */
  sqlKeyset: (param: string) => string;
  /** sql with a "__total" column counting every matching row (null when it cannot be had so). */
  sqlWithTotal: string | null;
  countSql: string;
  params: unknown[];
  fields: DatastoreField[];
  kinds: Kind[];
  filtered: boolean;
  /** Whether q or full_text select rows (their total is counted apart, through the index). */
  textSearch: boolean;
  /** One page of sql ($n placeholders of limit and offset given). */
  pageSql: (limit: string, offset: string) => string;
  /**
   * A page (pageSql or sqlWithTotal with its limit) as one row: `records`, the JSON text of its
   * records as formatRows makes them (objects), and `total` (the page's "__total", when asked).
   */
  recordsAsJson: (page: string, withTotal: boolean) => string;
  /** The rows matching (for the planner's estimate of their number). */
  matchSql: string;
  defaultOrder: boolean;
}

const FTS = qi(FTS_COLUMN);
const FLOAT_TYPES = new Set(['float4', 'float8']);
/** Text search configurations seen to exist (one fewer round trip per search; they are seldom dropped). */
const knownLanguages = new Set<string>();

const invalid = (key: string, value: string) => new ValidationError({ [key]: [`invalid value "${value}"`] });

/** WHERE conditions for a filters object; values are bound. */
export function filterConditions(t: Table, filters: Record<string, unknown>, params: unknown[], key: string): string[] {
  const byId = new Map(t.columns.map((c) => [c.id, c]));
  const out: string[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  for (const [k, v] of Object.entries(filters)) {
    const c = byId.get(k);
    if (!c) throw invalid(key, k);
    const col = qi(c.id);
    if (v === null) {
      out.push(`${col} IS NULL`);
    } else if (c.kind === 'array') {
      out.push(`to_jsonb(${col}) = ${bind(JSON.stringify(v))}::jsonb`);
    } else if (c.kind === 'json') {
      if (Array.isArray(v)) out.push(`${col}::jsonb IN (SELECT e FROM jsonb_array_elements(${bind(JSON.stringify(v))}::jsonb) AS e)`);
      else out.push(`${col}::jsonb = ${bind(JSON.stringify(v))}::jsonb`);
    } else if (Array.isArray(v)) {
      const cast = c.kind === 'text' ? '' : `::${c.ftype}`;
      const col2 = c.kind === 'text' ? `${col}::text` : col;
      out.push(
        `${col2} IN (SELECT v${cast} FROM json_array_elements_text(${bind(JSON.stringify(v.map((x) => (x !== null && typeof x === 'object' ? JSON.stringify(x) : x))))}::json) AS v)`,
      );
    } else {
      const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
      if (c.kind === 'text') out.push(`${col}::text = ${bind(s)}`);
      else out.push(`${col} = CAST(${bind(s)} AS ${c.ftype})`);
    }
  }
  return out;
}

const SORT_RE = /^\s*("(?:[^"]|"")+"|[^\s"]+)(?:\s+(asc|desc))?(?:\s+nulls\s+(first|last))?\s*$/i;

/** How a search may use stored full-text vectors: their language (null: none) and the default language. */
export interface TextSearchSetting {
  stored: string | null;
  defaultLanguage: string;
  /**
   * Pages in the default order (by rank: q or full_text without sort) rank at most this many
   * matches, the first ones in the table's order, instead of every match (0: every match).
   */
  rankWindow?: number;
  /** The `_id` the stored vectors' index is split at (fts.ts rowIndexSplit; null or absent: one index). */
  rowIndexSplit?: number | null;
}

export async function buildSelect(
  q: Queryable,
  t: Table,
  input: SearchInput,
  fts: TextSearchSetting,
  textFormat: boolean,
  withKey = false,
): Promise<Plan> {
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const visible = visibleColumns(t);
  const byId = new Map(visible.map((c) => [c.id, c]));

  let selected: Column[];
  if (input.fields && input.fields.length) {
    selected = input.fields.map((f) => {
      const c = byId.get(f);
      if (!c) throw invalid('fields', f);
      return c;
    });
  } else selected = visible;

  const where = input.filters ? filterConditions(t, input.filters, params, 'filters') : [];
  if (t.name === METADATA_VIEW && input.only_resources)
    where.push(`coalesce("alias_of", "name") = ANY(${bind(input.only_resources)}::text[])`);

  // Full text: q (string or per-field object) and full_text.
  const ranks: { name: string; expr: string }[] = [];
  const hasText = (input.q !== undefined && input.q !== '') || !!input.full_text;
  let langP = '';
  let lang = '';
  if (hasText) {
    lang = input.language ?? fts.defaultLanguage;
    if (lang.includes('\u0000')) throw invalid('language', lang.replaceAll('\u0000', '\\u0000'));
    if (!knownLanguages.has(lang)) {
      const ok = await q.query('SELECT 1 FROM pg_ts_config WHERE cfgname = $1', [lang]);
      if (!ok.rows.length) throw invalid('language', lang);
      if (knownLanguages.size < 1000) knownLanguages.add(lang);
    }
    // A literal, not a parameter: text-to-regconfig is not immutable, so only a literal makes the
    // expression match the per-column indexes' (checked against pg_ts_config just above).
    langP = regconfig(lang);
  }
  // The stored vectors serve a search in their language; another language computes them per row.
  const stored = hasText && fts.stored === lang;
  const tsq = (text: string) => `${input.plain === false ? 'to_tsquery' : 'plainto_tsquery'}(${langP}, ${bind(text)})`;
  const rowVec = stored ? `COALESCE(${FTS}, ${rowVector(t, langP)})` : rowVector(t, langP);
  // Rows not filled yet are first tested with a cheap filter where the query's lexemes allow (fts.ts).
  const prefilter = stored && input.plain !== false && (await digitsVerbatim(q, lang));
  const fullText = (text: string, name: string) => {
    const query = tsq(text);
    const param = `$${params.length}`;
    const pending = `${prefilter ? `${digitLexemeFilter(t, langP, param)} AND ` : ''}${rowVector(t, langP)} @@ ${query}`;
    // Rows not filled yet (NULL) are found through the partial index of pending rows.
    where.push(
      stored ? `(${rowVectorMatch(query, fts.rowIndexSplit ?? null)} OR (${FTS} IS NULL AND ${pending}))` : `${rowVec} @@ ${query}`,
    );
    ranks.push({ name, expr: `ts_rank(${rowVec}, ${query})` });
  };
  if (typeof input.q === 'string' && input.q !== '') fullText(input.q, 'rank');
  else if (input.q && typeof input.q === 'object') {
    for (const [k, v] of Object.entries(input.q)) {
      const c = byId.get(k);
      if (!c || c.id === '_id') throw invalid('q', k);
      const query = tsq(String(v));
      const vec = columnVector(c, langP);
      // Split so that filled rows can use the column's partial index (fts.ts), the others the pending one.
      where.push(
        stored ? `((${FTS} IS NOT NULL AND ${vec} @@ ${query}) OR (${FTS} IS NULL AND ${vec} @@ ${query}))` : `${vec} @@ ${query}`,
      );
      ranks.push({ name: `rank ${k}`, expr: `ts_rank(${vec}, ${query})` });
    }
  }
  if (input.full_text) fullText(input.full_text, ranks.some((r) => r.name === 'rank') ? 'rank full_text' : 'rank');

  // Sort.
  const order: string[] = [];
  for (const clause of input.sort ?? []) {
    if (!clause.trim()) continue;
    const m = SORT_RE.exec(clause);
    const name = m ? (m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1]) : clause.trim();
    const rank = ranks.find((r) => r.name === name);
    if (!m || (!byId.has(name) && !rank)) throw invalid('sort', name);
    const dir = m[2] ? ` ${m[2].toUpperCase()}` : '';
    const nulls = m[3] ? ` NULLS ${m[3].toUpperCase()}` : '';
    order.push(`${rank ? `(${rank.expr})` : qi(name)}${dir}${nulls}`);
  }
  let defaultOrder = false;
  const rankedByDefault = !order.length && !input.distinct && ranks.length > 0;
  if (!order.length && !input.distinct) {
    if (ranks.length) order.push(`${ranks[0].expr} DESC`);
    if (byId.has('_id')) {
      order.push('"_id"');
      defaultOrder = !ranks.length;
    }
  }

  const exprs = selected.map((c) => selectExpr(c, textFormat));
  const select = [...exprs, ...ranks.map((r) => r.expr)].map((e, i) => `${e} AS "f${i}"`);
  // The records' JSON keys and values as formatRows gives them (a float that is not finite is null).
  const jsonColumns = [
    ...selected.map((c) => ({ id: c.id, float: FLOAT_TYPES.has(c.typname) })),
    ...ranks.map((r) => ({ id: r.name, float: false })),
  ].map(
    (c, i) =>
      `${c.float ? `CASE WHEN "f${i}"::float8 IN ('NaN', 'Infinity', '-Infinity') THEN NULL ELSE "f${i}" END` : `"f${i}"`} AS ${qi(c.id)}`,
  );
  if (withKey && defaultOrder) select.push('"_id" AS "__k"');
  const from = qi(t.name);
  const whereSql = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const orderSql = order.length ? ` ORDER BY ${order.join(', ')}` : '';
  const distinct = input.distinct ? 'DISTINCT ' : '';
  const sql = `SELECT ${distinct}${select.join(', ')} FROM ${from}${whereSql}${orderSql}`;
  const fields: DatastoreField[] = [
    ...selected.map((c) => {
      const f: DatastoreField = { id: c.id, type: c.id === '_id' && c.typname === 'int4' ? 'int' : reportedType(c.typname) };
      if (c.info) f.info = c.info;
      return f;
    }),
    ...ranks.map((r) => ({ id: r.name, type: 'float' })),
  ];
  const countSql = input.distinct
    ? `SELECT count(*)::text AS n FROM (SELECT DISTINCT ${exprs.map((e, i) => `${e} AS "f${i}"`).join(', ')} FROM ${from}${whereSql}) AS d`
    : `SELECT count(*)::text AS n FROM ${from}${whereSql}`;
  // The page with the number of all matching rows, in one statement: the count is a subquery run
  // once (through the filter's index it reads no rows) and the page keeps its top-N sort.
  // count(*) OVER () read and sorted every match (50,000 of 1,000,000 rows: 100 ms against 78).
  const sqlWithTotal = input.distinct
    ? null
    : `SELECT ${select.join(', ')}, (SELECT count(*) FROM ${from}${whereSql}) AS "__total" FROM ${from}${whereSql}${orderSql}`;
  return {
    sql,
    sqlWithTotal,
    countSql,
    params,
    fields,
    sqlKeyset: (p) =>
      `SELECT ${select.join(', ')} FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')} AND` : ' WHERE'} "_id" > ${p} ORDER BY "_id"`,
    kinds: [...selected.map((c) => c.kind), ...ranks.map(() => 'number' as Kind)],
    filtered: where.length > 0,
    textSearch: hasText,
    // Ranked pages pick their rows' _id first and read the columns of those rows only: computing
    // every column of every match before the sort costs more than the ranking itself. In the
    // default order a page within the rank window ranks only the window's matches (rankWindowSource).
    pageSql: (limit, offset) => {
      if (!ranks.length || input.distinct || !t.columns.some((c) => c.id === '_id')) return `${sql} LIMIT ${limit} OFFSET ${offset}`;
      const window = rankedByDefault ? rankWindowOf(fts, input) : 0;
      const source = window ? rankWindowSource(from, whereSql, window) : `${from}${whereSql}`;
      return `SELECT ${select.join(', ')} FROM ${from} WHERE "_id" IN (SELECT "_id" FROM ${source}${orderSql} LIMIT ${limit} OFFSET ${offset})${orderSql}`;
    },
    matchSql: `SELECT 1 FROM ${from}${whereSql}`,
    defaultOrder,
    // The records are aggregated in the page's order (a CTE is read back in the order it was written).
    recordsAsJson: (page, withTotal) =>
      `WITH page AS MATERIALIZED (${page}) SELECT coalesce((SELECT json_agg(r) FROM (SELECT ${jsonColumns.join(', ')} FROM page) r), '[]')::text AS records${withTotal ? ', (SELECT "__total" FROM page LIMIT 1) AS total' : ''}`,
  };
}

/**
 * The number of matches a page in the default (rank) order ranks: the configured window when the
 * page lies within it, else 0 (every match is ranked, as CKAN does).
 */
export function rankWindowOf(fts: TextSearchSetting, input: Pick<SearchInput, 'limit' | 'offset'>): number {
  const window = Math.floor(fts.rankWindow ?? 0);
  return window > 0 && (input.offset ?? 0) + input.limit <= window ? window : 0;
}

/**
 * The first `window` matching rows in the order the database finds them (through the full-text
 * index, in table order), named as the table so the rank expressions apply to them unchanged:
 * the page then ranks those rows only, and stops without reading every match.
 */
function rankWindowSource(from: string, whereSql: string, window: number): string {
  return `(SELECT * FROM ${from}${whereSql} LIMIT ${window}) AS ${from}`;
}

function selectExpr(c: Column, textFormat: boolean): string {
  const col = qi(c.id);
  if (c.kind === 'timestamp') return `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SS')`;
  if (textFormat && c.kind === 'bool') return `CASE WHEN ${col} THEN 't' WHEN NOT ${col} THEN 'f' END`;
  if (textFormat) return `${col}::text`;
  if (c.kind === 'array') return `to_json(${col})`;
  if (c.kind === 'json' && c.typname === JSON_DOMAIN) return `${col}::jsonb`;
  if (c.kind === 'other') return `${col}::text`;
  return col;
}

export function formatRows(rows: Record<string, unknown>[], plan: Plan, format: string): unknown[] | string {
  const n = plan.fields.length;
  const keys = Array.from({ length: n }, (_, i) => `f${i}`);
  const { kinds } = plan;
  if (format === 'csv' || format === 'tsv') {
    const d = format === 'csv' ? ',' : '\t';
    let out = '';
    for (const r of rows) {
      const cells: string[] = [];
      for (let i = 0; i < n; i++) cells.push(csvCell(r[keys[i]], d));
      out += cells.join(d) + '\n';
    }
    return out;
  }
  if (format === 'lists') {
    return rows.map((r) => {
      const a = new Array(n);
      for (let i = 0; i < n; i++) a[i] = readValue(r[keys[i]], kinds[i]);
      return a;
    });
  }
  const ids = plan.fields.map((f) => f.id);
  return rows.map((r) => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) o[ids[i]] = readValue(r[keys[i]], kinds[i]);
    return o;
  });
}

export function readValue(v: unknown, kind: Kind): unknown {
  if (v instanceof Date) return v.toISOString().slice(0, 19);
  return outValue(v, kind);
}
