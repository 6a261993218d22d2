// The job queue in the catalog database: enqueue, claim (FOR UPDATE SKIP LOCKED, so two workers
// never take the same job), lease renewal, complete/fail, and the reads behind job_list/job_show.
// A running job holds a lease; a lease that expired means its worker died: the job is queued again
// until it has used max_attempts, then it is failed with a message saying so.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export type JobStatus = 'queued' | 'running' | 'finished' | 'failed' | 'canceled';

export interface JobRow {
  id: string;
  type: string;
  queue: string;
  title: string | null;
  data: Record<string, unknown>;
  status: JobStatus;
  result: unknown;
  error: string | null;
  attempts: number;
  max_attempts: number;
  created: string;
  started: string | null;
  ended: string | null;
  lease_until: string | null;
  worker: string | null;
}

/** The job dict of the API: CKAN's {id, title, created, queue} plus status, type, result and error. */
export function jobDict(j: JobRow) {
  return {
    id: j.id,
    title: j.title,
    created: j.created,
    queue: j.queue,
    type: j.type,
    status: j.status,
    data: j.data,
    result: j.result ?? null,
    error: j.error,
    attempts: j.attempts,
    started: j.started,
    ended: j.ended,
  };
}
export type JobDict = ReturnType<typeof jobDict>;

export const DEFAULT_QUEUE = 'default';
const NOW = `(clock_timestamp() at time zone 'utc')`;
const COLUMNS = 'id, type, queue, title, data, status, result, error, attempts, max_attempts, created, started, ended, lease_until, worker';

export interface EnqueueInput {
  type: string;
  data?: Record<string, unknown>;
  queue?: string;
  title?: string;
  maxAttempts?: number;
}

/** Adds a job (visible to workers once the surrounding transaction commits). */
export async function enqueueJob(db: Queryable, input: EnqueueInput): Promise<JobRow> {
  const r = await db.query<JobRow>(
    `INSERT INTO jobs (id, type, queue, title, data, max_attempts, created) VALUES ($1, $2, $3, $4, $5, $6, ${NOW})
     RETURNING ${COLUMNS}`,
    [randomUUID(), input.type, input.queue ?? DEFAULT_QUEUE, input.title ?? null, JSON.stringify(input.data ?? {}), input.maxAttempts ?? 3],
  );
  return r.rows[0];
}

/**
 * Jobs whose lease expired: queued again while attempts remain, else failed. Safe to run from
 * several workers at once (the row lock serializes them; the second finds the row changed).
 */
export async function recoverExpired(db: Queryable): Promise<number> {
  const r = await db.query(
    `UPDATE jobs SET
       status = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
       error = CASE WHEN attempts < max_attempts THEN error
                    ELSE 'the worker running this job stopped (lease expired) after ' || attempts || ' attempt(s)' END,
       ended = CASE WHEN attempts < max_attempts THEN NULL ELSE ${NOW} END,
       lease_until = NULL, worker = NULL
     WHERE status = 'running' AND lease_until < ${NOW}`,
  );
  return r.rowCount;
}

/**
 * Takes the oldest queued job of the first queue (in the order given) that has one, for this
 * worker, with a lease of leaseMs. null when there is none.
 */
export async function claimJob(db: Queryable, queues: string[], worker: string, leaseMs: number): Promise<JobRow | null> {
  const r = await db.query<JobRow>(
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, started = ${NOW}, ended = NULL,
       lease_until = ${NOW} + make_interval(secs => $3::float8 / 1000), worker = $2
     WHERE id = (
       SELECT id FROM jobs WHERE status = 'queued' AND queue = ANY($1::text[])
       ORDER BY array_position($1::text[], queue), created, id
       LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [queues, worker, leaseMs],
  );
  return r.rows[0] ?? null;
}

/** Renews the lease; false when the job is no longer this worker's running job (canceled, expired). */
export async function renewLease(db: Queryable, id: string, worker: string, leaseMs: number): Promise<boolean> {
  const r = await db.query(
    `UPDATE jobs SET lease_until = ${NOW} + make_interval(secs => $3::float8 / 1000)
     WHERE id = $1 AND worker = $2 AND status = 'running'`,
    [id, worker, leaseMs],
  );
  return r.rowCount > 0;
}

/** Records the end of a run (only while the job is still this worker's). */
export async function finishJob(
  db: Queryable,
  id: string,
  worker: string,
  outcome: { result?: unknown; error?: string },
): Promise<boolean> {
  const failed = outcome.error !== undefined;
  const r = await db.query(
    `UPDATE jobs SET status = $3, result = $4, error = $5, ended = ${NOW}, lease_until = NULL
     WHERE id = $1 AND worker = $2 AND status = 'running'`,
    [id, worker, failed ? 'failed' : 'finished', failed ? null : JSON.stringify(outcome.result ?? null), outcome.error ?? null],
  );
  return r.rowCount > 0;
}

/** Gives a running job back to the queue (the worker is stopping): it will run again. */
export async function releaseJob(db: Queryable, id: string, worker: string): Promise<void> {
  await db.query(
    `UPDATE jobs SET status = 'queued', lease_until = NULL, worker = NULL, attempts = greatest(attempts - 1, 0)
     WHERE id = $1 AND worker = $2 AND status = 'running'`,
    [id, worker],
  );
}

export async function findJob(db: Queryable, id: string): Promise<JobRow | null> {
  const r = await db.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
  return r.rows[0] ?? null;
}

/** Queued and running jobs, oldest first; only those queues when given. */
export async function listJobs(db: Queryable, queues?: string[]): Promise<JobRow[]> {
  const r = await db.query<JobRow>(
    `SELECT ${COLUMNS} FROM jobs WHERE status IN ('queued', 'running') AND ($1::text[] IS NULL OR queue = ANY($1::text[]))
     ORDER BY created, id`,
    [queues ?? null],
  );
  return r.rows;
}

/** Removes the queued jobs of those queues (all queues when not given); returns the queues that had some. */
export async function clearQueues(db: Queryable, queues?: string[]): Promise<string[]> {
  const r = await db.query<{ queue: string }>(
    `DELETE FROM jobs WHERE status = 'queued' AND ($1::text[] IS NULL OR queue = ANY($1::text[])) RETURNING queue`,
    [queues ?? null],
  );
  return [...new Set(r.rows.map((x) => x.queue))].sort();
}

/** A queued job is removed; a running one is marked canceled (its worker stops it at the next lease renewal). */
export async function cancelJob(db: Queryable, id: string): Promise<JobRow | null> {
  const r = await db.query<JobRow>(
    `WITH gone AS (DELETE FROM jobs WHERE id = $1 AND status = 'queued' RETURNING ${COLUMNS}),
          stopped AS (UPDATE jobs SET status = 'canceled', ended = ${NOW}, lease_until = NULL, error = 'canceled'
                      WHERE id = $1 AND status = 'running' RETURNING ${COLUMNS})
     SELECT * FROM gone UNION ALL SELECT * FROM stopped`,
    [id],
  );
  return r.rows[0] ?? null;
}

/** Deletes ended jobs older than the given number of days. */
export async function pruneJobs(db: Queryable, keepDays: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM jobs WHERE status IN ('finished', 'failed', 'canceled') AND ended < ${NOW} - make_interval(days => $1)`,
    [keepDays],
  );
  return r.rowCount;
}

/** Removes queued jobs of a type whose data has key = value (a newer job replaces them). */
export async function dropQueuedLike(db: Queryable, type: string, key: string, value: string): Promise<number> {
  const r = await db.query(`DELETE FROM jobs WHERE status = 'queued' AND type = $1 AND data->>$2 = $3`, [type, key, value]);
  return r.rowCount;
}

export interface QueueStats {
  queue: string;
  queued: number;
  running: number;
  /** Seconds the oldest queued job has waited (0 when none waits). */
  oldest_seconds: number;
}

/** Queued and running jobs per queue, and the wait of each queue's oldest queued job (metrics). */
export async function queueStats(db: Queryable): Promise<QueueStats[]> {
  const r = await db.query<{ queue: string; queued: string; running: string; oldest_seconds: number | null }>(
    `SELECT queue, count(*) FILTER (WHERE status = 'queued') AS queued, count(*) FILTER (WHERE status = 'running') AS running,
       extract(epoch FROM ${NOW} - min(created) FILTER (WHERE status = 'queued'))::float8 AS oldest_seconds
     FROM jobs WHERE status IN ('queued', 'running') GROUP BY queue ORDER BY queue`,
  );
  return r.rows.map((x) => ({
    queue: x.queue,
    queued: Number(x.queued),
    running: Number(x.running),
    oldest_seconds: x.oldest_seconds ?? 0,
  }));
}
