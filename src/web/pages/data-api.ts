// The "Data API" page of a data store resource (/dataset/<id>/resource/<id>/data-api): its
// endpoints and ready-to-copy calls with the real resource id and one of its real columns, as
// addresses and as code, with absolute addresses from svc.site_url. A page of its own, so it works
// without JavaScript.
import { NotFoundError } from '../../errors.ts';
import type { WebRouter } from '../router.ts';
import { showOr404, siteUrl } from './catalog-common.ts';
import { codeSnippets, exampleCalls, sampleColumn } from './data-api-examples.ts';

type Dict = Record<string, any>;

export function dataApiPages(web: WebRouter): void {
  web.get('/dataset/:id/resource/:resource_id/data-api', async (ctx) => {
    const pkg = await showOr404<Dict>(ctx, 'package_show', { id: ctx.params.id });
    const res = (pkg.resources ?? []).find((r: Dict) => r.id === ctx.params.resource_id);
    if (!res) throw new NotFoundError('resource');
    if (!res.datastore_active || !ctx.services.registry.has('datastore_search')) throw new NotFoundError('data store table');
    const table = await ctx.call<{ fields: Dict[]; records: Dict[] }>('datastore_search', {
      resource_id: res.id,
      limit: 1,
      include_total: false,
    });
    const base = siteUrl(ctx);
    const sql = ctx.services.registry.has('datastore_search_sql');
    const sample = sampleColumn(table.fields, table.records[0]);
    const examples = exampleCalls(base, res.id, sample, sql);
    // The code shows the search when there is one: it is the call people adapt.
    const shown = examples.find((e) => e.key === 'dataapi.example.search') ?? examples[0]!;
    return ctx.render('resource/data-api.njk', {
      pkg,
      res,
      path: `/dataset/${encodeURIComponent(pkg.name)}/resource/${encodeURIComponent(res.id)}`,
      base,
      endpoints: [
        { key: 'dataapi.endpoint.search', url: `${base}/api/3/action/datastore_search` },
        ...(sql ? [{ key: 'dataapi.endpoint.sql', url: `${base}/api/3/action/datastore_search_sql` }] : []),
        { key: 'dataapi.endpoint.info', url: `${base}/api/3/action/datastore_info` },
      ],
      examples,
      code: { example: shown, snippets: codeSnippets(base, shown, !!pkg.private) },
      sql_enabled: sql,
      private: !!pkg.private,
      docs_url: `${base}/api/3/docs`,
      help_url: `${base}/api/3/action/help_show?name=datastore_search`,
    });
  });
}
