// Dataset search as the catalog pages show it (/dataset, and the datasets of an organization or a
// group page): one package_search per page with its facets; facet links add or remove filter
// queries (one fq per selected value, the value quoted), paging by page number.
import { SearchQueryError, ValidationError } from '../../errors.ts';
import { queryString } from '../render.ts';
import type { WebContext } from '../router.ts';
import { searchArea } from './map-figures.ts';

/** The facets of the search pages, in the order they are shown. */
export const FACET_FIELDS = ['organization', 'groups', 'tags', 'res_format', 'license_id'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

export const PAGE_SIZE = 20;
/** Values of a facet shown before "show more". */
const FACET_SHOWN = 10;
/** Values of a facet package_search returns (the "show more" list). */
const FACET_LIMIT = 50;
/** The highest page number followed (deeper pages are empty anyway at any real catalog size). */
const MAX_PAGE = 100_000;

export const RELEVANCE = 'score desc, metadata_modified desc';
const SORTS: { value: string; key: string }[] = [
  { value: RELEVANCE, key: 'catalog.search.sort.relevance' },
  { value: 'title_string asc', key: 'catalog.search.sort.name_asc' },
  { value: 'title_string desc', key: 'catalog.search.sort.name_desc' },
  { value: 'metadata_modified desc', key: 'catalog.search.sort.modified' },
];

/** The first value of a query key (repeated keys are lists). */
export function queryValue(query: Record<string, string | string[]>, key: string): string {
  const v = query[key];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

function queryList(query: Record<string, string | string[]>, key: string): string[] {
  const v = query[key];
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return [...new Set(list.filter((x) => x !== ''))];
}

/** A page number from the query: a positive integer, else 1. */
export function pageNumber(query: Record<string, string | string[]>): number {
  const n = Number(queryValue(query, 'page'));
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_PAGE) : 1;
}

/** A value as a quoted term of the query language (quotes and backslashes escaped). */
export function quoteTerm(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

export interface SearchOptions {
  /** The page's address (facet, sort and page links point to it). */
  path: string;
  /** A filter every result must pass (the organization or group of the page). */
  fq?: string;
  /** Facets the page leaves out (the organization's own page has no organization facet). */
  omitFacets?: FacetField[];
  /** More facets after the usual ones (a custom schema's choice fields): their titles and the labels of their values. */
  extraFacets?: ExtraFacet[];
}

export interface ExtraFacet {
  field: string;
  title: string;
  labels: Record<string, string>;
}

/** package_search answers at most this many facet fields. */
const MAX_FACET_FIELDS = 20;

interface FacetItem {
  name: string;
  label: string;
  count: number;
  selected: boolean;
  href: string;
}

export interface SearchView {
  path: string;
  q: string;
  sort: string;
  sort_options: { value: string; label: string }[];
  page: number;
  pages: number;
  count: number;
  results: Record<string, unknown>[];
  /** Query parameters every link of the page keeps (q, sort, selected facets, expanded facets). */
  params: Record<string, unknown>;
  facets: { field: string; title: string; items: FacetItem[]; more_href: string | null; less_href: string | null }[];
  selected: { field: string; value: string; title: string; label: string; href: string }[];
  /** The search's error (a malformed query), shown on the page instead of results. */
  error: string | null;
  /** Whether anything narrows the search (for the "no results" text). */
  filtered: boolean;
  /** The area (ext_bbox) the datasets are in, and the link that drops it. */
  area: ReturnType<typeof searchArea> & { clear_href: string | null };
}

/** Runs the search the page's query string asks for; a malformed query is an error on the page (status 400). */
export async function runSearch(ctx: WebContext, opts: SearchOptions): Promise<{ view: SearchView; status: number }> {
  const { t, query } = ctx;
  const usual: string[] = FACET_FIELDS.filter((f) => !opts.omitFacets?.includes(f));
  const extra = new Map((opts.extraFacets ?? []).filter((f) => !usual.includes(f.field)).map((f) => [f.field, f]));
  const fields = [...usual, ...extra.keys()].slice(0, MAX_FACET_FIELDS);
  const titleOf = (field: string) => extra.get(field)?.title ?? t(`catalog.search.facet.${field}`);
  const q = queryValue(query, 'q').trim();
  const sort = queryValue(query, 'sort').trim();
  const page = pageNumber(query);
  const selected: Record<string, string[]> = Object.fromEntries(fields.map((f) => [f, queryList(query, f)]));
  const expanded = fields.filter((f) => queryValue(query, `_${f}_limit`) === '0');
  const params: Record<string, unknown> = { q, sort, ...selected };
  for (const f of expanded) params[`_${f}_limit`] = '0';
  const area = searchArea(ctx);
  if (area.ext_bbox) params.ext_bbox = area.ext_bbox;

  let result: { count: number; results: Record<string, unknown>[]; search_facets: Record<string, { items: any[] }> } = {
    count: 0,
    results: [],
    search_facets: {},
  };
  let error: string | null = null;
  try {
    result = await ctx.call('package_search', {
      ...(q ? { q } : {}),
      ...(opts.fq ? { fq: opts.fq } : {}),
      ...(area.ext_bbox ? { ext_bbox: area.ext_bbox } : {}),
      fq_list: fields.flatMap((f) => selected[f].map((v) => `${f}:${quoteTerm(v)}`)),
      sort: sort || RELEVANCE,
      rows: PAGE_SIZE,
      start: (page - 1) * PAGE_SIZE,
      'facet.field': fields,
      'facet.limit': FACET_LIMIT,
      include_private: true,
    });
  } catch (e) {
    if (!(e instanceof SearchQueryError || e instanceof ValidationError)) throw e;
    error = e.message;
  }

  const link = (changes: Record<string, unknown>) => opts.path + queryString(params, { page: null, ...changes });
  const labels = new Map<string, string>();
  const facets = fields.map((field) => {
    const items: FacetItem[] = (result.search_facets[field]?.items ?? [])
      .map((item: { name: string; display_name: string; count: number }) => {
        const isSelected = selected[field].includes(item.name);
        const label = extra.get(field)?.labels[item.name] ?? item.display_name;
        labels.set(`${field}\u0000${item.name}`, label);
        return {
          name: item.name,
          label,
          count: item.count,
          selected: isSelected,
          href: link({ [field]: isSelected ? selected[field].filter((v) => v !== item.name) : [...selected[field], item.name] }),
        };
      })
      .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
    const open = expanded.includes(field);
    return {
      field,
      title: titleOf(field),
      items: open ? items : items.slice(0, FACET_SHOWN),
      more_href: !open && items.length > FACET_SHOWN ? link({ [`_${field}_limit`]: '0' }) : null,
      less_href: open && items.length > FACET_SHOWN ? link({ [`_${field}_limit`]: null }) : null,
    };
  });
  const chosen = fields.flatMap((field) =>
    selected[field].map((value) => ({
      field,
      value,
      title: titleOf(field),
      label: labels.get(`${field}\u0000${value}`) ?? extra.get(field)?.labels[value] ?? value,
      href: link({ [field]: selected[field].filter((v) => v !== value) }),
    })),
  );
  const view: SearchView = {
    path: opts.path,
    q,
    sort: sort || RELEVANCE,
    sort_options: [
      ...SORTS.map((s) => ({ value: s.value, label: t(s.key) })),
      ...(sort && !SORTS.some((s) => s.value === sort) ? [{ value: sort, label: sort }] : []),
    ],
    page,
    pages: Math.ceil(result.count / PAGE_SIZE),
    count: result.count,
    results: result.results,
    params,
    facets,
    selected: chosen,
    error,
    filtered: !!q || chosen.length > 0 || !!area.ext_bbox,
    area: { ...area, clear_href: area.ext_bbox ? link({ ext_bbox: null }) : null },
  };
  return { view, status: error ? 400 : 200 };
}
