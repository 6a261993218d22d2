// Submitting loads: a job on the loader's queue and the task status "pending", in the caller's
// transaction (the job exists only if the change that asked for it commits; workers see it then).
import type { Services } from '../../actions/context.ts';
import type { Queryable } from '../../db/database.ts';
import { dropQueuedLike, type JobRow } from '../../jobs/queue.ts';
import { canonicalFormat, guessFormat } from '../../model/resources.ts';
import { LOAD_JOB_TYPE, loadTask, nowIso, parseValue, saveLoadTask } from './status.ts';

export interface SubmitOptions {
  ignoreHash?: boolean;
  /** The resource's URL/upload signature that triggered the load. */
  source?: string;
  afterCommit?: (fn: () => void) => void;
  /** The user the load acts as (who asked for it); none: the site user. */
  userId?: string | null;
  /**
   * The resource's load task as the caller read it in this transaction (null: it has none, so no
   * load of it can be waiting); read here when not given.
   */
  task?: { value: string | null } | null;
}

export async function submitLoad(services: Services, db: Queryable, resourceId: string, opts: SubmitOptions = {}): Promise<JobRow> {
  const task = opts.task !== undefined ? opts.task : await loadTask(db, resourceId);
  // A load still waiting for a worker is replaced by this one (a load is queued with its task).
  if (opts.task !== null) await dropQueuedLike(db, LOAD_JOB_TYPE, 'resource_id', resourceId);
  const job = await services.jobs.enqueue(
    db,
    {
      type: LOAD_JOB_TYPE,
      queue: services.config.str('svc.loader.queue'),
      title: `load resource ${resourceId} into the data store`,
      data: { resource_id: resourceId, ignore_hash: !!opts.ignoreHash, user_id: opts.userId ?? null },
    },
    opts.afterCommit,
  );
  const prev = parseValue(task as never);
  await saveLoadTask(db, resourceId, 'pending', {
    ...prev,
    job_id: job.id,
    source: opts.source ?? prev.source,
    requested_timestamp: nowIso(),
    finished_timestamp: null,
    progress: undefined,
    logs: [{ timestamp: nowIso(), message: 'load submitted', level: 'INFO' }],
  });
  return job;
}

const MIME_FORMATS: Record<string, string> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'text/plain': 'txt',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
};

/** The resource's format for the loader: as given, else from its file name or URL, else from its mime type. */
export function resourceFormat(r: { format: string | null; url: string | null; mimetype: string | null }): string {
  const given = (r.format ?? '').trim();
  if (given) return canonicalFormat(given).toLowerCase();
  const guessed = guessFormat(r.url ?? '');
  if (guessed) return guessed.toLowerCase();
  const mime = (r.mimetype ?? '').split(';')[0].trim().toLowerCase();
  return MIME_FORMATS[mime] ?? '';
}

export function loaderFormats(services: Services): Set<string> {
  return new Set(services.config.list('svc.loader.formats').map((f) => canonicalFormat(f).toLowerCase()));
}

/** What a load reads: a new URL or a new upload (its time and size) is a new source. */
export function sourceSignature(r: { url: string | null; url_type: string | null; last_modified: string | null; size: unknown }): string {
  return r.url_type === 'upload' ? `upload|${r.url}|${r.last_modified ?? ''}|${r.size ?? ''}` : `url|${r.url ?? ''}`;
}
