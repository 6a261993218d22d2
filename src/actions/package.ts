// Dataset actions: package_create/show/update/patch/revise/delete, dataset_purge, lists, autocomplete,
// owner org and bulk updates. Saving is in package-save.ts, package_revise's paths in package-revise.ts.
import type { ActionContext } from './context.ts';
import { afterCommit, defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { canBulkUpdate, canDeletePackage, canEditPackage, canReadPackage, checkPackageCreate, hasGroupPermission } from '../auth/authz.ts';
import { anyone, denied, sysadminOnly } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { removeResourceFile } from '../files/storage.ts';
import { Invalid, MISSING, type Validator } from '../validation/validate.ts';
import { notEmpty, unicodeString } from '../validation/validators.ts';
import {
  activePublicNames,
  findGroup,
  findPackage,
  lockPackages,
  packageGroups,
  purgePackage,
  notifyPackageChange,
  removeMembershipsAndCollaborators,
  updatePackage,
  type PackageRow,
} from '../model/packages.ts';
import { buildPackageDicts } from '../model/package-dict.ts';
import { allResourcesOf } from '../model/resources.ts';
import { deleteUnusedTags } from '../model/tags.ts';
import { autocompletePackages, organizationPackageIds, recentlyChangedPackages, tagIdsOfPackage } from '../model/package-lists.ts';
import { packageParams } from '../validation/package-schema.ts';
import { p } from '../validation/params.ts';
import { datasetSchema, listOf } from './result-schemas.ts';
import { createPackage, packageOr404, patchPackage, showPackage, updatePackageFrom } from './package-save.ts';
import { packageRevise, reviseParams, reviseTarget } from './package-revise.ts';

// --- auth rules -----------------------------------------------------------------------------

/** CKAN's _check_group_auth: the caller needs manage_group on every group added. */
async function checkGroupAuth(ctx: ActionContext, groups: unknown, pkg?: PackageRow): Promise<void> {
  if (!Array.isArray(groups) || !groups.length) return;
  const current = pkg ? (await packageGroups(ctx.db, [pkg.id])).map((g) => g.id) : [];
  for (const g of groups) {
    const ref = g && typeof g === 'object' ? (g as any).id || (g as any).name : typeof g === 'string' ? g : undefined;
    if (!ref || typeof ref !== 'string') continue;
    const group = await findGroup(ctx.db, ref);
    // (a group that does not exist is the validation's error)
    if (!group || current.includes(group.id)) continue;
    if (!(await hasGroupPermission(ctx, group.id, 'manage_group'))) throw denied(ctx, 'edit these groups');
  }
}

const packageCreateAuth: AuthFunction = async (ctx, params) => {
  // (groups that do not exist are reported by the validation, as Validation Errors)
  await checkPackageCreate(ctx, params);
};

/** The dataset named by id (or name) of an update; missing id and missing dataset as CKAN reports them. */
async function targetPackage(ctx: ActionContext, params: Record<string, any>, key: 'id' | 'name_or_id' = 'id'): Promise<PackageRow> {
  const ref = params.id ?? params.name ?? params.name_or_id;
  if (ref === undefined || ref === null || ref === '') throw new ValidationError({ [key]: ['Missing value'] });
  return packageOr404(ctx, String(ref));
}

const packageUpdateAuth: AuthFunction = async (ctx, params) => {
  const pkg = await targetPackage(ctx, params);
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit package ${pkg.id}`);
  await checkGroupAuth(ctx, params.groups, pkg);
};

const packageDeleteAuth: AuthFunction = async (ctx, params) => {
  const pkg = await targetPackage(ctx, params);
  if (!(await canDeletePackage(ctx, pkg))) throw denied(ctx, `delete package ${pkg.id}`);
};

const packageShowAuth: AuthFunction = async (ctx, params) => {
  const pkg = await targetPackage(ctx, params, 'name_or_id');
  if (!(await canReadPackage(ctx, pkg))) throw denied(ctx, `read package ${params.id ?? params.name_or_id}`);
};

/** Who may revise: the editors of the dataset named by match (the handler reports a missing match). */
const packageReviseAuth: AuthFunction = async (ctx, params) => {
  const ref = reviseTarget(params);
  if (!ref) return;
  const pkg = await findPackage(ctx.db, ref);
  if (pkg && !(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit package ${pkg.id}`);
};

const orgAdminAuth: AuthFunction = async (ctx, params) => {
  if (typeof params.org_id !== 'string' || !params.org_id) throw denied(ctx, 'edit these packages');
  const org = await findGroup(ctx.db, params.org_id);
  // An organization that does not exist is Not Found (before any permission check), as in CKAN.
  if (!org) throw new NotFoundError('Organization was not found.');
  if (!(await canBulkUpdate(ctx, org.id))) throw denied(ctx, 'edit these packages');
};

// --- handlers -------------------------------------------------------------------------------

async function bulkUpdate(ctx: ActionContext, p: { datasets: string[]; org_id: string }, changes: { private?: boolean; state?: string }) {
  const org = await findGroup(ctx.db, p.org_id);
  if (!org) throw new NotFoundError('Organization was not found.');
  const ids = await organizationPackageIds(ctx.db, org.id, p.datasets);
  await lockPackages(ctx.db, ids);
  for (const id of ids) {
    await updatePackage(ctx.db, id, changes);
    if (changes.state === 'deleted') await removeMembershipsAndCollaborators(ctx.db, id);
    await notifyPackageChange(ctx, id, changes.state === 'deleted' ? 'deleted' : 'changed');
  }
  return null;
}

/** A write's answer: the saved dataset's dict, or its id alone when that is all the caller reads (a harvest import). */
const answer = (ctx: ActionContext, row: PackageRow) => (ctx.idAnswer ? { id: row.id } : showPackage(ctx, row));

// --- declarations ---------------------------------------------------------------------------

/** A dataset named by id, or by name when no id is sent (CKAN accepts both). */
const datasetRef = {
  id: p.string('the id or name of the dataset'),
  name: p.string('the name of the dataset (when id is not sent)').hidden(),
  name_or_id: p.string('another name of id').hidden(),
};

const limitOffset = {
  limit: p.natural('at most this many'),
  offset: p.natural('skip this many'),
};

/** package_show's name_or_id falls back to id. */
const orId: Validator = (v, f) => (v === MISSING || v === null || v === undefined || v === '' ? (f.data.id ?? v) : v);

/** bulk updates: a list of ids or names, or one; anything else is missing. */
const datasetList: Validator = (v) => {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.map(String);
  throw new Invalid('Missing value');
};
const text: Validator = (v) => {
  if (typeof v !== 'string') throw new Invalid('Missing value');
  return v;
};
const bulkParams = {
  datasets: p
    .custom<string[]>('ids or names of datasets of the organization', [datasetList], Type.Array(Type.String()), 'list of strings')
    .required(),
  org_id: p.custom<string>('id or name of the organization', [text], Type.String()).required(),
};

const datasetReturns = (description: string) => ({ description, rtype: 'dictionary', schema: datasetSchema });
const nullReturns = { description: 'null', schema: Type.Null() };

export const packageActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'package_create',
    sideEffectFree: false,
    auth: packageCreateAuth,
    authBeforeValidation: true,
    description:
      'Create a new dataset (package). You must be authorized to create new datasets. If you specify any groups for the new dataset, you must also be authorized to edit these groups. Other keys are kept as custom fields and returned as sent.',
    params: packageParams({ create: true }),
    extras: 'keep',
    validatedBy: 'handler',
    returns: datasetReturns('the new dataset'),
    handler: async (ctx, input: Record<string, unknown>) => answer(ctx, await createPackage(ctx, input)),
  }),
  defineAction({
    name: 'package_show',
    sideEffectFree: true,
    auth: packageShowAuth,
    description: 'Return the metadata of a dataset (package) and its resources.',
    params: {
      id: p.string('the id or name of the dataset'),
      name_or_id: p.custom<string>('another name of id', [orId, notEmpty, unicodeString], Type.String()).handlesMissing(),
      use_default_schema: p.boolean('accepted for compatibility (svc has one schema)').default(false),
      include_tracking: p.boolean('add tracking_summary').default(false),
      include_plugin_data: p.boolean('add plugin_data (sysadmins only)').default(false),
    },
    returns: datasetReturns('the dataset'),
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, { id: p.name_or_id }, 'name_or_id');
      return showPackage(ctx, pkg, { includeTracking: p.include_tracking, includePluginData: p.include_plugin_data });
    },
  }),
  defineAction({
    name: 'package_update',
    sideEffectFree: false,
    auth: packageUpdateAuth,
    authBeforeValidation: true,
    description:
      'Update a dataset (package). This replaces the dataset: resources, tags, extras and groups not sent are removed, and text fields not sent are cleared; name, owner_org, private, state and relationships not sent stay. Use package_patch to change some fields only.',
    params: packageParams({ create: false }),
    extras: 'keep',
    validatedBy: 'handler',
    returns: datasetReturns('the updated dataset'),
    handler: async (ctx, input: Record<string, unknown>) => {
      const pkg = await targetPackage(ctx, input);
      return answer(ctx, await updatePackageFrom(ctx, pkg, input));
    },
  }),
  defineAction({
    name: 'package_patch',
    sideEffectFree: false,
    auth: packageUpdateAuth,
    authBeforeValidation: true,
    description:
      'Patch a dataset: the fields sent (those of package_update) replace those of the dataset, the others stay (lists sent replace the whole list).',
    params: datasetRef,
    extras: 'keep',
    // The merged dict is validated by package_update.
    validatedBy: 'handler',
    returns: datasetReturns('the updated dataset'),
    handler: async (ctx, input: Record<string, unknown>) => {
      return patchPackage(ctx, await targetPackage(ctx, input), input);
    },
  }),
  defineAction({
    name: 'package_revise',
    sideEffectFree: false,
    auth: packageReviseAuth,
    description: 'Revise a dataset selectively with match, filter and update.',
    params: reviseParams,
    extras: 'keep',
    returns: {
      description: '{"package": the updated dataset}',
      rtype: 'dictionary',
      schema: Type.Object({ package: datasetSchema }, { additionalProperties: true }),
    },
    handler: packageRevise,
  }),
  defineAction({
    name: 'package_delete',
    sideEffectFree: false,
    auth: packageDeleteAuth,
    authBeforeValidation: true,
    description: 'Delete a dataset (state deleted). Its group memberships and collaborators are removed.',
    params: datasetRef,
    returns: nullReturns,
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      await lockPackages(ctx.db, [pkg.id]);
      await updatePackage(ctx.db, pkg.id, { state: 'deleted' });
      await removeMembershipsAndCollaborators(ctx.db, pkg.id);
      await notifyPackageChange(ctx, pkg.id, 'deleted');
      return null;
    },
  }),
  defineAction({
    name: 'dataset_purge',
    sideEffectFree: false,
    auth: sysadminOnly,
    authBeforeValidation: true,
    description:
      'Purge a dataset: removes it for good with its resources, their uploaded files, memberships, relationships, extras and tags no longer used. Sysadmins only.',
    params: datasetRef,
    returns: nullReturns,
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      await lockPackages(ctx.db, [pkg.id]);
      const resources = await allResourcesOf(ctx.db, pkg.id);
      const tagIds = await tagIdsOfPackage(ctx.db, pkg.id);
      // Listeners run before the rows go, so they can still see what belonged to the dataset.
      await notifyPackageChange(ctx, pkg.id, 'purged');
      await purgePackage(ctx.db, pkg.id);
      await deleteUnusedTags(ctx.db, tagIds);
      await afterCommit(ctx, async () => void (await Promise.all(resources.map((r) => removeResourceFile(ctx.config, r.id)))));
      return null;
    },
  }),
  defineAction({
    name: 'package_list',
    sideEffectFree: true,
    auth: anyone,
    description: "Return the names of the site's active public datasets, by name.",
    params: { limit: limitOffset.limit, offset: p.natural('skip this many (used with limit)') },
    returns: { description: 'the names', rtype: 'list of strings', schema: listOf(Type.String()) },
    handler: (ctx, p) => activePublicNames(ctx.db, p.limit || undefined, p.limit ? (p.offset ?? 0) : 0),
  }),
  defineAction({
    name: 'current_package_list_with_resources',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return active datasets with their resources, most recently modified first (private datasets for sysadmins only).',
    params: {
      limit: p.natural('at most this many (default 10)'),
      offset: limitOffset.offset,
      page: p.integer('(deprecated, use offset) page number from 1, in pages of limit (ignored without limit)'),
    },
    returns: { description: 'the datasets', rtype: 'list of dictionaries', schema: listOf(datasetSchema) },
    handler: async (ctx, p) => {
      const limit = Math.min(p.limit ?? 10, ctx.config.int('svc.search.rows_max'));
      let offset = p.offset ?? 0;
      if (p.offset === undefined && p.page !== undefined) {
        if (p.page < 1) throw new ValidationError({ page: ['Must be larger than 0'] });
        // CKAN: page counts in pages of the limit sent; without a limit it is ignored (offset 0).
        offset = p.limit ? (p.page - 1) * limit : 0;
      }
      return buildPackageDicts(ctx, await recentlyChangedPackages(ctx.db, limit, offset, ctx.identity.sysadmin));
    },
  }),
  defineAction({
    name: 'package_autocomplete',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return datasets whose name or title contains q.',
    params: {
      q: p.string('the text to look for').required(),
      limit: p.natural('at most this many').default(10).max(1000),
    },
    returns: {
      description: 'list of {name, title, match_field, match_displayed}',
      rtype: 'list',
      schema: listOf(
        Type.Object({
          name: Type.String(),
          title: Type.Union([Type.String(), Type.Null()]),
          match_field: Type.String(),
          match_displayed: Type.String(),
        }),
      ),
    },
    handler: async (ctx, p) => {
      const rows = await autocompletePackages(ctx.db, p.q, p.limit);
      const q = p.q.toLowerCase();
      return rows.map((r) =>
        r.name.includes(q)
          ? { name: r.name, title: r.title, match_field: 'name', match_displayed: r.name }
          : { name: r.name, title: r.title, match_field: 'title', match_displayed: `${r.title} (${r.name})` },
      );
    },
  }),
  defineAction({
    name: 'package_owner_org_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    authBeforeValidation: true,
    description: 'Move a dataset to another organization (empty organization_id: no organization). Sysadmins only.',
    params: {
      ...datasetRef,
      organization_id: p.string('the id or name of the organization (empty: none)'),
    },
    returns: nullReturns,
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      let orgId: string | null = null;
      if (p.organization_id) {
        const org = await findGroup(ctx.db, p.organization_id);
        if (!org || !org.is_organization) throw new NotFoundError('Organization was not found.');
        orgId = org.id;
      } else if (pkg.private) {
        throw new ValidationError({ private: ["Datasets with no organization can't be private."] });
      }
      await updatePackage(ctx.db, pkg.id, { owner_org: orgId });
      await notifyPackageChange(ctx, pkg.id);
      return null;
    },
  }),
  defineAction({
    name: 'bulk_update_private',
    sideEffectFree: false,
    auth: orgAdminAuth,
    authBeforeValidation: true,
    description: 'Make datasets of an organization private. Organization admins only; datasets of other organizations are left alone.',
    params: bulkParams,
    returns: nullReturns,
    handler: (ctx, p) => bulkUpdate(ctx, p, { private: true }),
  }),
  defineAction({
    name: 'bulk_update_public',
    sideEffectFree: false,
    auth: orgAdminAuth,
    authBeforeValidation: true,
    description: 'Make datasets of an organization public. Organization admins only.',
    params: bulkParams,
    returns: nullReturns,
    handler: (ctx, p) => bulkUpdate(ctx, p, { private: false }),
  }),
  defineAction({
    name: 'bulk_update_delete',
    sideEffectFree: false,
    auth: orgAdminAuth,
    authBeforeValidation: true,
    description: 'Delete datasets of an organization. Organization admins only.',
    params: bulkParams,
    returns: nullReturns,
    handler: (ctx, p) => bulkUpdate(ctx, p, { state: 'deleted' }),
  }),
];
