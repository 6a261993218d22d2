// Adding, editing and deleting a dataset's resources: a file upload (multipart, passed to
// resource_create / resource_update as the API takes it) or a link. The resource form is also the
// second stage of creating a dataset ("Finish" makes the draft active).
import type { WebContext, WebRouter } from '../router.ts';
import { attempt, enc, field, forbidden, otherMessages, uploadedFile, type FieldMessages } from './manage-forms.ts';
import { extraData, extraWidgets, groupAction, resourceExtras, rootOf } from './manage-scheming.ts';

const SHOWN = ['upload', 'url', 'name', 'description', 'format'];

/** Whether the loader plugin loads resources of this format into the data store. */
function loaderTakes(ctx: WebContext, format: unknown): boolean {
  const config = ctx.services.config;
  if (!config.list('svc.plugins').includes('loader') || typeof format !== 'string' || !format) return false;
  const formats = config.list('svc.loader.formats').map((f) => f.toLowerCase());
  return formats.includes(format.toLowerCase());
}

/** The dataset, when the visitor may add resources to it (else the 403 page; missing or private: 404). */
async function datasetFor(ctx: WebContext, authName: string, params: (pkg: Record<string, any>) => Record<string, unknown>) {
  const pkg = await ctx.call('package_show', { id: ctx.params.name });
  if (!(await ctx.may(authName, params(pkg)))) return { denied: forbidden(ctx) };
  return { pkg };
}

function resourceOf(pkg: Record<string, any>, id: string): Record<string, any> | undefined {
  return (pkg.resources as Record<string, any>[]).find((r) => r.id === id);
}

function formValues(source: Record<string, any>, fromResource: boolean) {
  const out: Record<string, string> = {};
  for (const k of ['name', 'description', 'format', 'url']) out[k] = fromResource ? String(source[k] ?? '') : field(source, k);
  // An uploaded file's URL is the download address: the link field starts empty.
  if (fromResource && source.url_type === 'upload') out.url = '';
  return out;
}

async function renderForm(
  ctx: WebContext,
  vars: { pkg: Record<string, any>; resource?: Record<string, any>; form: Record<string, string>; errors?: FieldMessages },
  status = 200,
) {
  const errors = vars.errors;
  const canDelete = vars.resource ? await ctx.may('resource_delete', { id: vars.resource.id }) : false;
  // A custom schema's resource fields beyond the classic ones, after them.
  const extras = resourceExtras(ctx, vars.pkg);
  const custom = extraWidgets(ctx, extras, vars.resource, errors);
  const shown = [...SHOWN, ...(extras?.fields.map((f) => f.field_name) ?? [])];
  return ctx.render(
    'manage/resource-form.njk',
    {
      ...vars,
      custom_fields: custom,
      mode: vars.resource ? 'edit' : 'new',
      stage: !vars.resource && vars.pkg.state === 'draft',
      summary: errors ? otherMessages(errors, shown) : [],
      can_delete: canDelete,
    },
    status,
  );
}

/** The resource dict a form describes; an upload takes the place of the link. */
function resourceData(ctx: WebContext, pkg: Record<string, any>, existing?: Record<string, any>): Record<string, unknown> {
  const file = uploadedFile(ctx, 'upload');
  const data: Record<string, unknown> = {
    ...extraData(ctx, resourceExtras(ctx, pkg)),
    name: field(ctx.form, 'name').trim(),
    description: field(ctx.form, 'description'),
  };
  const format = field(ctx.form, 'format').trim();
  if (format) data.format = format;
  else if (!existing) data.format = ''; // guessed by the action from the file name or URL
  const url = field(ctx.form, 'url').trim();
  if (!file) {
    if (existing?.url_type === 'upload') {
      // The file stays unless a link replaces it.
      if (url) Object.assign(data, { url, clear_upload: true });
    } else data.url = url;
  }
  return data;
}

function isEmpty(ctx: WebContext): boolean {
  return !ctx.files.upload && ['url', 'name', 'description', 'format'].every((k) => !field(ctx.form, k).trim());
}

export function resourceFormPages(web: WebRouter): void {
  web.get('/dataset/:name/resource/new', async (ctx) => {
    const { pkg, denied } = await datasetFor(ctx, 'resource_create', (p) => ({ package_id: p.id }));
    if (denied) return denied;
    return renderForm(ctx, { pkg, form: formValues({}, false) });
  });

  web.post('/dataset/:name/resource/new', async (ctx) => {
    const { pkg, denied } = await datasetFor(ctx, 'resource_create', (p) => ({ package_id: p.id }));
    if (denied) return denied;
    // "Add another" / "Remove" of a custom schema's repeating resource fields: the form again, values kept.
    if (resourceExtras(ctx, pkg) && groupAction(ctx.form)) return renderForm(ctx, { pkg, form: formValues(ctx.form, false) });
    const save = field(ctx.form, 'save');
    const finishing = pkg.state === 'draft' && save === 'go-metadata';
    uploadedFile(ctx, 'upload'); // an empty file input is no upload
    let created: Record<string, any> | undefined;
    if (finishing && isEmpty(ctx)) {
      // Finish without a new resource: allowed once the dataset has one (CKAN's create_on_ui_requires_resources).
      if (!pkg.resources.length)
        return renderForm(ctx, { pkg, form: formValues(ctx.form, false), errors: { message: [ctx.t('manage.resource.required')] } }, 400);
    } else {
      const data = { ...resourceData(ctx, pkg), package_id: pkg.id };
      const result = await attempt(() => ctx.call('resource_create', data));
      if (!result.ok) return renderForm(ctx, { pkg, form: formValues(ctx.form, false), errors: result.errors }, 400);
      created = result.value;
    }
    const base = `${rootOf(ctx, pkg.type)}/${enc(pkg.name)}`;
    if (finishing) await ctx.call('package_patch', { id: pkg.id, state: 'active' });
    if (save === 'again' && !finishing)
      return ctx.redirect(`${base}/resource/new`, { kind: 'success', text: ctx.t('manage.resource.added_another') });
    if (created && created.url_type === 'upload' && loaderTakes(ctx, created.format)) {
      const loading = ctx.services.config.bool('svc.loader.auto');
      return ctx.redirect(`${base}/resource/${enc(created.id)}`, {
        kind: 'success',
        text: ctx.t(loading ? 'manage.resource.uploaded_loading' : 'manage.resource.uploaded'),
      });
    }
    return ctx.redirect(base, { kind: 'success', text: ctx.t(finishing ? 'manage.dataset.created' : 'manage.resource.added') });
  });

  web.get('/dataset/:name/resource/:id/edit', async (ctx) => {
    const { pkg, denied } = await datasetFor(ctx, 'resource_update', () => ({ id: ctx.params.id }));
    if (denied) return denied;
    const resource = resourceOf(pkg, ctx.params.id);
    if (!resource) return notFound(ctx);
    return renderForm(ctx, { pkg, resource, form: formValues(resource, true) });
  });

  web.post('/dataset/:name/resource/:id/edit', async (ctx) => {
    const { pkg, denied } = await datasetFor(ctx, 'resource_update', () => ({ id: ctx.params.id }));
    if (denied) return denied;
    const resource = resourceOf(pkg, ctx.params.id);
    if (!resource) return notFound(ctx);
    if (resourceExtras(ctx, pkg) && groupAction(ctx.form)) return renderForm(ctx, { pkg, resource, form: formValues(ctx.form, false) });
    const data = { ...resourceData(ctx, pkg, resource), id: resource.id };
    const result = await attempt(() => ctx.call('resource_patch', data));
    if (!result.ok) return renderForm(ctx, { pkg, resource, form: formValues(ctx.form, false), errors: result.errors }, 400);
    const saved = result.value;
    const page = `${rootOf(ctx, pkg.type)}/${enc(pkg.name)}/resource/${enc(saved.id)}`;
    return ctx.redirect(page, { kind: 'success', text: ctx.t('manage.resource.saved') });
  });

  web.get('/dataset/:name/resource/:id/delete', async (ctx) => {
    const { pkg, denied } = await datasetFor(ctx, 'resource_delete', () => ({ id: ctx.params.id }));
    if (denied) return denied;
    const resource = resourceOf(pkg, ctx.params.id);
    if (!resource) return notFound(ctx);
    return ctx.render('manage/confirm.njk', {
      heading: ctx.t('manage.resource.delete_title'),
      question: ctx.t('manage.resource.delete_question', { name: resource.name || resource.id }),
      action: `${rootOf(ctx, pkg.type)}/${enc(pkg.name)}/resource/${enc(resource.id)}/delete`,
      cancel: `${rootOf(ctx, pkg.type)}/${enc(pkg.name)}/resource/${enc(resource.id)}`,
      submit: ctx.t('manage.delete'),
    });
  });

  web.post('/dataset/:name/resource/:id/delete', async (ctx) => {
    const pkg = await ctx.call('package_show', { id: ctx.params.name });
    const resource = resourceOf(pkg, ctx.params.id);
    if (!resource) return notFound(ctx);
    await ctx.call('resource_delete', { id: resource.id });
    return ctx.redirect(`${rootOf(ctx, pkg.type)}/${enc(pkg.name)}`, {
      kind: 'success',
      text: ctx.t('manage.resource.deleted', { name: resource.name || resource.id }),
    });
  });
}

function notFound(ctx: WebContext) {
  return ctx.render('errors/error.njk', { status: 404, title: ctx.t('error.404.title'), message: ctx.t('error.404.text') }, 404);
}
