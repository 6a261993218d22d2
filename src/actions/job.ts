// Background job actions (sysadmin-only, as in CKAN): job_list, job_show, job_clear, job_cancel.
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { sysadminOnly } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { cancelJob, clearQueues, findJob, jobDict, listJobs } from '../jobs/queue.ts';

export const jobActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'job_list',
    sideEffectFree: true,
    auth: sysadminOnly,
    params: { queues: p.stringList('only jobs of these queues (default all)', { split: true }) },
    description: 'List the queued and running background jobs, oldest first.',
    returns: {
      description: 'job dicts (id, title, created, queue, type, status, data, result, error, attempts, started, ended)',
      rtype: 'list',
    },
    handler: async (ctx, q) => (await listJobs(ctx.db, q.queues)).map(jobDict),
  }),
  defineAction({
    name: 'job_show',
    sideEffectFree: true,
    auth: sysadminOnly,
    params: { id: p.string('the job id').required() },
    description: 'Show a background job, with its status and its result or error once it ended.',
    returns: { description: 'the job dict', rtype: 'dictionary' },
    handler: async (ctx, q) => {
      const job = await findJob(ctx.db, q.id);
      if (!job) throw new NotFoundError('Job not found');
      return jobDict(job);
    },
  }),
  defineAction({
    name: 'job_clear',
    sideEffectFree: false,
    auth: sysadminOnly,
    params: { queues: p.stringList('the queues to clear (default all)', { split: true }) },
    description: 'Remove the queued jobs of some queues (running jobs go on).',
    returns: { description: 'the names of the queues that had jobs removed', rtype: 'list' },
    handler: async (ctx, q) => clearQueues(ctx.db, q.queues),
  }),
  defineAction({
    name: 'job_cancel',
    sideEffectFree: false,
    auth: sysadminOnly,
    params: { id: p.string('the job id').required() },
    description: 'Cancel a background job: a queued job is removed, a running one is stopped.',
    handler: async (ctx, q) => {
      if (!(await cancelJob(ctx.db, q.id))) throw new NotFoundError('Job not found');
      return null;
    },
  }),
];
