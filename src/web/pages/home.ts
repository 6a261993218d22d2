// The home and about pages.
import type { WebRouter } from '../router.ts';

export function homePages(web: WebRouter): void {
  web.get('/', async (ctx) => {
    const [search, organizations, groups] = await Promise.all([
      ctx.call('package_search', { rows: 6, sort: 'metadata_modified desc' }),
      ctx.call('organization_list', { all_fields: true, sort: 'package_count desc', limit: 6 }),
      ctx.call('group_list', { all_fields: true, sort: 'package_count desc', limit: 6 }),
    ]);
    const [orgCount, groupCount] = await Promise.all([ctx.call<string[]>('organization_list', {}), ctx.call<string[]>('group_list', {})]);
    return ctx.render('home.njk', {
      recent: search.results,
      counts: { datasets: search.count, organizations: orgCount.length, groups: groupCount.length },
      organizations,
      groups,
    });
  });
  web.get('/about', async (ctx) => ctx.render('about.njk'));
}
