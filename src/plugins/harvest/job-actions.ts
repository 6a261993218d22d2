// Harvest jobs: harvest_job_create (run a source now), harvest_job_show, harvest_job_list,
// harvest_job_abort. Jobs are seen and run by those who manage their source.
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import type { ActionContext } from '../../actions/context.ts';
import { p } from '../../validation/params.ts';
import { groupsWithPermission, requireUser } from '../../auth/authz.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { findHarvestJob, jobErrorReport, listHarvestJobs, type HarvestJobRow } from '../../model/harvest-jobs.ts';
import { findHarvestSource } from '../../model/harvest-sources.ts';
import { harvestJobDict, dictOrAttr } from './dicts.ts';
import { requireSourceManager } from './auth.ts';
import { manageSource, sourceOr404 } from './source-actions.ts';
import { abortHarvestJob, createHarvestJob } from './job-control.ts';

async function jobOr404(ctx: ActionContext, id: string): Promise<HarvestJobRow> {
  const job = await findHarvestJob(ctx.db, id);
  if (!job) throw new NotFoundError(`Harvest job ${id} does not exist`);
  return job;
}

/** The rule of the source a job belongs to (a missing job passes: the handler answers 404). */
const manageJobSource = (what: string) => async (ctx: ActionContext, params: Record<string, any>) => {
  const job = typeof params.id === 'string' ? await findHarvestJob(ctx.db, params.id) : undefined;
  if (job) {
    const s = await findHarvestSource(ctx.db, { id: job.source_id });
    if (s) await requireSourceManager(ctx, s, what);
  } else if (typeof params.source_id === 'string') await manageSource(what, 'source_id')(ctx, params);
};

export const jobActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'harvest_job_create',
    sideEffectFree: false,
    auth: manageSource('run', 'source_id'),
    description:
      'Create a harvest job for a source and run it (its gather queued at once). Refused while the source has an unfinished job, or is inactive.',
    params: {
      source_id: p.string('id or name of the harvest source').required(),
      run: p.boolean('queue it now (false: the scheduler starts it on its next tick)').default(true),
    },
    returns: { description: 'the job dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      const source = await sourceOr404(ctx, { id: prm.source_id });
      const job = await createHarvestJob(ctx, source, prm.run);
      return harvestJobDict(ctx.db, job);
    },
  }),
  defineAction({
    name: 'harvest_job_show',
    sideEffectFree: true,
    auth: manageJobSource('see the jobs of'),
    description: 'Return a harvest job: status, times, stats (added, updated, deleted, not modified, errored) and error summaries.',
    params: { id: p.string('id of the job').required(), attr: p.string('return only this key of the job dict') },
    returns: { description: 'the job dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      const d = await harvestJobDict(ctx.db, await jobOr404(ctx, prm.id));
      return dictOrAttr(d, prm.attr);
    },
  }),
  defineAction({
    name: 'harvest_job_report',
    sideEffectFree: true,
    auth: manageJobSource('see the jobs of'),
    description: "Return a harvest job's errors: gather_errors (newest first) and object_errors by object id (guid, original_url, errors).",
    params: { id: p.string('id of the job').required() },
    returns: { description: '{gather_errors, object_errors}', rtype: 'dictionary' },
    handler: async (ctx, prm) => jobErrorReport(ctx.db, (await jobOr404(ctx, prm.id)).id),
  }),
  defineAction({
    name: 'harvest_job_list',
    sideEffectFree: true,
    auth: async (ctx, params) => {
      if (typeof params.source_id === 'string') return manageSource('see the jobs of', 'source_id')(ctx, params);
      requireUser(ctx, 'harvest_job_list');
    },
    description: 'List harvest jobs, newest first: of one source, or of every source you manage.',
    params: {
      source_id: p.string('id or name of the harvest source'),
      status: p.enum(['New', 'Running', 'Finished', 'Aborted'] as const, 'only jobs in this status'),
      limit: p.natural('most jobs returned').default(100).max(1000),
      offset: p.natural('jobs skipped').default(0),
    },
    returns: { description: 'job dicts', rtype: 'list' },
    handler: async (ctx, prm) => {
      const sourceId = prm.source_id ? (await sourceOr404(ctx, { id: prm.source_id })).id : undefined;
      let sourceIds: string[] | null = null;
      if (!sourceId && !ctx.identity.sysadmin) {
        const orgs = await groupsWithPermission(ctx, 'admin');
        const r = await ctx.call('harvest_source_list', { limit: 1000 });
        sourceIds = (r as { id: string; owner_org: string | null }[])
          .filter((s) => s.owner_org && orgs.includes(s.owner_org))
          .map((s) => s.id);
      }
      const jobs = await listHarvestJobs(ctx.db, { sourceId, status: prm.status, sourceIds, limit: prm.limit, offset: prm.offset });
      const out = [];
      for (const j of jobs) out.push(await harvestJobDict(ctx.db, j));
      return out;
    },
  }),
  defineAction({
    name: 'harvest_job_abort',
    sideEffectFree: false,
    auth: manageJobSource('abort the jobs of'),
    description: "Abort a harvest job (by id, or a source's unfinished job by source_id): it stops, what it imported stays.",
    params: { id: p.string('id of the job'), source_id: p.string('id or name of the source whose unfinished (else last) job to abort') },
    returns: { description: 'the job dict', rtype: 'dictionary' },
    handler: async (ctx, prm) => {
      let job: HarvestJobRow | undefined;
      if (prm.id) job = await jobOr404(ctx, prm.id);
      else if (prm.source_id) {
        const s = await sourceOr404(ctx, { id: prm.source_id });
        job = (await listHarvestJobs(ctx.db, { sourceId: s.id, limit: 1, offset: 0 }))[0];
        if (!job) throw new NotFoundError(`Harvest source ${prm.source_id} has no job`);
      } else throw new ValidationError({ id: ['Missing value'] });
      if (job.status !== 'New' && job.status !== 'Running')
        throw new ValidationError({ id: [`The job is not running (status ${job.status})`] });
      const ended = await abortHarvestJob(ctx, job.id);
      return harvestJobDict(ctx.db, ended ?? job);
    },
  }),
];
