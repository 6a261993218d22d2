// The resource page (/dataset/<name>/resource/<id>): metadata, downloads, the views of the resource
// (image, text, web page, video, audio, and the data explorer for data store tables), the data
// dictionary, and for editors the loader's status with a button to load the file again.
import { AuthorizationError, NotFoundError, ValidationError } from '../../errors.ts';
import { readSmallFile } from '../../files/store.ts';
import type { WebContext, WebRouter } from '../router.ts';
import { chartFigure } from '../../views/chart-svg.ts';
import { mapFigure } from './map-figures.ts';
import { dictionaryOf, dumpLinks, loadExplorer, type Explorer } from './resource-explorer.ts';
import { type DisplayRow, displayRows } from '../scheming/display.ts';
import { schemaOf, uiLanguage } from './manage-scheming.ts';

/** Uploaded text files up to this size are shown in the page; larger ones in a frame. */
const TEXT_PREVIEW_BYTES = 64 * 1024;
const LOG_LINES_SHOWN = 50;
/** Resource keys shown in their own places, not in the "additional information" table. */
const SHOWN_KEYS = new Set([
  'id',
  'package_id',
  'name',
  'description',
  'format',
  'url',
  'url_type',
  'size',
  'mimetype',
  'created',
  'last_modified',
  'metadata_modified',
  'datastore_active',
  'position',
  'state',
  'hash',
  'tracking_summary',
]);

type Dict = Record<string, any>;

interface ViewEntry {
  id: string;
  view_type: string;
  title: string;
  description: string;
  config: Dict;
  url: string;
  /** A video's poster image. */
  poster: string;
  known: boolean;
}

/** A link target that is a web address or a path on this site (no javascript:, data: and the like). */
export function safeUrl(value: unknown): string {
  const url = typeof value === 'string' ? value.trim() : '';
  if (/^https?:\/\//i.test(url)) return url;
  if (/^\/(?![/\\])/.test(url)) return url;
  return '';
}

function resourcePath(pkg: Dict, resourceId: string): string {
  return `/dataset/${encodeURIComponent(pkg.name)}/resource/${encodeURIComponent(resourceId)}`;
}

/** Where a resource's file is: the download route (site-relative) for uploads, else its URL. */
function fileUrl(pkg: Dict, res: Dict): string {
  if (res.url_type === 'upload') {
    const filename = String(res.url ?? '')
      .split(/[?#]/)[0]
      .split('/')
      .pop();
    return `${resourcePath(pkg, res.id)}/download${filename ? `/${encodeURIComponent(decodeURIComponent(filename))}` : ''}`;
  }
  if (res.url_type === 'datastore') return '';
  return safeUrl(res.url);
}

/** The dataset (as the visitor may see it) and one of its resources; anything else is Not Found. */
async function datasetAndResource(ctx: WebContext, shown?: Promise<Dict>): Promise<{ pkg: Dict; res: Dict }> {
  let pkg: Dict;
  try {
    pkg = shown ? await shown : await ctx.call('package_show', { id: ctx.params.id });
  } catch (e) {
    // A private dataset's page does not say that it exists.
    if (e instanceof AuthorizationError || e instanceof ValidationError) throw new NotFoundError('Dataset not found');
    throw e;
  }
  const res = (pkg.resources as Dict[]).find((r) => r.id === ctx.params.resource_id);
  if (!res) throw new NotFoundError('Resource not found');
  return { pkg, res };
}

function viewTitle(ctx: WebContext, type: string): string {
  const key = `respage.view_type.${type}`;
  const text = ctx.t(key);
  return text === key ? type : text;
}

/** The resource's views; a data store table without a table view still gets the explorer, first. */
function viewsOf(ctx: WebContext, pkg: Dict, res: Dict, listed: Dict[]): ViewEntry[] {
  const known = (type: string) => type === 'datatables_view' || ctx.services.config.list('svc.plugins').includes(type);
  const download = fileUrl(pkg, res);
  const views: ViewEntry[] = listed.map((v) => {
    const { id, view_type, title, description, package_id: _p, resource_id: _r, ...config } = v;
    const own = config.image_url ?? config.page_url ?? config.video_url ?? config.audio_url;
    return {
      id,
      view_type,
      title: title || viewTitle(ctx, view_type),
      description: description ?? '',
      config,
      url: own ? safeUrl(own) : download,
      poster: safeUrl(config.poster_url),
      known: known(view_type),
    };
  });
  if (res.datastore_active && !views.some((v) => v.view_type === 'datatables_view'))
    views.unshift({
      id: '',
      view_type: 'datatables_view',
      title: ctx.t('explorer.title'),
      description: '',
      config: {},
      url: '',
      poster: '',
      known: true,
    });
  return views;
}

/** An uploaded text file small enough to show in the page, as text; undefined when it is not. */
async function smallUploadedText(ctx: WebContext, res: Dict): Promise<string | undefined> {
  if (res.url_type !== 'upload') return undefined;
  try {
    const bytes = await readSmallFile(ctx.services.config, res.id, TEXT_PREVIEW_BYTES);
    if (!bytes) return undefined;
    const text = bytes.toString('utf8');
    if ((res.format ?? '').toLowerCase() === 'json') {
      try {
        return JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        /* shown as it is */
      }
    }
    return text;
  } catch {
    return undefined;
  }
}

/** The loader's last load for editors (null: never loaded, or the loader is off, or not allowed). */
async function loaderStatus(ctx: WebContext, res: Dict): Promise<{ status: Dict | null; maySubmit: boolean }> {
  const registry = ctx.services.registry;
  if (!registry.has('xloader_status') || !(await ctx.may('xloader_status', { resource_id: res.id })))
    return { status: null, maySubmit: false };
  const maySubmit = res.url_type !== 'datastore' && !!res.url && (await ctx.may('xloader_submit', { resource_id: res.id }));
  try {
    const status: Dict = await ctx.call('xloader_status', { resource_id: res.id });
    const logs = (status.task_info?.logs ?? []) as Dict[];
    const stateKey = `loader.state.${status.status}`;
    const stateText = ctx.t(stateKey) === stateKey ? String(status.status) : ctx.t(stateKey);
    return {
      status: { ...status, stateText, logs: logs.slice(-LOG_LINES_SHOWN), hiddenLogs: Math.max(0, logs.length - LOG_LINES_SHOWN) },
      maySubmit,
    };
  } catch (e) {
    if (e instanceof NotFoundError) return { status: null, maySubmit };
    throw e;
  }
}

/** Fields of a dataset type's resource schema, shown by their labels in schema order (the other keys after them). */
function resourceFieldRows(ctx: WebContext, pkg: Dict, res: Dict): { custom: DisplayRow[]; extras: { key: string; value: string }[] } {
  const schema = schemaOf(ctx, pkg.type);
  if (!schema) return { custom: [], extras: extraFields(res) };
  const own = schema.resource_fields.filter((f) => !SHOWN_KEYS.has(f.field_name));
  const custom = displayRows(own, res, { lang: uiLanguage(ctx) }, new Set());
  const named = new Set(schema.resource_fields.map((f) => f.field_name));
  return { custom, extras: extraFields(res).filter((e) => !named.has(e.key)) };
}

function extraFields(res: Dict): { key: string; value: string }[] {
  return Object.entries(res)
    .filter(
      ([k, v]) => !SHOWN_KEYS.has(k) && v !== null && v !== undefined && v !== '' && !(typeof v === 'object' && !Object.keys(v).length),
    )
    .map(([key, value]) => ({ key, value: typeof value === 'object' ? JSON.stringify(value) : String(value) }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

export function resourcePages(web: WebRouter): void {
  web.get('/dataset/:id/resource/:resource_id', async (ctx) => {
    // The dataset and the resource's views at once; the views count only once the dataset shows
    // the resource (its reading rules are the dataset's).
    const shown = ctx.call('package_show', { id: ctx.params.id });
    const listing: Promise<Dict[]> = ctx.services.registry.has('resource_view_list')
      ? ctx.call('resource_view_list', { id: ctx.params.resource_id })
      : Promise.resolve([]);
    listing.catch(() => undefined);
    const { pkg, res } = await datasetAndResource(ctx, shown);
    const path = resourcePath(pkg, res.id);
    const views = viewsOf(ctx, pkg, res, await listing);
    const wanted = typeof ctx.query.view_id === 'string' ? ctx.query.view_id : '';
    const view = views.find((v) => v.id === wanted) ?? views[0];
    const datastore = !!res.datastore_active && ctx.services.registry.has('datastore_search');
    let explorer = null as Explorer | null;
    let fields: ReturnType<typeof dictionaryOf> = [];
    let text: string | undefined;
    const work: Promise<unknown>[] = [];
    if (datastore && view?.view_type === 'datatables_view')
      work.push(
        loadExplorer(ctx, res.id, { id: view.id || undefined, ...view.config }, path).then((e) => {
          explorer = e;
        }),
      );
    else if (datastore)
      // Only the data dictionary: the fields of an empty page.
      work.push(
        ctx
          .call('datastore_search', { resource_id: res.id, limit: 0, include_total: false })
          .then((r: Dict) => {
            fields = dictionaryOf(r.fields);
          })
          .catch((e) => {
            if (!(e instanceof NotFoundError)) throw e;
          }),
      );
    let chart: Dict | null = null;
    if (datastore && view?.view_type === 'chart' && view.id && view.known)
      work.push(
        ctx.call('chart_view_data', { id: view.id }).then(
          (d: Dict) => {
            chart = chartFigure(d as Parameters<typeof chartFigure>[0], view.title, `chart-${view.id}`);
          },
          (e) => {
            if (!(e instanceof ValidationError || e instanceof NotFoundError)) throw e;
            chart = { error: e instanceof ValidationError ? Object.values(e.errors).flat().join(' ') : e.message };
          },
        ),
      );
    let map: Dict | null = null;
    if (view?.view_type === 'map' && view.id && view.known)
      work.push(
        mapFigure(ctx, view).then((m) => {
          map = m;
        }),
      );
    if (view?.view_type === 'text_view')
      work.push(
        smallUploadedText(ctx, res).then((t) => {
          text = t;
        }),
      );
    const [loader, mayEdit] = await Promise.all([loaderStatus(ctx, res), ctx.may('resource_update', { id: res.id }), Promise.all(work)]);
    const download = fileUrl(pkg, res);
    return ctx.render('resource/read.njk', {
      pkg,
      res,
      path,
      views,
      view,
      explorer,
      chart,
      map,
      dictionary: explorer?.dictionary ?? fields,
      text_content: text ?? null,
      download_url: download,
      is_upload: res.url_type === 'upload',
      dumps: datastore ? dumpLinks(res.id, explorer?.state ?? null, ctx.t) : [],
      loader,
      may_edit: mayEdit,
      ...resourceFieldRows(ctx, pkg, res),
    });
  });

  web.post('/dataset/:id/resource/:resource_id/submit', async (ctx) => {
    const { pkg, res } = await datasetAndResource(ctx);
    const back = resourcePath(pkg, res.id);
    if (!ctx.services.registry.has('xloader_submit')) throw new NotFoundError('The loader is not enabled');
    try {
      await ctx.call('xloader_submit', { resource_id: res.id, ignore_hash: true });
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const message = Object.values(e.errors)
        .flat()
        .filter((m) => typeof m === 'string')
        .join(' ');
      return ctx.redirect(back, { kind: 'error', text: ctx.t('loader.submit_failed', { message }) });
    }
    return ctx.redirect(back, { kind: 'success', text: ctx.t('loader.submitted') });
  });
}
