// An import job: a batch of a harvest job's objects, each imported in its own transaction
// (harvest_objects_import) as the source's config.user or the site user, a few at once on
// PostgreSQL. A record the catalog refuses is an error of its object, recorded with the message;
// the job goes on. The last batch to end finishes the harvest job.
import type { Identity, Services } from '../actions/context.ts';
import { callAction } from '../actions/registry.ts';
import { ensureSiteUser } from '../actions/site-user.ts';
import { findUser } from '../model/users.ts';
import { findHarvestSource } from '../model/harvest-sources.ts';
import { findHarvestJob, finishJobIfDone } from '../model/harvest-jobs.ts';
import { failObject } from '../model/harvest-objects.ts';
import { ActionError, ValidationError } from '../errors.ts';
import { sourceSpec } from './run-gather.ts';

export interface ImportBatchOutcome {
  added: number;
  updated: number;
  deleted: number;
  errored: number;
  skipped: number;
}

/** Who imports a source's datasets: its config.user, else the site user. */
export async function importIdentity(services: Services, sourceId: string): Promise<Identity> {
  const source = await findHarvestSource(services.db, { id: sourceId });
  const userName = source ? sourceSpec(source).config.user : undefined;
  const user = userName
    ? await findUser(services.db, userName)
    : await services.db.transaction((tx) => ensureSiteUser(tx, services.config));
  if (!user || user.state !== 'active') throw new Error(`the harvest user "${userName}" does not exist`);
  return { user, sysadmin: user.sysadmin, via: 'internal' };
}

/** The message an object keeps: a refused dataset says which fields and why. */
function errorMessage(e: unknown): string {
  if (e instanceof ValidationError) {
    const fields = Object.entries(e.errors as Record<string, unknown>)
      .map(
        ([k, v]) =>
          `${k}: ${Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' ') : JSON.stringify(v)}`,
      )
      .join('; ');
    return `${e.type}: ${fields || e.message}`;
  }
  if (e instanceof ActionError) return `${e.type}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

export async function runImportBatch(
  services: Services,
  jobId: string,
  objectIds: string[],
  signal: AbortSignal,
): Promise<ImportBatchOutcome> {
  const out: ImportBatchOutcome = { added: 0, updated: 0, deleted: 0, errored: 0, skipped: 0 };
  const job = await findHarvestJob(services.db, jobId);
  if (!job || job.status !== 'Running') return { ...out, skipped: objectIds.length };
  const identity = await importIdentity(services, job.source_id);
  const parallel = services.db.kind === 'postgres' ? services.config.int('svc.harvest.import_concurrency') : 1;
  let next = 0;
  const lane = async () => {
    while (next < objectIds.length) {
      signal.throwIfAborted();
      const id = objectIds[next++];
      try {
        const r = (await callAction(services, 'harvest_objects_import', { harvest_object_id: id }, { identity })) as {
          outcome: keyof ImportBatchOutcome;
        };
        out[r.outcome]++;
      } catch (e) {
        if (signal.aborted) throw e;
        await failObject(services.db, id, errorMessage(e));
        out.errored++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, objectIds.length) }, lane));
  await finishJobIfDone(services.db, jobId);
  return out;
}
