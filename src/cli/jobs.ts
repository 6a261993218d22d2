// `svc jobs list|show|clear|cancel|test|worker`.
// Their code is imported when they run (see program.ts).
import type { Command } from 'commander';
import type { Services } from '../actions/context.ts';
import type { JobDict } from '../jobs/queue.ts';
import type { CliTools } from './extensions.ts';

async function asSysadmin(s: Services, action: string, data: Record<string, unknown>): Promise<unknown> {
  const { callAction } = await import('../actions/registry.ts');
  const { SYSADMIN_INTERNAL } = await import('../auth/identity.ts');
  return callAction(s, action, data, { identity: SYSADMIN_INTERNAL });
}
const line = (j: JobDict) => [j.id, j.queue, j.status, j.created, j.title ?? ''].join('\t');

export function registerJobsCommands(program: Command, { withServices, print, setExitCode, io }: CliTools): void {
  const jobs = program.command('jobs').description('background jobs');
  jobs
    .command('list [queues...]')
    .description('list queued and running jobs (all queues, or those named)')
    .action(async (queues: string[]) =>
      withServices(async (s) => {
        const jobs = (await asSysadmin(s, 'job_list', queues.length ? { queues } : {})) as JobDict[];
        if (!jobs.length) print('No jobs.');
        for (const j of jobs) print(line(j));
      }),
    );
  jobs
    .command('show <id>')
    .description('show a job as JSON')
    .action(async (id: string) => withServices(async (s) => print(JSON.stringify(await asSysadmin(s, 'job_show', { id }), null, 2))));
  jobs
    .command('clear [queues...]')
    .description('remove the queued jobs of these queues (default: all)')
    .action(async (queues: string[]) =>
      withServices(async (s) => {
        const cleared = (await asSysadmin(s, 'job_clear', queues.length ? { queues } : {})) as string[];
        print(cleared.length ? `cleared queue(s): ${cleared.join(', ')}` : 'no queued jobs');
      }),
    );
  jobs
    .command('cancel <id>')
    .description('cancel a job (removed when queued, stopped when running)')
    .action(async (id: string) =>
      withServices(async (s) => {
        await asSysadmin(s, 'job_cancel', { id });
        print(`canceled job ${id}`);
      }),
    );
  jobs
    .command('test [queues...]')
    .description('enqueue a test job in each queue (default: default) to prove a worker takes them')
    .option('--wait <seconds>', 'wait this long for a worker to run them, then report', '0')
    .action(async (queues: string[], o: { wait: string }) =>
      withServices(async (s) => {
        const { DEFAULT_QUEUE, findJob } = await import('../jobs/queue.ts');
        const { TEST_JOB_TYPE } = await import('../jobs/service.ts');
        const ids: string[] = [];
        for (const queue of queues.length ? queues : [DEFAULT_QUEUE]) {
          const job = await s.jobs.enqueue(s.db, { type: TEST_JOB_TYPE, queue, title: 'test job (svc jobs test)' });
          ids.push(job.id);
          print(`enqueued test job ${job.id} on queue ${queue}`);
        }
        const deadline = Date.now() + Number(o.wait) * 1000;
        for (const id of ids) {
          let job = await findJob(s.db, id);
          while (job && job.status !== 'finished' && job.status !== 'failed' && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 200));
            job = await findJob(s.db, id);
          }
          if (Number(o.wait) > 0) print(`job ${id}: ${job?.status}${job?.result ? ' ' + JSON.stringify(job.result) : ''}`);
          if (Number(o.wait) > 0 && job?.status !== 'finished') setExitCode(1);
        }
      }),
    );
  jobs
    .command('worker [queues...]')
    .description('run a worker on these queues, first queue first (default: svc.jobs.queues), until stopped')
    .option('--burst', 'stop once the queues are empty')
    .option('--metrics-port <port>', 'serve Prometheus /metrics and /healthz on this port (at svc.host) while the worker runs')
    .action(async (queues: string[], o: { burst?: boolean; metricsPort?: string }) =>
      withServices(async (s) => {
        if (s.db.kind === 'pglite') {
          io.err('svc: embedded mode runs jobs inside the server (`svc serve`); separate workers need PostgreSQL (svc.database_url)\n');
          setExitCode(1);
          return;
        }
        const port = o.metricsPort === undefined ? undefined : Number(o.metricsPort);
        if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
          io.err(`svc: --metrics-port must be a port number (0-65535), not "${o.metricsPort}"\n`);
          setExitCode(1);
          return;
        }
        await runWorker(s, queues, !!o.burst, port);
      }),
    );
}

/**
 * Runs a worker in this process until SIGINT/SIGTERM (or, with burst, until no job is left); a job
 * running at the signal is asked to stop and handed back to the queue for another worker.
 */
export async function runWorker(s: Services, queues: string[], burst: boolean, metricsPort?: number): Promise<void> {
  // Loads read uploads from the file store: a store this process cannot use is told at start.
  const { openFileStore, closeFileStore } = await import('../files/store.ts');
  await (await openFileStore(s.config)).check();
  const { serveWorkerMetrics } = await import('../http/worker-metrics.ts');
  const listener = metricsPort === undefined ? undefined : await serveWorkerMetrics(s, metricsPort, s.config.str('svc.host'));
  if (listener) console.error(`svc: worker metrics at http://${s.config.str('svc.host')}:${listener.port}/metrics`);
  try {
    await work(s, queues, burst);
  } finally {
    await listener?.close();
    closeFileStore(s.config);
  }
}

async function work(s: Services, queues: string[], burst: boolean): Promise<void> {
  if (burst) {
    const { Worker } = await import('../jobs/worker.ts');
    const w = new Worker(s.db, s.jobs.types, s.logger, {
      queues: queues.length ? queues : s.config.list('svc.jobs.queues'),
      pollMs: 0,
      leaseMs: s.config.int('svc.jobs.lease') * 1000,
      keepDays: s.config.int('svc.jobs.keep_days'),
    });
    while (await w.runOnce()) {
      /* next */
    }
    return;
  }
  s.jobs.startWorker(queues);
  console.error(`svc: job worker on ${(queues.length ? queues : s.config.list('svc.jobs.queues')).join(', ')} (stop with Ctrl-C)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await s.jobs.stop();
}
