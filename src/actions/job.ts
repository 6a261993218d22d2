// Background job actions (sysadmin-only, as in CKAN): job_list, job_show, job_clear, job_cancel.
import type { ActionDefinition } from './registry.ts';
import { sysadminOnly } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { cancelJob, clearQueues, findJob, jobDict, listJobs } from '../jobs/queue.ts';
import { ignoreMissing, notEmpty, stringList, unicodeString } from '../validation/validators.ts';

export const jobActions: ActionDefinition<any, any>[] = [
  {
    name: 'job_list',
    sideEffectFree: true,
    auth: sysadminOnly,
    schema: { queues: [ignoreMissing, stringList(true)] },
    help: 'List the queued and running background jobs, oldest first.\n\n:param queues: only jobs of these queues (optional, default all)\n:returns: job dicts (id, title, created, queue, status, ...)\n:rtype: list',
    handler: async (ctx, p) => (await listJobs(ctx.db, p.queues)).map(jobDict),
  },
  {
    name: 'job_show',
    sideEffectFree: true,
    auth: sysadminOnly,
    schema: { id: [notEmpty, unicodeString] },
    help: 'Show a background job, with its status and its result or error once it ended.\n\n:param id: the job id\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const job = await findJob(ctx.db, p.id);
      if (!job) throw new NotFoundError('Job not found');
      return jobDict(job);
    },
  },
  {
    name: 'job_clear',
    sideEffectFree: false,
    auth: sysadminOnly,
    schema: { queues: [ignoreMissing, stringList(true)] },
    help: 'Remove the queued jobs of some queues (running jobs go on).\n\n:param queues: the queues to clear (optional, default all)\n:returns: the names of the queues that had jobs removed\n:rtype: list',
    handler: async (ctx, p) => clearQueues(ctx.db, p.queues),
  },
  {
    name: 'job_cancel',
    sideEffectFree: false,
    auth: sysadminOnly,
    schema: { id: [notEmpty, unicodeString] },
    help: 'Cancel a background job: a queued job is removed, a running one is stopped.\n\n:param id: the job id',
    handler: async (ctx, p) => {
      if (!(await cancelJob(ctx.db, p.id))) throw new NotFoundError('Job not found');
      return null;
    },
  },
];
