// The datasets of groups and organizations as a caller may see them (counts, ids, rows), and the
// groups of a kind or of a dataset. Who may see a private dataset is decided by the permission
// layer: its condition comes in as a DatasetCondition (src/auth/authz.ts visiblePackagesCondition).
import type { Queryable } from '../db/database.ts';
import type { GroupRow } from './groups.ts';
import type { PackageRow } from './packages.ts';

/** Appends its parameters to params; returns an SQL condition over the dataset alias. */
export type DatasetCondition = (params: unknown[], alias: string) => Promise<string>;

/** Who may count a group's private datasets besides its public ones: everyone (sysadmins) or members of these groups who may see them. */
export type PrivateDatasetReaders = 'all' | { groupIds: string[]; visible: DatasetCondition };

/**
 * SQL (over group alias) counting a group's active datasets: public ones, and private ones the
 * readers may see. Parameters are appended to params.
 */
export async function datasetCountSql(readers: PrivateDatasetReaders, params: unknown[], alias = 'g'): Promise<string> {
  let memberCond: string;
  if (readers === 'all') memberCond = 'true';
  else {
    params.push(readers.groupIds);
    const p = `$${params.length}`;
    memberCond = `(${alias}.id = ANY(${p}::text[]) AND ${await readers.visible(params, 'p')})`;
  }
  // One count per kind, each by its own index (owner_org; members by group): a CASE inside one
  // WHERE would read every dataset once per group.
  const visible = `p.state = 'active' AND (NOT p.private OR ${memberCond})`;
  return `(CASE WHEN ${alias}.is_organization
    THEN (SELECT count(*)::int FROM packages p WHERE p.owner_org = ${alias}.id AND ${visible})
    ELSE (SELECT count(*)::int FROM members pm JOIN packages p ON p.id = pm.table_id
          WHERE pm.group_id = ${alias}.id AND pm.table_name = 'package' AND pm.state = 'active' AND ${visible}) END)`;
}

export async function groupDatasetCounts(db: Queryable, groupIds: string[], readers: PrivateDatasetReaders): Promise<Map<string, number>> {
  if (!groupIds.length) return new Map();
  const params: unknown[] = [groupIds];
  const expr = await datasetCountSql(readers, params);
  const r = await db.query<{ id: string; n: number }>(`SELECT g.id, ${expr} AS n FROM groups g WHERE g.id = ANY($1::text[])`, params);
  return new Map(r.rows.map((x) => [x.id, x.n]));
}

/** Ids of a group's active datasets, newest first: public ones, and private ones matching visible (none without it). */
export async function groupDatasetIds(
  db: Queryable,
  group: Pick<GroupRow, 'id' | 'is_organization'>,
  limit: number,
  visible?: DatasetCondition,
): Promise<string[]> {
  const params: unknown[] = [group.id];
  const visibility = visible ? `(NOT p.private OR ${await visible(params, 'p')})` : 'NOT p.private';
  params.push(limit);
  const membership = group.is_organization
    ? 'p.owner_org = $1'
    : "EXISTS (SELECT 1 FROM members m WHERE m.group_id = $1 AND m.table_name = 'package' AND m.table_id = p.id AND m.state = 'active')";
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM packages p WHERE p.state = 'active' AND ${membership} AND ${visibility}
     ORDER BY p.metadata_modified DESC, p.id LIMIT $${params.length}`,
    params,
  );
  return r.rows.map((x) => x.id);
}

/** The datasets that are members of a group (not those an organization owns), whatever their state. */
export async function groupMemberDatasets(db: Queryable, groupId: string): Promise<PackageRow[]> {
  const r = await db.query<PackageRow>(
    "SELECT p.* FROM members m JOIN packages p ON p.id = m.table_id WHERE m.group_id = $1 AND m.table_name = 'package' AND m.state = 'active'",
    [groupId],
  );
  return r.rows;
}

/** Active groups (or organizations) of a kind, every one or those of ids. */
export async function activeGroupsOfKind(db: Queryable, isOrganization: boolean, ids: string[] | 'all'): Promise<GroupRow[]> {
  const r =
    ids === 'all'
      ? await db.query<GroupRow>("SELECT * FROM groups WHERE is_organization = $1 AND state = 'active'", [isOrganization])
      : await db.query<GroupRow>("SELECT * FROM groups WHERE is_organization = $1 AND state = 'active' AND id = ANY($2::text[])", [
          isOrganization,
          ids,
        ]);
  return r.rows;
}

/** Ids of the groups a dataset is an active member of. */
export async function groupIdsOfDataset(db: Queryable, packageId: string): Promise<string[]> {
  const r = await db.query<{ group_id: string }>(
    "SELECT group_id FROM members WHERE table_name = 'package' AND table_id = $1 AND state = 'active'",
    [packageId],
  );
  return r.rows.map((x) => x.group_id);
}

/** Which of these datasets are not deleted and match visible. */
export async function visibleDatasetIds(db: Queryable, ids: string[], visible: DatasetCondition): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const params: unknown[] = [ids];
  const cond = await visible(params, 'p');
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM packages p WHERE p.id = ANY($1::text[]) AND p.state <> 'deleted' AND ${cond}`,
    params,
  );
  return new Set(r.rows.map((x) => x.id));
}

/** Ids of an organization's datasets that are not deleted and match visible, oldest first. */
export async function organizationDatasetIds(db: Queryable, organizationId: string, visible: DatasetCondition): Promise<string[]> {
  const params: unknown[] = [organizationId];
  const cond = await visible(params, 'p');
  const r = await db.query<{ id: string }>(
    `SELECT p.id FROM packages p WHERE p.owner_org = $1 AND p.state <> 'deleted' AND ${cond} ORDER BY p.metadata_created, p.id`,
    params,
  );
  return r.rows.map((x) => x.id);
}
