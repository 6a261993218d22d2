// Atom feeds of recently created or updated datasets, at CKAN's addresses: /feeds/dataset.atom,
// /feeds/organization/<id>.atom, /feeds/group/<id>.atom, /feeds/tag/<id>.atom and
// /feeds/custom.atom (q, sort, and field=value filters as the search page). Feeds are what anyone
// may read: package_search without private datasets or drafts, whoever asks.
import { NotFoundError, ValidationError } from '../../errors.ts';
import { siteUrl } from '../../config/site-url.ts';
import type { WebContext, WebRouter } from '../router.ts';
import { queryString } from '../render.ts';
import { atomFeed, ATOM_TYPE, type FeedLinks } from '../feeds/atom.ts';
import { quoteTerm } from './catalog-search.ts';
import { typeRoot } from '../scheming/dataset-types.ts';
import { pageLocale } from '../locale.ts';

type Dict = Record<string, any>;
type Query = Record<string, string | string[]>;

/** Parameters of the custom feed that are not field filters (those starting with _ are ignored, as CKAN). */
const CUSTOM_OWN = new Set(['q', 'sort', 'page', 'ext_bbox']);
/** A field name of the query language. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,99}$/;

const first = (query: Query, key: string) => {
  const v = query[key];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};
const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]).filter((x) => x !== '');

/** The page asked for: a positive integer (1 when absent), else a 400 naming the parameter. */
function feedPage(query: Query): number {
  const raw = first(query, 'page');
  if (raw === '') return 1;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1)
    throw new ValidationError({ page: ['page parameter must be a positive integer'] }, 'page parameter must be a positive integer');
  return n;
}

interface FeedRequest {
  /** The feed's path (/feeds/tag/water.atom). */
  path: string;
  /** The feed's own query parameters, kept in its paging links (custom feeds: the search). */
  params: Dict;
  /** The search page's query showing the same datasets. */
  searchParams: Dict;
  title: string;
  subtitle: string;
  /** The path its id is made from (stable: an organization's or group's name as CKAN). */
  idPath: string;
  search: { q?: string; fq_list?: string[]; sort?: string; ext_bbox?: string };
}

async function sendFeed(ctx: WebContext, feed: FeedRequest) {
  const { config } = ctx.services;
  const base = siteUrl(config);
  const page = feedPage(ctx.query);
  const limit = config.int('svc.feeds.limit');
  const result = await ctx.call<{ count: number; results: Dict[] }>('package_search', {
    ...feed.search,
    sort: feed.search.sort || 'metadata_modified desc',
    rows: limit,
    start: (page - 1) * limit,
    include_private: false,
    include_drafts: false,
  });
  const last = Math.max(1, Math.ceil(result.count / limit));
  // A feed asked for in a language (/fr/feeds/...) links to its pages and the search page in it; its id has none.
  const { prefix } = pageLocale(config, ctx.request.originalUrl, undefined, undefined);
  const at = (p: number | null) => `${base}${prefix}${feed.path}${queryString(feed.params, { page: p && p > 1 ? p : null })}`;
  const links: FeedLinks = {
    alternate: `${base}${prefix}/dataset${queryString(feed.searchParams)}`,
    self: at(page),
    first: at(1),
    last: at(last),
    prev: page > 1 ? at(Math.min(page - 1, last)) : null,
    next: page < last ? at(page + 1) : null,
  };
  const xml = atomFeed(
    config,
    base,
    { title: feed.title, subtitle: feed.subtitle, idPath: feed.idPath, links, lang: ctx.locale },
    result.results,
    {
      page: (pkg) => `${base}${typeRoot(ctx.services, pkg.type)}/${encodeURIComponent(pkg.name)}`,
      api: (pkg) => `${base}/api/3/action/package_show?id=${encodeURIComponent(pkg.id)}`,
    },
  );
  // private: the answer may set the visitor's cookies (the anonymous CSRF basis), which no shared cache may keep.
  return ctx.reply.code(200).type(`${ATOM_TYPE}; charset=utf-8`).header('cache-control', 'private, max-age=60').send(xml);
}

/** The id in /feeds/<kind>/<id>.atom (Fastify keeps the suffix in the parameter). */
function feedId(ctx: WebContext): string {
  const raw = ctx.params.file ?? '';
  if (!raw.endsWith('.atom') || raw.length === 5) throw new NotFoundError('feed');
  return raw.slice(0, -5);
}

/** A feed of an organization or a group: 404 when the visitor may not see it. */
async function groupFeed(ctx: WebContext, kind: 'organization' | 'group') {
  const id = feedId(ctx);
  let group: Dict;
  try {
    group = await ctx.call(`${kind}_show`, {
      id,
      include_datasets: false,
      include_users: false,
      include_extras: false,
      include_followers: false,
    });
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    throw new NotFoundError(kind);
  }
  const site = siteTitle(ctx);
  const title = group.title || group.name;
  const field = kind === 'organization' ? 'organization' : 'groups';
  return sendFeed(ctx, {
    path: `/feeds/${kind}/${encodeURIComponent(group.name)}.atom`,
    params: {},
    searchParams: { [field]: group.name },
    title: ctx.t(`feeds.title.${kind}`, { site, name: title }),
    subtitle: ctx.t(`feeds.subtitle.${kind}`, { site, name: title }),
    idPath: `/feeds/${kind}/${group.name}.atom`,
    search: { fq_list: [kind === 'organization' ? `owner_org:${quoteTerm(group.id)}` : `groups:${quoteTerm(group.name)}`] },
  });
}

const siteTitle = (ctx: WebContext) => ctx.services.config.str('svc.site_title') || ctx.t('site.default_title');

export function feedPages(web: WebRouter): void {
  web.get('/feeds/dataset.atom', async (ctx) => {
    const site = siteTitle(ctx);
    return sendFeed(ctx, {
      path: '/feeds/dataset.atom',
      params: {},
      searchParams: {},
      title: site,
      subtitle: ctx.t('feeds.subtitle.all', { site }),
      idPath: '/feeds/dataset.atom',
      search: {},
    });
  });

  web.get('/feeds/organization/:file', (ctx) => groupFeed(ctx, 'organization'));
  web.get('/feeds/group/:file', (ctx) => groupFeed(ctx, 'group'));

  web.get('/feeds/tag/:file', async (ctx) => {
    const name = feedId(ctx);
    try {
      await ctx.call('tag_show', { id: name });
    } catch (e) {
      if (e instanceof ValidationError) throw e;
      throw new NotFoundError('tag');
    }
    const site = siteTitle(ctx);
    return sendFeed(ctx, {
      path: `/feeds/tag/${encodeURIComponent(name)}.atom`,
      params: {},
      searchParams: { tags: name },
      title: ctx.t('feeds.title.tag', { site, name }),
      subtitle: ctx.t('feeds.subtitle.tag', { site, name }),
      idPath: `/feeds/tag/${name}.atom`,
      search: { fq_list: [`tags:${quoteTerm(name)}`] },
    });
  });

  web.get('/feeds/custom.atom', async (ctx) => {
    const q = first(ctx.query, 'q').trim();
    const sort = first(ctx.query, 'sort').trim();
    const filters: Dict = {};
    const fq: string[] = [];
    for (const [key, value] of Object.entries(ctx.query)) {
      if (CUSTOM_OWN.has(key) || key.startsWith('_')) continue;
      const values = [...new Set(list(value))];
      if (!values.length) continue;
      if (!FIELD_NAME.test(key))
        throw new ValidationError({ [key]: ['Not a field name the search knows'] }, `"${key}" is not a search field`);
      filters[key] = values;
      for (const v of values) fq.push(`${key}:${quoteTerm(v)}`);
    }
    const bbox = first(ctx.query, 'ext_bbox').trim();
    const site = siteTitle(ctx);
    const params = { q, sort, ...filters, ...(bbox ? { ext_bbox: bbox } : {}) };
    return sendFeed(ctx, {
      path: '/feeds/custom.atom',
      params,
      searchParams: params,
      title: ctx.t('feeds.title.custom', { site }),
      subtitle: ctx.t('feeds.subtitle.custom', { site, q }),
      idPath: `/feeds/custom.atom${queryString({ q, ...filters })}`,
      search: {
        ...(q ? { q } : {}),
        ...(fq.length ? { fq_list: fq } : {}),
        ...(sort ? { sort } : {}),
        ...(bbox ? { ext_bbox: bbox } : {}),
      },
    });
  });
}
