// A source's config applied to one remote dataset dict, as ckanext-harvest's CKAN harvester
// does it: default tags, groups and extras, clean tags, remote groups and organizations kept,
// dropped or listed to be created, and the owner organization. Pure: what exists here is handed
// in as data, and what must be created is handed back; harvest-core does the writes.
import type { HarvestSourceConfig, RemoteOrganization } from './types.ts';

/** A local group or organization, found by its id or its name. */
export interface LocalRef {
  id: string;
  name: string;
}

export interface ConfigApplyContext {
  source: { id: string; url: string; title: string; owner_org: string | null };
  jobId: string;
  objectId: string;
  /** The id the dataset has (or will have) here: `{dataset_id}` in default_extras. */
  datasetId: string;
  /** Local organizations, keyed by id and by name. */
  organizations: ReadonlyMap<string, LocalRef>;
  /** Local groups, keyed by id and by name. */
  groups: ReadonlyMap<string, LocalRef>;
  /** The dataset's remote organization (RemoteDataset.organization). */
  remoteOrganization?: RemoteOrganization | null;
}

export interface ConfigApplyResult {
  dataset: Record<string, unknown>;
  /** remote_groups = create: remote groups missing here, to create before the dataset (it names them). */
  groupsToCreate: Record<string, unknown>[];
  /** remote_orgs = create: the remote organization missing here, to create first (owner_org names it). */
  organizationToCreate: Record<string, unknown> | null;
}

const MIN_TAG_LENGTH = 2;
const MAX_TAG_LENGTH = 100;
const LETTERS_APART: Record<string, string> = { Æ: 'Ae', æ: 'ae', ß: 'ss', Ø: 'O', ø: 'o', Ð: 'D', ð: 'd', Þ: 'Th', þ: 'th' };

/** CKAN's munge_tag: ASCII letters, digits and dashes, lower case, padded or cut to the tag lengths. */
export function mungeTag(tag: string): string {
  let t = tag
    .replace(/[ÆæßØøÐðÞþ]/g, (c) => LETTERS_APART[c])
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '');
  t = t
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9\- ]/g, '')
    .replace(/ /g, '-');
  if (t.length < MIN_TAG_LENGTH) t += '_'.repeat(MIN_TAG_LENGTH - t.length);
  return t.slice(0, MAX_TAG_LENGTH);
}

function tagName(t: unknown): string | null {
  if (typeof t === 'string') return t;
  if (t && typeof t === 'object' && typeof (t as { name?: unknown }).name === 'string') return (t as { name: string }).name;
  return null;
}

/** Python's str.format with named fields only: known names replaced, `{{` and `}}` unescaped, others left. */
function substitute(value: string, fields: Record<string, string>): string {
  return value.replace(/\{\{|\}\}|\{(\w+)\}/g, (m, name?: string) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    return name !== undefined && name in fields ? fields[name] : m;
  });
}

/** The names of the tags a record's dataset gets with the source's config (default_tags, clean_tags) applied. */
export function appliedTagNames(tags: unknown, config: HarvestSourceConfig): string[] {
  const d: Record<string, unknown> = { tags: Array.isArray(tags) ? tags : [] };
  applyTags(d, config);
  return (d.tags as unknown[]).map(tagName).filter((n): n is string => typeof n === 'string' && n !== '');
}

function applyTags(dataset: Record<string, unknown>, config: HarvestSourceConfig): void {
  const tags = Array.isArray(dataset.tags) ? [...(dataset.tags as unknown[])] : [];
  const present = new Set(tags.map(tagName));
  for (const t of config.default_tags ?? []) {
    const name = tagName(t);
    if (name && !present.has(name)) {
      tags.push({ name });
      present.add(name);
    }
  }
  if (config.clean_tags) {
    const seen = new Set<string>();
    const cleaned: unknown[] = [];
    for (const t of tags) {
      const name = tagName(t);
      if (name === null) continue;
      const munged = mungeTag(name);
      // An empty tag munges to '__' (padded): CKAN drops those that munge to nothing before padding.
      if (!mungeTag(name).replace(/_/g, '') || seen.has(munged)) continue;
      seen.add(munged);
      cleaned.push(typeof t === 'object' ? { ...(t as object), name: munged } : { name: munged });
    }
    dataset.tags = cleaned;
  } else if (tags.length || 'tags' in dataset) {
    dataset.tags = tags.map((t) => (typeof t === 'string' ? { name: t } : t));
  }
}

const GROUP_REMOTE_ONLY = ['packages', 'created', 'users', 'groups', 'tags', 'extras', 'display_name', 'package_count'];

function applyGroups(dataset: Record<string, unknown>, config: HarvestSourceConfig, ctx: ConfigApplyContext): Record<string, unknown>[] {
  const toCreate: Record<string, unknown>[] = [];
  const out: { name: string }[] = [];
  const named = new Set<string>();
  const add = (name: string) => {
    if (!named.has(name)) {
      named.add(name);
      out.push({ name });
    }
  };
  const mode = config.remote_groups;
  if (mode === 'only_local' || mode === 'create') {
    for (const g of Array.isArray(dataset.groups) ? (dataset.groups as Record<string, unknown>[]) : []) {
      if (!g || typeof g !== 'object') continue;
      const id = typeof g.id === 'string' ? g.id : undefined;
      const name = typeof g.name === 'string' ? g.name : undefined;
      const local = (id && ctx.groups.get(id)) || (name && ctx.groups.get(name));
      if (local) add(local.name);
      else if (mode === 'create' && name) {
        const group = { ...g };
        for (const k of GROUP_REMOTE_ONLY) delete group[k];
        toCreate.push(group);
        add(name);
      }
    }
  }
  for (const ref of config.default_groups ?? []) {
    const local = ctx.groups.get(ref);
    if (local) add(local.name);
  }
  if (out.length || mode === 'only_local' || mode === 'create' || 'groups' in dataset) dataset.groups = out;
  return toCreate;
}

function applyOrganization(
  dataset: Record<string, unknown>,
  config: HarvestSourceConfig,
  ctx: ConfigApplyContext,
): Record<string, unknown> | null {
  const mode = config.remote_orgs;
  const remote = ctx.remoteOrganization;
  dataset.owner_org = ctx.source.owner_org;
  if ((mode !== 'only_local' && mode !== 'create') || !remote) return null;
  const local = (remote.id && ctx.organizations.get(remote.id)) || ctx.organizations.get(remote.name);
  if (local) {
    dataset.owner_org = local.id;
    return null;
  }
  if (mode !== 'create') return null;
  dataset.owner_org = remote.name;
  const org: Record<string, unknown> = { name: remote.name };
  for (const k of ['id', 'title', 'description', 'image_url'] as const) if (remote[k]) org[k] = remote[k];
  return org;
}

function applyExtras(dataset: Record<string, unknown>, config: HarvestSourceConfig, ctx: ConfigApplyContext): void {
  const defaults = config.default_extras;
  if (!defaults || typeof defaults !== 'object' || !Object.keys(defaults).length) return;
  const extras = (Array.isArray(dataset.extras) ? dataset.extras : []) as { key: string; value: unknown }[];
  const fields = {
    dataset_id: ctx.datasetId,
    harvest_source_id: ctx.source.id,
    harvest_source_url: ctx.source.url.replace(/^\/+|\/+$/g, ''),
    harvest_source_title: ctx.source.title,
    harvest_job_id: ctx.jobId,
    harvest_object_id: ctx.objectId,
  };
  let out = [...extras];
  for (const [key, raw] of Object.entries(defaults)) {
    const existing = out.find((e) => e.key === key);
    if (existing && !config.override_extras) continue;
    if (existing) out = out.filter((e) => e !== existing);
    out.push({ key, value: typeof raw === 'string' ? substitute(raw, fields) : raw });
  }
  dataset.extras = out;
}

/** The dataset dict to create or update here, and what must exist first. Does not change `dataset`. */
export function applySourceConfig(
  dataset: Record<string, unknown>,
  config: HarvestSourceConfig,
  ctx: ConfigApplyContext,
): ConfigApplyResult {
  const out: Record<string, unknown> = structuredClone(dataset);
  applyTags(out, config);
  const groupsToCreate = applyGroups(out, config, ctx);
  const organizationToCreate = applyOrganization(out, config, ctx);
  applyExtras(out, config, ctx);
  return { dataset: out, groupsToCreate, organizationToCreate };
}
