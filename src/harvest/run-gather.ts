// The gather stage of a harvest job (a queue job): the reader's records changed since the last run
// become the job's objects, batch by batch; an unchanged record (same content hash as its
// current object) is counted "not modified" and never imported; each batch of objects to import
// is queued as an import job in the transaction that adds them. Then the guids that disappeared
// over there become delete objects. Run again after a kill, it adds only the guids the job does not
// have yet (objects are unique per job and guid) and so queues no import twice. On PostgreSQL the
// gather also imports each batch while it reads the next (svc.harvest.import_while_gathering):
// a single worker would otherwise run the import jobs only once the gather is done.
import type { Services } from '../actions/context.ts';
import { findHarvestSource, type HarvestSourceRow } from '../model/harvest-sources.ts';
import {
  endHarvestJob,
  finishGather,
  finishJobIfDone,
  incrementalSince,
  insertGatherError,
  jobStatus,
  startGather,
} from '../model/harvest-jobs.ts';
import { currentCopies, currentObjectsMissing, insertObjects, type NewObject } from '../model/harvest-objects.ts';
import { contentHash } from './import.ts';
import { dcatReadSettings } from './dcat-settings.ts';
import {
  HarvestSourceError,
  type HarvestFetch,
  type HarvestSourceSpec,
  type HarvestSourceType,
  type RemoteDataset,
  type SourceReader,
} from './types.ts';

export const GATHER_JOB_TYPE = 'harvest_gather';
export const IMPORT_JOB_TYPE = 'harvest_import';

/** Where the run gets its readers and fetcher (tests hand in their own). */
export interface HarvestDeps {
  readerFor(type: HarvestSourceType): SourceReader;
  fetch(services: Services): HarvestFetch;
}

export interface GatherOutcome {
  objects: number;
  not_modified: number;
  deleted: number;
  error?: string;
}

/** Why the gather stopped: the job was aborted meanwhile. */
class Aborted extends Error {}

export function sourceSpec(source: HarvestSourceRow): HarvestSourceSpec {
  let config = {};
  try {
    const c = source.config ? JSON.parse(source.config) : {};
    if (c && typeof c === 'object' && !Array.isArray(c)) config = c;
  } catch {
    // checked when saved; an old unreadable one counts as none
  }
  return { id: source.id, url: source.url, source_type: source.source_type as HarvestSourceType, config };
}

/**
 * Imports a batch of the job's objects while the gather goes on (the import jobs queued for them
 * then find them done); an error leaves them to those jobs.
 */
export type ImportWhileGathering = (objectIds: string[]) => Promise<unknown>;

export async function runGather(
  services: Services,
  deps: HarvestDeps,
  jobId: string,
  signal: AbortSignal,
  importNow?: ImportWhileGathering,
): Promise<GatherOutcome> {
  const outcome: GatherOutcome = { objects: 0, not_modified: 0, deleted: 0 };
  // one batch imported at a time, in the order gathered (each with its own parallel lanes)
  let importing: Promise<unknown> = Promise.resolve();
  const gathered = (ids: string[]) => {
    if (!importNow || !ids.length) return;
    importing = importing.then(() =>
      importNow(ids).catch((e) => services.logger.warn({ err: e, job: jobId }, 'import while gathering failed: the import jobs do it')),
    );
  };
  const job = await startGather(services.db, jobId);
  if (!job) return outcome; // aborted before it started
  const source = await findHarvestSource(services.db, { id: job.source_id });
  if (!source) throw new Error(`harvest source ${job.source_id} is gone`);
  const spec = sourceSpec(source);
  const reader = deps.readerFor(spec.source_type);
  const fetch = deps.fetch(services);
  // DCAT documents become datasets as dcat_parse makes them on this site (profiles, schema fields, licences)
  const dcat = spec.source_type === 'ckan' ? undefined : dcatReadSettings(services);
  const since = spec.config.force_all ? null : await incrementalSince(services.db, source.id);
  const batchSize = services.config.int('svc.harvest.import_batch');
  let batch: RemoteDataset[] = [];
  const seen = new Set<string>();
  // The newest remote modification seen: the next run reads from there (nothing seen: from here again).
  let highWater = since;
  let dated = true;
  try {
    for await (const record of reader.read(spec, { since, signal, fetch, dcat })) {
      if (seen.has(record.guid)) continue;
      seen.add(record.guid);
      if (!record.modified) dated = false;
      else if (!highWater || record.modified > highWater) highWater = record.modified;
      batch.push(record);
      if (batch.length >= batchSize) {
        gathered(await addBatch(services, source, jobId, batch, outcome));
        batch = [];
      }
    }
    gathered(await addBatch(services, source, jobId, batch, outcome));
    if (!spec.config.keep_deleted) {
      const guids = await reader.listGuids(spec, { signal, fetch, dcat });
      gathered(await addDeletions(services, source, jobId, guids, outcome));
    }
    await importing;
  } catch (e) {
    await importing;
    if (e instanceof Aborted) return outcome;
    if (signal.aborted) throw e;
    // The source failed as a whole (down, an error status after retries, not a catalog): the job ends with it.
    if (!(e instanceof HarvestSourceError) && !(e instanceof TypeError || e instanceof SyntaxError)) throw e;
    const message = e instanceof HarvestSourceError && e.status ? `${e.message} (HTTP ${e.status})` : e.message;
    await services.db.transaction(async (tx) => {
      await insertGatherError(tx, jobId, message);
      await endHarvestJob(tx, jobId, 'Finished');
    });
    return { ...outcome, error: message };
  }
  await services.db.transaction(async (tx) => {
    // A record without a date could change unseen: the next run reads everything again.
    await finishGather(tx, jobId, dated ? highWater : null);
    await finishJobIfDone(tx, jobId);
  });
  return outcome;
}

/** Adds a batch of records as objects; returns the ids of those to import. */
async function addBatch(
  services: Services,
  source: HarvestSourceRow,
  jobId: string,
  batch: RemoteDataset[],
  out: GatherOutcome,
): Promise<string[]> {
  if (!batch.length) return [];
  if ((await jobStatus(services.db, jobId)) !== 'Running') throw new Aborted();
  const wakes: (() => void)[] = [];
  const added = await services.db.transaction(async (tx) => {
    const current = await currentCopies(
      tx,
      source.id,
      batch.map((r) => r.guid),
    );
    const objects: NewObject[] = batch.map((r) => {
      const hash = contentHash(r.content, source);
      const copy = current.get(r.guid);
      const base = {
        guid: r.guid,
        content: r.content,
        remote_url: r.remoteUrl,
        modified: r.modified,
        package_id: copy?.package_id ?? null,
      };
      if (!r.dataset)
        return {
          ...base,
          operation: copy ? 'update' : 'create',
          state: 'ERROR',
          report_status: 'errored',
          payload: null,
          content_hash: hash,
          error: r.error ?? 'the record could not be read',
        };
      if (copy && copy.content_hash === hash && copy.package_active)
        return {
          ...base,
          operation: 'skip',
          state: 'COMPLETE',
          report_status: 'not modified',
          payload: null,
          content: null,
          content_hash: hash,
        };
      return {
        ...base,
        operation: copy ? 'update' : 'create',
        state: 'WAITING',
        report_status: null,
        payload: JSON.stringify({ dataset: r.dataset, organization: r.organization ?? null }),
        content_hash: hash,
      };
    });
    const waiting = await insertObjects(tx, jobId, source.id, objects);
    out.objects += waiting.length;
    out.not_modified += objects.filter((x) => x.operation === 'skip').length;
    await enqueueImports(services, tx, jobId, waiting, wakes);
    return waiting;
  });
  for (const wake of wakes) wake();
  return added;
}

/** Adds a delete object for each current copy whose guid is gone over there; returns their ids. */
async function addDeletions(
  services: Services,
  source: HarvestSourceRow,
  jobId: string,
  guids: Set<string>,
  out: GatherOutcome,
): Promise<string[]> {
  const wakes: (() => void)[] = [];
  const deleted = await services.db.transaction(async (tx) => {
    const gone = await currentObjectsMissing(tx, source.id, jobId, [...guids]);
    const objects: NewObject[] = gone.map((g) => ({
      guid: g.guid,
      operation: 'delete',
      state: 'WAITING',
      report_status: null,
      content: null,
      payload: null,
      content_hash: null,
      remote_url: null,
      modified: null,
      package_id: g.package_id,
    }));
    const waiting = await insertObjects(tx, jobId, source.id, objects);
    out.deleted += waiting.length;
    await enqueueImports(services, tx, jobId, waiting, wakes);
    return waiting;
  });
  for (const wake of wakes) wake();
  return deleted;
}

/** Import jobs of at most svc.harvest.import_batch objects, visible once tx commits (then call `wakes`). */
export async function enqueueImports(
  services: Services,
  tx: Parameters<Services['jobs']['enqueue']>[0],
  jobId: string,
  ids: string[],
  wakes: (() => void)[],
) {
  const size = services.config.int('svc.harvest.import_batch');
  for (let i = 0; i < ids.length; i += size) {
    await services.jobs.enqueue(
      tx,
      {
        type: IMPORT_JOB_TYPE,
        queue: services.config.str('svc.harvest.queue'),
        title: `harvest import ${jobId}`,
        data: { harvest_job_id: jobId, object_ids: ids.slice(i, i + size) },
      },
      (fn) => wakes.push(fn),
    );
  }
}
