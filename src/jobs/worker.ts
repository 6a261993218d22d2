// A worker: takes jobs from its queues (first queue first), runs the registered handler of the
// job's type, keeps the lease alive while it runs, and records the result or the error. Used in
// the server process (embedded mode) and by `svc jobs worker` processes.
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { Logger } from 'pino';
import { claimJob, finishJob, pruneJobs, recoverExpired, releaseJob, renewLease, type JobRow } from './queue.ts';
import type { JobTypes } from './types.ts';

export interface WorkerOptions {
  queues: string[];
  pollMs: number;
  leaseMs: number;
  keepDays: number;
}

export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private current: { job: JobRow; abort: AbortController; done: Promise<unknown> } | null = null;
  private lastPrune = 0;

  constructor(
    private readonly db: Database,
    private readonly types: JobTypes,
    private readonly logger: Logger,
    private readonly opts: WorkerOptions,
  ) {}

  start(): void {
    if (this.loop) return;
    this.loop = this.run().catch((e) => this.logger.error({ err: e }, 'job worker stopped on an error'));
  }

  /** Looks for work now (a job was just enqueued in this process). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops taking jobs; a running job is asked to stop (its signal aborts) and given back to the queue. */
  async stop(graceMs = 10000): Promise<void> {
    this.stopped = true;
    this.wake();
    const cur = this.current;
    if (cur) {
      cur.abort.abort(new Error('the worker is stopping'));
      await Promise.race([cur.done.catch(() => undefined), new Promise((r) => setTimeout(r, graceMs).unref())]);
    }
    await this.loop;
  }

  /** Runs one queued job if there is one; returns whether it did (tests, `--burst`). */
  async runOnce(): Promise<boolean> {
    await recoverExpired(this.db);
    if (Date.now() - this.lastPrune > 3600_000) {
      this.lastPrune = Date.now();
      await pruneJobs(this.db, this.opts.keepDays);
    }
    const job = await claimJob(this.db, this.opts.queues, this.id, this.opts.leaseMs);
    if (!job) return false;
    await this.execute(job);
    return true;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      try {
        worked = await this.runOnce();
      } catch (e) {
        if (this.stopped) break;
        this.logger.error({ err: e }, 'job worker: could not take a job');
      }
      if (worked || this.stopped) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.opts.pollMs);
        t.unref();
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }

  private async execute(job: JobRow): Promise<void> {
    const abort = new AbortController();
    const handler = this.types.get(job.type);
    const log = this.logger.child({ job: job.id, type: job.type });
    let canceled = false;
    const renew = setInterval(
      () => {
        renewLease(this.db, job.id, this.id, this.opts.leaseMs).then(
          (mine) => {
            if (!mine && !abort.signal.aborted) {
              canceled = true;
              abort.abort(new Error('the job was canceled'));
            }
          },
          (e) => log.warn({ err: e }, 'could not renew the job lease'),
        );
      },
      Math.max(50, Math.floor(this.opts.leaseMs / 3)),
    );
    renew.unref();
    const done = (async () => {
      if (!handler) throw new Error(`no handler for job type "${job.type}" in this process`);
      return handler({ job, signal: abort.signal, log });
    })();
    this.current = { job, abort, done };
    try {
      const result = await done;
      await finishJob(this.db, job.id, this.id, { result });
      log.info('job finished');
    } catch (e) {
      if (this.stopped && !canceled) {
        await releaseJob(this.db, job.id, this.id).catch(() => undefined);
        log.info('job given back to the queue (worker stopping)');
      } else {
        const message = e instanceof Error ? e.message : String(e);
        await finishJob(this.db, job.id, this.id, { error: message }).catch((err) =>
          log.error({ err }, 'could not record the job failure'),
        );
        log.warn({ err: e }, 'job failed');
      }
    } finally {
      clearInterval(renew);
      this.current = null;
    }
  }
}
