// datastore_search and read-only queries: one page of rows and the number of matching rows
// (stored, estimated from statistics, or counted with the page).
import type { Queryable } from '../db/database.ts';
import { NotFoundError } from '../errors.ts';
import type { ReadQueryOptions, ReadQueryResult, SearchInput, SearchResult } from './backend.ts';
import { countRows, readTable, type Table } from './catalog.ts';
import { rebuildPendingSince } from './fts.ts';
import { isDbError, queryError } from './db-errors.ts';
import { JsonArrayText } from '../json/array-text.ts';
import { buildSelect, formatRows, readValue } from './select.ts';
import { SEARCH_TIMEOUT_MS, type Sessions } from './sessions.ts';
import { kindOf, reportedType } from './types.ts';

/** datastore_search: one page of rows with their total. */
export async function searchRows(sessions: Sessions, input: SearchInput): Promise<SearchResult> {
  try {
    return await searchOnce(sessions, input);
  } catch (e) {
    // A description cached before another process changed the table: read it afresh, once.
    const cause = (e as { cause?: unknown }).cause;
    const stale = isDbError(cause) && ['42703', '42P01', '42804'].includes(cause.code!);
    if (!stale || !sessions.tables.get(input.resource_id)) throw e;
    sessions.tables.clear();
    return searchOnce(sessions, input);
  }
}

async function searchOnce(sessions: Sessions, input: SearchInput): Promise<SearchResult> {
  return sessions.readSession(async (q) => {
    const t = await sessions.describe(q, input.resource_id);
    if (!t) throw new NotFoundError(`Resource "${input.resource_id}" was not found.`);
    if (!rebuildPendingSince(t)) return searchTable(sessions, q, t, input, false);
    // A bulk fill is computing the table's vectors and building its full-text indexes (fts.ts):
    // searches read it by sequential scans meanwhile, each in one process, not with parallel
    // workers that would take both cores from the fill for every search.
    await q.query('SET max_parallel_workers_per_gather = 0');
    try {
      return await searchTable(sessions, q, t, input, true);
    } finally {
      await q.query('RESET max_parallel_workers_per_gather').catch(() => undefined);
    }
  });
}

/**
 * duringFill: a bulk fill has dropped the table's full-text indexes (searches read it by sequential
 * scans): a page with fewer rows than asked for gives the exact total itself (offset + its rows:
 * every match is on it or before it), so the count's second scan of the table is not made.
 */
async function searchTable(sessions: Sessions, q: Queryable, t: Table, input: SearchInput, duringFill: boolean): Promise<SearchResult> {
  const textFormat = input.records_format === 'csv' || input.records_format === 'tsv';
  const plan = await buildSelect(q, t, input, await sessions.textSearch(q, t), textFormat);
  const out: SearchResult = { fields: plan.fields, records: [] };
  const unfiltered = !plan.filtered && !input.distinct;
  // A filtered count comes with the page (one scan) when the page has rows; a full-text one is
  // counted apart, through the index (with the page it would rank and read every matching row).
  const totalWithPage = input.include_total !== false && !unfiltered && !plan.textSearch ? plan.sqlWithTotal : null;
  let counted: number | null = null;
  // The rows of the page, where a short one would give the total (duringFill).
  const countFromPage = duringFill && input.include_total !== false && !totalWithPage;
  let pageRows = -1;
  if (input.limit > 0) {
    const p = [...plan.params, input.limit, input.offset ?? 0];
    const page = totalWithPage
      ? `${totalWithPage} LIMIT $${p.length - 1} OFFSET $${p.length}`
      : plan.pageSql(`$${p.length - 1}`, `$${p.length}`);
    const format = input.records_format ?? 'objects';
    const fail = (e: unknown) => {
      throw queryError(e);
    };
    if (input.records_as_json && format === 'objects') {
      const json = plan.recordsAsJson(page, !!totalWithPage);
      const r = await q
        .query<{ records: string; total: string | null; n?: number }>(
          countFromPage ? `SELECT records, json_array_length(records::json) AS n FROM (${json}) AS page_json` : json,
          p,
        )
        .catch(fail);
      const { records, total, n } = r.rows[0];
      if (totalWithPage && total != null) counted = Number(total);
      if (countFromPage) pageRows = Number(n);
      out.records = new JsonArrayText(Buffer.from(records));
    } else {
      const r = await q.query<Record<string, unknown>>(page, p).catch(fail);
      if (totalWithPage && r.rows.length) counted = Number(r.rows[0].__total);
      pageRows = r.rows.length;
      out.records = formatRows(r.rows, plan, format);
    }
    const offset = input.offset ?? 0;
    if (countFromPage && pageRows >= 0 && pageRows < input.limit && (pageRows > 0 || offset === 0)) counted = offset + pageRows;
  } else {
    out.records = textFormat ? '' : [];
  }
  if (counted !== null) {
    out.total = counted;
    out.total_was_estimated = false;
  } else if (input.include_total !== false) {
    if (unfiltered && input.total_estimation_threshold !== undefined && input.total_estimation_threshold !== null) {
      const base = t.relkind === 'v' ? (t.aliasOf ?? t.name) : t.name;
      const est = await q.query<{ n: number }>(
        `SELECT c.reltuples::float8 AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'public' AND c.relname = $1`,
        [base],
      );
      const n = Number(est.rows[0]?.n ?? -1);
      if (n >= 0 && n >= input.total_estimation_threshold) {
        out.total = Math.round(n);
        out.total_was_estimated = true;
        return out;
      }
    }
    // A full-text search without filters: the planner's estimate (from the vectors' statistics).
    const noFilters = !input.filters || !Object.keys(input.filters).length;
    if (
      plan.textSearch &&
      noFilters &&
      !input.distinct &&
      input.total_estimation_threshold !== undefined &&
      input.total_estimation_threshold !== null
    ) {
      const n = await plannedRows(q, plan.matchSql, plan.params);
      if (n >= input.total_estimation_threshold) {
        out.total = n;
        out.total_was_estimated = true;
        return out;
      }
    }
    if (unfiltered) {
      const base = t.relkind === 'v' ? t.aliasOf : t.name;
      const bt = base && base !== t.name ? await readTable(q, base) : t;
      out.total = await countRows(q, bt ?? t);
    } else {
      const r = await q.query<{ n: string }>(plan.countSql, plan.params).catch((e) => {
        throw queryError(e);
      });
      out.total = Number(r.rows[0].n);
    }
    out.total_was_estimated = false;
  }
  return out;
}

/** The number of rows the planner expects a statement to return. */
async function plannedRows(q: Queryable, sql: string, params: unknown[]): Promise<number> {
  const r = await q.query<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${sql}`, params).catch((e) => {
    throw queryError(e);
  });
  const raw = r.rows[0]?.['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan?: { 'Plan Rows'?: number } }[];
  return Math.round(Number(plan?.[0]?.Plan?.['Plan Rows'] ?? 0));
}

/** A read-only query as the reader role with a row limit (datastore_search_sql). */
export async function readQuery(sessions: Sessions, sql: string, opts: ReadQueryOptions): Promise<ReadQueryResult> {
  const limit = Math.max(0, Math.floor(opts.rowLimit));
  return sessions.readTx(
    async (q) => {
      let r: { rows: Record<string, unknown>[]; fields: { name: string; dataTypeID: number }[] };
      if (opts.bounded) r = await q.query<Record<string, unknown>>(sql, opts.params ?? []);
      else {
        await q.query(`DECLARE ds_read NO SCROLL CURSOR FOR ${sql}`, opts.params ?? []);
        r = await q.query<Record<string, unknown>>(`FETCH ${limit + 1} FROM ds_read`);
        await q.exec('CLOSE ds_read');
      }
      const truncated = r.rows.length > limit;
      const fields: { id: string; type: string }[] = [];
      for (const f of r.fields) fields.push({ id: f.name, type: reportedType(await typeName(sessions.typeNames, q, f.dataTypeID)) });
      const kinds = fields.map((f) => kindOf(f.type));
      const records = r.rows.slice(0, limit).map((row) => {
        const o: Record<string, unknown> = {};
        fields.forEach((f, i) => {
          o[f.id] = readValue(row[f.id], kinds[i]);
        });
        return o;
      });
      return { fields, records, truncated };
    },
    opts.timeoutMs ?? SEARCH_TIMEOUT_MS,
    opts.settings,
  );
}

async function typeName(typeNames: Map<number, string>, q: Queryable, oid: number): Promise<string> {
  let n = typeNames.get(oid);
  if (n === undefined) {
    n =
      (await q.query<{ typname: string }>('SELECT typname::text AS typname FROM pg_type WHERE oid = $1', [oid])).rows[0]?.typname ?? 'text';
    typeNames.set(oid, n);
  }
  return n;
}
