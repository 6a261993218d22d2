// The dataset form of a type with a custom schema: generated from the schema's dataset_fields
// (labels, help, placeholders, required marks, a widget per form_snippet), pages of the form as
// fieldsets of one form, repeating subfields added and removed by submit buttons that show the
// form again with its values (no JavaScript needed), and the action's errors beside each field.
import type { Choice, DatasetSchema, Label, SchemingField } from '../../scheming/types.ts';
import { datastoreChoicesFromResult, datastoreChoicesQuery } from '../../scheming/choices.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { WebContext } from '../router.ts';
import {
  blankState,
  dataFromState,
  type FormOptions,
  type FormState,
  groupAction,
  stateFromDataset,
  stateFromPost,
} from '../scheming/form-state.ts';
import { type FormContext, formPages, shownErrorKeys, type WidgetView } from '../scheming/form-view.ts';
import { datasetSchema, typeRoot } from '../scheming/dataset-types.ts';
import { labelText } from '../scheming/widgets.ts';
import { enc, fieldMessages, field, otherMessages } from './manage-forms.ts';

type Dict = Record<string, any>;
type ErrorDict = Record<string, unknown>;

export interface SchemaFormChoices {
  licenses: { value: string; label: string }[];
  organizations: { value: string; label: string }[];
}

/** The schema of a type, for the pages that pick the generated form over the classic one. */
export const schemaOf = (ctx: WebContext, type: unknown) => datasetSchema(ctx.services, type);

/**
 * The site's languages (the language parts of svc.locale_default and svc.locales_offered), as
 * ckanext-fluent takes the site's locales; English with the default when none is offered.
 */
function siteLanguages(ctx: WebContext): string[] {
  const { config } = ctx.services;
  const language = (locale: string) => locale.split(/[_-]/)[0] || 'en';
  const offered = config.list('svc.locales_offered');
  return [...new Set([config.str('svc.locale_default') || 'en', ...(offered.length ? offered : ['en'])].map(language))];
}

function formOptions(ctx: WebContext, schema: DatasetSchema): FormOptions {
  return { schemaLanguages: schema.raw.form_languages, siteLanguages: siteLanguages(ctx) };
}

/** The UI language (the page's locale; its language part). */
export const uiLanguage = (ctx: WebContext) => ctx.locale.split(/[_-]/)[0] || 'en';

/** The languages a custom field's multilingual value is shown in: the page's, else the site's default. */
export const displayLanguages = (ctx: WebContext) => ({
  lang: uiLanguage(ctx),
  defaultLang: ctx.services.config.str('svc.locale_default').split(/[_-]/)[0] || 'en',
});

/** A type's address prefix: /<type>, or /dataset. */
export const rootOf = (ctx: WebContext, type: unknown) => typeRoot(ctx.services, type);

/** Which step of a form with pages (start_form_page) is shown, numbered from 1. */
interface Step {
  page: number;
  /** The dataset the steps after the first save to (its name, for the addresses). */
  name?: string;
}

async function renderSchemaForm(
  ctx: WebContext,
  schema: DatasetSchema,
  vars: { mode: 'new' | 'edit'; pkg?: Dict; state: FormState; errors?: ErrorDict; summary?: string[]; step?: Step },
  choices: SchemaFormChoices,
  status = 200,
) {
  const lang = uiLanguage(ctx);
  const formCtx: FormContext = {
    ...formOptions(ctx, schema),
    lang,
    t: ctx.t,
    ...choices,
    helperChoices: await helperChoices(ctx, schema.dataset_fields),
  };
  const errors = vars.errors ?? {};
  const root = vars.pkg ? rootOf(ctx, vars.pkg.type) : rootOf(ctx, schema.dataset_type);
  const canDelete = vars.pkg ? await ctx.may('package_delete', { id: vars.pkg.id }) : false;
  const hasErrors = Object.keys(errors).length > 0 || (vars.summary?.length ?? 0) > 0;
  const all = schemaPages(schema);
  const step = all.length ? (vars.step ?? { page: 1, name: vars.pkg?.name }) : undefined;
  const name = step?.name ? enc(step.name) : undefined;
  const pageAt = (n: number) =>
    name ? (vars.mode === 'new' ? `${root}/new/${name}/${n}` : `${root}/edit/${name}/${n}`) : n === 1 ? `${root}/new` : null;
  const fields = step ? all[step.page - 1].fields : schema.dataset_fields;
  const pages = formPages(fields, vars.state, formCtx, errors);
  const last = !step || step.page === all.length;
  return ctx.render(
    'manage/scheming-dataset-form.njk',
    {
      mode: vars.mode,
      pkg: vars.pkg,
      root,
      action: step ? pageAt(step.page) : vars.mode === 'new' ? `${root}/new` : `${root}/edit/${enc(vars.pkg!.name)}`,
      pages,
      errors: hasErrors ? errors : null,
      summary: vars.summary ?? [],
      stage: (vars.mode === 'new' || vars.pkg?.state === 'draft') && hasResourceStep(schema),
      steps: step
        ? all.map((p, i) => ({
            title: labelText(p.title as Label, lang) || ctx.t('scheming.form.step_of', { n: i + 1, count: all.length }),
            // a later step of a new dataset opens once the ones before it are saved
            href: vars.mode === 'edit' || i + 1 < step.page ? pageAt(i + 1) : null,
            current: i + 1 === step.page,
          }))
        : null,
      step: step ? { n: step.page, count: all.length, last, back: step.page > 1 ? pageAt(step.page - 1) : null } : null,
      can_delete: canDelete,
      type_label: schema.about && schema.dataset_type !== 'dataset' ? schema.dataset_type : null,
    },
    status,
  );
}

/** Whether datasets of the schema get the "add data" step (a schema without resource_fields skips it, as in scheming). */
function hasResourceStep(schema: DatasetSchema): boolean {
  return 'resource_fields' in schema.raw;
}

interface SchemaPage {
  title: unknown;
  description: unknown;
  fields: SchemingField[];
}

/**
 * The pages of a schema's form, as ckanext-scheming splits them: a page starts at each field with
 * start_form_page. None when no field starts a page (the form is one page).
 */
function schemaPages(schema: DatasetSchema): SchemaPage[] {
  const pages: SchemaPage[] = [];
  for (const f of schema.dataset_fields) {
    const start = f.start_form_page as { title?: unknown; description?: unknown } | undefined;
    if (!pages.length || start) pages.push({ title: start?.title ?? '', description: start?.description ?? '', fields: [] });
    pages[pages.length - 1].fields.push(f);
  }
  return pages.length === 1 && !pages[0].title ? [] : pages;
}

/** A ValidationError as the raw error dict (nested for subfields and languages) and the summary of fields not shown. */
function formErrors(e: ValidationError, fields: SchemingField[]): { errors: ErrorDict; summary: string[] } {
  const errors: ErrorDict = {};
  for (const [k, v] of Object.entries(e.errors)) if (k !== '__type') errors[k] = v;
  return { errors, summary: otherMessages(fieldMessages(e), shownErrorKeys(fields)) };
}

export async function schemaNewForm(ctx: WebContext, schema: DatasetSchema, choices: SchemaFormChoices) {
  const given = { owner_org: field(ctx.query, 'owner_org') || field(ctx.query, 'group') };
  return renderSchemaForm(ctx, schema, { mode: 'new', state: blankState(schema.dataset_fields, formOptions(ctx, schema), given) }, choices);
}

export async function schemaNewPost(ctx: WebContext, schema: DatasetSchema, choices: SchemaFormChoices) {
  const opts = formOptions(ctx, schema);
  const pages = schemaPages(schema);
  // A form with pages saves its first page as a draft, then goes on to the next (CKAN's stages).
  const fields = pages.length ? pages[0].fields : schema.dataset_fields;
  const action = groupAction(ctx.form);
  const state = stateFromPost(fields, ctx.form, action);
  if (action) return renderSchemaForm(ctx, schema, { mode: 'new', state }, choices);
  const staged = hasResourceStep(schema) || pages.length > 1;
  const data = { ...dataFromState(fields, state, opts), type: schema.dataset_type, ...(staged ? { state: 'draft' } : {}) };
  let created: Dict;
  try {
    created = await ctx.call('package_create', data);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const again = stateFromDataset(fields, data, opts);
    return renderSchemaForm(ctx, schema, { mode: 'new', state: again, ...formErrors(e, fields) }, choices, 400);
  }
  const root = rootOf(ctx, created.type ?? schema.dataset_type);
  if (pages.length > 1) return ctx.redirect(`${root}/new/${enc(created.name)}/2`);
  return afterLastPage(ctx, schema, created);
}

/** Where the last page of the metadata leads: the "add data" step, else the dataset, made active. */
async function afterLastPage(ctx: WebContext, schema: DatasetSchema, saved: Dict) {
  const root = rootOf(ctx, saved.type);
  if (saved.state === 'draft' && hasResourceStep(schema)) return ctx.redirect(`${root}/${enc(saved.name)}/resource/new`);
  if (saved.state === 'draft') await ctx.call('package_patch', { id: saved.id, state: 'active' });
  return ctx.redirect(`${root}/${enc(saved.name)}`, { kind: 'success', text: ctx.t('manage.dataset.created') });
}

/** The page number of /new/<name>/<page> and /edit/<name>/<page>; a page the schema does not have is not found. */
function pageParam(ctx: WebContext, schema: DatasetSchema | undefined): { schema: DatasetSchema; page: number; pages: SchemaPage[] } {
  const pages = schema ? schemaPages(schema) : [];
  const page = /^\d{1,3}$/.test(ctx.params.page ?? '') ? Number(ctx.params.page) : 0;
  if (!schema || page < 1 || page > pages.length) throw new NotFoundError('Page not found');
  return { schema, page, pages };
}

/**
 * A step of a form with pages, for a dataset saved by the steps before it (new: /new/<name>/<page>,
 * a draft) or one being edited (/edit/<name>/<page>).
 */
export async function schemaPageForm(ctx: WebContext, mode: 'new' | 'edit', pkg: Dict, choices: SchemaFormChoices) {
  const { schema, page, pages } = pageParam(ctx, schemaOf(ctx, pkg.type));
  // A dataset already published is edited, not created.
  if (mode === 'new' && pkg.state !== 'draft') return ctx.redirect(`${rootOf(ctx, pkg.type)}/edit/${enc(pkg.name)}/${page}`);
  // A step of a new dataset is a new form for its fields: defaults and empty groups, as page 1 has them.
  const fields = pages[page - 1].fields;
  const state =
    mode === 'new' ? blankState(fields, formOptions(ctx, schema), pkg) : stateFromDataset(fields, pkg, formOptions(ctx, schema));
  return renderSchemaForm(ctx, schema, { mode, pkg, state, step: { page, name: pkg.name } }, choices);
}

/** Saves one step (package_patch of that page's fields); a new dataset stays a draft until its last step. */
export async function schemaPagePost(ctx: WebContext, mode: 'new' | 'edit', pkg: Dict, choices: SchemaFormChoices) {
  const { schema, page, pages } = pageParam(ctx, schemaOf(ctx, pkg.type));
  const fields = pages[page - 1].fields;
  const opts = formOptions(ctx, schema);
  const step = { page, name: pkg.name };
  const action = groupAction(ctx.form);
  const state = stateFromPost(fields, ctx.form, action);
  if (action) return renderSchemaForm(ctx, schema, { mode, pkg, state, step }, choices);
  const data: Dict = { ...dataFromState(fields, state, opts), id: pkg.id };
  if ('tag_string' in data) data.tags = ((pkg.tags ?? []) as { vocabulary_id?: string }[]).filter((t) => t.vocabulary_id);
  // A new dataset stays a draft until its last page, which publishes it unless the "add data" step follows.
  const publishing = mode === 'new' && pkg.state === 'draft' && page === pages.length && !hasResourceStep(schema);
  if (mode === 'new' && pkg.state === 'draft') data.state = publishing ? 'active' : 'draft';
  let saved: Dict;
  try {
    saved = await ctx.call('package_patch', data);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const again = stateFromDataset(fields, data, opts);
    return renderSchemaForm(ctx, schema, { mode, pkg, state: again, step, ...formErrors(e, fields) }, choices, 400);
  }
  const root = rootOf(ctx, saved.type);
  if (mode === 'edit') return ctx.redirect(`${root}/${enc(saved.name)}`, { kind: 'success', text: ctx.t('manage.dataset.saved') });
  if (page < pages.length)
    return ctx.redirect(`${root}/new/${enc(saved.name)}/${page + 1}`, {
      kind: 'success',
      text: ctx.t('scheming.form.draft_saved', { n: page + 1, count: pages.length }),
    });
  return afterLastPage(ctx, schema, saved);
}

export async function schemaEditForm(ctx: WebContext, schema: DatasetSchema, pkg: Dict, choices: SchemaFormChoices) {
  // A form with pages is edited a page at a time (/edit/<name>/<page>), from the first.
  const pages = schemaPages(schema);
  const fields = pages.length ? pages[0].fields : schema.dataset_fields;
  return renderSchemaForm(
    ctx,
    schema,
    {
      mode: 'edit',
      pkg,
      state: stateFromDataset(fields, pkg, formOptions(ctx, schema)),
      step: pages.length ? { page: 1, name: pkg.name } : undefined,
    },
    choices,
  );
}

export async function schemaEditPost(ctx: WebContext, schema: DatasetSchema, pkg: Dict, choices: SchemaFormChoices) {
  // A form with pages posts one page: the others' fields are not in it and must stay as they are.
  if (schemaPages(schema).length) return schemaPagePost(Object.assign(ctx, { params: { ...ctx.params, page: '1' } }), 'edit', pkg, choices);
  const opts = formOptions(ctx, schema);
  const action = groupAction(ctx.form);
  const state = stateFromPost(schema.dataset_fields, ctx.form, action);
  if (action) return renderSchemaForm(ctx, schema, { mode: 'edit', pkg, state }, choices);
  // package_patch keeps what the form does not show (resources, groups, fields without a form
  // snippet); tags of vocabularies stay, the free ones come from tag_string.
  const vocabularyTags = ((pkg.tags ?? []) as { vocabulary_id?: string }[]).filter((t) => t.vocabulary_id);
  const data: Dict = { ...dataFromState(schema.dataset_fields, state, opts), id: pkg.id };
  if ('tag_string' in data) data.tags = vocabularyTags;
  let saved: Dict;
  try {
    saved = await ctx.call('package_patch', data);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const again = stateFromDataset(schema.dataset_fields, data, opts);
    return renderSchemaForm(ctx, schema, { mode: 'edit', pkg, state: again, ...formErrors(e, schema.dataset_fields) }, choices, 400);
  }
  const root = rootOf(ctx, saved.type);
  if (saved.state === 'draft' && hasResourceStep(schema)) return ctx.redirect(`${root}/${enc(saved.name)}/resource/new`);
  return ctx.redirect(`${root}/${enc(saved.name)}`, { kind: 'success', text: ctx.t('manage.dataset.saved') });
}

/** Fields the classic resource form has itself (upload or link, name, description, format). */
const CLASSIC_RESOURCE_FIELDS = new Set(['url', 'name', 'description', 'format']);
/** Fields the classic organization and group form has itself. */
export const CLASSIC_GROUP_FIELDS = new Set(['title', 'name', 'description', 'image_url']);

/** A schema's fields beyond those of a classic form (resource, organization, group), shown after them. */
export interface FieldExtras {
  fields: SchemingField[];
  opts: FormOptions;
}

function extras(ctx: WebContext, fields: SchemingField[] | undefined, classic: Set<string>, languages: unknown): FieldExtras | undefined {
  const own = (fields ?? []).filter((f) => !classic.has(f.field_name));
  if (!own.length) return undefined;
  return { fields: own, opts: { schemaLanguages: languages, siteLanguages: siteLanguages(ctx) } };
}

/** A dataset type's resource fields beyond the classic ones. */
export function resourceExtras(ctx: WebContext, pkg: Dict): FieldExtras | undefined {
  const schema = schemaOf(ctx, pkg.type);
  return schema && extras(ctx, schema.resource_fields, CLASSIC_RESOURCE_FIELDS, schema.raw.form_languages);
}

/** The organization or group schema (of the types "organization" and "group"), if configured. */
export function groupSchemaOf(ctx: WebContext, kind: 'organization' | 'group') {
  const schemas = kind === 'organization' ? ctx.services.scheming?.organizations : ctx.services.scheming?.groups;
  return schemas?.get(kind);
}

/** An organization's or group's schema fields beyond the classic ones. */
export function groupExtras(ctx: WebContext, kind: 'organization' | 'group'): FieldExtras | undefined {
  const schema = groupSchemaOf(ctx, kind);
  return schema && extras(ctx, schema.fields, CLASSIC_GROUP_FIELDS, schema.raw.form_languages);
}

/** The state of extra fields: from a post, else the object being edited, else a blank form. */
export function extraState(ctx: WebContext, extra: FieldExtras | undefined, current?: Dict): FormState | undefined {
  if (!extra) return undefined;
  if (ctx.request.method === 'POST') return stateFromPost(extra.fields, ctx.form, groupAction(ctx.form));
  return current ? stateFromDataset(extra.fields, current, extra.opts) : blankState(extra.fields, extra.opts);
}

/** The widgets of extra fields, for a form template. */
export function extraWidgets(ctx: WebContext, extra: FieldExtras | undefined, current?: Dict, errors: ErrorDict = {}): WidgetView[] {
  const state = extraState(ctx, extra, current);
  if (!extra || !state) return [];
  const formCtx: FormContext = { ...extra.opts, lang: uiLanguage(ctx), t: ctx.t, organizations: [], licenses: [] };
  return formPages(extra.fields, state, formCtx, errors).flatMap((p) => p.fields);
}

/** The values of extra fields a form posted, as the actions take them. */
export function extraData(ctx: WebContext, extra: FieldExtras | undefined): Dict {
  return extra ? dataFromState(extra.fields, stateFromPost(extra.fields, ctx.form), extra.opts) : {};
}

export { groupAction };

/**
 * The choices of fields with a choices_helper (scheming_datastore_choices: rows of a data store
 * table, read as the visitor). A table that cannot be read gives only the field's additional choices.
 */
export async function helperChoices(ctx: WebContext, fields: SchemingField[]): Promise<Map<SchemingField, Choice[]>> {
  const out = new Map<SchemingField, Choice[]>();
  const wanted: SchemingField[] = [];
  const walk = (list: SchemingField[]) => {
    for (const f of list) {
      if (f.choices_helper === 'scheming_datastore_choices') wanted.push(f);
      if (Array.isArray(f.repeating_subfields)) walk(f.repeating_subfields);
    }
  };
  walk(fields);
  if (!wanted.length) return out;
  const canSearch = ctx.services.registry.has('datastore_search');
  await Promise.all(
    wanted.map(async (f) => {
      let result: { fields: { id: string }[]; records: Record<string, unknown>[] } | undefined;
      if (canSearch) result = await ctx.call('datastore_search', datastoreChoicesQuery(f)).catch(() => undefined);
      out.set(f, datastoreChoicesFromResult(f, result));
    }),
  );
  return out;
}
