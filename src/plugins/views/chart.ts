// The chart view (view type `chart`): line, bar, scatter and area charts of a data store table's
// columns, aggregated in the database. Its options are checked against the table when the view
// is created or updated (columns picked when none are named), and chart_view_data gives the
// points a page renders.
import { Type } from '@sinclair/typebox';
import type { ActionContext, Services } from '../../actions/context.ts';
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import type { ViewType } from '../../actions/resource-view.ts';
import { canReadPackage, notAuthorized } from '../../auth/authz.ts';
import type { DatastoreBackend, DatastoreField } from '../../datastore/backend.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { findPackage } from '../../model/packages.ts';
import { findResource } from '../../model/resources.ts';
import { findView } from '../../model/resource-views.ts';
import { p } from '../../validation/params.ts';
import { AGGREGATES, CHART_KINDS, type ChartConfig, checkChartConfig } from '../../views/chart-config.ts';
import { cachedChartData } from '../../views/chart-cache.ts';
import { MAX_POINTS } from '../../views/chart-query.ts';

const backendOf = (services: Services) => services.plugins.datastore as DatastoreBackend | undefined;

/** The columns of the resource's table; a ValidationError naming resource_id when it has none. */
async function tableFields(services: Services, resourceId: string): Promise<DatastoreField[]> {
  const backend = backendOf(services);
  if (!backend || !(await backend.resource_exists(resourceId)))
    throw new ValidationError({ resource_id: ['The resource has no data store table to chart'] });
  // The columns as a search gives them (from the cache of table descriptions: no size or index lookups).
  return (await backend.search({ resource_id: resourceId, limit: 0, include_total: false })).fields;
}

export const chartViewType: ViewType = {
  name: 'chart',
  defaultTitle: 'Chart',
  requiresDatastore: true,
  options: {
    x: p.string('the column along the x axis (default: the first date column, else the first numeric one)').ignoreEmpty(),
    y: p.stringList('the columns plotted (numeric; default: the first numeric column that is not x)', { split: true }).maxItems(8),
    group_by: p.string('a column whose values split the rows into one series each (the 10 largest groups)').ignoreEmpty(),
    aggregate: p.enum(AGGREGATES, 'how the y values of the rows sharing an x value are combined').default('sum'),
    chart: p.enum(CHART_KINDS, 'the kind of chart').default('line'),
  },
  canView: (r) => r.datastore_active || r.url_type === 'datastore',
  async prepare(services, resourceId, options) {
    const fields = await tableFields(services, resourceId);
    const checked = checkChartConfig(options as Parameters<typeof checkChartConfig>[0], fields);
    // The points are computed now, so the first page showing the view finds them ready.
    await cachedChartData(backendOf(services)!, resourceId, checked, fields).catch(() => undefined);
    // Unset options are left out (not stored as nulls).
    const { group_by, ...rest } = checked;
    return { ...options, ...rest, ...(group_by !== undefined ? { group_by } : {}) };
  },
};

/** The view's dataset must be readable (as resource_view_show). */
export async function canReadView(ctx: ActionContext, prm: Record<string, any>): Promise<void> {
  const view = typeof prm.id === 'string' ? await findView(ctx.db, prm.id) : undefined;
  const resource = view ? await findResource(ctx.db, view.resource_id) : undefined;
  const pkg = resource ? await findPackage(ctx.db, resource.package_id) : undefined;
  if (pkg && !(await canReadPackage(ctx, pkg))) throw notAuthorized(ctx, 'read the views of this resource');
}

const chartDataSchema = Type.Object(
  {
    config: Type.Record(Type.String(), Type.Unknown()),
    xKind: Type.Union([Type.Literal('number'), Type.Literal('time'), Type.Literal('category')]),
    series: Type.Array(
      Type.Object({
        name: Type.String(),
        points: Type.Array(Type.Object({ x: Type.Union([Type.Number(), Type.String()]), y: Type.Union([Type.Number(), Type.Null()]) })),
      }),
    ),
    bucketed: Type.Boolean(),
    truncated: Type.Boolean(),
    groupsLeftOut: Type.Integer(),
  },
  { title: 'ChartData' },
);

export const chartActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'chart_view_data',
    sideEffectFree: true,
    auth: canReadView,
    description: `The points of a chart view, aggregated in the database from its data store table (at most ${MAX_POINTS}).`,
    params: {
      id: p.string('the id of the chart view').required(),
      // A preview (the view's edit form): options given here take the place of the saved ones.
      x: p.string('preview: the x column instead of the saved one').ignoreEmpty(),
      y: p.stringList('preview: the y columns instead of the saved ones', { split: true }).maxItems(8),
      group_by: p.string('preview: the group-by column instead of the saved one ("" for none)'),
      aggregate: p.enum(AGGREGATES, 'preview: the aggregation instead of the saved one'),
      chart: p.enum(CHART_KINDS, 'preview: the kind of chart instead of the saved one'),
    },
    returns: {
      description: 'the checked configuration, the x axis kind and the series of points',
      rtype: 'dictionary',
      schema: chartDataSchema,
    },
    handler: async (ctx, prm) => {
      const view = await findView(ctx.db, prm.id);
      const resource = view ? await findResource(ctx.db, view.resource_id) : undefined;
      if (!view || !resource || resource.state === 'deleted') throw new NotFoundError('Resource view not found');
      if (view.view_type !== 'chart') throw new ValidationError({ id: ['Not a chart view'] });
      const fields = await tableFields(ctx.services, resource.id);
      // Checked again: the table may have changed since the view was saved.
      const saved = view.config;
      const config: ChartConfig = checkChartConfig(
        {
          x: prm.x ?? (saved.x as string | undefined),
          y: prm.y ?? (saved.y as string[] | undefined),
          group_by: (prm.group_by ?? (saved.group_by as string | undefined)) || undefined,
          aggregate: prm.aggregate ?? (saved.aggregate as ChartConfig['aggregate']) ?? 'sum',
          chart: prm.chart ?? (saved.chart as ChartConfig['chart']) ?? 'line',
        },
        fields,
      );
      return cachedChartData(backendOf(ctx.services)!, resource.id, config, fields);
    },
  }),
];
