// Harvest jobs run by the test itself (its app starts with svc.jobs.in_process_worker false).
import { Worker } from '../../src/jobs/worker.ts';
import type { TestApp } from './app.ts';
import { asSysadmin } from './fixtures.ts';

/** Runs the queued jobs of the app until none is left. */
export async function runQueuedJobs(t: TestApp): Promise<void> {
  const w = new Worker(t.services.db, t.services.jobs.types, t.services.logger, {
    queues: ['default'],
    pollMs: 50,
    leaseMs: 60_000,
    keepDays: 7,
  });
  while (await w.runOnce());
}

/** Starts a harvest job of the source, runs it to its end and answers its harvest_job_show. */
export async function harvestNow(t: TestApp, sourceId: string): Promise<any> {
  const job = await t.ok('harvest_job_create', { source_id: sourceId }, asSysadmin(t));
  await runQueuedJobs(t);
  return t.ok('harvest_job_show', { id: job.id }, asSysadmin(t));
}
