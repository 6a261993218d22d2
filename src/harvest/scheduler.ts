// The harvest scheduler, one tick at a time (every svc.harvest.scheduler_interval seconds in each
// process that set the plugin up): sources whose next_run passed get a job (claimed with
// FOR UPDATE SKIP LOCKED, so nodes ticking at once never start one source twice); jobs created
// with run=false are started; jobs whose queue jobs all ended without finishing them (a worker
// killed on its last attempt) are ended with an error, their objects left to import marked failed.
import type { Services } from '../actions/context.ts';
import { claimDueSources, scheduleNextRun } from '../model/harvest-sources.ts';
import { endHarvestJob, insertGatherError, insertHarvestJob, stalledHarvestJobs, findHarvestJob } from '../model/harvest-jobs.ts';
import { failObject, waitingObjectIds } from '../model/harvest-objects.ts';
import { GATHER_JOB_TYPE, IMPORT_JOB_TYPE } from './run-gather.ts';
import type { Queryable } from '../db/database.ts';

/** Queues the gather of a harvest job (visible once db commits; then run the wakes). */
export async function enqueueGather(services: Services, db: Queryable, jobId: string, wakes: (() => void)[]): Promise<void> {
  await services.jobs.enqueue(
    db,
    {
      type: GATHER_JOB_TYPE,
      queue: services.config.str('svc.harvest.queue'),
      title: `harvest gather ${jobId}`,
      data: { harvest_job_id: jobId },
    },
    (fn) => wakes.push(fn),
  );
}

export interface TickOutcome {
  started: string[];
  ended: string[];
}

export async function schedulerTick(services: Services): Promise<TickOutcome> {
  const out: TickOutcome = { started: [], ended: [] };
  const wakes: (() => void)[] = [];
  await services.db.transaction(async (tx) => {
    for (const source of await claimDueSources(tx, 20)) {
      const job = await insertHarvestJob(tx, source.id);
      if (job) {
        await enqueueGather(services, tx, job.id, wakes);
        out.started.push(job.id);
      }
      await scheduleNextRun(tx, source.id);
    }
  });
  for (const id of await stalledHarvestJobs(services.db, GATHER_JOB_TYPE, IMPORT_JOB_TYPE)) {
    await services.db.transaction(async (tx) => {
      const job = await findHarvestJob(tx, id);
      if (!job) return;
      if (job.status === 'New') {
        await enqueueGather(services, tx, id, wakes);
        out.started.push(id);
        return;
      }
      if (!job.gather_finished) await insertGatherError(tx, id, 'the gather stopped: its worker ended before it finished');
      for (const objectId of await waitingObjectIds(tx, id))
        await failObject(tx, objectId, 'the import stopped: its worker ended before it finished');
      await endHarvestJob(tx, id, 'Finished');
      out.ended.push(id);
    });
  }
  for (const wake of wakes) wake();
  return out;
}
