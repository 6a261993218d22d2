// The package dict as CKAN returns it (package_show, lists, search results), built for many
// datasets at once. packageDicts(ctx, ids) is the entry point for other parts (groups, users).
import type { ActionContext } from '../context.ts';
import type { NamedSql, Queryable } from '../db/database.ts';
import { jsonListSql, oneIdSql } from '../db/sql.ts';
import { siteUrl } from '../config/site-url.ts';
import type { Config } from '../config/load.ts';
import { findLicense, isOpenLicense } from './licenses.ts';
import { extrasOfSql, organizationsOfPackagesSql, packageGroupsSql, packagesByIdsSql, type GroupRef, type PackageRow } from './packages.ts';
import { relationshipsOfSql, type RelationshipRow } from './relationships.ts';
import { resourcesOfSql, type ResourceRow } from './resources.ts';
import { tagsOfSql, type PackageTagRow } from './tags.ts';
import { isDeepStrictEqual } from 'node:util';
import { outputPackageDicts } from '../scheming/output.ts';
import { keepDictParts, takeDictParts } from './dict-parts-cache.ts';
import type { SchemingSchemas } from '../scheming/types.ts';

/** The datasets a caller may see, as an SQL condition over alias (its parameters appended to params). */
type CallerDatasetCondition = (ctx: ActionContext, params: unknown[], alias: string) => Promise<string>;

// The permission layer installs its rule (src/auth/authz.ts, visiblePackagesCondition) when it
// loads: model/ does not import auth/. Until then a caller sees the active public datasets only
// (sysadmins all), never more than the rule allows.
let visibleToCaller: CallerDatasetCondition = async (ctx, _params, alias) =>
  ctx.identity.sysadmin ? 'true' : `(${alias}.state = 'active' AND NOT ${alias}.private)`;

export function setDatasetVisibility(condition: CallerDatasetCondition): void {
  visibleToCaller = condition;
}

export interface PackageDictOptions {
  includeTracking?: boolean;
  includePluginData?: boolean;
}

/** The dict with its keys in code unit order (the object itself when they are already: most dicts are built so). */
function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(o);
  let i = 1;
  while (i < keys.length && keys[i - 1] < keys[i]) i++;
  if (i >= keys.length) return o;
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function groupImageUrl(config: Config, url: string | null): string {
  if (!url) return '';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || url.startsWith('/')) return url;
  return `${siteUrl(config)}/uploads/group/${url}`;
}

/** The public URL of a resource: uploads point at our download route. */
export function resourceUrl(config: Config, r: Pick<ResourceRow, 'id' | 'package_id' | 'url' | 'url_type'>): string {
  const url = r.url ?? '';
  if (r.url_type === 'upload' && url && !url.includes('/'))
    return `${siteUrl(config)}/dataset/${r.package_id}/resource/${r.id}/download/${url}`;
  if (r.url_type === 'datastore') return `${siteUrl(config)}/datastore/dump/${r.id}`;
  if (url && !/^[a-z][a-z0-9+.-]*:/i.test(url)) return 'http://' + url.replace(/^\/+/, '');
  return url;
}

export function resourceDict(config: Config, r: ResourceRow, opts: PackageDictOptions = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.extras ?? {})) out[k] = v;
  Object.assign(out, {
    cache_last_updated: r.cache_last_updated,
    cache_url: r.cache_url,
    created: r.created,
    datastore_active: r.datastore_active,
    description: r.description ?? '',
    format: r.format ?? '',
    hash: r.hash ?? '',
    id: r.id,
    last_modified: r.last_modified,
    metadata_modified: r.metadata_modified,
    mimetype: r.mimetype,
    mimetype_inner: r.mimetype_inner,
    name: r.name,
    package_id: r.package_id,
    position: r.position,
    resource_type: r.resource_type,
    size: r.size === null || r.size === undefined ? null : Number(r.size),
    state: r.state,
    url: resourceUrl(config, r),
    url_type: r.url_type,
  });
  if (opts.includeTracking) out.tracking_summary = { total: 0, recent: 0 };
  return sortKeys(out);
}

function organizationDict(g: GroupRef | undefined): Record<string, unknown> | null {
  if (!g) return null;
  return {
    id: g.id,
    name: g.name,
    title: g.title ?? '',
    type: g.type,
    description: g.description ?? '',
    image_url: g.image_url ?? '',
    created: g.created,
    is_organization: g.is_organization,
    approval_status: g.approval_status,
    state: g.state,
  };
}

type DictContext = { db: Queryable; config: Config; identity: { sysadmin: boolean }; services?: { scheming?: SchemingSchemas } };

type DictParts = {
  extras: { package_id: string; key: string; value: string | null }[];
  tags: PackageTagRow[];
  groups: (GroupRef & { package_id: string })[];
  resources: ResourceRow[];
  rels: RelationshipRow[];
  orgs: GroupRef[];
};

/**
 * The statement reading the parts of the dicts of the datasets of $1 (and their rows, when asked)
 * as one JSON document: one round trip, prepared once per connection. JSON keeps the values the
 * drivers give (timestamps as ISO text) except bigint, a number here (resourceDict converts).
 */
const dictPartsSql = (withRows: boolean): NamedSql => ({
  name: withRows ? 'package_dict_rows_and_parts' : 'package_dict_parts',
  text: `SELECT json_build_object(${withRows ? `'rows', ${jsonListSql(packagesByIdsSql)},` : ''}
    'extras', ${jsonListSql(extrasOfSql)}, 'tags', ${jsonListSql(tagsOfSql)}, 'groups', ${jsonListSql(packageGroupsSql)},
    'resources', ${jsonListSql(resourcesOfSql)}, 'rels', ${jsonListSql(relationshipsOfSql)},
    'orgs', ${jsonListSql(organizationsOfPackagesSql)}) AS parts`,
});
const DICT_PARTS = dictPartsSql(false);
const DICT_ROWS_AND_PARTS = dictPartsSql(true);
/** Of one dataset ($1 its id: planned once per connection, oneIdSql): 0.8 ms of planning a write. */
const DICT_ROW_AND_PARTS = { name: 'package_dict_row_and_parts', text: oneIdSql(DICT_ROWS_AND_PARTS.text) };

/** Package dicts for the rows, in the same order (no visibility check: callers decide). */
export async function buildPackageDicts(
  ctx: DictContext,
  rows: PackageRow[],
  opts: PackageDictOptions = {},
): Promise<Record<string, unknown>[]> {
  if (!rows.length) return [];
  const parts = keptParts(ctx.db, rows) ?? (await ctx.db.query<{ parts: DictParts }>(DICT_PARTS, [rows.map((p) => p.id)])).rows[0].parts;
  parts.rels = await readableRelationships(ctx, rows, parts.rels);
  const dicts = assembleDicts(ctx, rows, parts, opts);
  await outputPackageDicts(ctx, dicts);
  return dicts;
}

/**
 * The dicts of the datasets with these ids, in their order (ids not found are left out), whoever
 * may read them (the caller has checked): rows and parts from one statement (package_search's
 * results).
 */
export async function packageDictsOfIds(
  ctx: DictContext,
  ids: string[],
  opts: PackageDictOptions = {},
): Promise<Record<string, unknown>[]> {
  if (!ids.length) return [];
  const { rows, ...parts } = (await ctx.db.query<{ parts: DictParts & { rows: PackageRow[] } }>(DICT_ROWS_AND_PARTS, [ids])).rows[0].parts;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const found = ids.map((id) => byId.get(id)).filter((r): r is PackageRow => !!r);
  parts.rels = await readableRelationships(ctx, found, parts.rels);
  const dicts = assembleDicts(ctx, found, parts, opts);
  await outputPackageDicts(ctx, dicts);
  return dicts;
}

interface KeptParts {
  row: PackageRow;
  parts: DictParts;
}

/** The parts read with this very row earlier in the transaction (datasetDictOfWrite), if any. */
function keptParts(db: Queryable, rows: PackageRow[]): DictParts | undefined {
  if (rows.length !== 1) return undefined;
  const kept = takeDictParts(db, rows[0].id) as KeptParts | undefined;
  return kept && isDeepStrictEqual(kept.row, rows[0]) ? { ...kept.parts } : undefined;
}

/**
 * A dataset's row and dict as a caller of ctx's identity sees it, from one statement (a write's
 * activity record). keepParts: the write's transaction keeps the parts read, for the next dict
 * of this dataset in it (the answer of the write).
 */
export async function datasetDictOfWrite(
  ctx: DictContext,
  id: string,
  opts: { keepParts: boolean },
): Promise<{ row: PackageRow; dict: Record<string, unknown> } | undefined> {
  const { rows, ...parts } = (await ctx.db.query<{ parts: DictParts & { rows: PackageRow[] } }>(DICT_ROW_AND_PARTS, [id])).rows[0].parts;
  const row = rows[0];
  if (!row) return undefined;
  if (opts.keepParts) keepDictParts(ctx.db, id, { row, parts: { ...parts } } satisfies KeptParts);
  parts.rels = await readableRelationships(ctx, rows, parts.rels);
  const dicts = assembleDicts(ctx, rows, parts, {});
  await outputPackageDicts(ctx, dicts);
  return { row, dict: dicts[0] };
}

/**
 * The relationships whose other dataset the caller may read (the datasets shown, the caller has
 * checked): a public dataset's dict never tells a private dataset's id or the comment on it.
 */
async function readableRelationships(ctx: DictContext, shown: PackageRow[], rels: RelationshipRow[]): Promise<RelationshipRow[]> {
  if (!rels.length || ctx.identity.sysadmin) return rels;
  const shownIds = new Set(shown.map((p) => p.id));
  const others = new Set<string>();
  for (const r of rels) for (const id of [r.subject_package_id, r.object_package_id]) if (!shownIds.has(id)) others.add(id);
  if (!others.size) return rels;
  const params: unknown[] = [[...others]];
  // (a context without a caller, e.g. an activity record, sees what anonymous callers see)
  const cond = await visibleToCaller(ctx as ActionContext, params, 'p');
  const readable = new Set(
    (await ctx.db.query<{ id: string }>(`SELECT p.id FROM packages p WHERE p.id = ANY($1::text[]) AND ${cond}`, params)).rows.map(
      (x) => x.id,
    ),
  );
  for (const id of shownIds) readable.add(id);
  return rels.filter((r) => readable.has(r.subject_package_id) && readable.has(r.object_package_id));
}

function assembleDicts(
  ctx: DictContext,
  rows: PackageRow[],
  { extras, tags, groups, resources, rels, orgs }: DictParts,
  opts: PackageDictOptions,
): Record<string, unknown>[] {
  const { config } = ctx;
  const by = <T extends { package_id: string }>(list: T[]) => {
    const m = new Map<string, T[]>();
    for (const x of list) (m.get(x.package_id) ?? m.set(x.package_id, []).get(x.package_id)!).push(x);
    return m;
  };
  const extrasBy = by(extras);
  const tagsBy = by(tags);
  const groupsBy = by(groups);
  const resourcesBy = by(resources);
  const orgById = new Map(orgs.map((g) => [g.id, g]));
  return rows.map((p) => {
    const license = findLicense(p.license_id);
    const pkgTags = (tagsBy.get(p.id) ?? []).filter((t) => !t.vocabulary_id);
    const relDict = (r: (typeof rels)[number]) => ({
      id: r.id,
      type: r.type,
      comment: r.comment ?? '',
      __extras: { subject_package_id: r.subject_package_id, object_package_id: r.object_package_id },
    });
    const pkgResources = (resourcesBy.get(p.id) ?? []).map((r) => resourceDict(config, r, opts));
    const out: Record<string, unknown> = { ...(p.custom_fields ?? {}) };
    Object.assign(out, {
      author: p.author,
      author_email: p.author_email,
      creator_user_id: p.creator_user_id,
      extras: (extrasBy.get(p.id) ?? [])
        .map((e) => ({ key: e.key, value: e.value }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
      groups: (groupsBy.get(p.id) ?? []).map((g) => ({
        description: g.description ?? '',
        display_name: g.title || g.name,
        id: g.id,
        image_display_url: groupImageUrl(config, g.image_url),
        name: g.name,
        title: g.title ?? '',
      })),
      id: p.id,
      isopen: isOpenLicense(license),
      license_id: p.license_id,
      license_title: license ? license.title : p.license_id,
      // (the keys in order: sortKeys then has nothing to do unless there are custom fields)
      ...(license?.url ? { license_url: license.url } : undefined),
      maintainer: p.maintainer,
      maintainer_email: p.maintainer_email,
      metadata_created: p.metadata_created,
      metadata_modified: p.metadata_modified,
      name: p.name,
      notes: p.notes,
      num_resources: pkgResources.length,
      num_tags: pkgTags.length,
      organization: organizationDict(p.owner_org ? orgById.get(p.owner_org) : undefined),
      owner_org: p.owner_org,
      ...(opts.includePluginData && ctx.identity.sysadmin ? { plugin_data: p.plugin_data ?? {} } : undefined),
      private: p.private,
      relationships_as_object: rels.filter((r) => r.object_package_id === p.id).map(relDict),
      relationships_as_subject: rels.filter((r) => r.subject_package_id === p.id).map(relDict),
      resources: pkgResources,
      state: p.state,
      tags: pkgTags.map((t) => ({ display_name: t.name, id: t.id, name: t.name, state: t.state, vocabulary_id: t.vocabulary_id })),
      title: p.title || p.name,
      ...(opts.includeTracking ? { tracking_summary: { total: 0, recent: 0 } } : undefined),
      type: p.type,
      url: p.url,
      version: p.version,
    });
    return sortKeys(out);
  });
}

/**
 * Package dicts for the given ids that the caller may see, in the order of ids (ids the caller
 * may not see, or that do not exist, are left out). For group_show, user_show and lists.
 */
export async function packageDicts(ctx: ActionContext, ids: string[], opts: PackageDictOptions = {}): Promise<Record<string, unknown>[]> {
  if (!ids.length) return [];
  const params: unknown[] = [ids];
  const cond = await visibleToCaller(ctx, params, 'p');
  const rows = (await ctx.db.query<PackageRow>(`SELECT p.* FROM packages p WHERE p.id = ANY($1::text[]) AND ${cond}`, params)).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return buildPackageDicts(
    ctx,
    ids.map((id) => byId.get(id)).filter((r): r is PackageRow => !!r),
    opts,
  );
}
