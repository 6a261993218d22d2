// The import of one harvest object, inside the transaction of the harvest_objects_import call:
// the dataset written through package_create / package_update / package_delete as the import
// user (validation, search index, activity and the loader all apply) and the object marked done
// with it. A kill before the commit leaves the object WAITING and no dataset: the retry imports
// it again from the start.
import { createHash, randomUUID } from 'node:crypto';
import type { ActionContext } from '../actions/context.ts';
import type { Queryable } from '../db/database.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { HarvestSourceRow } from '../model/harvest-sources.ts';
import { completeObject, lockObjectToImport, type HarvestObjectRow, type ObjectToImport } from '../model/harvest-objects.ts';
import { activeGroupsByRefs } from '../model/groups.ts';
import { packageIdOfName, packageState } from '../model/packages.ts';
import { applySourceConfig, type LocalRef } from './config-apply.ts';
import type { HarvestSourceConfig, RemoteOrganization } from './types.ts';

/** Extras this site writes on a harvested dataset (ckanext-harvest's three, and where it came from). */
export const HARVEST_EXTRA_KEYS = ['harvest_object_id', 'harvest_source_id', 'harvest_source_title', 'harvest_url'];

export type ImportOutcome = 'added' | 'updated' | 'deleted' | 'skipped';

/** Config keys that decide what is read or who writes, not what a dataset becomes. */
const NOT_SHAPING = new Set(['force_all', 'keep_deleted', 'user', 'q', 'fq', 'read_only', 'api_version']);

/** The hash that decides whether a record changed: its content and the source settings that shape the dataset. */
export function contentHash(content: string, source: HarvestSourceRow): string {
  const shaping = Object.entries(parseSourceConfig(source.config))
    .filter(([k]) => !NOT_SHAPING.has(k))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([content, shaping, source.title, source.owner_org ?? '', source.url]))
    .digest('hex');
}

/** A source's config (JSON text); {} when it is none or unreadable. */
export function parseSourceConfig(config: string | null): HarvestSourceConfig {
  try {
    const c = config ? JSON.parse(config) : {};
    return c && typeof c === 'object' && !Array.isArray(c) ? c : {};
  } catch {
    return {};
  }
}

/** Local groups or organizations named (by id or name) by refs, keyed by both. */
async function localRefs(db: Queryable, refs: string[], organizations: boolean): Promise<Map<string, LocalRef>> {
  const map = new Map<string, LocalRef>();
  for (const g of await activeGroupsByRefs(db, refs, organizations)) map.set(g.id, g).set(g.name, g);
  return map;
}

const strings = (xs: unknown[]) => xs.filter((x): x is string => typeof x === 'string' && x !== '');

/** A dataset name for a record that has none, from its title or guid (CKAN's munge_title_to_name). */
function nameFrom(dataset: Record<string, unknown>, guid: string): string {
  const base = String(dataset.title || guid)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 100);
  return base.length >= 2 ? base : `dataset-${createHash('sha1').update(guid).digest('hex').slice(0, 8)}`;
}

/**
 * The name the dataset gets: its own unless another dataset (local, or of another source) holds
 * it; then the name with a suffix made from the source and guid, the same on every run.
 */
async function freeName(db: Queryable, wanted: string, packageId: string | null, sourceId: string, guid: string): Promise<string> {
  const holder = await packageIdOfName(db, wanted);
  if (!holder || holder === packageId) return wanted;
  const suffix = createHash('sha1').update(`${sourceId}\n${guid}`).digest('hex').slice(0, 8);
  return `${wanted.slice(0, 100 - suffix.length - 1)}-${suffix}`;
}

/**
 * Imports one object (WAITING, or the current one again); 'skipped' when there is nothing to do.
 * The object is locked and read with its job's status, its source and what a new dataset needs
 * in one statement.
 */
export async function importObject(ctx: ActionContext, objectId: string): Promise<ImportOutcome> {
  const read = await lockObjectToImport(ctx.db, objectId);
  if (!read) throw new NotFoundError(`Harvest object ${objectId} does not exist`);
  const o = read.object;
  const again = o.state === 'COMPLETE' && o.current;
  if (o.state !== 'WAITING' && !again) return 'skipped';
  if (o.state === 'WAITING' && read.jobStatus === 'Aborted') return 'skipped';
  const source = read.source;
  if (!source) throw new NotFoundError(`Harvest source ${o.harvest_source_id} does not exist`);
  const existing = o.package_id ?? read.guidPackageId;
  if (o.operation === 'delete') {
    if (existing && (await packageState(ctx.db, existing)) === 'active') await ctx.call('package_delete', { id: existing });
    await completeObject(ctx.db, o, existing, 'deleted');
    return 'deleted';
  }
  const packageId = await writeDataset(ctx, read, source, existing);
  await completeObject(ctx.db, o, packageId, existing ? 'updated' : 'added');
  return existing ? 'updated' : 'added';
}

type ImportSource = NonNullable<ObjectToImport['source']>;

async function writeDataset(ctx: ActionContext, read: ObjectToImport, source: ImportSource, existing: string | null): Promise<string> {
  const o: HarvestObjectRow = read.object;
  const remote = o.payload?.dataset;
  if (!remote) throw new ValidationError({ content: ['the record could not be read as a dataset'] });
  const config = parseSourceConfig(source.config);
  const organization = (o.payload?.organization ?? null) as RemoteOrganization | null;
  // The remote id is kept when it is free here and the import user may set ids (sysadmins).
  let id = existing;
  if (!id) {
    const remoteId = typeof remote.id === 'string' && remote.id ? remote.id : null;
    // (the state of a dataset with that id was read with the object, under its lock)
    const taken = remoteId ? read.remoteIdState !== null : true;
    id = !taken && ctx.identity.sysadmin ? remoteId! : randomUUID();
  }
  const groupRefs = [
    ...strings((Array.isArray(remote.groups) ? remote.groups : []).flatMap((g: any) => [g?.id, g?.name])),
    ...strings(config.default_groups ?? []),
  ];
  const applied = applySourceConfig(remote, config, {
    source: { id: source.id, url: source.url, title: source.title, owner_org: source.owner_org },
    jobId: o.harvest_job_id,
    objectId: o.id,
    datasetId: id,
    organizations: await localRefs(ctx.db, strings([organization?.id, organization?.name]), true),
    groups: await localRefs(ctx.db, groupRefs, false),
    remoteOrganization: organization,
  });
  for (const group of applied.groupsToCreate) await ctx.call('group_create', group);
  if (applied.organizationToCreate) {
    const org = (await ctx.call('organization_create', applied.organizationToCreate)) as { id: string };
    applied.dataset.owner_org = org.id;
  }
  const dataset = applied.dataset;
  const extras = (Array.isArray(dataset.extras) ? (dataset.extras as { key: string }[]) : []).filter(
    (e) => !HARVEST_EXTRA_KEYS.includes(e.key),
  );
  extras.push(
    { key: 'harvest_object_id', value: o.id } as never,
    { key: 'harvest_source_id', value: source.id } as never,
    { key: 'harvest_source_title', value: source.title } as never,
  );
  if (o.remote_url) extras.push({ key: 'harvest_url', value: o.remote_url } as never);
  const wanted = typeof dataset.name === 'string' && dataset.name ? dataset.name : nameFrom(dataset, o.guid);
  const name = await freeName(ctx.db, wanted, existing, source.id, o.guid);
  const dict = { ...dataset, id, name, extras };
  // (only the id is read; an error ends the import: a new dataset's taken name is then found by its insert)
  const opts = { idAnswer: true, endsWithCaller: true };
  if (existing) {
    const result = (await ctx.call('package_update', { ...dict, state: 'active' }, opts)) as { id: string };
    return result.id;
  }
  const result = (await ctx.call('package_create', dict, opts)) as { id: string };
  return result.id;
}
