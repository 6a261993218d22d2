// Harvest jobs (SQL): one run of a source, its counts from its objects, its gather errors.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export type HarvestJobStatus = 'New' | 'Running' | 'Finished' | 'Aborted';

export interface HarvestJobRow {
  id: string;
  source_id: string;
  status: HarvestJobStatus;
  created: string;
  gather_started: string | null;
  gather_finished: string | null;
  finished: string | null;
  remote_modified: string | null;
}

const NOW = `(now() at time zone 'utc')`;

/** A new job; null when the source already has one that has not finished (the unique partial index). */
export async function insertHarvestJob(db: Queryable, sourceId: string): Promise<HarvestJobRow | null> {
  const r = await db.query<HarvestJobRow>(
    `INSERT INTO harvest_job (id, source_id) VALUES ($1, $2)
     ON CONFLICT (source_id) WHERE status IN ('New', 'Running') DO NOTHING RETURNING *`,
    [randomUUID(), sourceId],
  );
  return r.rows[0] ?? null;
}

export async function findHarvestJob(db: Queryable, id: string): Promise<HarvestJobRow | undefined> {
  return (await db.query<HarvestJobRow>('SELECT * FROM harvest_job WHERE id = $1', [id])).rows[0];
}

export async function unfinishedHarvestJob(db: Queryable, sourceId: string): Promise<HarvestJobRow | undefined> {
  return (await db.query<HarvestJobRow>(`SELECT * FROM harvest_job WHERE source_id = $1 AND status IN ('New', 'Running')`, [sourceId]))
    .rows[0];
}

export async function listHarvestJobs(
  db: Queryable,
  f: { sourceId?: string; status?: string; sourceIds?: string[] | null; limit: number; offset: number },
): Promise<HarvestJobRow[]> {
  const r = await db.query<HarvestJobRow>(
    `SELECT * FROM harvest_job WHERE ($1::text IS NULL OR source_id = $1) AND ($2::text IS NULL OR status = $2)
       AND ($3::text[] IS NULL OR source_id = ANY($3::text[]))
     ORDER BY created DESC, id LIMIT $4 OFFSET $5`,
    [f.sourceId ?? null, f.status ?? null, f.sourceIds ?? null, f.limit, f.offset],
  );
  return r.rows;
}

/** The gather starts (a retried gather keeps the first start). */
export async function startGather(db: Queryable, id: string): Promise<HarvestJobRow | undefined> {
  const r = await db.query<HarvestJobRow>(
    `UPDATE harvest_job SET status = 'Running', gather_started = coalesce(gather_started, ${NOW})
     WHERE id = $1 AND status IN ('New', 'Running') RETURNING *`,
    [id],
  );
  return r.rows[0];
}

export async function finishGather(db: Queryable, id: string, remoteModified: string | null): Promise<void> {
  await db.query(`UPDATE harvest_job SET gather_finished = coalesce(gather_finished, ${NOW}), remote_modified = $2 WHERE id = $1`, [
    id,
    remoteModified,
  ]);
}

/** Finishes a running job whose gather is over and whose objects are all done; true when it did. */
export async function finishJobIfDone(db: Queryable, id: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE harvest_job j SET status = 'Finished', finished = ${NOW}
     WHERE id = $1 AND status = 'Running' AND gather_finished IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM harvest_object o WHERE o.harvest_job_id = j.id AND o.state = 'WAITING')`,
    [id],
  );
  return r.rowCount > 0;
}

/** Ends a job at once (its gather failed, or it was aborted). */
export async function endHarvestJob(db: Queryable, id: string, status: 'Finished' | 'Aborted'): Promise<HarvestJobRow | undefined> {
  const r = await db.query<HarvestJobRow>(
    `UPDATE harvest_job SET status = $2, finished = ${NOW}, gather_finished = coalesce(gather_finished, ${NOW})
     WHERE id = $1 AND status IN ('New', 'Running') RETURNING *`,
    [id, status],
  );
  return r.rows[0];
}

export async function jobStatus(db: Queryable, id: string): Promise<HarvestJobStatus | undefined> {
  return (await db.query<{ status: HarvestJobStatus }>('SELECT status FROM harvest_job WHERE id = $1', [id])).rows[0]?.status;
}

/**
 * Where the next gather may start reading, on the remote's clock: the newest remote modification
 * time seen by the source's last finished job, when it had no gather error and began after the
 * source's settings last changed. null: read everything.
 */
export async function incrementalSince(db: Queryable, sourceId: string): Promise<string | null> {
  const r = await db.query<{ remote_modified: string | null }>(
    `SELECT j.remote_modified FROM harvest_job j JOIN harvest_source s ON s.id = j.source_id
     WHERE j.source_id = $1 AND j.status = 'Finished' AND j.gather_started > s.metadata_modified
       AND NOT EXISTS (SELECT 1 FROM harvest_gather_error g WHERE g.harvest_job_id = j.id)
     ORDER BY j.gather_started DESC LIMIT 1`,
    [sourceId],
  );
  return r.rows[0]?.remote_modified ?? null;
}

export async function insertGatherError(db: Queryable, jobId: string, message: string): Promise<void> {
  await db.query('INSERT INTO harvest_gather_error (id, harvest_job_id, message) VALUES ($1, $2, $3)', [randomUUID(), jobId, message]);
}

export interface JobStats {
  added: number;
  updated: number;
  deleted: number;
  'not modified': number;
  errored: number;
}

export interface ErrorCount {
  message: string;
  error_count: number;
}

/** Counts per report status (errored: objects with errors plus gather errors) and the error summaries. */
export async function jobReport(
  db: Queryable,
  jobId: string,
  summaryLimit = 20,
): Promise<{ stats: JobStats; object_error_summary: ErrorCount[]; gather_error_summary: ErrorCount[] }> {
  const counts = await db.query<{ report_status: string; n: number }>(
    `SELECT report_status, count(*)::int AS n FROM harvest_object WHERE harvest_job_id = $1 AND report_status IS NOT NULL GROUP BY report_status`,
    [jobId],
  );
  const stats: JobStats = { added: 0, updated: 0, deleted: 0, 'not modified': 0, errored: 0 };
  for (const c of counts.rows) if (c.report_status in stats) stats[c.report_status as keyof JobStats] = c.n;
  const summary = (table: 'object' | 'gather') =>
    db.query<ErrorCount>(
      table === 'object'
        ? `SELECT e.message, count(*)::int AS error_count FROM harvest_object_error e JOIN harvest_object o ON o.id = e.harvest_object_id
           WHERE o.harvest_job_id = $1 GROUP BY e.message ORDER BY error_count DESC, e.message LIMIT $2`
        : `SELECT message, count(*)::int AS error_count FROM harvest_gather_error WHERE harvest_job_id = $1
           GROUP BY message ORDER BY error_count DESC, message LIMIT $2`,
      [jobId, summaryLimit],
    );
  const [objectErrors, gatherErrors] = [await summary('object'), await summary('gather')];
  stats.errored += gatherErrors.rows.reduce((n, e) => n + e.error_count, 0);
  return { stats, object_error_summary: objectErrors.rows, gather_error_summary: gatherErrors.rows };
}

/** Jobs of a source, and the last one. */
export async function sourceJobSummary(db: Queryable, sourceId: string): Promise<{ jobCount: number; lastJob: HarvestJobRow | undefined }> {
  const r = await db.query<HarvestJobRow & { job_count: number }>(
    `SELECT j.*, count(*) OVER ()::int AS job_count FROM harvest_job j WHERE source_id = $1 ORDER BY created DESC, id LIMIT 1`,
    [sourceId],
  );
  const row = r.rows[0];
  return { jobCount: row?.job_count ?? 0, lastJob: row };
}

/** Unfinished jobs without a queued or running queue job (run=false, or a worker that died on its last attempt). */
export async function stalledHarvestJobs(db: Queryable, gatherType: string, importType: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT h.id FROM harvest_job h WHERE h.status IN ('New', 'Running')
       AND NOT EXISTS (SELECT 1 FROM jobs q WHERE q.type IN ($1, $2) AND q.data->>'harvest_job_id' = h.id
                       AND q.status IN ('queued', 'running'))`,
    [gatherType, importType],
  );
  return r.rows.map((x) => x.id);
}

/** The queue jobs (gather, imports) of a harvest job still queued or running. */
export async function liveQueueJobs(db: Queryable, harvestJobId: string, types: string[]): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT id FROM jobs WHERE type = ANY($1::text[]) AND data->>'harvest_job_id' = $2 AND status IN ('queued', 'running')`,
    [types, harvestJobId],
  );
  return r.rows.map((x) => x.id);
}

/** harvest_job_report: the gather errors (newest first) and each object's errors, keyed by object id. */
export async function jobErrorReport(db: Queryable, jobId: string) {
  const gather = await db.query<{ message: string }>(
    'SELECT message FROM harvest_gather_error WHERE harvest_job_id = $1 ORDER BY created DESC, id',
    [jobId],
  );
  const objects = await db.query<{
    object_id: string;
    guid: string;
    remote_url: string | null;
    message: string;
    line: number | null;
    stage: string;
  }>(
    `SELECT e.harvest_object_id AS object_id, o.guid, o.remote_url, e.message, e.line, e.stage
     FROM harvest_object_error e JOIN harvest_object o ON o.id = e.harvest_object_id
     WHERE o.harvest_job_id = $1 ORDER BY e.harvest_object_id, e.created, e.id`,
    [jobId],
  );
  const objectErrors: Record<
    string,
    { guid: string; original_url?: string; errors: { message: string; line: number | null; type: string }[] }
  > = {};
  for (const r of objects.rows) {
    const entry = (objectErrors[r.object_id] ??= { guid: r.guid, ...(r.remote_url ? { original_url: r.remote_url } : {}), errors: [] });
    entry.errors.push({ message: r.message, line: r.line, type: r.stage });
  }
  return { gather_errors: gather.rows.map((g) => ({ message: g.message })), object_errors: objectErrors };
}
