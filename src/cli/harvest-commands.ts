// `svc harvest run SOURCE [--sync]`, `svc harvest list`, `svc harvest jobs SOURCE`: the harvest
// plugin's actions run as a sysadmin. Declared for every command line (--help); the code runs only
// when a harvest command does.
import type { Command } from 'commander';
import type { Services } from '../context.ts';
import { CliError, cliCommands, type CliTools } from './extensions.ts';

type Dict = Record<string, any>;
const COUNT_KEYS = ['added', 'updated', 'deleted', 'not modified', 'errored'] as const;

async function asSysadmin<T = Dict>(s: Services, action: string, data: Dict): Promise<T> {
  if (!s.registry.has(action)) throw new CliError('the harvest plugin is not enabled (add harvest to svc.plugins)');
  const { callAction } = await import('../actions/registry.ts');
  const { SYSADMIN_INTERNAL } = await import('../auth/identity.ts');
  const { ActionError } = await import('../errors.ts');
  try {
    return (await callAction(s, action, data, { identity: SYSADMIN_INTERNAL })) as T;
  } catch (e) {
    // An action's refusal is all the user needs (no stack): "svc: Not found: Harvest source x ...".
    if (e instanceof ActionError) throw new CliError(e.message);
    throw e;
  }
}

const counts = (job: Dict | null | undefined) => COUNT_KEYS.map((k) => `${k} ${Number(job?.stats?.[k] ?? 0)}`).join(', ');
const done = (job: Dict) => COUNT_KEYS.reduce((n, k) => n + Number(job.stats?.[k] ?? 0), 0);
/** A job failed as a whole: aborted, or its source failed (a gather error: down, not a catalog). */
const failed = (job: Dict) => job.status === 'Aborted' || (job.gather_error_summary ?? []).length > 0;
const unfinished = (job: Dict) => job.status === 'New' || job.status === 'Running';

/** Runs the harvest queue in this process until the job has ended, a progress bar on a terminal. */
async function runToEnd(s: Services, jobId: string, tty: boolean, print: (line: string) => void): Promise<Dict> {
  const { Worker } = await import('../jobs/worker.ts');
  const worker = new Worker(s.db, s.jobs.types, s.logger, {
    queues: [s.config.str('svc.harvest.queue')],
    pollMs: 0,
    leaseMs: s.config.int('svc.jobs.lease') * 1000,
    keepDays: s.config.int('svc.jobs.keep_days'),
  });
  const cliProgress = tty ? (await import('cli-progress')).default : undefined;
  const bar = cliProgress
    ? new cliProgress.SingleBar(
        { format: '{phase} [{bar}] {value} datasets | {counts}', hideCursor: true, clearOnComplete: false },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(1, 0, { phase: 'gather', counts: '' });
  let job = await asSysadmin(s, 'harvest_job_show', { id: jobId });
  try {
    while (unfinished(job)) {
      // Another worker (a server's) may hold this job's queue jobs: then wait for it.
      const ran = await worker.runOnce();
      job = await asSysadmin(s, 'harvest_job_show', { id: jobId });
      const n = done(job);
      // The number of objects is known once gathered; until then the bar runs one ahead.
      bar?.setTotal(job.gather_finished && !unfinished(job) ? Math.max(n, 1) : n + 1);
      bar?.update(n, { phase: job.gather_finished ? 'import' : 'gather', counts: counts(job) });
      if (!ran && unfinished(job)) await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    bar?.stop();
  }
  if (!tty) print(`${done(job)} datasets`);
  return job;
}

function registerHarvestCli(program: Command, { withServices, print, setExitCode, io }: CliTools): void {
  const harvest = program.command('harvest').description('harvest sources (the harvest plugin): run them, list them and their jobs');
  harvest
    .command('run <source>')
    .description('start a harvest job of a source (id or name): queued for the workers, or run here with --sync')
    .option('--sync', 'run the job in this process and wait for its end (a progress bar on a terminal); exit status 1 when it fails')
    .action(async (ref: string, o: { sync?: boolean }) =>
      withServices(async (s) => {
        const source = await asSysadmin(s, 'harvest_source_show', { id: ref });
        const job = await asSysadmin(s, 'harvest_job_create', { source_id: source.id, run: true });
        if (!o.sync) {
          print(`queued harvest job ${job.id} of ${source.name}`);
          return;
        }
        const started = Date.now();
        const tty = typeof io.stdin !== 'string' && !!process.stderr.isTTY;
        const end = await runToEnd(s, job.id, tty, print);
        print(`harvest job ${end.id} of ${source.name}: ${end.status} in ${((Date.now() - started) / 1000).toFixed(1)} s (${counts(end)})`);
        for (const e of end.gather_error_summary ?? []) print(`error: ${e.message}`);
        for (const e of (end.object_error_summary ?? []).slice(0, 10)) print(`record error (${e.error_count}x): ${e.message}`);
        if (failed(end)) setExitCode(1);
      }),
    );
  harvest
    .command('list')
    .description('list the harvest sources, each with its last job (status, end, counts)')
    .action(async () =>
      withServices(async (s) => {
        const sources = await asSysadmin<Dict[]>(s, 'harvest_source_list', {});
        if (!sources.length) print('No harvest sources.');
        for (const src of sources) {
          const last = src.status?.last_job;
          const state = last ? `${last.status}${last.finished ? ` ${last.finished}` : ''} (${counts(last)})` : 'never run';
          print([src.name, src.source_type, src.frequency, src.active === false ? 'inactive' : 'active', state, src.url].join('\t'));
        }
      }),
    );
  harvest
    .command('jobs <source>')
    .description("list a source's jobs, newest first")
    .option('--limit <n>', 'most jobs listed', '20')
    .action(async (ref: string, o: { limit: string }) =>
      withServices(async (s) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new CliError(`--limit must be a positive whole number, not "${o.limit}"`);
        const jobs = await asSysadmin<Dict[]>(s, 'harvest_job_list', { source_id: ref, limit });
        if (!jobs.length) print('No jobs.');
        for (const j of jobs) print([j.id, j.status, j.created, j.finished ?? '', counts(j)].join('\t'));
      }),
    );
}

cliCommands.push(registerHarvestCli);
