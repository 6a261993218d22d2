// The dataset form of a type with a custom schema: generated from the schema's dataset_fields
// (labels, help, placeholders, required marks, a widget per form_snippet), pages of the form as
// fieldsets of one form, repeating subfields added and removed by submit buttons that show the
// form again with its values (no JavaScript needed), and the action's errors beside each field.
import type { DatasetSchema, SchemingField } from '../../scheming/types.ts';
import { ValidationError } from '../../errors.ts';
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
import { enc, fieldMessages, field, otherMessages } from './manage-forms.ts';

type Dict = Record<string, any>;
type ErrorDict = Record<string, unknown>;

export interface SchemaFormChoices {
  licenses: { value: string; label: string }[];
  organizations: { value: string; label: string }[];
}

/** The schema of a type, for the pages that pick the generated form over the classic one. */
export const schemaOf = (ctx: WebContext, type: unknown) => datasetSchema(ctx.services, type);

function formOptions(ctx: WebContext, schema: DatasetSchema): FormOptions {
  return { schemaLanguages: schema.raw.form_languages, localeDefault: ctx.services.config.str('svc.locale_default') };
}

/** The UI language (the site's default locale; its language part). */
export const uiLanguage = (ctx: WebContext) => ctx.services.config.str('svc.locale_default').split(/[_-]/)[0] || 'en';

/** A type's address prefix: /<type>, or /dataset. */
export const rootOf = (ctx: WebContext, type: unknown) => typeRoot(ctx.services, type);

async function renderSchemaForm(
  ctx: WebContext,
  schema: DatasetSchema,
  vars: { mode: 'new' | 'edit'; pkg?: Dict; state: FormState; errors?: ErrorDict; summary?: string[] },
  choices: SchemaFormChoices,
  status = 200,
) {
  const lang = uiLanguage(ctx);
  const formCtx: FormContext = { ...formOptions(ctx, schema), lang, t: ctx.t, ...choices };
  const errors = vars.errors ?? {};
  const pages = formPages(schema.dataset_fields, vars.state, formCtx, errors);
  const root = vars.pkg ? rootOf(ctx, vars.pkg.type) : rootOf(ctx, schema.dataset_type);
  const canDelete = vars.pkg ? await ctx.may('package_delete', { id: vars.pkg.id }) : false;
  const hasErrors = Object.keys(errors).length > 0 || (vars.summary?.length ?? 0) > 0;
  return ctx.render(
    'manage/scheming-dataset-form.njk',
    {
      mode: vars.mode,
      pkg: vars.pkg,
      root,
      action: vars.mode === 'new' ? `${root}/new` : `${root}/edit/${enc(vars.pkg!.name)}`,
      pages,
      errors: hasErrors ? errors : null,
      summary: vars.summary ?? [],
      stage: (vars.mode === 'new' || vars.pkg?.state === 'draft') && hasResourceStep(schema),
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

/** A ValidationError as the raw error dict (nested for subfields and languages) and the summary of fields not shown. */
function formErrors(e: ValidationError, schema: DatasetSchema): { errors: ErrorDict; summary: string[] } {
  const errors: ErrorDict = {};
  for (const [k, v] of Object.entries(e.errors)) if (k !== '__type') errors[k] = v;
  return { errors, summary: otherMessages(fieldMessages(e), shownErrorKeys(schema.dataset_fields)) };
}

export async function schemaNewForm(ctx: WebContext, schema: DatasetSchema, choices: SchemaFormChoices) {
  const given = { owner_org: field(ctx.query, 'owner_org') || field(ctx.query, 'group') };
  return renderSchemaForm(ctx, schema, { mode: 'new', state: blankState(schema.dataset_fields, formOptions(ctx, schema), given) }, choices);
}

export async function schemaNewPost(ctx: WebContext, schema: DatasetSchema, choices: SchemaFormChoices) {
  const opts = formOptions(ctx, schema);
  const action = groupAction(ctx.form);
  const state = stateFromPost(schema.dataset_fields, ctx.form, action);
  if (action) return renderSchemaForm(ctx, schema, { mode: 'new', state }, choices);
  const staged = hasResourceStep(schema);
  const data = { ...dataFromState(schema.dataset_fields, state, opts), type: schema.dataset_type, ...(staged ? { state: 'draft' } : {}) };
  let created: Dict;
  try {
    created = await ctx.call('package_create', data);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const again = stateFromDataset(schema.dataset_fields, data, opts);
    return renderSchemaForm(ctx, schema, { mode: 'new', state: again, ...formErrors(e, schema) }, choices, 400);
  }
  const root = rootOf(ctx, created.type ?? schema.dataset_type);
  if (staged) return ctx.redirect(`${root}/${enc(created.name)}/resource/new`);
  return ctx.redirect(`${root}/${enc(created.name)}`, { kind: 'success', text: ctx.t('manage.dataset.created') });
}

export async function schemaEditForm(ctx: WebContext, schema: DatasetSchema, pkg: Dict, choices: SchemaFormChoices) {
  return renderSchemaForm(
    ctx,
    schema,
    { mode: 'edit', pkg, state: stateFromDataset(schema.dataset_fields, pkg, formOptions(ctx, schema)) },
    choices,
  );
}

export async function schemaEditPost(ctx: WebContext, schema: DatasetSchema, pkg: Dict, choices: SchemaFormChoices) {
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
    return renderSchemaForm(ctx, schema, { mode: 'edit', pkg, state: again, ...formErrors(e, schema) }, choices, 400);
  }
  const root = rootOf(ctx, saved.type);
  if (saved.state === 'draft' && hasResourceStep(schema)) return ctx.redirect(`${root}/${enc(saved.name)}/resource/new`);
  return ctx.redirect(`${root}/${enc(saved.name)}`, { kind: 'success', text: ctx.t('manage.dataset.saved') });
}

/** Resource fields the classic resource form has itself (upload or link, name, description, format). */
const CLASSIC_RESOURCE_FIELDS = new Set(['url', 'name', 'description', 'format']);

/** A type's resource fields beyond the classic ones, shown in the resource form after them. */
export interface ResourceExtras {
  fields: SchemingField[];
  opts: FormOptions;
  schema: DatasetSchema;
}

export function resourceExtras(ctx: WebContext, pkg: Dict): ResourceExtras | undefined {
  const schema = schemaOf(ctx, pkg.type);
  const fields = schema?.resource_fields.filter((f) => !CLASSIC_RESOURCE_FIELDS.has(f.field_name)) ?? [];
  return schema && fields.length ? { fields, opts: formOptions(ctx, schema), schema } : undefined;
}

/** The widgets of the extra resource fields, for the resource form template. */
export function resourceWidgets(ctx: WebContext, extras: ResourceExtras, state: FormState, errors: ErrorDict = {}): WidgetView[] {
  const formCtx: FormContext = { ...extras.opts, lang: uiLanguage(ctx), t: ctx.t, organizations: [], licenses: [] };
  return formPages(extras.fields, state, formCtx, errors).flatMap((p) => p.fields);
}

export { blankState, dataFromState, groupAction, stateFromDataset, stateFromPost };
