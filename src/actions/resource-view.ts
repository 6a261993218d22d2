// Resource views: resource_view_create/show/list/update/delete/reorder/clear and the default views
// (resource_create_default_resource_views, package_create_default_resource_views). View types
// come from view plugins (src/plugins/views) through registerViewType; svc.views.default_views
// names those created by default, for the resources each can show.
import { Type } from '@sinclair/typebox';
import type { ActionContext, Services } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { compileParams, p, type Params } from '../validation/params.ts';
import { sysadminOnly } from '../auth/rules.ts';
import { canEditPackage, canReadPackage, notAuthorized } from '../auth/authz.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { declareOption } from '../config/options.ts';
import type { Queryable } from '../db/database.ts';
import { findPackage, onPackageChange } from '../model/packages.ts';
import { findResource, resourcesOf, type ResourceRow } from '../model/resources.ts';
import {
  clearViews,
  deleteView,
  findView,
  insertView,
  setViewOrder,
  updateView,
  viewsOf,
  type ResourceViewRow,
} from '../model/resource-views.ts';
import { validateOrThrow } from '../validation/validate.ts';
import { listOf } from './result-schemas.ts';

declareOption({
  name: 'svc.views.default_views',
  type: 'list',
  default: ['image_view', 'datatables_view'],
  description: 'View types created by default for new and updated resources that they can show (their view plugins must be on)',
});

export interface ViewType {
  name: string;
  /** Title of views created by default. */
  defaultTitle: string;
  /** Shows data store data: created by default only with create_datastore_views. */
  requiresDatastore?: boolean;
  /** Options of the view, kept in its config and returned as top-level keys. */
  options: Params;
  /** Whether the view can show this resource (decides default views). */
  canView(resource: Pick<ResourceRow, 'format' | 'url' | 'datastore_active' | 'url_type'>): boolean;
  /**
   * Checks the validated options against the resource's data (e.g. the columns of its data store
   * table) and completes them; a ValidationError names the option (a default view is then not made).
   * db is the calling action's connection (the catalog is read through it, inside its transaction).
   */
  prepare?(services: Services, resourceId: string, options: Record<string, unknown>, db: Queryable): Promise<Record<string, unknown>>;
}

const viewTypes = new WeakMap<object, Map<string, ViewType>>();

/** Registers a view type for one running service; the first one also creates default views on dataset writes. */
export function registerViewType(services: Services, type: ViewType): void {
  let types = viewTypes.get(services);
  if (!types) {
    types = new Map();
    viewTypes.set(services, types);
    onPackageChange(services, async (db, packageId, change) => {
      // (the dataset's resources are read only when a view type is created by default)
      if (change !== 'changed' || !defaultViewTypes(services, false).length) return;
      await createDefaultViews(services, db, await resourcesOf(db, [packageId]), false);
    });
  }
  types.set(type.name, type);
}

const typesOf = (services: Services) => viewTypes.get(services) ?? new Map<string, ViewType>();

const viewSchema = Type.Object(
  {
    id: Type.String(),
    resource_id: Type.String(),
    package_id: Type.String(),
    title: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    view_type: Type.String(),
  },
  { additionalProperties: true, title: 'ResourceView', description: 'with the options of its view type as more keys' },
);

function viewDict(v: ResourceViewRow): Record<string, unknown> {
  return {
    ...v.config,
    description: v.description,
    id: v.id,
    package_id: v.package_id,
    resource_id: v.resource_id,
    title: v.title,
    view_type: v.view_type,
  };
}

/** The view types svc.views.default_views names (those of data store tables, or the others). */
function defaultViewTypes(services: Services, datastoreViews: boolean): ViewType[] {
  const types = typesOf(services);
  return services.config
    .list('svc.views.default_views')
    .map((n) => types.get(n))
    .filter((t): t is ViewType => !!t && !!t.requiresDatastore === datastoreViews);
}

/** Creates the default views a resource lacks; returns them. */
async function createDefaultViews(
  services: Services,
  db: Queryable,
  resources: ResourceRow[],
  datastoreViews: boolean,
): Promise<Record<string, unknown>[]> {
  const wanted = defaultViewTypes(services, datastoreViews);
  // the views a resource could have by default; its existing views are read only when there are any
  const candidates = resources.flatMap((r) => wanted.filter((t) => t.canView(r)).map((t) => ({ r, t })));
  if (!candidates.length) return [];
  const existing = await viewsOf(db, [...new Set(candidates.map(({ r }) => r.id))]);
  const created: Record<string, unknown>[] = [];
  for (const { r, t } of candidates) {
    if (existing.some((v) => v.resource_id === r.id && v.view_type === t.name)) continue;
    let config = await validateOrThrow(compileParams(t.options), {});
    if (t.prepare) {
      try {
        config = await t.prepare(services, r.id, config, db);
      } catch (e) {
        if (e instanceof ValidationError) continue;
        throw e;
      }
    }
    const id = await insertView(db, r.id, t.name, { title: t.defaultTitle, description: '', config });
    created.push(viewDict((await findView(db, id))!));
  }
  return created;
}

async function resourceAndPackage(ctx: ActionContext, resourceId: string) {
  const resource = await findResource(ctx.db, resourceId);
  const pkg = resource ? await findPackage(ctx.db, resource.package_id) : undefined;
  if (!resource || !pkg || resource.state === 'deleted') throw new NotFoundError('Resource was not found.');
  return { resource, pkg };
}

async function viewOr404(ctx: ActionContext, id: string): Promise<ResourceViewRow> {
  const v = await findView(ctx.db, id);
  if (!v) throw new NotFoundError('Resource view not found');
  return v;
}

/** The resource's dataset must be editable (package_update) or readable (package_show); unknown ones are left to the handler's 404. */
const onDataset =
  (edit: boolean, resourceIdOf: (ctx: ActionContext, prm: Record<string, any>) => Promise<string | undefined>): AuthFunction =>
  async (ctx, prm) => {
    const rid = await resourceIdOf(ctx, prm);
    const resource = rid ? await findResource(ctx.db, rid) : undefined;
    const pkg = resource ? await findPackage(ctx.db, resource.package_id) : undefined;
    if (!pkg) return;
    if (edit ? !(await canEditPackage(ctx, pkg)) : !(await canReadPackage(ctx, pkg)))
      // (no id: the caller may not know which dataset is behind the view)
      throw notAuthorized(ctx, `${edit ? 'edit' : 'read'} the views of this resource`);
  };
const byResourceId = (key: string) => async (_ctx: ActionContext, prm: Record<string, any>) =>
  typeof prm[key] === 'string' ? prm[key] : undefined;
const byViewId = async (ctx: ActionContext, prm: Record<string, any>) =>
  typeof prm.id === 'string' ? (await findView(ctx.db, prm.id))?.resource_id : undefined;

/** The view's config: the `config` object (or JSON text) and the view type's options sent as top-level keys. */
async function viewConfig(
  ctx: ActionContext,
  type: ViewType,
  prm: Record<string, any>,
  resourceId: string,
): Promise<Record<string, unknown>> {
  const base = prm.config ?? {};
  const options = await validateOrThrow(compileParams(type.options), { ...base, ...prm }, ctx);
  return { ...base, ...(type.prepare ? await type.prepare(ctx.services, resourceId, options, ctx.db) : options) };
}

const common = {
  title: p.string('the title of the view').required(),
  description: p.string('a description of the view'),
  config: p.object('options of the view (a JSON object or its text); options of the view type may also be sent as top-level keys'),
};

export const resourceViewActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'resource_view_create',
    sideEffectFree: false,
    auth: onDataset(true, byResourceId('resource_id')),
    description: 'Create a view of a resource (editors of its dataset).',
    params: {
      resource_id: p.string('the id of the resource').required(),
      view_type: p
        .string('the view type (a loaded view plugin: image_view, text_view, webpage_view, datatables_view, video_view, audio_view)')
        .required(),
      ...common,
    },
    extras: 'keep',
    returns: { description: 'the new view', rtype: 'dictionary', schema: viewSchema },
    handler: async (ctx, prm) => {
      const type = typesOf(ctx.services).get(prm.view_type);
      if (!type) throw new ValidationError({ view_type: [`No plugin found for view_type ${prm.view_type}`] });
      const { resource } = await resourceAndPackage(ctx, prm.resource_id);
      const config = await viewConfig(ctx, type, prm, resource.id);
      const id = await insertView(ctx.db, resource.id, type.name, { title: prm.title, description: prm.description ?? '', config });
      return viewDict((await findView(ctx.db, id))!);
    },
  }),
  defineAction({
    name: 'resource_view_show',
    sideEffectFree: true,
    auth: onDataset(false, byViewId),
    description: 'Return a resource view.',
    params: { id: p.string('the id of the view').required() },
    returns: { description: 'the view', rtype: 'dictionary', schema: viewSchema },
    handler: async (ctx, prm) => viewDict(await viewOr404(ctx, prm.id)),
  }),
  defineAction({
    name: 'resource_view_list',
    sideEffectFree: true,
    auth: onDataset(false, byResourceId('id')),
    description: 'Return the views of a resource, in their order.',
    params: { id: p.string('the id of the resource').required() },
    returns: { description: 'views', rtype: 'list', schema: listOf(viewSchema) },
    handler: async (ctx, prm) => {
      const { resource } = await resourceAndPackage(ctx, prm.id);
      return (await viewsOf(ctx.db, [resource.id])).map(viewDict);
    },
  }),
  defineAction({
    name: 'resource_view_update',
    sideEffectFree: false,
    auth: onDataset(true, byViewId),
    description: 'Replace the title, description and options of a view (its type cannot change).',
    params: { id: p.string('the id of the view').required(), ...common },
    extras: 'keep',
    returns: { description: 'the view', rtype: 'dictionary', schema: viewSchema },
    handler: async (ctx, prm) => {
      const view = await viewOr404(ctx, prm.id);
      const type = typesOf(ctx.services).get(view.view_type);
      if (!type) throw new ValidationError({ view_type: [`No plugin found for view_type ${view.view_type}`] });
      await updateView(ctx.db, view.id, {
        title: prm.title,
        description: prm.description ?? '',
        config: await viewConfig(ctx, type, prm, view.resource_id),
      });
      return viewDict((await findView(ctx.db, view.id))!);
    },
  }),
  defineAction({
    name: 'resource_view_delete',
    sideEffectFree: false,
    auth: onDataset(true, byViewId),
    description: 'Delete a resource view.',
    params: { id: p.string('the id of the view').required() },
    returns: { description: 'the id of its resource', rtype: 'dictionary', schema: Type.Object({ resource_id: Type.String() }) },
    handler: async (ctx, prm) => {
      const view = await viewOr404(ctx, prm.id);
      await deleteView(ctx.db, view.id);
      return { resource_id: view.resource_id };
    },
  }),
  defineAction({
    name: 'resource_view_reorder',
    sideEffectFree: false,
    auth: onDataset(true, byResourceId('id')),
    description: 'Order the views of a resource: the views listed come first, in that order, then the others as they were.',
    params: {
      id: p.string('the id of the resource').required(),
      order: p.stringList('view ids').required(),
    },
    returns: {
      description: 'id and the new order',
      rtype: 'dictionary',
      schema: Type.Object({ id: Type.String(), order: Type.Array(Type.String()) }),
    },
    handler: async (ctx, prm) => {
      if (new Set(prm.order).size !== prm.order.length) throw new ValidationError({ order: ['No duplicates allowed in order'] });
      const { resource } = await resourceAndPackage(ctx, prm.id);
      const rest = (await viewsOf(ctx.db, [resource.id])).map((v) => v.id);
      for (const id of prm.order) {
        const i = rest.indexOf(id);
        if (i < 0) throw new ValidationError({ order: [`View ${id} does not exist`] });
        rest.splice(i, 1);
      }
      const order = [...prm.order, ...rest];
      await setViewOrder(ctx.db, resource.id, order);
      return { id: resource.id, order };
    },
  }),
  defineAction({
    name: 'resource_view_clear',
    sideEffectFree: false,
    auth: sysadminOnly,
    description: 'Delete all resource views of the site, or those of the given types. Sysadmin only.',
    params: { view_types: p.stringList('only views of these types') },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, prm) => {
      await clearViews(ctx.db, prm.view_types ?? []);
      return null;
    },
  }),
  defineAction({
    name: 'resource_create_default_resource_views',
    sideEffectFree: false,
    auth: onDataset(true, async (_ctx, prm) => (typeof prm.resource?.id === 'string' ? prm.resource.id : undefined)),
    description:
      'Create the default views (svc.views.default_views) of a resource that it lacks and that can show it. Without create_datastore_views only views that do not need the data store; with it only those that do.',
    params: {
      resource: p.object('the resource dict (its id is used)').required(),
      package: p.object('the dataset dict (optional; looked up when absent)'),
      create_datastore_views: p.boolean('create the views that need the data store instead').default(false),
    },
    returns: { description: 'the views created (possibly none)', rtype: 'list', schema: listOf(viewSchema) },
    handler: async (ctx, prm) => {
      if (typeof prm.resource.id !== 'string') throw new ValidationError({ resource: ['Missing value: id'] });
      const { resource } = await resourceAndPackage(ctx, prm.resource.id);
      return createDefaultViews(ctx.services, ctx.db, [resource], prm.create_datastore_views);
    },
  }),
  defineAction({
    name: 'package_create_default_resource_views',
    sideEffectFree: false,
    auth: async (ctx, prm) => {
      const pkg = typeof prm.package?.id === 'string' ? await findPackage(ctx.db, prm.package.id) : undefined;
      if (pkg && !(await canEditPackage(ctx, pkg))) throw notAuthorized(ctx, `edit package ${prm.package.id}`);
    },
    description:
      'Create the default views of every resource of a dataset (see resource_create_default_resource_views). Called with create_datastore_views=false on every dataset create and update.',
    params: {
      package: p.object('the dataset dict (its id or name is used)').required(),
      create_datastore_views: p.boolean('create the views that need the data store instead').default(false),
    },
    returns: { description: 'the views created (possibly none)', rtype: 'list', schema: listOf(viewSchema) },
    handler: async (ctx, prm) => {
      const ref = prm.package.id ?? prm.package.name;
      const pkg = typeof ref === 'string' ? await findPackage(ctx.db, ref) : undefined;
      if (!pkg) throw new NotFoundError('Package was not found.');
      return createDefaultViews(ctx.services, ctx.db, await resourcesOf(ctx.db, [pkg.id]), prm.create_datastore_views);
    },
  }),
];
