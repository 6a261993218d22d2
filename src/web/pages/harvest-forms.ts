// Creating and editing a harvest source (/harvest/new, /harvest/edit/{id}): the form of
// ckanext-harvest (url, title, name, type, frequency, JSON config, organization, description),
// saved through harvest_source_create / harvest_source_update, their errors next to the fields.
import type { WebContext, WebRouter } from '../router.ts';
import { attempt, enc, field, forbidden, otherMessages, type FieldMessages } from './manage-forms.ts';
import { showOr404 } from './catalog-common.ts';

type Dict = Record<string, any>;
const FIELDS = ['url', 'title', 'name', 'source_type', 'frequency', 'config', 'owner_org', 'notes'] as const;
const SOURCE_TYPES = ['ckan', 'dcat_rdf', 'dcat_json'];
const FREQUENCIES = ['MANUAL', 'HOURLY', 'DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'ALWAYS'];

/** The form's values from a stored source (config as indented JSON) or from a posted form. */
function formValues(source: Dict, fromSource: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of FIELDS) {
    const v = source[k];
    if (!fromSource) out[k] = field(source, k);
    else if (k === 'config') out[k] = typeof v === 'string' ? v : v && Object.keys(v).length ? JSON.stringify(v, null, 2) : '';
    else out[k] = v === undefined || v === null ? '' : String(v);
  }
  if (!out.source_type) out.source_type = 'ckan';
  if (!out.frequency) out.frequency = 'MANUAL';
  return out;
}

/** The source dict the form describes (config sent as its text: the action checks the JSON). */
function sourceData(ctx: WebContext): Dict {
  const data: Dict = {};
  for (const k of FIELDS) data[k] = k === 'notes' || k === 'config' ? field(ctx.form, k) : field(ctx.form, k).trim();
  if (!data.title) data.title = data.name;
  if (!data.config.trim()) data.config = '{}';
  return data;
}

/** Whether the visitor may run an action on this source (hides the buttons; the action decides again). */
export async function mayOn(ctx: WebContext, auth: string, data: Dict): Promise<boolean> {
  if (!ctx.user) return false;
  try {
    return await ctx.may(auth, data);
  } catch {
    return false;
  }
}

/** Whether the visitor may add a source: to one of the organizations they manage (sysadmins: any). */
export async function mayCreate(ctx: WebContext): Promise<boolean> {
  if (!ctx.user) return false;
  const orgs = await ctx.call<Dict[]>('organization_list_for_user', { permission: 'manage_group' });
  return !!orgs[0] && (await mayOn(ctx, 'harvest_source_create', { owner_org: orgs[0].id }));
}

async function renderForm(ctx: WebContext, vars: { source?: Dict; form: Record<string, string>; errors?: FieldMessages }, status = 200) {
  const orgs = ctx.user ? await ctx.call<Dict[]>('organization_list_for_user', { permission: 'manage_group' }) : [];
  const organizations = orgs.map((o) => ({ value: o.id as string, label: (o.title || o.name) as string }));
  const current = vars.source?.owner_org;
  if (current && !organizations.some((o) => o.value === current)) organizations.push({ value: current, label: current });
  return ctx.render(
    'harvest/form.njk',
    {
      ...vars,
      mode: vars.source ? 'edit' : 'new',
      organizations,
      source_types: SOURCE_TYPES.map((v) => ({ value: v, label: ctx.t(`harvest.type.${v}`) })),
      frequencies: FREQUENCIES.map((v) => ({ value: v, label: ctx.t(`harvest.frequency.${v.toLowerCase()}`) })),
      summary: vars.errors ? otherMessages(vars.errors, FIELDS) : [],
    },
    status,
  );
}

export function harvestFormPages(web: WebRouter): void {
  web.get('/harvest/new', async (ctx) => {
    if (!(await mayCreate(ctx))) return forbidden(ctx);
    return renderForm(ctx, { form: formValues({}, false) });
  });

  web.post('/harvest/new', async (ctx) => {
    if (!(await mayCreate(ctx))) return forbidden(ctx);
    const result = await attempt(() => ctx.call<Dict>('harvest_source_create', sourceData(ctx)));
    if (!result.ok) return renderForm(ctx, { form: formValues(ctx.form, false), errors: result.errors }, 400);
    return ctx.redirect(`/harvest/${enc(result.value.name)}`, { kind: 'success', text: ctx.t('harvest.form.created') });
  });

  const editable = async (ctx: WebContext) => {
    const source = await showOr404<Dict>(ctx, 'harvest_source_show', { id: ctx.params.id });
    return ctx.user && (await ctx.may('harvest_source_update', { id: source.id })) ? source : null;
  };

  web.get('/harvest/edit/:id', async (ctx) => {
    const source = await editable(ctx);
    if (!source) return forbidden(ctx);
    return renderForm(ctx, { source, form: formValues(source, true) });
  });

  web.post('/harvest/edit/:id', async (ctx) => {
    const source = await editable(ctx);
    if (!source) return forbidden(ctx);
    const result = await attempt(() => ctx.call<Dict>('harvest_source_update', { ...sourceData(ctx), id: source.id }));
    if (!result.ok) return renderForm(ctx, { source, form: formValues(ctx.form, false), errors: result.errors }, 400);
    return ctx.redirect(`/harvest/${enc(result.value.name)}`, { kind: 'success', text: ctx.t('harvest.form.saved') });
  });
}
