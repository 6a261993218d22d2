// Harvest sources: harvest_source_create/show/show_status/list/update/patch/delete/clear/reindex,
// with ckanext-harvest's names, parameters and dicts.
import { defineAction, afterCommit, type ActionDefinition } from '../../actions/registry.ts';
import type { ActionContext } from '../../actions/context.ts';
import { p } from '../../validation/params.ts';
import { anyone } from '../../auth/rules.ts';
import { groupsWithPermission } from '../../auth/authz.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import {
  findHarvestSource,
  insertHarvestSource,
  listHarvestSources,
  markHarvestSourceDeleted,
  updateHarvestSource,
  type HarvestSourceRow,
} from '../../model/harvest-sources.ts';
import { findGroup } from '../../model/groups.ts';
import { clearSourceHistory, packagesOfSource, sourcePackageIds } from '../../model/harvest-objects.ts';
import { unfinishedHarvestJob } from '../../model/harvest-jobs.ts';
import { reindexDatasets } from '../../search/service.ts';
import { harvestSourceDict, sourceStatus } from './dicts.ts';
import { authSourceCreate, canManageSource, requireSourceManager, requireSourceReader } from './auth.ts';
import { sourceFields, sourceParams, type SourceInput } from './source-params.ts';
import { abortHarvestJob } from './job-control.ts';

export async function sourceOr404(ctx: ActionContext, ref: { id?: string; url?: string }): Promise<HarvestSourceRow> {
  const s = await findHarvestSource(ctx.db, ref);
  if (!s) throw new NotFoundError(`Harvest source ${ref.id ?? ref.url ?? ''} does not exist`);
  return s;
}

/** An auth rule over the source named by `key` (a missing source passes: the handler answers 404). */
const onSource =
  (check: (ctx: ActionContext, s: HarvestSourceRow) => Promise<void>, key = 'id') =>
  async (ctx: ActionContext, params: Record<string, any>) => {
    const ref = params[key];
    const s =
      typeof ref === 'string' || typeof params.url === 'string' ? await findHarvestSource(ctx.db, { id: ref, url: params.url }) : undefined;
    if (s) await check(ctx, s);
  };
export const manageSource = (what: string, key = 'id') => onSource((ctx, s) => requireSourceManager(ctx, s, what), key);
const readSource = onSource(requireSourceReader);

const idParam = p.string('id or name of the harvest source');

export const sourceActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'harvest_source_create',
    sideEffectFree: false,
    auth: authSourceCreate,
    description: 'Create a harvest source: a remote CKAN site or DCAT catalog whose datasets are copied here by harvest jobs.',
    params: { ...sourceParams(true), name: p.name('the name of the source (unique among sources)').required() },
    returns: { description: 'the source dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      const fields = await sourceFields(ctx, prm as SourceInput, null);
      const row = await insertHarvestSource(ctx.db, fields, ctx.identity.user?.id ?? null);
      return harvestSourceDict(ctx.db, row);
    },
  }),
  defineAction({
    name: 'harvest_source_show',
    sideEffectFree: true,
    auth: readSource,
    description: 'Return a harvest source (by id or name, or by url) with its status: jobs, the last job with its counts, datasets.',
    params: { id: idParam, url: p.string('the URL of the source (when no id is given)') },
    returns: { description: 'the source dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      if (!prm.id && !prm.url) throw new ValidationError({ id: ['Missing value'] });
      const s = await sourceOr404(ctx, { id: prm.id, url: prm.url });
      if (s.state !== 'active' && !(await canManageSource(ctx, s.owner_org)))
        throw new NotFoundError(`Harvest source ${prm.id ?? prm.url} does not exist`);
      return harvestSourceDict(ctx.db, s);
    },
  }),
  defineAction({
    name: 'harvest_source_show_status',
    sideEffectFree: true,
    auth: readSource,
    description: 'Return the status of a harvest source: job_count, last_job (with stats and errors), total_datasets, next_harvest.',
    params: { id: idParam.required() },
    returns: { description: 'the status dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => sourceStatus(ctx.db, await sourceOr404(ctx, { id: prm.id })),
  }),
  defineAction({
    name: 'harvest_source_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'List the active harvest sources you may see, by title.',
    params: {
      organization_id: p.string('only the sources of this organization (id or name)'),
      only_active: p.boolean('only active sources').default(false),
      return_last_job_status: p.boolean('each source with last_job_status, its last job').default(false),
      limit: p.natural('most sources returned').default(1000).max(1000),
      offset: p.natural('sources skipped').default(0),
    },
    returns: { description: 'source dicts', rtype: 'list' },
    handler: async (ctx, prm) => {
      let organizationId: string | undefined;
      if (prm.organization_id) {
        const org = await findGroup(ctx.db, prm.organization_id);
        if (!org) return [];
        organizationId = org.id;
      }
      const readableOrgs = ctx.identity.sysadmin ? null : ctx.identity.user ? await groupsWithPermission(ctx, 'read') : [];
      const rows = await listHarvestSources(ctx.db, {
        organizationId,
        onlyActive: prm.only_active,
        readableOrgs,
        limit: prm.limit,
        offset: prm.offset,
      });
      const out = [];
      for (const s of rows) {
        const d = await harvestSourceDict(ctx.db, s);
        out.push(prm.return_last_job_status ? { ...d, last_job_status: d.status?.last_job ?? {} } : d);
      }
      return out;
    },
  }),
  defineAction({
    name: 'harvest_source_update',
    sideEffectFree: false,
    auth: manageSource('update'),
    description: 'Replace a harvest source: fields not given take their defaults (frequency MANUAL, no config, no notes, active).',
    params: { id: idParam.required(), ...sourceParams(true) },
    returns: { description: 'the source dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      const s = await sourceOr404(ctx, { id: prm.id });
      const input: SourceInput = {
        frequency: 'MANUAL',
        config: null,
        notes: '',
        title: '',
        private: false,
        active: true,
        ...(prm as SourceInput),
      };
      return saveSource(ctx, s, input);
    },
  }),
  defineAction({
    name: 'harvest_source_patch',
    sideEffectFree: false,
    auth: manageSource('update'),
    description: 'Change some fields of a harvest source; the others keep their values.',
    params: { id: idParam.required(), ...sourceParams(false) },
    returns: { description: 'the source dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => saveSource(ctx, await sourceOr404(ctx, { id: prm.id }), prm as SourceInput),
  }),
  defineAction({
    name: 'harvest_source_delete',
    sideEffectFree: false,
    auth: manageSource('delete'),
    description:
      'Delete a harvest source: it stops running (an unfinished job is aborted); its datasets stay unless clear is true (then they are purged as by harvest_source_clear).',
    params: { id: idParam.required(), clear: p.boolean('also purge its datasets, jobs and objects').default(false) },
    handler: async (ctx, prm) => {
      const s = await sourceOr404(ctx, { id: prm.id });
      const running = await unfinishedHarvestJob(ctx.db, s.id);
      if (running) await abortHarvestJob(ctx, running.id);
      if (prm.clear) await clearSource(ctx, s);
      await markHarvestSourceDeleted(ctx.db, s.id);
      return null;
    },
  }),
  defineAction({
    name: 'harvest_source_clear',
    sideEffectFree: false,
    auth: manageSource('clear'),
    description: "Purge a harvest source's datasets and forget its jobs and objects (the source stays). Refused while a job is unfinished.",
    params: { id: idParam.required() },
    returns: { description: '{id}: the source', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      const s = await sourceOr404(ctx, { id: prm.id });
      if (await unfinishedHarvestJob(ctx.db, s.id))
        throw new ValidationError({ id: ['The source has an unfinished job: abort it (harvest_job_abort) first'] });
      await clearSource(ctx, s);
      return { id: s.id };
    },
  }),
  defineAction({
    name: 'harvest_source_reindex',
    sideEffectFree: false,
    auth: manageSource('reindex'),
    description: "Index a harvest source's datasets in the search index again.",
    params: { id: idParam.required() },
    returns: { description: 'the number of datasets indexed', rtype: 'int' },
    handler: async (ctx, prm) => {
      const s = await sourceOr404(ctx, { id: prm.id });
      const ids = await sourcePackageIds(ctx.db, s.id, { publicOnly: false });
      await reindexDatasets(ctx.services, ctx.db, ids, (fn) => afterCommit(ctx, fn));
      return ids.length;
    },
  }),
];

async function saveSource(ctx: ActionContext, s: HarvestSourceRow, input: SourceInput) {
  if (s.state !== 'active' && !(await canManageSource(ctx, s.owner_org))) throw new NotFoundError(`Harvest source ${s.id} does not exist`);
  // Moving a source to another organization needs its admins' consent too.
  if (input.owner_org !== undefined && input.owner_org !== '' && !ctx.identity.sysadmin) {
    const org = await findGroup(ctx.db, input.owner_org);
    if (org && !(await canManageSource(ctx, org.id)))
      throw new ValidationError({ owner_org: ['You cannot move the source to that organization'] });
  }
  const fields = await sourceFields(ctx, input, s);
  const row = await updateHarvestSource(ctx.db, s.id, fields);
  return harvestSourceDict(ctx.db, row);
}

/** Purges the datasets a source made (any state) and forgets its jobs and objects. */
async function clearSource(ctx: ActionContext, s: HarvestSourceRow): Promise<void> {
  for (const id of await packagesOfSource(ctx.db, s.id)) await ctx.call('dataset_purge', { id }, { ignoreAuth: true });
  await clearSourceHistory(ctx.db, s.id);
}
