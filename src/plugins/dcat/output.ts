// What the dcat actions, endpoints and export share: the profiles of a request, a dataset's
// document, a catalog page (package_search as the caller, paged, hydra links) and the whole
// catalog as a stream of pages.
import type { ActionContext } from '../../actions/context.ts';
import type { DatastoreBackend } from '../../datastore/backend.ts';
import { ValidationError } from '../../errors.ts';
import { catalogHead, datasetQuads, type Paging } from '../../dcat/documents.ts';
import {
  type CatalogDict,
  type DatasetDict,
  type DataStoreTable,
  type DcatProfile,
  resolveProfiles,
  UnknownProfileError,
} from '../../dcat/profiles.ts';
import { type RdfFormat, rdfWriter, serializeQuads, type Sink } from '../../dcat/serialize.ts';
import { CatalogKeyset } from './keyset.ts';
import { dcatSettings, type DcatSettings } from './settings.ts';

/** The profiles named by a request (comma or space separated), else the configured default. */
export function requestProfiles(settings: DcatSettings, names: readonly string[] | undefined): DcatProfile[] {
  const list = names?.length ? names : settings.profiles;
  try {
    return resolveProfiles(list);
  } catch (e) {
    if (e instanceof UnknownProfileError) throw new ValidationError({ profiles: [e.message] });
    throw e;
  }
}

/** The data store tables of a dataset's resources; their data dictionaries only when a profile reads them (Croissant). */
async function tablesOf(ctx: ActionContext, dataset: DatasetDict, profiles: readonly DcatProfile[]): Promise<Map<string, DataStoreTable>> {
  const tables = new Map<string, DataStoreTable>();
  const backend = ctx.services.plugins.datastore as DatastoreBackend | undefined;
  if (!backend) return tables;
  const withFields = profiles.some((p) => p.name === 'croissant');
  for (const resource of (dataset.resources ?? []) as DatasetDict[]) {
    if (resource.datastore_active !== true) continue;
    const fields = withFields ? await backend.resource_fields(resource.id).catch(() => []) : [];
    tables.set(resource.id, { resourceId: resource.id, fields: fields.filter((f) => f.id !== '_id') });
  }
  return tables;
}

/** One dataset (as the caller may read it) in one format. */
export async function datasetDocument(ctx: ActionContext, id: string, format: RdfFormat, profileNames?: string[]): Promise<string> {
  const settings = dcatSettings(ctx.services);
  const profiles = requestProfiles(settings, profileNames);
  const dataset: DatasetDict = await ctx.call('package_show', { id });
  return serializeQuads(await datasetQuads(settings, profiles, dataset, await tablesOf(ctx, dataset, profiles)), format);
}

export interface CatalogQuery {
  page: number;
  modified_since?: string;
  q?: string;
  fq?: string;
  profiles?: string[];
}

/** The package_search of a catalog page: newest first, public active datasets, no harvest sources or showcases. */
function searchParams(query: CatalogQuery, rows: number, start: number): Record<string, unknown> {
  const fqList = ['-dataset_type:harvest', '-dataset_type:showcase'];
  if (query.modified_since) fqList.push(`metadata_modified:[${query.modified_since}Z TO NOW]`);
  return {
    q: query.q || '*:*',
    ...(query.fq ? { fq: query.fq } : {}),
    fq_list: fqList,
    rows,
    start,
    sort: 'metadata_modified desc, id desc',
    facet: false,
    include_private: false,
  };
}

function catalogDict(ctx: ActionContext, settings: DcatSettings, modified?: string): CatalogDict {
  const config = ctx.services.config;
  return {
    title: config.str('svc.site_title') || 'svc',
    description: config.str('svc.site_description'),
    homepage: `${settings.siteUrl}/`,
    language: config.str('svc.locale_default'),
    ...(modified ? { modified } : {}),
  };
}

/** The address of a catalog page: the endpoint, the request's filters and the page number. */
export function catalogPageUrl(settings: DcatSettings, format: RdfFormat, query: CatalogQuery, page: number): string {
  const params = new URLSearchParams();
  if (query.modified_since) params.set('modified_since', query.modified_since);
  if (query.profiles?.length) params.set('profiles', query.profiles.join(','));
  if (query.q) params.set('q', query.q);
  if (query.fq) params.set('fq', query.fq);
  params.set('page', String(page));
  return `${settings.siteUrl}${settings.catalogEndpoint.replace('{_format}', format)}?${params}`;
}

/** One page of the catalog in one format; a page past the last is a Validation Error naming `page`. */
export async function catalogDocument(ctx: ActionContext, format: RdfFormat, query: CatalogQuery): Promise<string> {
  const settings = dcatSettings(ctx.services);
  const profiles = requestProfiles(settings, query.profiles);
  const result = await ctx.call('package_search', searchParams(query, settings.perPage, (query.page - 1) * settings.perPage));
  const count: number = result.count;
  const last = Math.max(1, Math.ceil(count / settings.perPage));
  if (query.page > last) {
    throw new ValidationError({ page: [`Page ${query.page} is past the last page (${last}) of the ${count} datasets found`] });
  }
  const paging: Paging = {
    count,
    itemsPerPage: settings.perPage,
    page: query.page,
    pageUrl: (n) => catalogPageUrl(settings, format, query, n),
  };
  const results = result.results as DatasetDict[];
  const quads = catalogHead(
    settings,
    profiles,
    catalogDict(ctx, settings, query.page === 1 ? results[0]?.metadata_modified : undefined),
    paging,
  );
  for (const dataset of results)
    quads.push(...(await datasetQuads(settings, profiles, dataset, await tablesOf(ctx, dataset, profiles), true)));
  return serializeQuads(quads, format);
}

/**
 * The whole catalog (what the caller may read, newest first) written to a sink as one document,
 * a search of `pageSize` datasets at a time (keyset paging), each search's text handed to the sink
 * at once, so memory stays flat. Returns the number of datasets written.
 */
export async function streamCatalog(
  ctx: ActionContext,
  format: RdfFormat,
  query: Omit<CatalogQuery, 'page'>,
  sink: Sink,
  opts: { pageSize?: number; onPage?: (done: number, total: number) => void } = {},
): Promise<number> {
  const settings = dcatSettings(ctx.services);
  const profiles = requestProfiles(settings, query.profiles);
  const rows = opts.pageSize ?? 1000;
  let pending: string[] = [];
  const writer = rdfWriter(format, (chunk) => {
    pending.push(chunk);
  });
  const flush = async () => {
    const text = pending.join('');
    pending = [];
    if (text) await sink(text);
  };
  await writer.add(catalogHead(settings, profiles, catalogDict(ctx, settings)));
  const keyset = new CatalogKeyset();
  const search = () => {
    const call: Promise<any> = ctx.call('package_search', keyset.after(searchParams({ ...query, page: 1 }, rows, 0)));
    call.catch(() => {}); // awaited below; this only keeps a failure while the page before is written from being unhandled
    return call;
  };
  let done = 0;
  let total: number | undefined;
  let next = search();
  for (;;) {
    const result = await next;
    total ??= result.count as number;
    const results = result.results as DatasetDict[];
    const fresh = keyset.next(results);
    const more = results.length >= rows;
    // the next search runs in the database while this one's datasets are written
    if (more) next = search();
    for (const dataset of fresh) {
      await writer.add(await datasetQuads(settings, profiles, dataset, await tablesOf(ctx, dataset, profiles), true));
      done++;
    }
    await flush();
    opts.onPage?.(done, Math.max(total, done));
    if (!more) break;
  }
  await writer.end();
  await flush();
  return done;
}
