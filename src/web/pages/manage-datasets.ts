// Creating, editing and deleting datasets through forms. Creating has CKAN's two stages: the
// metadata form saves a draft, then the resource form adds data and "Finish" makes it active.
import type { WebContext, WebRouter } from '../router.ts';
import { attempt, enc, field, forbidden, otherMessages, type FieldMessages } from './manage-forms.ts';
import {
  rootOf,
  schemaEditForm,
  schemaEditPost,
  schemaNewForm,
  schemaNewPost,
  schemaOf,
  schemaPageForm,
  schemaPagePost,
} from './manage-scheming.ts';

const TEXT_FIELDS = [
  'title',
  'name',
  'notes',
  'tag_string',
  'license_id',
  'author',
  'author_email',
  'maintainer',
  'maintainer_email',
  'version',
  'url',
];
/** Fields the dataset form shows (errors of others go in the summary). */
const SHOWN = [...TEXT_FIELDS, 'owner_org', 'private', 'extras', 'tags'];
/** Empty extra rows offered below the filled ones. */
const SPARE_EXTRAS = 3;

interface ExtraRow {
  key: string;
  value: string;
}

/** The extras rows of a form: extras__N__key / __value / __deleted, in N order. */
function extrasFrom(form: Record<string, unknown>): { rows: ExtraRow[]; kept: ExtraRow[] } {
  const byIndex = new Map<number, { key: string; value: string; deleted: boolean }>();
  for (const name of Object.keys(form)) {
    const m = /^extras__(\d{1,3})__(key|value|deleted)$/.exec(name);
    if (!m) continue;
    const i = Number(m[1]);
    const row = byIndex.get(i) ?? { key: '', value: '', deleted: false };
    if (m[2] === 'deleted') row.deleted = field(form, name) !== '';
    else row[m[2] as 'key' | 'value'] = field(form, name);
    byIndex.set(i, row);
  }
  const rows = [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, r]) => r);
  return {
    rows: rows.filter((r) => !r.deleted && (r.key || r.value)).map(({ key, value }) => ({ key, value })),
    kept: rows.filter((r) => !r.deleted && r.key.trim()).map(({ key, value }) => ({ key: key.trim(), value })),
  };
}

/** The dataset dict the form describes (private and extras converted; an empty title becomes the name, as CKAN does). */
function datasetData(form: Record<string, unknown>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const k of TEXT_FIELDS) data[k] = k === 'notes' ? field(form, k) : field(form, k).trim();
  if (!data.title) data.title = data.name;
  data.owner_org = field(form, 'owner_org');
  data.private = field(form, 'private') === 'True';
  data.extras = extrasFrom(form).kept;
  return data;
}

/** What the form shows: the user's input after an error, or a dataset's values. */
function formValues(source: Record<string, any>, fromDataset: boolean) {
  const values: Record<string, unknown> = {};
  for (const k of TEXT_FIELDS) values[k] = fromDataset ? (source[k] ?? '') : field(source, k);
  values.owner_org = fromDataset ? (source.owner_org ?? '') : field(source, 'owner_org');
  values.private = fromDataset ? (source.private ? 'True' : 'False') : field(source, 'private') || 'False';
  let extras: ExtraRow[];
  if (fromDataset) {
    values.tag_string = ((source.tags ?? []) as { name: string; vocabulary_id?: string }[])
      .filter((t) => !t.vocabulary_id)
      .map((t) => t.name)
      .join(', ');
    extras = ((source.extras ?? []) as { key: string; value: unknown }[]).map((e) => ({
      key: e.key,
      value: typeof e.value === 'string' ? e.value : JSON.stringify(e.value),
    }));
  } else extras = extrasFrom(source).rows;
  values.extras = [...extras, ...Array.from({ length: SPARE_EXTRAS }, () => ({ key: '', value: '' }))];
  return values;
}

/** The choices of the form: licences and the organizations the user may create datasets in. */
export async function formChoices(ctx: WebContext, current?: { id: string; name: string; title?: string }) {
  const [licenses, orgs] = await Promise.all([
    ctx.call<{ id: string; title: string }[]>('license_list'),
    ctx.user ? ctx.call<{ id: string; name: string; title: string }[]>('organization_list_for_user', { permission: 'create_dataset' }) : [],
  ]);
  const organizations = orgs.map((o) => ({ value: o.id, label: o.title || o.name }));
  // The dataset's own organization stays selectable even when the editor may not create in it.
  if (current && !organizations.some((o) => o.value === current.id))
    organizations.unshift({ value: current.id, label: current.title || current.name });
  if (ctx.services.config.bool('svc.auth.create_unowned_dataset') || !organizations.length)
    organizations.unshift({ value: '', label: ctx.t('manage.dataset.no_organization') });
  return {
    licenses: [{ value: '', label: ctx.t('manage.dataset.license_none') }, ...licenses.map((l) => ({ value: l.id, label: l.title }))],
    organizations,
    visibilities: [
      { value: 'False', label: ctx.t('manage.dataset.public') },
      { value: 'True', label: ctx.t('manage.dataset.private') },
    ],
  };
}

async function renderForm(
  ctx: WebContext,
  vars: { mode: 'new' | 'edit'; pkg?: Record<string, any>; form: Record<string, unknown>; errors?: FieldMessages },
  choices: Awaited<ReturnType<typeof formChoices>>,
  status = 200,
) {
  const errors = vars.errors;
  const canDelete = vars.pkg ? await ctx.may('package_delete', { id: vars.pkg.id }) : false;
  return ctx.render(
    'manage/dataset-form.njk',
    {
      ...vars,
      ...choices,
      summary: errors ? otherMessages(errors, SHOWN) : [],
      stage: vars.mode === 'new' || vars.pkg?.state === 'draft',
      can_delete: canDelete,
    },
    status,
  );
}

async function editableDataset(ctx: WebContext): Promise<Record<string, any>> {
  const pkg = await ctx.call('package_show', { id: ctx.params.name });
  if (!(await ctx.may('package_update', { id: pkg.id }))) throw Object.assign(new Error('forbidden'), { forbidden: true });
  return pkg;
}

/** Runs a page that needs the right to edit the dataset; a visitor without it gets the 403 page (or the login page). */
function withDataset(page: (ctx: WebContext, pkg: Record<string, any>) => Promise<any>) {
  return async (ctx: WebContext) => {
    let pkg: Record<string, any>;
    try {
      pkg = await editableDataset(ctx);
    } catch (e) {
      if ((e as { forbidden?: boolean }).forbidden) return forbidden(ctx);
      throw e;
    }
    return page(ctx, pkg);
  };
}

// Each page takes the type's generated form when the type (the page's, or the dataset's when editing)
// has a custom schema, else the classic form.
export function datasetFormPages(web: WebRouter): void {
  web.get('/dataset/new', async (ctx) => {
    if (!(await ctx.may('package_create'))) return forbidden(ctx);
    const schema = schemaOf(ctx, ctx.datasetType);
    if (schema) return schemaNewForm(ctx, schema, await formChoices(ctx));
    const form = formValues({ owner_org: field(ctx.query, 'owner_org') || field(ctx.query, 'group') }, false);
    return renderForm(ctx, { mode: 'new', form }, await formChoices(ctx));
  });

  web.post('/dataset/new', async (ctx) => {
    if (!(await ctx.may('package_create'))) return forbidden(ctx);
    const schema = schemaOf(ctx, ctx.datasetType);
    if (schema) return schemaNewPost(ctx, schema, await formChoices(ctx));
    const data = { ...datasetData(ctx.form), state: 'draft' };
    const result = await attempt(() => ctx.call('package_create', data));
    if (!result.ok)
      return renderForm(ctx, { mode: 'new', form: formValues(ctx.form, false), errors: result.errors }, await formChoices(ctx), 400);
    return ctx.redirect(`/dataset/${enc(result.value.name)}/resource/new`);
  });

  web.get(
    '/dataset/edit/:name',
    withDataset(async (ctx, pkg) => {
      const schema = schemaOf(ctx, pkg.type);
      if (schema) return schemaEditForm(ctx, schema, pkg, await formChoices(ctx, pkg.organization));
      return renderForm(ctx, { mode: 'edit', pkg, form: formValues(pkg, true) }, await formChoices(ctx, pkg.organization));
    }),
  );

  web.post(
    '/dataset/edit/:name',
    withDataset(async (ctx, pkg) => {
      const schema = schemaOf(ctx, pkg.type);
      if (schema) return schemaEditPost(ctx, schema, pkg, await formChoices(ctx, pkg.organization));
      // package_patch keeps what the form does not show (resources, groups, custom fields of plugins);
      // tags of vocabularies stay, the free ones come from tag_string.
      const vocabularyTags = ((pkg.tags ?? []) as { vocabulary_id?: string }[]).filter((t) => t.vocabulary_id);
      const data = { ...datasetData(ctx.form), id: pkg.id, tags: vocabularyTags };
      const result = await attempt(() => ctx.call('package_patch', data));
      if (!result.ok)
        return renderForm(
          ctx,
          { mode: 'edit', pkg, form: formValues(ctx.form, false), errors: result.errors },
          await formChoices(ctx, pkg.organization),
          400,
        );
      const saved = result.value;
      const root = rootOf(ctx, saved.type);
      if (saved.state === 'draft') return ctx.redirect(`${root}/${enc(saved.name)}/resource/new`);
      return ctx.redirect(`${root}/${enc(saved.name)}`, { kind: 'success', text: ctx.t('manage.dataset.saved') });
    }),
  );

  // The steps of a custom schema's form with pages (start_form_page): a new draft, or an edit, a page at a time.
  for (const mode of ['new', 'edit'] as const) {
    web.get(
      `/dataset/${mode}/:name/:page`,
      withDataset(async (ctx, pkg) => schemaPageForm(ctx, mode, pkg, await formChoices(ctx, pkg.organization))),
    );
    web.post(
      `/dataset/${mode}/:name/:page`,
      withDataset(async (ctx, pkg) => schemaPagePost(ctx, mode, pkg, await formChoices(ctx, pkg.organization))),
    );
  }

  web.get('/dataset/delete/:name', async (ctx) => {
    const pkg = await ctx.call('package_show', { id: ctx.params.name });
    if (!(await ctx.may('package_delete', { id: pkg.id }))) return forbidden(ctx);
    return ctx.render('manage/confirm.njk', {
      heading: ctx.t('manage.dataset.delete_title'),
      question: ctx.t('manage.dataset.delete_question', { name: pkg.title || pkg.name }),
      action: `${rootOf(ctx, pkg.type)}/delete/${enc(pkg.name)}`,
      cancel: `${rootOf(ctx, pkg.type)}/${enc(pkg.name)}`,
      submit: ctx.t('manage.delete'),
    });
  });

  web.post('/dataset/delete/:name', async (ctx) => {
    const pkg = await ctx.call('package_show', { id: ctx.params.name });
    await ctx.call('package_delete', { id: pkg.id });
    return ctx.redirect(rootOf(ctx, pkg.type), { kind: 'success', text: ctx.t('manage.dataset.deleted', { name: pkg.title || pkg.name }) });
  });
}
