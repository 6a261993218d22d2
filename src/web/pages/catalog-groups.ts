// Organization and group pages (the same pages under /organization and /group): the list, the
// page of one (its datasets searched with facets and paging), about, activity stream, followers.
import type { WebContext, WebRouter } from '../router.ts';
import { activityPage, amFollowing, hasAction, safeLink, showOr404 } from './catalog-common.ts';
import { pageNumber, queryValue, quoteTerm, runSearch } from './catalog-search.ts';
import { displayRows } from '../scheming/display.ts';
import { CLASSIC_GROUP_FIELDS, groupSchemaOf, uiLanguage } from './manage-scheming.ts';

type Kind = 'organization' | 'group';
type Dict = Record<string, any>;

const LIST_PAGE = 20;
const LIST_SORTS = [
  { value: 'title asc', key: 'catalog.groups.sort.title_asc' },
  { value: 'title desc', key: 'catalog.groups.sort.title_desc' },
  { value: 'package_count desc', key: 'catalog.groups.sort.datasets' },
];

/** An organization or group the visitor may see, else 404. */
async function readGroup(ctx: WebContext, kind: Kind): Promise<Dict> {
  const group = await showOr404<Dict>(ctx, `${kind}_show`, {
    id: ctx.params.name,
    include_datasets: false,
    include_users: false,
    include_extras: true,
    include_followers: true,
    include_groups: false,
    include_tags: false,
  });
  return { ...group, image_link: safeLink(group.image_display_url || group.image_url) };
}

/** The buttons of an organization's or group's pages the visitor may use, and its follow state. */
async function groupTools(ctx: WebContext, kind: Kind, group: Dict) {
  const [following, mayEdit, mayMembers] = await Promise.all([
    amFollowing(ctx, 'group', group.id),
    ctx.user ? ctx.may(`${kind}_update`, { id: group.id }) : false,
    ctx.user ? ctx.may(`${kind}_member_create`, { id: group.id }) : false,
  ]);
  return { following, may_edit: mayEdit, may_members: mayMembers, has_activity: hasAction(ctx, `${kind}_activity_list`) };
}

function kindPages(web: WebRouter, kind: Kind): void {
  const base = `/${kind}`;

  web.get(base, async (ctx) => {
    const q = queryValue(ctx.query, 'q').trim();
    const requested = queryValue(ctx.query, 'sort');
    const sort = LIST_SORTS.some((s) => s.value === requested) ? requested : LIST_SORTS[0].value;
    const page = pageNumber(ctx.query);
    const [names, groups, mayCreate] = await Promise.all([
      ctx.call<string[]>(`${kind}_list`, { ...(q ? { q } : {}) }),
      ctx.call<Dict[]>(`${kind}_list`, {
        ...(q ? { q } : {}),
        all_fields: true,
        sort,
        limit: LIST_PAGE,
        offset: (page - 1) * LIST_PAGE,
      }),
      ctx.user ? ctx.may(`${kind}_create`, {}) : false,
    ]);
    return ctx.render('catalog/group-list.njk', {
      kind,
      kind_key: `catalog.${kind}`,
      q,
      sort,
      sort_options: LIST_SORTS.map((s) => ({ value: s.value, label: ctx.t(s.key) })),
      count: names.length,
      groups: groups.map((g) => ({ ...g, image_link: safeLink(g.image_display_url || g.image_url) })),
      page,
      pages: Math.ceil(names.length / LIST_PAGE),
      params: { q, sort: sort === LIST_SORTS[0].value ? '' : sort },
      may_create: mayCreate,
    });
  });

  web.get(`${base}/:name`, async (ctx) => {
    const group = await readGroup(ctx, kind);
    const path = `${base}/${encodeURIComponent(group.name)}`;
    const [{ view, status }, tools] = await Promise.all([
      runSearch(ctx, {
        path,
        fq: kind === 'organization' ? `owner_org:${quoteTerm(group.id)}` : `groups:${quoteTerm(group.name)}`,
        omitFacets: [kind === 'organization' ? 'organization' : 'groups'],
      }),
      groupTools(ctx, kind, group),
    ]);
    const mayAddDataset = kind === 'organization' && ctx.user ? await ctx.may('package_create', { owner_org: group.id }) : false;
    return ctx.render(
      'catalog/group.njk',
      { kind, kind_key: `catalog.${kind}`, group, search: view, ...tools, may_add_dataset: mayAddDataset },
      status,
    );
  });

  web.get(`${base}/about/:name`, async (ctx) => {
    const group = await readGroup(ctx, kind);
    const schema = groupSchemaOf(ctx, kind);
    // A custom schema's fields by their labels, after the description.
    const custom = schema ? displayRows(schema.fields, group, { lang: uiLanguage(ctx) }, CLASSIC_GROUP_FIELDS) : [];
    return ctx.render('catalog/group-about.njk', {
      kind,
      kind_key: `catalog.${kind}`,
      group,
      custom,
      ...(await groupTools(ctx, kind, group)),
    });
  });

  web.get(`${base}/activity/:name`, async (ctx) => {
    const group = await readGroup(ctx, kind);
    const stream = await activityPage(ctx, `${kind}_activity_list`, group.id, `${base}/activity/${encodeURIComponent(group.name)}`);
    return ctx.render('catalog/group-activity.njk', {
      kind,
      kind_key: `catalog.${kind}`,
      group,
      stream,
      ...(await groupTools(ctx, kind, group)),
    });
  });

  web.get(`${base}/followers/:name`, async (ctx) => {
    const group = await readGroup(ctx, kind);
    const followers = await ctx.call<Dict[]>(`${kind}_follower_list`, { id: group.id });
    return ctx.render('catalog/group-followers.njk', {
      kind,
      kind_key: `catalog.${kind}`,
      group,
      followers,
      ...(await groupTools(ctx, kind, group)),
    });
  });
}

export function groupPages(web: WebRouter): void {
  kindPages(web, 'organization');
  kindPages(web, 'group');
}
