// The datastore_active flag of a catalog resource, set by the data store after it creates or drops
// the resource's table.
import type { Queryable } from '../db/database.ts';

/** Sets resources.datastore_active (and metadata_modified); returns false when there is no such resource. */
export async function setDatastoreActiveFlag(db: Queryable, resourceId: string, flag: boolean): Promise<boolean> {
  const r = await db.query(
    `UPDATE resources SET datastore_active = $2, metadata_modified = (now() at time zone 'utc')
     WHERE id = $1 AND datastore_active IS DISTINCT FROM $2`,
    [resourceId, flag],
  );
  if (r.rowCount) return true;
  return (await db.query('SELECT 1 FROM resources WHERE id = $1', [resourceId])).rows.length > 0;
}

export interface DatastoreResourceRow {
  id: string;
  package_id: string;
  url_type: string | null;
  datastore_active: boolean;
}

/** The active catalog resource a data store table belongs to (null when missing or deleted). */
export async function findDatastoreResource(db: Queryable, resourceId: string): Promise<DatastoreResourceRow | null> {
  const r = await db.query<DatastoreResourceRow>(
    {
      name: 'svc_ds_resource',
      text: `SELECT id, package_id, url_type, datastore_active FROM resources WHERE id = $1 AND state = 'active'`,
    },
    [resourceId],
  );
  return r.rows[0] ?? null;
}

/**
 * Resources of a dataset whose data store table must go: the resource or the whole dataset was
 * deleted, or (purging) every resource of the dataset.
 */
export async function datastoreTablesToDrop(db: Queryable, packageId: string, purging: boolean): Promise<string[]> {
  // prepared once per connection (every dataset write runs it: 0.1 ms of planning)
  const r = await db.query<{ id: string }>(
    {
      name: 'svc_ds_tables_to_drop',
      text: `SELECT r.id FROM resources r JOIN packages p ON p.id = r.package_id
     WHERE r.package_id = $1 AND r.datastore_active AND ($2 OR r.state <> 'active' OR p.state = 'deleted')`,
    },
    [packageId, purging],
  );
  return r.rows.map((x) => x.id);
}

/**
 * Active resources with a data store table in the datasets a condition over alias p selects (its
 * parameters in params): the ones a caller may read, given authz's visibility condition.
 */
export async function datastoreResourceIdsIn(db: Queryable, packageCondition: string, params: unknown[]): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT r.id FROM resources r JOIN packages p ON p.id = r.package_id
     WHERE r.state = 'active' AND r.datastore_active AND (${packageCondition})`,
    params,
  );
  return r.rows.map((x) => x.id);
}
