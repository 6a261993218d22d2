// Harvest objects (SQL): one remote record seen by a job, its state, its dataset and its errors.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export interface HarvestObjectRow {
  id: string;
  guid: string;
  harvest_job_id: string;
  harvest_source_id: string;
  package_id: string | null;
  current: boolean;
  state: 'WAITING' | 'COMPLETE' | 'ERROR';
  operation: 'create' | 'update' | 'delete' | 'skip';
  report_status: string | null;
  content: string | null;
  payload: { dataset: Record<string, unknown> | null; organization?: unknown } | null;
  content_hash: string | null;
  remote_url: string | null;
  metadata_modified_date: string | null;
  gathered: string;
  import_started: string | null;
  import_finished: string | null;
}

export interface ObjectErrorRow {
  id: string;
  harvest_object_id: string;
  message: string;
  stage: string;
  line: number | null;
  created: string;
}

const NOW = `(now() at time zone 'utc')`;

export async function findHarvestObject(db: Queryable, id: string): Promise<HarvestObjectRow | undefined> {
  return (await db.query<HarvestObjectRow>('SELECT * FROM harvest_object WHERE id = $1', [id])).rows[0];
}

/** The current object of a dataset (harvest_object_show by dataset_id). */
export async function currentObjectOfPackage(db: Queryable, packageId: string): Promise<HarvestObjectRow | undefined> {
  return (
    await db.query<HarvestObjectRow>(
      'SELECT * FROM harvest_object WHERE package_id = $1 AND current ORDER BY import_finished DESC LIMIT 1',
      [packageId],
    )
  ).rows[0];
}

export async function objectErrors(db: Queryable, objectId: string): Promise<ObjectErrorRow[]> {
  return (
    await db.query<ObjectErrorRow>('SELECT * FROM harvest_object_error WHERE harvest_object_id = $1 ORDER BY created, id', [objectId])
  ).rows;
}

export interface CurrentCopy {
  guid: string;
  content_hash: string | null;
  package_id: string | null;
  package_active: boolean;
}

/** The current objects of these guids of a source (what the last imports left). */
export async function currentCopies(db: Queryable, sourceId: string, guids: string[]): Promise<Map<string, CurrentCopy>> {
  const r = await db.query<CurrentCopy>(
    `SELECT o.guid, o.content_hash, o.package_id, coalesce(p.state = 'active', false) AS package_active
     FROM harvest_object o LEFT JOIN packages p ON p.id = o.package_id
     WHERE o.harvest_source_id = $1 AND o.current AND o.guid = ANY($2::text[])`,
    [sourceId, guids],
  );
  return new Map(r.rows.map((x) => [x.guid, x]));
}

export interface NewObject {
  guid: string;
  operation: HarvestObjectRow['operation'];
  state: HarvestObjectRow['state'];
  report_status: string | null;
  content: string | null;
  payload: string | null;
  content_hash: string | null;
  remote_url: string | null;
  modified: string | null;
  package_id: string | null;
  /** An error recorded with the object (a record the reader could not read). */
  error?: string;
}

/**
 * Adds a job's objects; a guid the job has already (a gather run again after its worker died) is
 * left as it is. Returns the ids of the WAITING objects added.
 */
export async function insertObjects(db: Queryable, jobId: string, sourceId: string, objects: NewObject[]): Promise<string[]> {
  if (!objects.length) return [];
  const ids = objects.map(() => randomUUID());
  const col = <K extends keyof NewObject>(k: K) => objects.map((o) => o[k] ?? null);
  const r = await db.query<{ id: string; state: string }>(
    `INSERT INTO harvest_object (id, guid, harvest_job_id, harvest_source_id, operation, state, report_status, content, payload,
       content_hash, remote_url, metadata_modified_date, package_id, import_finished)
     SELECT u.id, u.guid, $1, $2, u.operation, u.state, u.report_status, u.content, u.payload::jsonb, u.content_hash, u.remote_url,
       u.modified, u.package_id, CASE WHEN u.state = 'WAITING' THEN NULL ELSE ${NOW} END
     FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
       $13::text[]) AS u (id, guid, operation, state, report_status, content, payload, content_hash, remote_url, modified, package_id)
     ON CONFLICT (harvest_job_id, guid) DO NOTHING RETURNING id, state`,
    [
      jobId,
      sourceId,
      ids,
      col('guid'),
      col('operation'),
      col('state'),
      col('report_status'),
      col('content'),
      col('payload'),
      col('content_hash'),
      col('remote_url'),
      col('modified'),
      col('package_id'),
    ],
  );
  const inserted = new Set(r.rows.map((x) => x.id));
  const errored = objects.map((o, i) => ({ id: ids[i], error: o.error })).filter((o) => o.error && inserted.has(o.id));
  for (const e of errored) await insertObjectError(db, e.id, e.error!, 'Fetch');
  return r.rows.filter((x) => x.state === 'WAITING').map((x) => x.id);
}

export async function insertObjectError(db: Queryable, objectId: string, message: string, stage: 'Fetch' | 'Import'): Promise<void> {
  await db.query('INSERT INTO harvest_object_error (id, harvest_object_id, message, stage) VALUES ($1, $2, $3, $4)', [
    randomUUID(),
    objectId,
    message,
    stage,
  ]);
}

/** Current objects of a source whose guid is not among those (the datasets deleted over there). */
export async function currentObjectsMissing(db: Queryable, sourceId: string, jobId: string, guids: string[]): Promise<CurrentCopy[]> {
  const r = await db.query<CurrentCopy>(
    `SELECT o.guid, o.content_hash, o.package_id, true AS package_active FROM harvest_object o JOIN packages p ON p.id = o.package_id
     WHERE o.harvest_source_id = $1 AND o.current AND p.state = 'active' AND NOT (o.guid = ANY($3::text[]))
       AND NOT EXISTS (SELECT 1 FROM harvest_object x WHERE x.harvest_job_id = $2 AND x.guid = o.guid)`,
    [sourceId, jobId, guids],
  );
  return r.rows;
}

/** The dataset a guid of a source was last imported into (deleted ones included), if it still exists. */
export async function packageOfGuid(db: Queryable, sourceId: string, guid: string): Promise<string | null> {
  const r = await db.query<{ package_id: string }>(
    `SELECT o.package_id FROM harvest_object o JOIN packages p ON p.id = o.package_id
     WHERE o.harvest_source_id = $1 AND o.guid = $2 AND o.state = 'COMPLETE'
     ORDER BY o.current DESC, o.import_finished DESC NULLS LAST LIMIT 1`,
    [sourceId, guid],
  );
  return r.rows[0]?.package_id ?? null;
}

/** The import of an object succeeded: it becomes the current copy of its guid (deleted: no copy is current). */
export async function completeObject(db: Queryable, o: HarvestObjectRow, packageId: string | null, reportStatus: string): Promise<void> {
  await db.query(`UPDATE harvest_object SET current = false WHERE harvest_source_id = $1 AND guid = $2 AND current`, [
    o.harvest_source_id,
    o.guid,
  ]);
  await db.query(
    `UPDATE harvest_object SET state = 'COMPLETE', report_status = $2, package_id = $3, current = $4,
       import_started = coalesce(import_started, ${NOW}), import_finished = ${NOW}
     WHERE id = $1`,
    [o.id, reportStatus, packageId, o.operation !== 'delete'],
  );
}

/** The import of an object failed: recorded with its message (the object only; the job goes on). */
export async function failObject(db: Queryable, objectId: string, message: string): Promise<void> {
  const r = await db.query(
    `UPDATE harvest_object SET state = 'ERROR', report_status = 'errored', import_finished = ${NOW} WHERE id = $1 AND state = 'WAITING'`,
    [objectId],
  );
  if (r.rowCount) await insertObjectError(db, objectId, message, 'Import');
}

export async function waitingObjectIds(db: Queryable, jobId: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT id FROM harvest_object WHERE harvest_job_id = $1 AND state = 'WAITING' ORDER BY gathered, id`,
    [jobId],
  );
  return r.rows.map((x) => x.id);
}

/** Active datasets of a source (its current objects), public ones only unless told. */
export async function sourcePackageIds(db: Queryable, sourceId: string, opts: { publicOnly: boolean }): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM harvest_object o JOIN packages p ON p.id = o.package_id
     WHERE o.harvest_source_id = $1 AND o.current AND p.state = 'active' AND (NOT $2 OR NOT p.private) ORDER BY p.id`,
    [sourceId, opts.publicOnly],
  );
  return r.rows.map((x) => x.id);
}

export async function countSourcePackages(db: Queryable, sourceId: string): Promise<number> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM harvest_object o JOIN packages p ON p.id = o.package_id
     WHERE o.harvest_source_id = $1 AND o.current AND p.state = 'active' AND NOT p.private`,
    [sourceId],
  );
  return r.rows[0].n;
}

/** The object, locked until the import's transaction ends (a retried import waits for the first). */
export async function lockHarvestObject(db: Queryable, id: string): Promise<HarvestObjectRow | undefined> {
  return (await db.query<HarvestObjectRow>('SELECT * FROM harvest_object WHERE id = $1 FOR UPDATE', [id])).rows[0];
}

/** Forgets a source's jobs and objects (harvest_source_clear; the datasets are purged by the caller). */
export async function clearSourceHistory(db: Queryable, sourceId: string): Promise<void> {
  await db.query('DELETE FROM harvest_job WHERE source_id = $1', [sourceId]);
}

/** Every dataset a source's imports wrote (any state, current or not). */
export async function packagesOfSource(db: Queryable, sourceId: string): Promise<string[]> {
  const r = await db.query<{ package_id: string }>(
    'SELECT DISTINCT package_id FROM harvest_object WHERE harvest_source_id = $1 AND package_id IS NOT NULL ORDER BY package_id',
    [sourceId],
  );
  return r.rows.map((x) => x.package_id);
}
