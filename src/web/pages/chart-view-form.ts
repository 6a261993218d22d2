// The edit form of a chart view (CKAN's /dataset/{id}/resource/{resource_id}/edit_view/{view_id}):
// the columns, aggregation and kind of chart, with a preview of the chart as configured. The
// preview is drawn on the server: a "Preview" button posts the form and the page comes back with
// it, and with JavaScript (js/chart-form.js) the preview address gives the figure alone as the
// options change.
import { NotFoundError, ValidationError } from '../../errors.ts';
import { chartFigure } from '../../views/chart-svg.ts';
import { AGGREGATES, CHART_KINDS } from '../../views/chart-config.ts';
import type { WebContext, WebRouter } from '../router.ts';
import { forbidden } from './manage-forms.ts';

type Dict = Record<string, any>;
const OPTIONS = ['x', 'y', 'group_by', 'aggregate', 'chart'] as const;

/** The dataset, resource and chart view of the address, when the visitor may edit the view. */
async function chartView(ctx: WebContext): Promise<{ pkg: Dict; res: Dict; view: Dict } | { denied: ReturnType<typeof forbidden> }> {
  const pkg: Dict = await ctx.call('package_show', { id: ctx.params.id });
  const res = (pkg.resources as Dict[]).find((r) => r.id === ctx.params.resource_id);
  const view: Dict | null = res ? await ctx.call('resource_view_show', { id: ctx.params.view_id }).catch(() => null) : null;
  if (!res || !view || view.resource_id !== res.id || view.view_type !== 'chart') throw new NotFoundError('Resource view not found');
  if (!(await ctx.may('resource_view_update', { id: view.id }))) return { denied: forbidden(ctx) };
  return { pkg, res, view };
}

const text = (v: unknown): string => (Array.isArray(v) ? String(v[0] ?? '') : typeof v === 'string' ? v : '');
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v ? [v] : []);

/** The options of a chart as the form or the query gives them. */
function optionsOf(source: Record<string, unknown>): Dict {
  return {
    x: text(source.x),
    y: list(source.y),
    group_by: text(source.group_by),
    aggregate: text(source.aggregate),
    chart: text(source.chart),
  };
}

/** The figure of the chart with these options, or the errors naming the options. */
async function preview(ctx: WebContext, view: Dict, options: Dict): Promise<{ chart?: Dict; errors?: Record<string, string[]> }> {
  // An empty group-by is "none"; other empty options keep the saved ones.
  const given: Dict = { group_by: options.group_by };
  for (const k of ['x', 'y', 'aggregate', 'chart']) if (options[k].length) given[k] = options[k];
  try {
    const data = await ctx.call('chart_view_data', { id: view.id, ...given });
    return { chart: chartFigure(data, view.title, `chart-preview-${view.id}`) };
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const errors: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(e.errors)) if (Array.isArray(v)) errors[k] = v.map(String);
    return { errors };
  }
}

async function renderForm(ctx: WebContext, found: { pkg: Dict; res: Dict; view: Dict }, form: Dict, errors?: Record<string, string[]>) {
  const { pkg, res, view } = found;
  const fields: Dict[] = (await ctx.call('datastore_search', { resource_id: res.id, limit: 0, include_total: false })).fields;
  const shown = await preview(ctx, view, optionsOf(form));
  const allErrors = { ...shown.errors, ...errors };
  return ctx.render(
    'views/chart-form.njk',
    {
      pkg,
      res,
      view,
      form,
      columns: fields.filter((f) => f.id !== '_id').map((f) => ({ value: f.id, label: `${f.id} (${f.type})` })),
      aggregates: AGGREGATES.map((a) => ({ value: a, label: ctx.t(`chart.aggregate.${a}`) })),
      kinds: CHART_KINDS.map((k) => ({ value: k, label: ctx.t(`chart.kind.${k}`) })),
      chart: shown.chart ?? null,
      errors: Object.keys(allErrors).length ? allErrors : null,
    },
    Object.keys(allErrors).length ? 400 : 200,
  );
}

export function chartViewFormPages(web: WebRouter): void {
  const path = '/dataset/:id/resource/:resource_id/edit_view/:view_id';
  web.get(path, async (ctx) => {
    const found = await chartView(ctx);
    if ('denied' in found) return found.denied;
    const { view } = found;
    const form: Dict = { title: view.title ?? '', description: view.description ?? '', ...optionsOf(view) };
    if (!form.group_by) form.group_by = '';
    return renderForm(ctx, found, form);
  });

  web.post(path, async (ctx) => {
    const found = await chartView(ctx);
    if ('denied' in found) return found.denied;
    const form: Dict = { title: text(ctx.form.title), description: text(ctx.form.description), ...optionsOf(ctx.form) };
    if (ctx.form.preview !== undefined) return renderForm(ctx, found, form);
    const { pkg, res, view } = found;
    try {
      const options = Object.fromEntries(OPTIONS.map((k) => [k, form[k]]));
      await ctx.call('resource_view_update', { id: view.id, title: form.title, description: form.description, ...options });
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      return renderForm(ctx, found, form, e.errors as Record<string, string[]>);
    }
    return ctx.redirect(`/dataset/${pkg.name}/resource/${res.id}?view_id=${view.id}`, { kind: 'success', text: ctx.t('chart.saved') });
  });

  // The preview alone (for js/chart-form.js): the figure, or the errors naming the options (status 409).
  web.get(`${path}/preview`, async (ctx) => {
    const found = await chartView(ctx);
    if ('denied' in found) return found.denied;
    const shown = await preview(ctx, found.view, optionsOf(ctx.query));
    return ctx.render(
      'views/chart-preview.njk',
      { view: found.view, chart: shown.chart ?? null, errors: shown.errors ?? null },
      shown.errors ? 409 : 200,
    );
  });
}
