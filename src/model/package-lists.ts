// Lists of datasets: operators' commands (the CLI), package_list-like actions, autocomplete,
// a user's datasets. Who may see private ones comes from the caller (see group-datasets.ts).
import type { Queryable } from '../db/database.ts';
import { escapeLike } from '../db/sql.ts';
import type { DatasetCondition } from './group-datasets.ts';
import type { PackageRow } from './packages.ts';

/** Ids and names of every active dataset, public or private, by name. */
export async function activePackages(db: Queryable): Promise<{ id: string; name: string }[]> {
  const r = await db.query<{ id: string; name: string }>("SELECT id, name FROM packages WHERE state = 'active' ORDER BY name");
  return r.rows;
}

/** Ids of the organization's datasets named by id or name in refs (not deleted ones), by id. */
export async function organizationPackageIds(db: Queryable, organizationId: string, refs: string[]): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    "SELECT id FROM packages WHERE (id = ANY($1::text[]) OR name = ANY($1::text[])) AND owner_org = $2 AND state <> 'deleted' ORDER BY id",
    [refs, organizationId],
  );
  return r.rows.map((x) => x.id);
}

/** Active datasets, most recently changed first; private ones only with includePrivate. */
export async function recentlyChangedPackages(
  db: Queryable,
  limit: number,
  offset: number,
  includePrivate: boolean,
): Promise<PackageRow[]> {
  const privateCond = includePrivate ? '' : ' AND NOT private';
  const r = await db.query<PackageRow>(
    `SELECT * FROM packages WHERE state = 'active'${privateCond} ORDER BY metadata_modified DESC, id LIMIT $1 OFFSET $2`,
    [limit, offset],
  );
  return r.rows;
}

/** package_autocomplete: active public datasets whose name or title contains q, name matches first. */
export async function autocompletePackages(db: Queryable, q: string, limit: number): Promise<{ name: string; title: string | null }[]> {
  const r = await db.query<{ name: string; title: string | null }>(
    `SELECT name, title FROM packages WHERE state = 'active' AND NOT private AND (name ILIKE $1 OR title ILIKE $1)
     ORDER BY (name ILIKE $1) DESC, name LIMIT $2`,
    [`%${escapeLike(q)}%`, Math.max(0, limit)],
  );
  return r.rows;
}

/** Ids of up to limit datasets a user created (not deleted), newest change first: those matching visible, or the active public ones. */
export async function packagesCreatedBy(db: Queryable, userId: string, limit: number, visible?: DatasetCondition): Promise<string[]> {
  const params: unknown[] = [userId];
  const cond = visible ? await visible(params, 'p') : "(p.state = 'active' AND NOT p.private)";
  params.push(limit);
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM packages p WHERE p.creator_user_id = $1 AND p.state <> 'deleted' AND ${cond}
     ORDER BY p.metadata_modified DESC LIMIT $${params.length}`,
    params,
  );
  return r.rows.map((x) => x.id);
}

/** Ids of the tags a dataset carries. */
export async function tagIdsOfPackage(db: Queryable, packageId: string): Promise<string[]> {
  const r = await db.query<{ tag_id: string }>('SELECT tag_id FROM package_tags WHERE package_id = $1', [packageId]);
  return r.rows.map((x) => x.tag_id);
}
