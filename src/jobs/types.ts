// Job types: plugins register a handler per type name (registerJobType); workers run them.
import type { Logger } from 'pino';
import type { JobRow } from './queue.ts';

export interface JobRun {
  job: JobRow;
  /** Aborts when the job is canceled or the worker stops: stop soon and throw. */
  signal: AbortSignal;
  log: Logger;
}

/** Returns the job's result (stored as JSON); throwing records the job as failed with the message. */
export type JobHandler = (run: JobRun) => Promise<unknown> | unknown;

export class JobTypes {
  private readonly handlers = new Map<string, JobHandler>();

  register(name: string, handler: JobHandler): void {
    if (this.handlers.has(name)) throw new Error(`job type ${name} is registered twice`);
    this.handlers.set(name, handler);
  }

  get(name: string): JobHandler | undefined {
    return this.handlers.get(name);
  }

  names(): string[] {
    return [...this.handlers.keys()].sort();
  }
}
