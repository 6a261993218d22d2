// services.jobs: the job types of this process, enqueueing, and the worker (in-process in the
// server unless svc.jobs.in_process_worker is off; `svc jobs worker` runs one on its own).
import os from 'node:os';
import type { Database, Queryable } from '../db/database.ts';
import type { Logger } from 'pino';
import type { Config } from '../config/load.ts';
import { declareOption } from '../config/options.ts';
import { DEFAULT_QUEUE, enqueueJob, type EnqueueInput, type JobRow } from './queue.ts';
import { JobTypes, type JobHandler } from './types.ts';
import { Worker } from './worker.ts';

const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');
declareOption({
  name: 'svc.jobs.in_process_worker',
  type: 'bool',
  default: true,
  description: 'Run a job worker inside the server process (turn off when separate `svc jobs worker` processes run on PostgreSQL)',
});
declareOption({
  name: 'svc.jobs.queues',
  type: 'list',
  default: [DEFAULT_QUEUE],
  description: 'Queues the in-process worker takes jobs from, first queue first',
});
declareOption({
  name: 'svc.jobs.poll_interval',
  type: 'int',
  default: 1000,
  validate: positive,
  description: 'How often an idle worker looks for jobs, in milliseconds',
});
declareOption({
  name: 'svc.jobs.lease',
  type: 'int',
  default: 60,
  validate: positive,
  description: 'Seconds a running job stays reserved without a heartbeat from its worker (then it is retried or failed)',
});
declareOption({
  name: 'svc.jobs.keep_days',
  type: 'int',
  default: 7,
  validate: positive,
  description: 'Days finished, failed and canceled jobs are kept for job_show',
});

export const TEST_JOB_TYPE = 'test';

export class JobService {
  readonly types = new JobTypes();
  private workers: Worker[] = [];

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {
    // `svc jobs test`: proves a worker takes jobs from that queue.
    this.types.register(TEST_JOB_TYPE, ({ job }) => ({
      worker: `${os.hostname()}:${process.pid}`,
      queue: job.queue,
      ran_at: new Date().toISOString(),
    }));
  }

  registerJobType(name: string, handler: JobHandler): void {
    this.types.register(name, handler);
  }

  /**
   * Adds a job in db (pass the action's transaction: the job exists only if it commits); workers
   * of this process look for it once `afterCommit` runs (at once without one).
   */
  async enqueue(db: Queryable, input: EnqueueInput, afterCommit?: (fn: () => void) => void): Promise<JobRow> {
    const row = await enqueueJob(db, input);
    const wake = () => this.workers.forEach((w) => w.wake());
    if (afterCommit) afterCommit(wake);
    else wake();
    return row;
  }

  /** Starts a worker on these queues (default: svc.jobs.queues). */
  startWorker(queues?: string[]): Worker {
    const worker = new Worker(this.db, this.types, this.logger, {
      queues: queues?.length ? queues : this.config.list('svc.jobs.queues'),
      pollMs: this.config.int('svc.jobs.poll_interval'),
      leaseMs: this.config.int('svc.jobs.lease') * 1000,
      keepDays: this.config.int('svc.jobs.keep_days'),
    });
    this.workers.push(worker);
    worker.start();
    return worker;
  }

  async stop(): Promise<void> {
    const ws = this.workers;
    this.workers = [];
    await Promise.all(ws.map((w) => w.stop()));
  }
}
