// A CKAN site (Action API v3) as a harvest source: its public datasets through package_search,
// in pages of up to 1,000 ordered by metadata_modified then id, and each package dict mapped to
// one this catalog can create: the remote id kept, what only makes sense over there dropped.
import type {
  HarvestFetch,
  HarvestSourceConfig,
  HarvestSourceSpec,
  ReadOptions,
  RemoteDataset,
  RemoteOrganization,
  SourceReader,
} from './types.ts';
import { HarvestSourceError } from './types.ts';

/** CKAN's default ckan.search.rows_max; a source's config.rows asks for smaller pages. */
const MAX_ROWS = 1000;

function pageRows(source: HarvestSourceSpec): number {
  const rows = Number(source.config.rows);
  return Number.isInteger(rows) && rows >= 1 && rows <= MAX_ROWS ? rows : MAX_ROWS;
}

/** The site's base URL (no trailing slash) whether the source names the site or its API. */
export function ckanBaseUrl(url: string): string {
  const u = new URL(url.trim());
  u.search = '';
  u.hash = '';
  u.pathname = u.pathname.replace(/\/+$/, '').replace(/\/api(\/\d+)?(\/action)?(\/[a-z_]+)?$/i, '');
  return u.href.replace(/\/+$/, '');
}

/** Dataset keys the remote site computes or keeps for itself. */
const DATASET_REMOTE_ONLY = [
  'revision_id',
  'revision_timestamp',
  'tracking_summary',
  'num_resources',
  'num_tags',
  'organization',
  'relationships_as_subject',
  'relationships_as_object',
  'metadata_created',
  'metadata_modified',
  'creator_user_id',
  'isopen',
  'license_title',
  'license_url',
  'state',
  'private',
  'harvest',
  'harvest_object_id',
  'harvest_source_id',
  'harvest_source_title',
];
const RESOURCE_REMOTE_ONLY = [
  'id',
  'package_id',
  'position',
  'revision_id',
  'url_type',
  'datastore_active',
  'datastore_contains_all_records_of_source_file',
  'cache_url',
  'cache_last_updated',
  'tracking_summary',
  'created',
  'metadata_modified',
  'state',
  'has_views',
];
/** Extras a harvester writes on the remote site: this site writes its own. */
const HARVEST_EXTRAS = new Set(['harvest_object_id', 'harvest_source_id', 'harvest_source_title', 'harvest_url', 'guid']);

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A remote package dict (package_show form) as a dataset dict for package_create here. */
export function mapCkanDataset(remote: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(remote);
  for (const k of DATASET_REMOTE_ONLY) delete out[k];
  delete out.owner_org;
  if (Array.isArray(out.resources)) {
    out.resources = out.resources.filter(isObject).map((r) => {
      const res = { ...r };
      for (const k of RESOURCE_REMOTE_ONLY) delete res[k];
      return res;
    });
  }
  if (Array.isArray(out.tags)) {
    // Vocabulary tags name vocabularies of the remote site.
    out.tags = out.tags
      .filter((t): t is Record<string, unknown> => isObject(t) && typeof t.name === 'string' && !t.vocabulary_id)
      .map((t) => ({ name: t.name }));
  }
  if (Array.isArray(out.groups)) {
    out.groups = out.groups.filter(isObject).map((g) => {
      const group: Record<string, unknown> = {};
      for (const k of ['id', 'name', 'title', 'description', 'image_url']) if (g[k] !== undefined && g[k] !== null) group[k] = g[k];
      return group;
    });
  }
  if (Array.isArray(out.extras)) {
    out.extras = out.extras
      .filter((e): e is Record<string, unknown> => isObject(e) && typeof e.key === 'string' && !HARVEST_EXTRAS.has(e.key))
      .map((e) => ({ key: e.key, value: e.value }));
  }
  return out;
}

function organizationOf(remote: Record<string, unknown>): RemoteOrganization | null {
  const org = remote.organization;
  if (!isObject(org) || typeof org.name !== 'string') return null;
  const out: RemoteOrganization = { name: org.name };
  for (const k of ['id', 'title', 'description', 'image_url'] as const) if (typeof org[k] === 'string' && org[k]) out[k] = org[k] as string;
  return out;
}

/** CKAN writes UTC times without a zone. */
function utcIso(value: unknown): string | null {
  if (typeof value !== 'string' || !value) return null;
  return /(Z|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`;
}

/** A time for a Solr range: whole milliseconds, UTC, with the Z Solr wants. */
function solrTime(iso: string): string {
  const d = new Date(utcIso(iso) ?? iso);
  if (Number.isNaN(d.getTime())) throw new HarvestSourceError(`"${iso}" is not a time`);
  return d.toISOString();
}

const msKey = (iso: string | null) => (iso ? new Date(iso).getTime() : Number.NaN);

interface SearchPage {
  count: number;
  results: Record<string, unknown>[];
}

async function callApi(
  fetch: HarvestFetch,
  base: string,
  action: string,
  params: Record<string, string>,
  signal: AbortSignal,
): Promise<unknown> {
  const url = `${base}/api/3/action/${action}?${new URLSearchParams(params)}`;
  const res = await fetch(url, { accept: 'application/json', signal });
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new HarvestSourceError(
      res.status === 200 ? `${url} did not answer JSON: is ${base} a CKAN site?` : `${url} answered HTTP ${res.status}`,
      res.status === 200 ? undefined : res.status,
    );
  }
  if (!isObject(body) || (body.success !== true && !isObject(body.error))) {
    throw new HarvestSourceError(`${url} did not answer as a CKAN Action API (HTTP ${res.status}): is ${base} a CKAN site?`, res.status);
  }
  if (body.success !== true) {
    const err = body.error as Record<string, unknown>;
    const message = typeof err.message === 'string' ? err.message : JSON.stringify(err);
    throw new HarvestSourceError(`${base} refused ${action}: ${message}`, res.status);
  }
  return body.result;
}

const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && !!x.trim()) : []);
const solrTerm = (field: string, value: string) => `${field}:"${value.replace(/["\\]/g, '\\$&')}"`;

/** ckanext-harvest's organizations_filter_include/exclude and groups_filter_include/exclude. */
function membershipTerms(config: HarvestSourceConfig): string[] {
  const terms: string[] = [];
  for (const [field, include, exclude] of [
    ['organization', config.organizations_filter_include, config.organizations_filter_exclude],
    ['groups', config.groups_filter_include, config.groups_filter_exclude],
  ] as const) {
    const wanted = names(include);
    if (wanted.length) terms.push(`(${wanted.map((n) => solrTerm(field, n)).join(' OR ')})`);
    else terms.push(...names(exclude).map((n) => `-${solrTerm(field, n)}`));
  }
  return terms;
}

function filterQuery(source: HarvestSourceSpec, since: string | null, cursor: string | null): string {
  const terms: string[] = [];
  if (typeof source.config.fq === 'string' && source.config.fq.trim()) terms.push(`(${source.config.fq.trim()})`);
  terms.push(...membershipTerms(source.config));
  const from = [since, cursor].filter((t): t is string => !!t).sort((a, b) => msKey(b) - msKey(a))[0];
  if (from) terms.push(`metadata_modified:[${solrTime(from)} TO *]`);
  return terms.join(' AND ');
}

/**
 * Every dataset in (metadata_modified, id) order. Pages follow a cursor (the last time seen, and
 * how many at that millisecond were already read) rather than an offset from the start, so a
 * dataset modified meanwhile moves to the end instead of shifting the pages under the reader.
 */
async function* searchAll(
  source: HarvestSourceSpec,
  fetch: HarvestFetch,
  signal: AbortSignal,
  since: string | null,
  fl?: string,
): AsyncGenerator<Record<string, unknown>> {
  const base = ckanBaseUrl(source.url);
  const q = typeof source.config.q === 'string' && source.config.q.trim() ? source.config.q.trim() : '*:*';
  const rows = pageRows(source);
  let cursor: string | null = null;
  let atCursor = 0;
  const seen = new Set<string>();
  let stale = 0;
  for (;;) {
    signal.throwIfAborted();
    const params: Record<string, string> = {
      q,
      rows: String(rows),
      start: String(atCursor),
      sort: 'metadata_modified asc, id asc',
      include_private: 'false',
    };
    const fq = filterQuery(source, since, cursor);
    if (fq) params.fq = fq;
    if (fl) params.fl = fl;
    const result = (await callApi(fetch, base, 'package_search', params, signal)) as SearchPage;
    if (!isObject(result) || !Array.isArray(result.results))
      throw new HarvestSourceError(`${base}'s package_search did not answer a list of results`);
    const results = result.results.filter(isObject);
    let fresh = 0;
    for (const pkg of results) {
      const id = typeof pkg.id === 'string' ? pkg.id : null;
      const modified = utcIso(pkg.metadata_modified);
      if (modified && cursor && msKey(modified) === msKey(cursor)) atCursor++;
      else if (modified) {
        cursor = modified;
        atCursor = 1;
      }
      if (!id || seen.has(id)) continue;
      seen.add(id);
      fresh++;
      yield pkg;
    }
    const count = typeof result.count === 'number' ? result.count : 0;
    if (!results.length || Number(params.start) + results.length >= count) return;
    // No time to page on (an old CKAN, or fl without it): fall back to offsets.
    if (!cursor) atCursor = Number(params.start) + results.length;
    // Pages of datasets all read before: the server does not page as asked (it ignores start or sort).
    stale = fresh ? 0 : stale + 1;
    if (stale >= 3) throw new HarvestSourceError(`${base}'s package_search pages do not advance (does it ignore start or sort?)`);
  }
}

export const ckanReader: SourceReader = {
  async *read(source, options: ReadOptions): AsyncIterable<RemoteDataset> {
    const base = ckanBaseUrl(source.url);
    for await (const pkg of searchAll(source, options.fetch, options.signal, options.since)) {
      // A remote harvest source is not a dataset to copy.
      if (pkg.type === 'harvest') continue;
      const name = typeof pkg.name === 'string' ? pkg.name : String(pkg.id);
      yield {
        guid: String(pkg.id),
        remoteUrl: `${base}/dataset/${encodeURIComponent(name)}`,
        modified: utcIso(pkg.metadata_modified),
        content: JSON.stringify(pkg),
        dataset: mapCkanDataset(pkg),
        organization: organizationOf(pkg),
      };
    }
  },
  async listGuids(source, options) {
    const ids = new Set<string>();
    for await (const pkg of searchAll(source, options.fetch, options.signal, null, 'id,metadata_modified,type')) {
      if (pkg.type !== 'harvest') ids.add(String(pkg.id));
    }
    return ids;
  },
};
