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

/**
 * The import of an object succeeded: it becomes the current copy of its guid (deleted: no copy is
 * current). One statement: the other copy that was current is unmarked first (the CTE is read
 * before the object is written, so the unique index of current copies never sees two; a row is
 * written once per statement, hence not the object itself there).
 */
export async function completeObject(db: Queryable, o: HarvestObjectRow, packageId: string | null, reportStatus: string): Promise<void> {
  await db.query(COMPLETE_OBJECT, [o.id, reportStatus, packageId, o.operation !== 'delete', o.harvest_source_id, o.guid]);
}

/** completeObject's statement, named: planned once per connection (one a harvest import). */
const COMPLETE_OBJECT = {
  name: 'svc_harvest_object_complete',
  text: `WITH previous AS (UPDATE harvest_object SET current = false WHERE harvest_source_id = $5 AND guid = $6 AND current AND id <> $1 RETURNING 1)
     UPDATE harvest_object SET state = 'COMPLETE', report_status = $2, package_id = $3, current = $4,
       import_started = coalesce(import_started, ${NOW}), import_finished = ${NOW}
     FROM (SELECT count(*) FROM previous) AS p
     WHERE id = $1`,
};

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

/** What the import of an object reads with its lock (harvest/import.ts). */
export interface ObjectToImport {
  object: HarvestObjectRow;
  /** Its job's status. */
  jobStatus: string | null;
  /** Its source (null: gone). */
  source: { id: string; url: string; title: string; owner_org: string | null; config: string | null } | null;
  /** The dataset its guid was last imported into (only read when the object has none). */
  guidPackageId: string | null;
  /** The state of the dataset with the record's own id, if there is one (only read when the object has no dataset). */
  remoteIdState: string | null;
}

/**
 * The object locked until the import's transaction ends (a retried import waits for the first), read in the same
 * statement with its job's status, its source, and for an object without a dataset the dataset
 * of its guid (last imported, deleted ones included, if it still exists) and the state of a dataset holding the record's id.
 */
export async function lockObjectToImport(db: Queryable, id: string): Promise<ObjectToImport | undefined> {
  const r = await db.query<HarvestObjectRow & Record<string, any>>(
    `SELECT o.*, j.status AS _job_status, s.id AS _source_id, s.url AS _source_url, s.title AS _source_title,
       s.owner_org AS _source_owner_org, s.config AS _source_config,
       CASE WHEN o.package_id IS NULL THEN (SELECT x.package_id FROM harvest_object x JOIN packages p ON p.id = x.package_id
         WHERE x.harvest_source_id = o.harvest_source_id AND x.guid = o.guid AND x.state = 'COMPLETE'
         ORDER BY x.current DESC, x.import_finished DESC NULLS LAST LIMIT 1) END AS _guid_package_id,
       CASE WHEN o.package_id IS NULL THEN (SELECT p.state FROM packages p WHERE p.id = o.payload -> 'dataset' ->> 'id') END AS _remote_id_state
     FROM harvest_object o LEFT JOIN harvest_job j ON j.id = o.harvest_job_id LEFT JOIN harvest_source s ON s.id = o.harvest_source_id
     WHERE o.id = $1 FOR UPDATE OF o`,
    [id],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  const {
    _job_status,
    _source_id,
    _source_url,
    _source_title,
    _source_owner_org,
    _source_config,
    _guid_package_id,
    _remote_id_state,
    ...object
  } = row;
  return {
    object: object as HarvestObjectRow,
    jobStatus: _job_status ?? null,
    source: _source_id
      ? { id: _source_id, url: _source_url, title: _source_title, owner_org: _source_owner_org, config: _source_config }
      : null,
    guidPackageId: _guid_package_id ?? null,
    remoteIdState: _remote_id_state ?? null,
  };
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

/** The tags of waiting objects' records, each with its source's config (what the import makes of them). */
export async function waitingRecordTags(db: Queryable, ids: string[]): Promise<{ tags: unknown; config: string | null }[]> {
  const r = await db.query<{ tags: unknown; config: string | null }>(
    `SELECT o.payload -> 'dataset' -> 'tags' AS tags, s.config FROM harvest_object o JOIN harvest_source s ON s.id = o.harvest_source_id
     WHERE o.id = ANY($1::text[]) AND o.state = 'WAITING' AND o.operation <> 'delete'`,
    [ids],
  );
  return r.rows;
}

/**
 * Free tags (no vocabulary) made ahead of a transaction of imports, in a statement of their own
 * and in name order: the imports find them there and do not wait for each other's uncommitted
 * new tags until their commits.
 */
export async function makeFreeTags(db: Queryable, names: string[]): Promise<void> {
  const sorted = [...new Set(names)].sort();
  if (!sorted.length) return;
  await db.query(
    `INSERT INTO tags (id, name, vocabulary_id) SELECT gen_random_uuid()::text, n, NULL FROM unnest($1::text[]) WITH ORDINALITY AS w(n, i)
     ORDER BY w.i ON CONFLICT (name, coalesce(vocabulary_id, '')) DO NOTHING`,
    [sorted],
  );
}
