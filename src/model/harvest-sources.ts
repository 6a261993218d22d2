// Harvest sources (SQL). Sources are rows of their own, answered in ckanext-harvest's shape by the
// plugin (src/plugins/harvest/source-dict.ts).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export interface HarvestSourceRow extends HarvestSourceFields {
  id: string;
  state: string;
  creator_user_id: string | null;
  created: string;
  metadata_modified: string;
  next_run: string | null;
}

const NOW = `(now() at time zone 'utc')`;

/** By id, then by name (then by URL when asked); any state. */
export async function findHarvestSource(db: Queryable, ref: { id?: string; url?: string }): Promise<HarvestSourceRow | undefined> {
  if (ref.id)
    return (
      await db.query<HarvestSourceRow>('SELECT * FROM harvest_source WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [ref.id])
    ).rows[0];
  if (ref.url)
    return (
      await db.query<HarvestSourceRow>(
        `SELECT * FROM harvest_source WHERE url = $1 ORDER BY (state = 'active') DESC, created DESC LIMIT 1`,
        [ref.url],
      )
    ).rows[0];
  return undefined;
}

export async function harvestSourceNameTaken(db: Queryable, name: string, exceptId?: string): Promise<boolean> {
  const r = await db.query('SELECT 1 FROM harvest_source WHERE name = $1 AND id IS DISTINCT FROM $2', [name, exceptId ?? null]);
  return r.rows.length > 0;
}

/** Another active source reads this URL (trailing slashes aside) with this config (ckanext-harvest's uniqueness). */
export async function sameUrlAndConfig(db: Queryable, url: string, config: string | null, exceptId?: string): Promise<boolean> {
  const r = await db.query(
    `SELECT 1 FROM harvest_source WHERE state = 'active' AND rtrim(url, '/') = rtrim($1, '/')
       AND coalesce(config, '') = coalesce($2, '') AND id IS DISTINCT FROM $3`,
    [url, config, exceptId ?? null],
  );
  return r.rows.length > 0;
}

export interface HarvestSourceFields {
  name: string;
  title: string;
  url: string;
  source_type: string;
  frequency: string;
  config: string | null;
  notes: string | null;
  owner_org: string | null;
  private: boolean;
  active: boolean;
}

/** The next run of a scheduled source, as SQL over its frequency (NULL for MANUAL or inactive). */
const NEXT_RUN = `CASE WHEN NOT active OR state <> 'active' THEN NULL ELSE CASE frequency
    WHEN 'ALWAYS' THEN ${NOW}
    WHEN 'HOURLY' THEN ${NOW} + interval '1 hour'
    WHEN 'DAILY' THEN ${NOW} + interval '1 day'
    WHEN 'WEEKLY' THEN ${NOW} + interval '7 days'
    WHEN 'BIWEEKLY' THEN ${NOW} + interval '14 days'
    WHEN 'MONTHLY' THEN ${NOW} + interval '1 month'
    ELSE NULL END END`;

export async function insertHarvestSource(db: Queryable, f: HarvestSourceFields, creatorId: string | null): Promise<HarvestSourceRow> {
  const r = await db.query<HarvestSourceRow>(
    `INSERT INTO harvest_source (id, name, title, url, source_type, frequency, config, notes, owner_org, private, active, creator_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    [randomUUID(), f.name, f.title, f.url, f.source_type, f.frequency, f.config, f.notes, f.owner_org, f.private, f.active, creatorId],
  );
  return scheduleNextRun(db, r.rows[0].id);
}

export async function updateHarvestSource(db: Queryable, id: string, f: HarvestSourceFields): Promise<HarvestSourceRow> {
  await db.query(
    `UPDATE harvest_source SET name = $2, title = $3, url = $4, source_type = $5, frequency = $6, config = $7, notes = $8,
       owner_org = $9, private = $10, active = $11, state = 'active', metadata_modified = ${NOW}
     WHERE id = $1`,
    [id, f.name, f.title, f.url, f.source_type, f.frequency, f.config, f.notes, f.owner_org, f.private, f.active],
  );
  return scheduleNextRun(db, id);
}

/** Sets next_run from the frequency, counted from now. */
export async function scheduleNextRun(db: Queryable, id: string): Promise<HarvestSourceRow> {
  const r = await db.query<HarvestSourceRow>(`UPDATE harvest_source SET next_run = ${NEXT_RUN} WHERE id = $1 RETURNING *`, [id]);
  return r.rows[0];
}

export async function markHarvestSourceDeleted(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE harvest_source SET state = 'deleted', active = false, next_run = NULL, metadata_modified = ${NOW} WHERE id = $1`, [
    id,
  ]);
}

export interface SourceListFilter {
  organizationId?: string;
  onlyActive: boolean;
  /** Sources of private organizations are listed only for these organizations (null: all, sysadmin). */
  readableOrgs: string[] | null;
  limit: number;
  offset: number;
}

export async function listHarvestSources(db: Queryable, f: SourceListFilter): Promise<HarvestSourceRow[]> {
  const r = await db.query<HarvestSourceRow>(
    `SELECT * FROM harvest_source
     WHERE state = 'active' AND ($1::text IS NULL OR owner_org = $1) AND (NOT $2 OR active)
       AND ($3::text[] IS NULL OR NOT private OR owner_org = ANY($3::text[]))
     ORDER BY title, name LIMIT $4 OFFSET $5`,
    [f.organizationId ?? null, f.onlyActive, f.readableOrgs, f.limit, f.offset],
  );
  return r.rows;
}

/**
 * Takes the sources due to run (next_run passed, no unfinished job) for this node: the row lock
 * with SKIP LOCKED lets several nodes tick at once without taking the same source.
 */
export async function claimDueSources(db: Queryable, limit: number): Promise<HarvestSourceRow[]> {
  const r = await db.query<HarvestSourceRow>(
    `SELECT * FROM harvest_source s
     WHERE next_run IS NOT NULL AND next_run <= ${NOW} AND state = 'active' AND active
       AND NOT EXISTS (SELECT 1 FROM harvest_job j WHERE j.source_id = s.id AND j.status IN ('New', 'Running'))
     ORDER BY next_run LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return r.rows;
}
