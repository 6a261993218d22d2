// Resource actions: resource_create, resource_show, resource_update, resource_patch,
// resource_delete, package_resource_reorder, format_autocomplete.
import type { ActionContext } from './context.ts';
import { afterCommit, defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { p } from '../validation/params.ts';
import { listOf, resourceSchema as resourceResult } from './result-schemas.ts';
import { canEditPackage, canReadPackage, visiblePackagesCondition } from '../auth/authz.ts';
import { anyone, denied } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { removeResourceFile } from '../files/storage.ts';
import { resourceDict } from '../model/package-dict.ts';
import {
  activeResourceAndPackage,
  lockPackages,
  notifyPackageChange,
  packageOfActiveResource,
  touchPackage,
  type PackageRow,
} from '../model/packages.ts';
import { findResource, formatsLike, markResourceDeleted, resourcesOf, setPositions, type ResourceRow } from '../model/resources.ts';
import { validate } from '../validation/validate.ts';
import { resourceParams, resourceSchema, type PackageValidationContext } from '../validation/package-schema.ts';
import { resourceSchemaFor } from '../scheming/schema-validation.ts';
import { outputResourceDict } from '../scheming/output.ts';
import { createResource, FileOps, replaceResource } from './package-resources.ts';
import { packageOr404 } from './package-save.ts';

function resourceIdParam(id: unknown): string {
  if (id === undefined || id === null || id === '') throw new ValidationError({ id: ['Missing value'] });
  return String(id);
}

async function resourceOr404(ctx: ActionContext, id: unknown): Promise<{ res: ResourceRow; pkg: PackageRow }> {
  const found = await activeResourceAndPackage(ctx.db, resourceIdParam(id));
  if (!found) throw new NotFoundError('Resource was not found.');
  return found;
}

/** The resource read again under its dataset's lock (what a patch keeps is what is there now). */
async function lockedResourceOr404(ctx: ActionContext, id: unknown): Promise<{ res: ResourceRow; pkg: PackageRow }> {
  const { pkg } = await resourceOr404(ctx, id);
  await lockPackages(ctx.db, [pkg.id]);
  return resourceOr404(ctx, id);
}

/** The dataset of an active resource, for the permission checks (one round trip: every datastore_search makes one). */
async function packageOfResourceOr404(ctx: ActionContext, id: unknown): Promise<PackageRow> {
  const pkg = await packageOfActiveResource(ctx.db, resourceIdParam(id));
  if (!pkg) throw new NotFoundError('Resource was not found.');
  return pkg;
}

/** resource_create's dataset reference, checked before anything is looked up. */
function packageIdParam(params: Record<string, any>): string {
  const ref = params.package_id;
  if (ref === undefined || ref === null || ref === '') throw new ValidationError({ package_id: ['Missing value'] });
  if (typeof ref !== 'string') throw new ValidationError({ package_id: ['Must be a string'] });
  return ref;
}

const resourceCreateAuth: AuthFunction = async (ctx, params) => {
  const ref = packageIdParam(params);
  const pkg = await packageOr404(ctx, ref);
  // the reference as sent: a private dataset's id is not told to those who may not read it
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `create resources on dataset ${ref}`);
};

const resourceShowAuth: AuthFunction = async (ctx, params) => {
  const pkg = await packageOfResourceOr404(ctx, params.id);
  if (!(await canReadPackage(ctx, pkg))) throw denied(ctx, `read resource ${params.id}`);
};

const resourceUpdateAuth: AuthFunction = async (ctx, params) => {
  const pkg = await packageOfResourceOr404(ctx, params.id);
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit resource ${params.id}`);
};

const resourceDeleteAuth: AuthFunction = async (ctx, params) => {
  const pkg = await packageOfResourceOr404(ctx, params.id);
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `delete resource ${params.id}`);
};

const reorderAuth: AuthFunction = async (ctx, params) => {
  if (!params.id) throw new ValidationError({ id: ['Missing value'] });
  const pkg = await packageOr404(ctx, String(params.id));
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit package ${params.id}`);
};

async function validateResource(ctx: ActionContext, input: Record<string, unknown>, pkg: PackageRow, existing?: ResourceRow) {
  const upload = ctx.files?.upload;
  const vctx: PackageValidationContext = { ctx, existingResourceIds: new Set(existing ? [existing.id] : []), upload };
  const data = { ...input };
  if (existing) data.id = existing.id;
  // a dataset type with a custom schema: its resource_fields (svc.scheming.dataset_schemas)
  const schema = resourceSchemaFor(ctx, pkg.type, !existing) ?? resourceSchema;
  const { data: out, errors } = await validate(schema, data, { ...vctx, input: data });
  if (!existing && typeof out.id === 'string' && (await findResource(ctx.db, out.id))) errors.id = ['Resource id already exists.'];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return out as Record<string, any>;
}

async function resourceCreate(ctx: ActionContext, p: Record<string, unknown>) {
  const pkg = await packageOr404(ctx, packageIdParam(p));
  // Concurrent creates on one dataset take positions one after another.
  await lockPackages(ctx.db, [pkg.id]);
  const data = await validateResource(ctx, p, pkg);
  const position = (await resourcesOf(ctx.db, [pkg.id])).length;
  const fileOps = new FileOps(ctx);
  const row = await createResource(ctx, pkg.id, data, position, fileOps, ctx.files?.upload);
  await touchPackage(ctx.db, pkg.id);
  await notifyPackageChange(ctx, pkg.id);
  await fileOps.run();
  return shownResource(ctx, pkg, row);
}

async function resourceUpdate(ctx: ActionContext, p: Record<string, unknown>) {
  const { res, pkg } = await lockedResourceOr404(ctx, p.id);
  const data = await validateResource(ctx, p, pkg, res);
  const fileOps = new FileOps(ctx);
  const row = await replaceResource(ctx, res, data, undefined, fileOps, ctx.files?.upload);
  await touchPackage(ctx.db, pkg.id);
  await notifyPackageChange(ctx, pkg.id);
  await fileOps.run();
  return shownResource(ctx, pkg, row);
}

/** The resource dict, with its dataset schema's output validators. */
async function shownResource(ctx: ActionContext, pkg: PackageRow, row: ResourceRow, opts?: { includeTracking?: boolean }) {
  const dict = resourceDict(ctx.config, row, opts);
  await outputResourceDict(ctx, pkg.type, dict);
  return dict;
}

const resourceReturns = (description: string) => ({ description, rtype: 'dictionary', schema: resourceResult });
const resourceId = p.string('the id of the resource');

export const resourceActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'resource_create',
    sideEffectFree: false,
    auth: resourceCreateAuth,
    authBeforeValidation: true,
    description: 'Append a new resource to a dataset. Other keys are kept as extra fields of the resource.',
    params: { ...resourceParams, package_id: p.string('id or name of the dataset').required() },
    extras: 'keep',
    validatedBy: 'handler',
    returns: resourceReturns('the new resource'),
    handler: resourceCreate,
  }),
  defineAction({
    name: 'resource_show',
    sideEffectFree: true,
    auth: resourceShowAuth,
    description: 'Return the metadata of a resource.',
    params: { id: resourceId.required(), include_tracking: p.boolean('add tracking_summary').default(false) },
    returns: resourceReturns('the resource'),
    handler: async (ctx, p) => {
      const { res, pkg } = await resourceOr404(ctx, p.id);
      return shownResource(ctx, pkg, res, { includeTracking: p.include_tracking });
    },
  }),
  defineAction({
    name: 'resource_update',
    sideEffectFree: false,
    auth: resourceUpdateAuth,
    authBeforeValidation: true,
    description:
      'Update a resource. This replaces the resource: description, resource_type, mimetype and mimetype_inner not sent are cleared, url not sent becomes "", extra fields not sent are removed; name, format, hash, size and dates not sent stay. A file in upload replaces the uploaded file.',
    params: { ...resourceParams, id: resourceId },
    extras: 'keep',
    validatedBy: 'handler',
    returns: resourceReturns('the updated resource'),
    handler: resourceUpdate,
  }),
  defineAction({
    name: 'resource_patch',
    sideEffectFree: false,
    auth: resourceUpdateAuth,
    authBeforeValidation: true,
    description:
      'Patch a resource: the fields sent (those of resource_update) replace those of the resource, the others stay. A file in upload replaces the uploaded file.',
    params: { id: resourceId },
    extras: 'keep',
    // The merged dict is validated by resource_update.
    validatedBy: 'handler',
    returns: resourceReturns('the updated resource'),
    handler: async (ctx, input: Record<string, unknown>) => {
      const { res } = await lockedResourceOr404(ctx, input.id);
      const current = resourceDict(ctx.config, res);
      return ctx.call('resource_update', { ...current, ...input, id: res.id }, { files: ctx.files });
    },
  }),
  defineAction({
    name: 'resource_delete',
    sideEffectFree: false,
    auth: resourceDeleteAuth,
    authBeforeValidation: true,
    description: 'Delete a resource from its dataset (an uploaded file is removed).',
    params: { id: resourceId },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, p) => {
      const { res, pkg } = await resourceOr404(ctx, p.id);
      await lockPackages(ctx.db, [pkg.id]);
      await markResourceDeleted(ctx.db, res.id);
      await setPositions(
        ctx.db,
        (await resourcesOf(ctx.db, [pkg.id])).map((r) => r.id),
      );
      await touchPackage(ctx.db, pkg.id);
      await notifyPackageChange(ctx, pkg.id);
      if (res.url_type === 'upload') await afterCommit(ctx, () => removeResourceFile(ctx.config, res.id));
      return null;
    },
  }),
  defineAction({
    name: 'package_resource_reorder',
    sideEffectFree: false,
    auth: reorderAuth,
    authBeforeValidation: true,
    description: 'Reorder the resources of a dataset. Resources not listed keep their order after those listed.',
    params: {
      id: p.string('the id or name of the dataset'),
      // CKAN's messages for order are bare strings (not lists): the handler checks it.
      order: p.any('list of resource ids', Type.Array(Type.String())),
    },
    returns: {
      description: '{id, order}',
      rtype: 'dictionary',
      schema: Type.Object({ id: Type.String(), order: Type.Array(Type.String()) }),
    },
    handler: async (ctx, p) => {
      const pkg = await packageOr404(ctx, String(p.id));
      if (!Array.isArray(p.order)) throw new ValidationError({ order: 'Must be a list of resource' });
      await lockPackages(ctx.db, [pkg.id]);
      if (new Set(p.order).size !== p.order.length) throw new ValidationError({ order: 'Must supply unique resource_ids' });
      const existing = (await resourcesOf(ctx.db, [pkg.id])).map((r) => r.id);
      const ordered: string[] = [];
      for (const id of p.order) {
        const i = existing.indexOf(String(id));
        if (i < 0) throw new ValidationError({ order: `resource_id ${id} can not be found` });
        ordered.push(...existing.splice(i, 1));
      }
      const order = [...ordered, ...existing];
      await setPositions(ctx.db, order);
      await touchPackage(ctx.db, pkg.id);
      await notifyPackageChange(ctx, pkg.id);
      return { id: p.id, order };
    },
  }),
  defineAction({
    name: 'format_autocomplete',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return resource formats in use that contain q (lower case), most used first.',
    params: {
      q: p.string('the text to look for').required(),
      limit: p.natural('at most this many').default(5).max(1000),
    },
    returns: { description: 'the formats', rtype: 'list of strings', schema: listOf(Type.String()) },
    handler: async (ctx, p) => {
      const params: unknown[] = [];
      const visible = await visiblePackagesCondition(ctx, params, 'p');
      return formatsLike(ctx.db, p.q, p.limit, visible, params);
    },
  }),
];
