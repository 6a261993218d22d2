// The home and about pages.
import type { WebRouter } from '../router.ts';
import { pageJsonLd } from '../json-ld.ts';

export function homePages(web: WebRouter): void {
  web.get('/', async (ctx) => {
    // The largest organizations and groups come from the search's facets (counts of what the
    // visitor may see, from the index) rather than from counting every group's datasets.
    const [search, orgNames, groupNames] = await Promise.all([
      ctx.call('package_search', {
        rows: 6,
        sort: 'metadata_modified desc',
        'facet.field': ['organization', 'groups'],
        'facet.limit': 6,
      }),
      ctx.call<string[]>('organization_list', {}),
      ctx.call<string[]>('group_list', {}),
    ]);
    const top = (field: string) =>
      (search.search_facets?.[field]?.items ?? []).map((i: { name: string; display_name: string; count: number }) => ({
        name: i.name,
        display_name: i.display_name,
        package_count: i.count,
      }));
    return ctx.render('home.njk', {
      recent: search.results,
      jsonld: await pageJsonLd(ctx.services, ctx.call, { page: 'home', datasets: search.results }),
      counts: { datasets: search.count, organizations: orgNames.length, groups: groupNames.length },
      organizations: top('organization'),
      groups: top('groups'),
    });
  });
  web.get('/about', async (ctx) => ctx.render('about.njk'));
}
