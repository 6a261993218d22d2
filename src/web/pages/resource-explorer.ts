// The data explorer of a data store table on the resource page: one datastore_search per page view
// (as the visitor) with paging, sorting by a column, per-column filters and full-text search taken
// from the query string; cells prepared for the table (numbers right-aligned, nulls marked, long
// text cut). The same search's fields give the data dictionary.
import { NotFoundError, ValidationError } from '../../errors.ts';
import { queryString } from '../render.ts';
import type { WebContext } from '../router.ts';

export const PAGE_SIZE = 50;
/** A full-text search's total is the planner's estimate above this many rows (counting every match is slow). */
export const ESTIMATE_TOTAL_ABOVE = 100_000;
const FILTER_PREFIX = 'filter.';
const DUMP_FORMATS = ['csv', 'tsv', 'json', 'xml', 'parquet', 'geojson'] as const;
const NUMBER_TYPE = /^(int|int2|int4|int8|integer|smallint|bigint|float|float4|float8|real|double precision|numeric|decimal|money)$/;
/** Longest text shown in a cell when the view says nothing. */
const DEFAULT_ELLIPSIS = 100;

export interface ExplorerState {
  page: number;
  q: string;
  sort: string;
  order: 'asc' | 'desc';
  /** column -> one value or several (matched as any of them). */
  filters: Record<string, string[]>;
  /** Count every matching row of a filtered table (asked for with count=1). */
  count: boolean;
}

export interface DictionaryEntry {
  id: string;
  type: string;
  label: string;
  notes: string;
}

export interface ExplorerCell {
  text: string;
  cls: string;
  /** The value is null (shown as a mark). */
  isNull?: boolean;
  full?: string;
}

export interface ExplorerColumn {
  id: string;
  type: string;
  label: string;
  numeric: boolean;
  sortUrl: string;
  sorted: '' | 'ascending' | 'descending';
  /** The column's filter input: its one value (several values are kept as hidden fields). */
  filterValue: string;
  filterValues: string[];
}

export interface FilterChip {
  column: string;
  values: string[];
  removeUrl: string;
}

export interface Explorer {
  state: ExplorerState;
  columns: ExplorerColumn[];
  rows: ExplorerCell[][];
  total: number | null;
  totalEstimated: boolean;
  first: number;
  last: number;
  pages: number;
  /** A filtered page without a count: whether rows follow this page. */
  more: boolean;
  /** The link that counts a filtered search's rows. */
  countUrl: string | null;
  /** Query parameters of the current state (for paging links), without page. */
  params: Record<string, unknown>;
  resetUrl: string;
  dumps: { format: string; url: string; label: string }[];
  dictionary: DictionaryEntry[];
  filterable: boolean;
  filtered: boolean;
  chips: FilterChip[];
  error: string | null;
}

function one(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function many(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The explorer's state from the query string: page, q, sort + order, filter.<column>=value (repeatable). */
export function explorerState(query: WebContext['query']): ExplorerState {
  const page = Math.max(1, Math.min(1_000_000, Number.parseInt(one(query.page), 10) || 1));
  const filters: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(query)) {
    if (!key.startsWith(FILTER_PREFIX) || key.length === FILTER_PREFIX.length) continue;
    const values = many(value).filter((v) => v !== '');
    if (values.length) filters[key.slice(FILTER_PREFIX.length)] = values;
  }
  // The small form's "column + value" pair adds one more filter.
  const column = one(query.filter_column);
  const value = one(query.filter_value);
  if (column && value !== '') filters[column] = [...(filters[column] ?? []), value];
  return {
    page,
    q: one(query.q).trim(),
    sort: one(query.sort),
    order: one(query.order) === 'desc' ? 'desc' : 'asc',
    filters,
    count: one(query.count) === '1',
  };
}

/** Query parameters that reproduce a state (the view stays selected). */
export function stateParams(state: ExplorerState, viewId?: string): Record<string, unknown> {
  const params: Record<string, unknown> = { view_id: viewId, q: state.q || null };
  if (state.sort) {
    params.sort = state.sort;
    params.order = state.order;
  }
  for (const [column, values] of Object.entries(state.filters)) params[FILTER_PREFIX + column] = values;
  if (state.count && Object.keys(state.filters).length) params.count = '1';
  return params;
}

function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function datastoreFilters(state: ExplorerState): Record<string, unknown> | undefined {
  const entries = Object.entries(state.filters);
  if (!entries.length) return undefined;
  return Object.fromEntries(entries.map(([k, v]) => [k, v.length === 1 ? v[0] : v]));
}

/** Whether a state's search counts the matching rows: a filter's count reads every matching row
 * (seconds on a big table), so a filtered page asks for one row more than it shows instead, and
 * counts only when asked (count=1) — or knows the total on its last page. */
export function countsTotal(state: ExplorerState): boolean {
  return !Object.keys(state.filters).length || state.count;
}

/** The datastore_search input of a state. */
export function searchInput(resourceId: string, state: ExplorerState, fields?: string[]): Record<string, unknown> {
  const filters = datastoreFilters(state);
  const counts = countsTotal(state);
  const input: Record<string, unknown> = {
    resource_id: resourceId,
    limit: counts ? PAGE_SIZE : PAGE_SIZE + 1,
    offset: (state.page - 1) * PAGE_SIZE,
    records_format: 'lists',
    include_total: counts,
    // An unfiltered table's count is stored; a full-text search alone is estimated when it
    // matches very many rows.
    total_estimation_threshold: state.q && !filters ? ESTIMATE_TOTAL_ABOVE : null,
  };
  if (state.q) input.q = state.q;
  if (filters) input.filters = filters;
  if (state.sort) input.sort = [`${quoted(state.sort)} ${state.order}`];
  if (fields?.length) input.fields = ['_id', ...fields.filter((f) => f !== '_id')];
  return input;
}

/** Links to every dump format with the current search, filters and sort (the dump route takes them). */
export function dumpLinks(resourceId: string, state: ExplorerState | null, t: WebContext['t']) {
  const base: Record<string, unknown> = {};
  if (state) {
    const filters = datastoreFilters(state);
    if (state.q) base.q = state.q;
    if (filters) base.filters = JSON.stringify(filters);
    if (state.sort) base.sort = `${quoted(state.sort)} ${state.order}`;
  }
  return DUMP_FORMATS.map((format) => ({
    format,
    label: t(`explorer.dump.${format}`),
    url: `/datastore/dump/${encodeURIComponent(resourceId)}${queryString({ format, ...base })}`,
  }));
}

function info(field: { info?: unknown }): { label: string; notes: string } {
  const i = field.info && typeof field.info === 'object' ? (field.info as Record<string, unknown>) : {};
  return { label: typeof i.label === 'string' ? i.label : '', notes: typeof i.notes === 'string' ? i.notes : '' };
}

export function dictionaryOf(fields: { id: string; type: string; info?: unknown }[]): DictionaryEntry[] {
  return fields.filter((f) => f.id !== '_id').map((f) => ({ id: f.id, type: f.type, ...info(f) }));
}

/** One cell: nulls marked, objects as JSON, text cut at maxLength characters (the full text kept for a tooltip when not huge). */
export function cellOf(value: unknown, numeric: boolean, maxLength: number): ExplorerCell {
  if (value === null || value === undefined) return { text: '', cls: numeric ? 'cell-num cell-null' : 'cell-null', isNull: true };
  let text: string;
  if (typeof value === 'object') text = JSON.stringify(value);
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else text = String(value);
  const cls = numeric ? 'cell-num' : '';
  const chars = [...text.slice(0, maxLength * 2 + 2)];
  if (maxLength > 0 && chars.length > maxLength)
    return { text: `${chars.slice(0, maxLength).join('')}…`, cls: `${cls} cell-cut`.trim(), full: text.length <= 2000 ? text : undefined };
  return { text, cls };
}

/** The fields a search returned, without its rank columns (a full-text search adds them at the end). */
function tableFields(fields: { id: string; type: string; info?: unknown }[], q: string) {
  const out = [...fields];
  while (q && out.length && /^rank( |$)/.test(out[out.length - 1].id) && out[out.length - 1].type === 'float') out.pop();
  return out;
}

export interface ExplorerView {
  id?: string;
  show_fields?: string[];
  ellipsis_length?: number;
  filterable?: boolean;
}

/** Runs the explorer's one datastore_search and prepares the table. */
export async function loadExplorer(ctx: WebContext, resourceId: string, view: ExplorerView, path: string): Promise<Explorer> {
  const state = explorerState(ctx.query);
  const params = stateParams(state, view.id);
  const maxLength = typeof view.ellipsis_length === 'number' && view.ellipsis_length > 0 ? view.ellipsis_length : DEFAULT_ELLIPSIS;
  const filterable = view.filterable !== false;
  const explorer: Explorer = {
    state,
    columns: [],
    rows: [],
    total: null,
    totalEstimated: false,
    first: 0,
    last: 0,
    pages: 0,
    more: false,
    countUrl: null,
    params,
    resetUrl: `${path}${queryString({ view_id: view.id })}#explorer`,
    dumps: dumpLinks(resourceId, state, ctx.t),
    dictionary: [],
    filterable,
    filtered: !!state.q || Object.keys(state.filters).length > 0,
    chips: Object.entries(state.filters).map(([column, values]) => ({
      column,
      values,
      removeUrl: `${path}${queryString(params, { [FILTER_PREFIX + column]: null, page: null })}#explorer`,
    })),
    error: null,
  };
  let result: {
    fields: { id: string; type: string; info?: unknown }[];
    records: unknown[][];
    total?: number;
    total_was_estimated?: boolean;
  };
  try {
    result = await ctx.call('datastore_search', searchInput(resourceId, state, view.show_fields));
  } catch (e) {
    // datastore_active set while the table is gone (a failed load, a race with a delete).
    if (e instanceof NotFoundError) {
      explorer.error = ctx.t('explorer.not_active');
      return explorer;
    }
    if (!(e instanceof ValidationError)) throw e;
    explorer.error = `${ctx.t('explorer.error')} ${Object.entries(e.errors)
      .filter(([k]) => k !== '__type')
      .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(' ') : typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join('; ')}`;
    return explorer;
  }
  const fields = tableFields(result.fields, state.q);
  explorer.dictionary = dictionaryOf(fields);
  explorer.columns = fields.map((f) => {
    const sorted = state.sort === f.id ? (state.order === 'desc' ? 'descending' : 'ascending') : '';
    const nextOrder = sorted === 'ascending' ? 'desc' : 'asc';
    const values = state.filters[f.id] ?? [];
    return {
      id: f.id,
      type: f.type,
      label: info(f).label,
      numeric: NUMBER_TYPE.test(f.type),
      sortUrl: `${path}${queryString(params, { sort: f.id, order: nextOrder, page: null })}#explorer`,
      sorted,
      filterValue: values.length === 1 ? values[0] : '',
      filterValues: values.length > 1 ? values : [],
    };
  });
  const numeric = explorer.columns.map((c) => c.numeric);
  const records = result.records.slice(0, PAGE_SIZE);
  explorer.more = result.records.length > PAGE_SIZE;
  explorer.rows = records.map((row) => fields.map((_f, i) => cellOf(row[i], numeric[i], maxLength)));
  const offset = (state.page - 1) * PAGE_SIZE;
  explorer.total = typeof result.total === 'number' ? result.total : null;
  explorer.totalEstimated = !!result.total_was_estimated;
  // Uncounted: the last page (rows, none after) tells the total.
  if (explorer.total === null && !explorer.more && explorer.rows.length) explorer.total = offset + explorer.rows.length;
  explorer.first = explorer.rows.length ? offset + 1 : 0;
  explorer.last = offset + explorer.rows.length;
  explorer.pages = explorer.total === null ? state.page + (explorer.more ? 1 : 0) : Math.max(1, Math.ceil(explorer.total / PAGE_SIZE));
  if (explorer.total === null && explorer.more)
    explorer.countUrl = `${path}${queryString(params, { count: '1', page: state.page > 1 ? state.page : null })}#explorer`;
  return explorer;
}
