// An import job: a batch of a harvest job's objects, imported (harvest_objects_import) as the
// source's config.user or the site user, svc.harvest.import_transaction objects per transaction,
// each in a savepoint of it, a few transactions at once on PostgreSQL. A record the catalog
// refuses is an error of its object, recorded with the message in the same transaction; the job
// goes on. The work after commit of a transaction's imports (search index generation, queued
// jobs' wake-ups) runs once it has committed. A transaction that loses a race to another is run
// again; one that still fails is run again one object per transaction, as a call of its own each.
// A kill before a commit leaves that transaction's objects WAITING and none of their datasets.
// The last batch to end finishes the harvest job.
import type { AfterCommit, Identity, Services } from '../actions/context.ts';
import { callAction, callActionInTransaction } from '../actions/registry.ts';
import { backoff, isRace } from '../actions/call-errors.ts';
import { ensureSiteUser } from '../actions/site-user.ts';
import { findUser } from '../model/users.ts';
import { findHarvestSource } from '../model/harvest-sources.ts';
import { findHarvestJob, finishJobIfDone } from '../model/harvest-jobs.ts';
import { failObject, makeFreeTags, waitingRecordTags } from '../model/harvest-objects.ts';
import { appliedTagNames } from './config-apply.ts';
import { parseSourceConfig } from './import.ts';
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
  const size = services.config.int('svc.harvest.import_transaction');
  let next = 0;
  const lane = async () => {
    while (next < objectIds.length) {
      signal.throwIfAborted();
      // near the end, smaller transactions, so that every lane has some of what is left
      const take = Math.min(size, Math.ceil((objectIds.length - next) / parallel));
      const ids = objectIds.slice(next, next + take);
      next += take;
      await importTogether(services, identity, ids, out, signal);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, objectIds.length) }, lane));
  await finishJobIfDone(services.db, jobId);
  return out;
}

/** How many times a transaction of several imports that lost a race is run before its objects are imported one by one. */
const TOGETHER_ATTEMPTS = 3;

/** Imports objects in one transaction, each in a savepoint; their counts are added to `out` once it commits. */
async function importTogether(
  services: Services,
  identity: Identity,
  ids: string[],
  out: ImportBatchOutcome,
  signal: AbortSignal,
): Promise<void> {
  if (ids.length === 1) return importAlone(services, identity, ids[0], out, signal);
  // (PGlite runs one transaction at a time: nothing can race or wait there)
  const postgres = services.db.kind === 'postgres';
  if (postgres) await makeTagsAhead(services, ids);
  await importInOne(services, identity, ids, out, signal, postgres ? TOGETHER_ATTEMPTS : 1);
}

/**
 * The free tags of the objects' datasets, made before their transaction (one statement): tags
 * new to the catalog are common to many records, and a transaction of several imports that made
 * one would keep the other transactions needing it waiting until its commit (and deadlocking
 * when two need each other's). A tag no import takes (its record refused) stays, linked to
 * nothing, as a tag does when its last dataset drops it: tag_list and searches list only tags in
 * use. Deleting it raced with the other batches linking it (a cascade lost their links, or a
 * deadlock).
 */
async function makeTagsAhead(services: Services, ids: string[]): Promise<void> {
  const names = new Set<string>();
  for (const r of await waitingRecordTags(services.db, ids))
    for (const n of appliedTagNames(r.tags, parseSourceConfig(r.config))) if (n.length <= 100) names.add(n);
  return makeFreeTags(services.db, [...names]);
}

async function importInOne(
  services: Services,
  identity: Identity,
  ids: string[],
  out: ImportBatchOutcome,
  signal: AbortSignal,
  attempts: number,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const counts: ImportBatchOutcome = { added: 0, updated: 0, deleted: 0, errored: 0, skipped: 0 };
    const committed: AfterCommit[] = [];
    try {
      await services.db.transaction(async (tx) => {
        for (const id of ids) {
          signal.throwIfAborted();
          try {
            const r = (await callActionInTransaction(
              services,
              'harvest_objects_import',
              { harvest_object_id: id },
              { identity, tx, afterCommit: (fn) => committed.push(fn) },
            )) as { outcome: keyof ImportBatchOutcome };
            counts[r.outcome]++;
          } catch (e) {
            if (signal.aborted || isRace(e)) throw e;
            // (its savepoint is undone: the object is still WAITING, and the others' writes stand)
            await failObject(tx, id, errorMessage(e));
            counts.errored++;
          }
        }
      });
    } catch (e) {
      if (signal.aborted) throw e;
      if (isRace(e) && attempt < attempts) {
        await backoff(attempt);
        continue;
      }
      // one by one, each a call of its own with its own retries (as an import was before)
      for (const id of ids) await importAlone(services, identity, id, out, signal);
      return;
    }
    for (const k of Object.keys(counts) as (keyof ImportBatchOutcome)[]) out[k] += counts[k];
    for (const fn of committed) {
      try {
        await fn();
      } catch (e) {
        // The database has the change already: report, do not fail the import.
        services.logger.error({ err: e, action: 'harvest_objects_import' }, 'work after commit failed');
      }
    }
    return;
  }
}

/** Imports one object in a transaction of its own (harvest_objects_import called as from outside). */
async function importAlone(services: Services, identity: Identity, id: string, out: ImportBatchOutcome, signal: AbortSignal) {
  signal.throwIfAborted();
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
