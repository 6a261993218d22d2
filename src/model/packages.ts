// Datasets (packages): the only place that writes package, extras, membership and collaborator SQL
// for datasets.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { listSql, type ListSql } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import type { ResourceRow } from './resources.ts';
import { forgetDictParts } from './dict-parts-cache.ts';

/** A concurrent write took the name between validation and the write: CKAN's message, not a 500. */
function nameTaken(e: unknown): never {
  const err = e as { code?: string; constraint?: string; message?: string };
  if (err?.code === '23505' && (err.constraint === 'packages_name_key' || /packages_name_key/.test(err.message ?? ''))) {
    throw new ValidationError({ name: ['That URL is already in use.'] });
  }
  throw e;
}

export interface PackageRow {
  id: string;
  name: string;
  title: string | null;
  version: string | null;
  url: string | null;
  notes: string | null;
  license_id: string | null;
  author: string | null;
  author_email: string | null;
  maintainer: string | null;
  maintainer_email: string | null;
  state: string;
  type: string;
  owner_org: string | null;
  private: boolean;
  creator_user_id: string | null;
  metadata_created: string;
  metadata_modified: string;
  plugin_data: Record<string, unknown> | null;
  custom_fields: Record<string, unknown> | null;
}

/** Text columns a package_update replaces (null when not sent). */
export const PACKAGE_TEXT_FIELDS = [
  'title',
  'version',
  'url',
  'notes',
  'license_id',
  'author',
  'author_email',
  'maintainer',
  'maintainer_email',
] as const;

const NOW = "(now() at time zone 'utc')";

/** By id, then by name (deleted datasets are found too). */
export async function findPackage(db: Queryable, idOrName: string): Promise<PackageRow | undefined> {
  const r = await db.query<PackageRow>('SELECT * FROM packages WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [idOrName]);
  return r.rows[0];
}

const ACTIVE_RESOURCE_AND_PACKAGE = "FROM resources r JOIN packages p ON p.id = r.package_id WHERE r.id = $1 AND r.state = 'active'";

/** The dataset of an active resource, in one statement (what a resource's permission check needs). */
export async function packageOfActiveResource(db: Queryable, resourceId: string): Promise<PackageRow | undefined> {
  return (await db.query<PackageRow>(`SELECT p.* ${ACTIVE_RESOURCE_AND_PACKAGE}`, [resourceId])).rows[0];
}

/**
 * An active resource and its dataset, in one statement (the rows as JSON: the same values as the
 * drivers give, as the package dicts read them, but `size` a number).
 */
export async function activeResourceAndPackage(
  db: Queryable,
  resourceId: string,
): Promise<{ res: ResourceRow; pkg: PackageRow } | undefined> {
  return (
    await db.query<{ res: ResourceRow; pkg: PackageRow }>(`SELECT to_json(r) AS res, to_json(p) AS pkg ${ACTIVE_RESOURCE_AND_PACKAGE}`, [
      resourceId,
    ])
  ).rows[0];
}

/** The datasets with the ids of $1. */
export const packagesByIdsSql: ListSql = { select: 'SELECT * FROM packages WHERE id = ANY($1::text[])' };

export async function packagesByIds(db: Queryable, ids: string[]): Promise<PackageRow[]> {
  if (!ids.length) return [];
  return (await db.query<PackageRow>(listSql(packagesByIdsSql), [ids])).rows;
}

/** The dataset holding this name, other than a deleted one. */
export async function packageNameHolder(db: Queryable, name: string): Promise<PackageRow | undefined> {
  return (await db.query<PackageRow>("SELECT * FROM packages WHERE name = $1 AND state <> 'deleted'", [name])).rows[0];
}

// Statements of every harvest import or create, named: planned once per connection (docs/performance.md "Planned once").
const ID_OF_NAME = { name: 'svc_package_id_of_name', text: 'SELECT id FROM packages WHERE name = $1' };
const EXTRAS_OF_NEW = {
  name: 'svc_package_extras_new',
  text: 'INSERT INTO package_extras (package_id, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)',
};
const EXTRAS_REPLACED = {
  name: 'svc_package_extras_replace',
  // (the two parts touch different keys, so their order within the statement does not matter)
  text: `WITH gone AS (DELETE FROM package_extras WHERE package_id = $1 AND NOT (key = ANY($2::text[])))
     INSERT INTO package_extras (package_id, key, value) SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS t(k, v)
     ON CONFLICT (package_id, key) DO UPDATE SET value = EXCLUDED.value WHERE package_extras.value IS DISTINCT FROM EXCLUDED.value`,
};

/** The id of the dataset holding a name, in any state (deleted ones too). */
export async function packageIdOfName(db: Queryable, name: string): Promise<string | undefined> {
  return (await db.query<{ id: string }>(ID_OF_NAME, [name])).rows[0]?.id;
}

/** A dataset's state by its id (undefined: no such dataset). */
export async function packageState(db: Queryable, id: string): Promise<string | undefined> {
  return (await db.query<{ state: string }>('SELECT state FROM packages WHERE id = $1', [id])).rows[0]?.state;
}

/** A deleted dataset holding a name that is reused gets its id as name (CKAN). */
export async function freeDeletedName(db: Queryable, name: string, exceptId?: string): Promise<void> {
  await db.query("UPDATE packages SET name = id WHERE name = $1 AND state = 'deleted' AND id <> $2", [name, exceptId ?? '']);
}

export type PackageWrite = Partial<Omit<PackageRow, 'metadata_created' | 'metadata_modified'>>;

/**
 * Inserts a dataset; a deleted dataset holding the name gets its id as name first, in the same
 * statement (freeDeletedName): the insert reads the count of that update, so it runs after it.
 * unlessTaken: nothing is inserted (undefined) when a dataset has the id, or the name other than
 * a deleted one (the validation left both to the insert; the transaction goes on, no error).
 */
export async function insertPackage(
  db: Queryable,
  p: PackageWrite & { name: string },
  opts: { unlessTaken?: boolean } = {},
): Promise<PackageRow | undefined> {
  const row = {
    id: p.id ?? randomUUID(),
    name: p.name,
    title: p.title ?? null,
    version: p.version ?? null,
    url: p.url ?? null,
    notes: p.notes ?? null,
    license_id: p.license_id ?? null,
    author: p.author ?? null,
    author_email: p.author_email ?? null,
    maintainer: p.maintainer ?? null,
    maintainer_email: p.maintainer_email ?? null,
    state: p.state ?? 'active',
    type: p.type ?? 'dataset',
    owner_org: p.owner_org ?? null,
    private: p.private ?? false,
    creator_user_id: p.creator_user_id ?? null,
    plugin_data: p.plugin_data ?? null,
    custom_fields: p.custom_fields ?? null,
  };
  const cols = Object.keys(row);
  const r = await db
    .query<PackageRow>(
      `WITH freed AS (UPDATE packages SET name = id WHERE name = $2 AND state = 'deleted' AND id <> $1 RETURNING 1)
     INSERT INTO packages (${cols.join(', ')}, metadata_created, metadata_modified)
     SELECT ${cols.map((_, i) => `$${i + 1}`).join(', ')}, ${NOW}, ${NOW} FROM (SELECT count(*) FROM freed) AS f${opts.unlessTaken ? UNLESS_TAKEN : ''} RETURNING *`,
      Object.values(row).map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v)),
    )
    .catch(nameTaken);
  return r.rows[0];
}

// (the statement's snapshot: a deleted holder of the name is renamed by freed, not seen renamed here)
const UNLESS_TAKEN = ` WHERE NOT EXISTS (SELECT 1 FROM packages WHERE id = $1)
       AND NOT EXISTS (SELECT 1 FROM packages WHERE name = $2 AND state <> 'deleted')`;

const UPDATABLE = new Set<string>([
  ...PACKAGE_TEXT_FIELDS,
  'name',
  'state',
  'type',
  'owner_org',
  'private',
  'plugin_data',
  'custom_fields',
]);

/** Sets the given columns and metadata_modified. */
export async function updatePackage(db: Queryable, id: string, changes: PackageWrite): Promise<PackageRow> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [k, v] of Object.entries(changes)) {
    if (!UPDATABLE.has(k) || v === undefined) continue;
    params.push(v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
    sets.push(`${k} = $${params.length}`);
  }
  sets.push(`metadata_modified = ${NOW}`);
  const r = await db.query<PackageRow>(`UPDATE packages SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params).catch(nameTaken);
  return r.rows[0];
}

/**
 * Locks the datasets' rows until the transaction ends, always in id order: every write of a
 * dataset's parts (resources and their positions, tags, extras, groups, relationships) takes it
 * first, so such writes on one dataset run one after another and never deadlock.
 */
export async function lockPackages(db: Queryable, ids: string[]): Promise<void> {
  await db.query('SELECT 1 FROM packages WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [ids]);
}

/**
 * lockPackages for one dataset and the datasets it has relationships with, all at once in id order
 * (as package_relationship_create and a save naming them lock them: two updates of related datasets
 * never hold one each while waiting for the other), answering the dataset's row as it is under the
 * lock (undefined: gone).
 */
export async function lockAndReadPackage(db: Queryable, id: string): Promise<PackageRow | undefined> {
  const r = await db.query<PackageRow>(
    `SELECT p.* FROM packages p
     WHERE p.id = $1
        OR p.id IN (SELECT object_package_id FROM package_relationships WHERE subject_package_id = $1
                    UNION SELECT subject_package_id FROM package_relationships WHERE object_package_id = $1)
     ORDER BY p.id FOR NO KEY UPDATE`,
    [id],
  );
  return r.rows.find((row) => row.id === id);
}

/** Marks the dataset as modified now (resource writes). */
export async function touchPackage(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE packages SET metadata_modified = ${NOW} WHERE id = $1`, [id]);
}

/**
 * Replaces the dataset's extras in one statement: keys not sent go, the others are inserted or
 * changed (rows whose value stays are not written). isNew: a dataset inserted by this
 * transaction, which has none yet.
 */
export async function setExtras(
  db: Queryable,
  packageId: string,
  extras: { key: string; value: string }[],
  opts: { isNew?: boolean } = {},
): Promise<void> {
  if (opts.isNew && !extras.length) return;
  const keys = extras.map((e) => e.key);
  const values = extras.map((e) => e.value);
  if (opts.isNew) {
    await db.query(EXTRAS_OF_NEW, [packageId, keys, values]);
    return;
  }
  await db.query(EXTRAS_REPLACED, [packageId, keys, values]);
}

/** The extras of the datasets of $1, by key. */
export const extrasOfSql: ListSql = {
  select: 'SELECT package_id, key, value FROM package_extras WHERE package_id = ANY($1::text[])',
  order: 'key',
};

export interface GroupRef {
  id: string;
  name: string;
  title: string | null;
  description: string | null;
  image_url: string | null;
  is_organization: boolean;
  type: string;
  created: string;
  approval_status: string;
  state: string;
}

/** A group or organization by id or name (any state). */
export async function findGroup(db: Queryable, idOrName: string): Promise<GroupRef | undefined> {
  return (await db.query<GroupRef>('SELECT * FROM groups WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [idOrName])).rows[0];
}

/** The organizations owning the datasets of $1. */
export const organizationsOfPackagesSql: ListSql = {
  select: 'SELECT * FROM groups WHERE id IN (SELECT owner_org FROM packages WHERE id = ANY($1::text[]))',
};

/** Active (non-organization) groups the datasets of $1 belong to, by name. */
export const packageGroupsSql: ListSql = {
  select: `SELECT m.table_id AS package_id, g.* FROM members m JOIN groups g ON g.id = m.group_id
     WHERE m.table_name = 'package' AND m.state = 'active' AND m.table_id = ANY($1::text[])
       AND NOT g.is_organization AND g.state = 'active'`,
  order: 'name',
};

export async function packageGroups(db: Queryable, packageIds: string[]): Promise<(GroupRef & { package_id: string })[]> {
  return (await db.query(listSql(packageGroupsSql), [packageIds])).rows;
}

export async function addPackageToGroup(db: Queryable, packageId: string, groupId: string): Promise<void> {
  await db.query(
    `INSERT INTO members (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, 'package', $3, 'public', 'active')
     ON CONFLICT (group_id, table_name, table_id) WHERE state = 'active' DO NOTHING`,
    [randomUUID(), groupId, packageId],
  );
}

export async function removePackageFromGroup(db: Queryable, packageId: string, groupId: string): Promise<void> {
  await db.query("DELETE FROM members WHERE group_id = $1 AND table_name = 'package' AND table_id = $2", [groupId, packageId]);
}

/** package_delete: group memberships and collaborators go. */
export async function removeMembershipsAndCollaborators(db: Queryable, packageId: string): Promise<void> {
  await db.query("DELETE FROM members WHERE table_name = 'package' AND table_id = $1", [packageId]);
  await db.query('DELETE FROM package_members WHERE package_id = $1', [packageId]);
}

/** Hard delete; resources, extras, tags links, relationships and collaborators cascade. Returns the resource ids. */
export async function purgePackage(db: Queryable, packageId: string): Promise<void> {
  await db.query("DELETE FROM members WHERE table_name = 'package' AND table_id = $1", [packageId]);
  await db.query('DELETE FROM package_relationships WHERE subject_package_id = $1 OR object_package_id = $1', [packageId]);
  await db.query('DELETE FROM packages WHERE id = $1', [packageId]);
}

/** Names of active public datasets, by name. */
export async function activePublicNames(db: Queryable, limit?: number, offset = 0): Promise<string[]> {
  const params: unknown[] = [offset];
  let lim = '';
  if (limit !== undefined) {
    params.push(limit);
    lim = ` LIMIT $2`;
  }
  const r = await db.query<{ name: string }>(
    `SELECT name FROM packages WHERE state = 'active' AND NOT private ORDER BY name${lim} OFFSET $1`,
    params,
  );
  return r.rows.map((x) => x.name);
}

// --- change notifications -------------------------------------------------------------------

export type PackageChange = 'changed' | 'deleted' | 'purged';
/**
 * Called inside the write's transaction (db is that transaction) after a dataset or its resources
 * changed ('purged': just before its rows are removed). afterCommit queues work outside this
 * database for when the transaction has committed.
 */
export type PackageChangeListener = (
  db: Queryable,
  packageId: string,
  change: PackageChange,
  afterCommit: (fn: () => void | Promise<void>) => void,
  source: ChangeContext,
) => Promise<void> | void;

const changeListeners = new WeakMap<object, PackageChangeListener[]>();
const lastListeners = new WeakMap<object, PackageChangeListener[]>();
const finalListeners = new WeakMap<object, PackageChangeListener[]>();

/**
 * Registers a listener for one running service (e.g. a search index kept in the same transaction).
 * last: it runs after all the others (it records the dataset as the write leaves it).
 * final: after the last ones too, for a listener that changes nothing the others read and whose
 * writes lock rows every writer shares (the search index's counts): they are then held from its
 * statement to the commit only, not through the other listeners' work.
 */
export function onPackageChange(services: object, listener: PackageChangeListener, opts: { last?: boolean; final?: boolean } = {}): void {
  const listeners = opts.final ? finalListeners : opts.last ? lastListeners : changeListeners;
  const list = listeners.get(services) ?? [];
  list.push(listener);
  listeners.set(services, list);
}

export interface ChangeContext {
  services: object;
  db: Queryable;
  afterCommit?: (fn: () => void | Promise<void>) => void;
  /** Who made the change (the calling action's identity). */
  identity?: { user: { id: string; name: string } | null };
}

export async function notifyPackageChange(ctx: ChangeContext, packageId: string, change: PackageChange = 'changed'): Promise<void> {
  forgetDictParts(ctx.db, packageId);
  const later = ctx.afterCommit ?? ((fn) => void fn());
  for (const listeners of [changeListeners, lastListeners, finalListeners])
    for (const listener of listeners.get(ctx.services) ?? []) await listener(ctx.db, packageId, change, later, ctx);
}

/** Writes that change datasets without going through updatePackage (group memberships, collaborators, owner removed): metadata_modified = now, then notify. */
export async function touchAndNotify(ctx: ChangeContext, packageIds: Iterable<string>): Promise<void> {
  for (const id of new Set(packageIds)) {
    await touchPackage(ctx.db, id);
    await notifyPackageChange(ctx, id);
  }
}
