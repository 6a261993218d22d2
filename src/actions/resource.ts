// Resource actions: resource_create, resource_show, resource_update, resource_patch,
// resource_delete, package_resource_reorder, format_autocomplete.
import type { ActionContext } from './context.ts';
import { afterCommit, type ActionDefinition, type AuthFunction } from './registry.ts';
import { canEditPackage, canReadPackage, visiblePackagesCondition } from '../auth/authz.ts';
import { anyone, denied } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { removeResourceFile } from '../files/storage.ts';
import { resourceDict } from '../model/package-dict.ts';
import { findPackage, lockPackages, notifyPackageChange, touchPackage, type PackageRow } from '../model/packages.ts';
import { findResource, formatsLike, markResourceDeleted, resourcesOf, setPositions, type ResourceRow } from '../model/resources.ts';
import { validate } from '../validation/validate.ts';
import { resourceSchema, type PackageValidationContext } from '../validation/package-schema.ts';
import { bool, clampTo, defaultValue, naturalNumber, notEmpty, unicodeString } from '../validation/validators.ts';
import { createResource, FileOps, packageOr404, replaceResource } from './package.ts';
// The download route of uploaded files registers itself with the http layer.
import '../http/downloads.ts';

async function resourceOr404(ctx: ActionContext, id: unknown): Promise<{ res: ResourceRow; pkg: PackageRow }> {
  if (id === undefined || id === null || id === '') throw new ValidationError({ id: ['Missing value'] });
  const res = await findResource(ctx.db, String(id));
  if (!res || res.state !== 'active') throw new NotFoundError('Resource was not found.');
  const pkg = await findPackage(ctx.db, res.package_id);
  if (!pkg) throw new NotFoundError('Resource was not found.');
  return { res, pkg };
}

/** resource_create's dataset reference, checked before anything is looked up. */
function packageIdParam(params: Record<string, any>): string {
  const ref = params.package_id;
  if (ref === undefined || ref === null || ref === '') throw new ValidationError({ package_id: ['Missing value'] });
  if (typeof ref !== 'string') throw new ValidationError({ package_id: ['Must be a string'] });
  return ref;
}

const resourceCreateAuth: AuthFunction = async (ctx, params) => {
  const pkg = await packageOr404(ctx, packageIdParam(params));
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `create resources on dataset ${pkg.id}`);
};

const resourceShowAuth: AuthFunction = async (ctx, params) => {
  const { pkg } = await resourceOr404(ctx, params.id);
  if (!(await canReadPackage(ctx, pkg))) throw denied(ctx, `read resource ${params.id}`);
};

const resourceUpdateAuth: AuthFunction = async (ctx, params) => {
  const { pkg } = await resourceOr404(ctx, params.id);
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit resource ${params.id}`);
};

const resourceDeleteAuth: AuthFunction = async (ctx, params) => {
  const { pkg } = await resourceOr404(ctx, params.id);
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `delete resource ${params.id}`);
};

const reorderAuth: AuthFunction = async (ctx, params) => {
  if (!params.id) throw new ValidationError({ id: ['Missing value'] });
  const pkg = await packageOr404(ctx, String(params.id));
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit package ${pkg.id}`);
};

async function validateResource(ctx: ActionContext, input: Record<string, unknown>, existing?: ResourceRow) {
  const upload = ctx.files?.upload;
  const vctx: PackageValidationContext = { ctx, existingResourceIds: new Set(existing ? [existing.id] : []), upload };
  const data = { ...input };
  if (existing) data.id = existing.id;
  const { data: out, errors } = await validate(resourceSchema, data, vctx);
  if (!existing && typeof out.id === 'string' && (await findResource(ctx.db, out.id))) errors.id = ['Resource id already exists.'];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return out as Record<string, any>;
}

async function resourceCreate(ctx: ActionContext, p: Record<string, any>) {
  const pkg = await packageOr404(ctx, packageIdParam(p));
  // Concurrent creates on one dataset take positions one after another.
  await lockPackages(ctx.db, [pkg.id]);
  const data = await validateResource(ctx, p);
  const position = (await resourcesOf(ctx.db, [pkg.id])).length;
  const fileOps = new FileOps(ctx);
  const row = await createResource(ctx, pkg.id, data, position, fileOps, ctx.files?.upload);
  await touchPackage(ctx.db, pkg.id);
  await notifyPackageChange(ctx, pkg.id);
  await fileOps.run();
  return resourceDict(ctx.config, row);
}

async function resourceUpdate(ctx: ActionContext, p: Record<string, any>) {
  const { res, pkg } = await resourceOr404(ctx, p.id);
  await lockPackages(ctx.db, [pkg.id]);
  const data = await validateResource(ctx, p, res);
  const fileOps = new FileOps(ctx);
  const row = await replaceResource(ctx, res, data, undefined, fileOps, ctx.files?.upload);
  await touchPackage(ctx.db, pkg.id);
  await notifyPackageChange(ctx, pkg.id);
  await fileOps.run();
  return resourceDict(ctx.config, row);
}

export const resourceActions: ActionDefinition<any, any>[] = [
  {
    name: 'resource_create',
    sideEffectFree: false,
    auth: resourceCreateAuth,
    authBeforeValidation: true,
    help: 'Append a new resource to a dataset.\n\n:param package_id: id or name of the dataset\n:param url: the URL of the resource (required unless a file is uploaded)\n:param upload: a file (multipart/form-data request); the resource then points at its download URL\n:param name, description, format, hash, resource_type, mimetype, mimetype_inner, cache_url, size, created, last_modified, cache_last_updated: (optional)\nOther keys are kept as extra fields of the resource.\n:returns: the new resource\n:rtype: dictionary',
    handler: resourceCreate,
  },
  {
    name: 'resource_show',
    sideEffectFree: true,
    auth: resourceShowAuth,
    schema: { id: [notEmpty, unicodeString], include_tracking: bool(false) },
    help: 'Return the metadata of a resource.\n\n:param id: the id of the resource\n:param include_tracking: add tracking_summary (optional, default false)\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const { res } = await resourceOr404(ctx, p.id);
      return resourceDict(ctx.config, res, { includeTracking: p.include_tracking });
    },
  },
  {
    name: 'resource_update',
    sideEffectFree: false,
    auth: resourceUpdateAuth,
    authBeforeValidation: true,
    help: 'Update a resource. This replaces the resource: description, resource_type, mimetype and mimetype_inner not sent are cleared, url not sent becomes "", extra fields not sent are removed; name, format, hash, size and dates not sent stay. A file in upload replaces the uploaded file.\n\n:param id: the id of the resource\n:returns: the updated resource\n:rtype: dictionary',
    handler: resourceUpdate,
  },
  {
    name: 'resource_patch',
    sideEffectFree: false,
    auth: resourceUpdateAuth,
    authBeforeValidation: true,
    help: 'Patch a resource: the fields sent replace those of the resource, the others stay. A file in upload replaces the uploaded file.\n\n:param id: the id of the resource\n:returns: the updated resource\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const { res } = await resourceOr404(ctx, p.id);
      const current = resourceDict(ctx.config, res);
      return ctx.call('resource_update', { ...current, ...p, id: res.id }, { files: ctx.files });
    },
  },
  {
    name: 'resource_delete',
    sideEffectFree: false,
    auth: resourceDeleteAuth,
    authBeforeValidation: true,
    help: 'Delete a resource from its dataset (an uploaded file is removed).\n\n:param id: the id of the resource',
    handler: async (ctx, p) => {
      const { res, pkg } = await resourceOr404(ctx, p.id);
      await lockPackages(ctx.db, [pkg.id]);
      await markResourceDeleted(ctx.db, res.id);
      await setPositions(ctx.db, (await resourcesOf(ctx.db, [pkg.id])).map((r) => r.id));
      await touchPackage(ctx.db, pkg.id);
      await notifyPackageChange(ctx, pkg.id);
      if (res.url_type === 'upload') await afterCommit(ctx, () => removeResourceFile(ctx.config, res.id));
      return null;
    },
  },
  {
    name: 'package_resource_reorder',
    sideEffectFree: false,
    auth: reorderAuth,
    authBeforeValidation: true,
    help: 'Reorder the resources of a dataset. Resources not listed keep their order after those listed.\n\n:param id: the id or name of the dataset\n:param order: list of resource ids\n:returns: {id, order}\n:rtype: dictionary',
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
  },
  {
    name: 'format_autocomplete',
    sideEffectFree: true,
    auth: anyone,
    schema: { q: [notEmpty, unicodeString], limit: [defaultValue(5), naturalNumber, clampTo(() => 1000)] },
    help: 'Return resource formats in use that contain q (lower case), most used first.\n\n:param q: the text to look for\n:param limit: at most this many (default 5)\n:rtype: list of strings',
    handler: async (ctx, p) => {
      const params: unknown[] = [];
      const visible = await visiblePackagesCondition(ctx, params, 'p');
      return formatsLike(ctx.db, p.q, p.limit, visible, params);
    },
  },
];

