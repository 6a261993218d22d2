// Starting and stopping harvest jobs (shared by harvest_job_create/abort and harvest_source_delete).
import type { ActionContext } from '../../actions/context.ts';
import { afterCommit } from '../../actions/registry.ts';
import { ValidationError } from '../../errors.ts';
import { cancelJob } from '../../jobs/queue.ts';
import { endHarvestJob, insertHarvestJob, liveQueueJobs, type HarvestJobRow } from '../../model/harvest-jobs.ts';
import type { HarvestSourceRow } from '../../model/harvest-sources.ts';
import { GATHER_JOB_TYPE, IMPORT_JOB_TYPE } from '../../harvest/run-gather.ts';
import { enqueueGather } from '../../harvest/scheduler.ts';

/** A new job of the source, its gather queued when run; refused while another job of the source is unfinished. */
export async function createHarvestJob(ctx: ActionContext, source: HarvestSourceRow, run: boolean): Promise<HarvestJobRow> {
  if (!source.active || source.state !== 'active') throw new ValidationError({ source_id: ['Can not create jobs on inactive sources'] });
  const job = await insertHarvestJob(ctx.db, source.id);
  if (!job)
    throw new ValidationError({ source_id: ['There already is an unrun job for this source (a job of this source is already running)'] });
  if (run) {
    const wakes: (() => void)[] = [];
    await enqueueGather(ctx.services, ctx.db, job.id, wakes);
    await afterCommit(ctx, () => wakes.forEach((w) => w()));
  }
  return job;
}

/** Marks the job Aborted and stops its queue jobs (queued ones removed, a running one canceled: its worker stops it). */
export async function abortHarvestJob(ctx: ActionContext, jobId: string): Promise<HarvestJobRow | undefined> {
  const job = await endHarvestJob(ctx.db, jobId, 'Aborted');
  for (const id of await liveQueueJobs(ctx.db, jobId, [GATHER_JOB_TYPE, IMPORT_JOB_TYPE])) await cancelJob(ctx.db, id);
  return job;
}
