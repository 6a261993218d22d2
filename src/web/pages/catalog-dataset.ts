// The dataset search page and a dataset's pages: the dataset (metadata, resources, tags,
// organization, licence, followers, the plugins' JSON-LD), its groups, activity stream and followers.
import { NotFoundError, ValidationError } from '../../errors.ts';
import { datasetMap } from './map-figures.ts';
import type { WebContext, WebRouter } from '../router.ts';
import { pageJsonLd } from '../json-ld.ts';
import { activityPage, amFollowing, hasAction, safeLink, showOr404, siteUrl } from './catalog-common.ts';
import { datasetHeadLinks } from '../head-links.ts';
import { quoteTerm, runSearch } from './catalog-search.ts';
import { displayRows } from '../scheming/display.ts';
import { choiceFacets } from '../scheming/facets.ts';
import { displayLanguages, helperChoices, rootOf, schemaOf, uiLanguage } from './manage-scheming.ts';

type Dict = Record<string, any>;

/** A dataset the visitor may read, else 404. */
const readDataset = (ctx: WebContext) => showOr404<Dict>(ctx, 'package_show', { id: ctx.params.name });

/** The extra rows of the "additional information" table. */
function infoRows(pkg: Dict): { key: string; label?: string; value: string; href?: string | null }[] {
  const rows: { key: string; label?: string; value: string; href?: string | null }[] = [];
  if (pkg.url) rows.push({ key: 'catalog.dataset.info.source', value: pkg.url, href: safeLink(pkg.url) });
  for (const who of ['author', 'maintainer'] as const) {
    const name = pkg[who] || pkg[`${who}_email`];
    const email = pkg[`${who}_email`];
    if (name) rows.push({ key: `catalog.dataset.info.${who}`, value: name, href: email ? safeLink(`mailto:${email}`) : null });
  }
  if (pkg.version) rows.push({ key: 'catalog.dataset.info.version', value: pkg.version });
  return rows;
}

export function datasetPages(web: WebRouter): void {
  web.get('/dataset', async (ctx) => {
    const type = ctx.datasetType;
    const schema = schemaOf(ctx, type);
    // With custom schemas, each type's search page shows its own datasets (as CKAN's /<type> pages do).
    const { view, status } = await runSearch(ctx, {
      path: rootOf(ctx, type),
      ...(ctx.services.scheming ? { fq: `dataset_type:${quoteTerm(type)}` } : {}),
      ...(schema
        ? { extraFacets: choiceFacets(schema.dataset_fields, uiLanguage(ctx), await helperChoices(ctx, schema.dataset_fields)) }
        : {}),
    });
    return ctx.render('catalog/search.njk', { search: view, may_create: ctx.user ? await ctx.may('package_create', {}) : false }, status);
  });

  web.get('/dataset/:name', async (ctx) => {
    const pkg = await readDataset(ctx);
    const [followers, following, mayEdit, mayDelete, jsonld] = await Promise.all([
      ctx.call<number>('dataset_follower_count', { id: pkg.id }),
      amFollowing(ctx, 'dataset', pkg.id),
      ctx.user ? ctx.may('package_update', { id: pkg.id }) : false,
      ctx.user ? ctx.may('package_delete', { id: pkg.id }) : false,
      pageJsonLd(ctx.services, ctx.call, { page: 'dataset', pkg }),
    ]);
    const schema = schemaOf(ctx, pkg.type);
    const root = rootOf(ctx, pkg.type);
    return ctx.render('catalog/dataset.njk', {
      pkg,
      resources: (pkg.resources ?? []).map((r: Dict) => ({ ...r, link: safeLink(r.url) })),
      // A custom schema's fields replace the usual rows (source, author, maintainer, version are fields of it too).
      info: schema ? [] : infoRows(pkg),
      custom: schema
        ? displayRows(schema.dataset_fields, pkg, {
            ...displayLanguages(ctx),
            helperChoices: await helperChoices(ctx, schema.dataset_fields),
          })
        : [],
      license_link: safeLink(pkg.license_url),
      followers,
      following,
      may_edit: mayEdit,
      may_delete: mayDelete,
      has_activity: hasAction(ctx, 'package_activity_list'),
      head_links: datasetHeadLinks(ctx.services, pkg),
      jsonld,
      spatial_map: datasetMap(ctx, pkg),
      canonical: `${siteUrl(ctx)}${root}/${encodeURIComponent(pkg.name)}`,
    });
  });

  web.get('/dataset/groups/:name', async (ctx) => {
    const pkg = await readDataset(ctx);
    // the groups the visitor manages: those the dataset may be added to or removed from
    const managed = ctx.user && (await ctx.may('package_update', { id: pkg.id })) ? await ctx.call<Dict[]>('group_list_authz', {}) : [];
    const inGroups = new Set((pkg.groups ?? []).map((g: Dict) => g.id));
    const managedIds = new Set(managed.map((g) => g.id));
    return ctx.render('catalog/dataset-groups.njk', {
      pkg,
      groups: (pkg.groups ?? []).map((g: Dict) => ({ ...g, removable: managedIds.has(g.id) })),
      addable: managed.filter((g) => !inGroups.has(g.id)),
      has_activity: hasAction(ctx, 'package_activity_list'),
    });
  });

  web.post('/dataset/groups/:name', async (ctx) => {
    const pkg = await readDataset(ctx);
    const back = `${rootOf(ctx, pkg.type)}/groups/${encodeURIComponent(pkg.name)}`;
    const added = typeof ctx.form.group_added === 'string' ? ctx.form.group_added : '';
    const removed = typeof ctx.form.group_removed === 'string' ? ctx.form.group_removed : '';
    if (!added && !removed) return ctx.redirect(back);
    const member = { id: added || removed, object: pkg.id, object_type: 'package' };
    try {
      if (added) await ctx.call('member_create', { ...member, capacity: 'public' });
      else await ctx.call('member_delete', member);
    } catch (e) {
      if (!(e instanceof ValidationError || e instanceof NotFoundError)) throw e;
      return ctx.redirect(back, { kind: 'error', text: e.message });
    }
    return ctx.redirect(back, { kind: 'success', text: ctx.t(added ? 'catalog.dataset.group_added' : 'catalog.dataset.group_removed') });
  });

  web.get('/dataset/activity/:name', async (ctx) => {
    const pkg = await readDataset(ctx);
    const stream = await activityPage(
      ctx,
      'package_activity_list',
      pkg.id,
      `${rootOf(ctx, pkg.type)}/activity/${encodeURIComponent(pkg.name)}`,
    );
    return ctx.render('catalog/dataset-activity.njk', { pkg, stream, has_activity: true });
  });

  web.get('/dataset/followers/:name', async (ctx) => {
    const pkg = await readDataset(ctx);
    const followers = await ctx.call<Dict[]>('dataset_follower_list', { id: pkg.id });
    return ctx.render('catalog/dataset-followers.njk', { pkg, followers, has_activity: hasAction(ctx, 'package_activity_list') });
  });
}
