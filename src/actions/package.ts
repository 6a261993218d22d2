// Dataset actions: package_create/show/update/patch/revise/delete, dataset_purge, lists, autocomplete,
// owner org and bulk updates.
// Saving a dataset from a validated dict: core columns, extras, tags, groups, resources and
// relationships (package_create, package_update and everything built on them).
import type { ActionContext } from './context.ts';
import { afterCommit, type ActionDefinition, type AuthFunction } from './registry.ts';
import { canBulkUpdate, canDeletePackage, canEditPackage, canReadPackage, checkPackageCreate, hasGroupPermission } from '../auth/authz.ts';
import { anyone, denied, sysadminOnly } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { removeResourceFile, storeResourceFile, mungeFilename } from '../files/storage.ts';
import { MISSING } from '../validation/validate.ts';
import { bool, clampTo, defaultValue, ignoreMissing, intValidator, naturalNumber, notEmpty, unicodeString } from '../validation/validators.ts';
import {
  activePublicNames, addPackageToGroup, findGroup, findPackage, freeDeletedName, insertPackage, lockPackages, packageGroups, PACKAGE_TEXT_FIELDS, purgePackage,
  notifyPackageChange, removeMembershipsAndCollaborators, removePackageFromGroup, setExtras, updatePackage, type PackageRow,
} from '../model/packages.ts';
import { buildPackageDicts } from '../model/package-dict.ts';
import { findRelationship, relationshipsOf, saveRelationship, deleteRelationship } from '../model/relationships.ts';
import {
  allResourcesOf, findResource, guessFormat, guessMimetype, insertResource, markResourceDeleted, resourcesOf, setPositions, updateResource, RESOURCE_FIELDS,
  type ResourceRow, type ResourceWrite,
} from '../model/resources.ts';
import { deleteUnusedTags, findVocabulary, setPackageTags } from '../model/tags.ts';
import { validate } from '../validation/validate.ts';
import {
  COMPUTED_PACKAGE_KEYS, PACKAGE_SCHEMA_KEYS, packageSchema, RESOURCE_SERVICE_KEYS, resourceSchema, tagNameErrors, type PackageValidationContext,
} from '../validation/package-schema.ts';
import type { UploadedFile } from './context.ts';

/** File work of an action, done once its transaction has committed (a failed write never touches files). */
export class FileOps {
  private readonly ops: (() => void)[] = [];
  store(resourceId: string, file: UploadedFile) { this.ops.push(() => storeResourceFile(this.ctx.config, resourceId, file)); }
  remove(resourceId: string) { this.ops.push(() => removeResourceFile(this.ctx.config, resourceId)); }
  constructor(private readonly ctx: ActionContext) {}
  run() {
    const ops = this.ops.splice(0);
    return afterCommit(this.ctx, () => ops.forEach((op) => op()));
  }
}

export async function packageOr404(ctx: ActionContext, idOrName: unknown, message = 'Package was not found.'): Promise<PackageRow> {
  if (typeof idOrName !== 'string' || !idOrName) throw new NotFoundError(message);
  const pkg = await findPackage(ctx.db, idOrName);
  if (!pkg) throw new NotFoundError(message);
  return pkg;
}

export async function showPackage(ctx: ActionContext, pkg: PackageRow, opts: { includeTracking?: boolean; includePluginData?: boolean } = {}) {
  return (await buildPackageDicts(ctx, [pkg], opts))[0];
}

const internal = (ctx: ActionContext) => ctx.ignoreAuth || ctx.identity.via === 'internal';

// --- validation -----------------------------------------------------------------------------

export interface ValidPackage {
  data: Record<string, any>;
  custom: Record<string, unknown>;
}

function flattenTagErrors(errs: unknown): string[] {
  if (!Array.isArray(errs)) return [];
  const out: string[] = [];
  for (const e of errs) {
    if (typeof e === 'string') out.push(e);
    else if (e && typeof e === 'object') for (const v of Object.values(e)) if (Array.isArray(v)) out.push(...v.map(String));
  }
  return out;
}

/** Validates a dataset dict; throws the whole error dict (CKAN's shape) when anything is wrong. */
export async function validatePackage(ctx: ActionContext, input: Record<string, unknown>, pkg?: PackageRow): Promise<ValidPackage> {
  const existing = pkg ? await resourcesOf(ctx.db, [pkg.id]) : [];
  const vctx: PackageValidationContext = { ctx, pkg, existingResourceIds: new Set(existing.map((r) => r.id)) };
  const { data, errors } = await validate(packageSchema({ create: !pkg }), input, vctx);

  // tags: free tags from tag_string too; their errors are flat strings
  if (errors.tags) errors.tags = flattenTagErrors(errors.tags);
  if (typeof data.tag_string === 'string') {
    const names = data.tag_string.split(',').map((s: string) => s.trim()).filter(Boolean);
    const tagErrs = names.flatMap(tagNameErrors);
    if (tagErrs.length) errors.tag_string = tagErrs;
    data.tags = [...((data.tags as Record<string, unknown>[] | undefined) ?? []), ...names.map((name: string) => ({ name }))];
  }
  if (Array.isArray(data.tags)) {
    const vocabErrs: string[] = [];
    for (const t of data.tags) {
      if (!t.vocabulary_id) continue;
      const v = await findVocabulary(ctx.db, t.vocabulary_id);
      if (!v) vocabErrs.push(`Tag vocabulary "${t.vocabulary_id}" does not exist`);
      else t.vocabulary_id = v.id;
    }
    if (vocabErrs.length) errors.tags = [...((errors.tags as string[]) ?? []), ...vocabErrs];
  }

  // extras: unique keys, not a schema field
  if (Array.isArray(data.extras)) {
    const itemErrors: Record<string, unknown>[] = Array.isArray(errors.extras) ? (errors.extras as Record<string, unknown>[]) : data.extras.map(() => ({}));
    const seen = new Map<string, number>();
    data.extras.forEach((e: Record<string, unknown>, i: number) => {
      if (typeof e.key !== 'string') return;
      seen.set(e.key, (seen.get(e.key) ?? 0) + 1);
      if (PACKAGE_SCHEMA_KEYS.has(e.key)) {
        const ie = itemErrors[i] as Record<string, string[]>;
        ie.key = [...(ie.key ?? []), 'There is a schema field with the same name'];
      }
    });
    if (itemErrors.some((e) => Object.keys(e).length)) errors.extras = itemErrors;
    const dups = [...seen.entries()].filter(([, n]) => n > 1).map(([k]) => `Duplicate key "${k}"`);
    if (dups.length) errors.extras_validation = dups;
  }

  // resources: an id of another dataset's resource cannot be taken
  if (Array.isArray(data.resources)) {
    const itemErrors: Record<string, unknown>[] = Array.isArray(errors.resources) ? (errors.resources as Record<string, unknown>[]) : data.resources.map(() => ({}));
    for (const [i, r] of (data.resources as Record<string, unknown>[]).entries()) {
      if (typeof r.id !== 'string') continue;
      const other = await findResource(ctx.db, r.id);
      if (other && other.package_id !== pkg?.id) (itemErrors[i] as Record<string, string[]>).id = ['Resource id already exists.'];
    }
    if (itemErrors.some((e) => Object.keys(e).length)) errors.resources = itemErrors;
  }

  // groups: each must exist (a dataset is never saved without a group it was sent with)
  if (Array.isArray(data.groups)) {
    const missing: string[] = [];
    for (const g of data.groups as Record<string, unknown>[]) {
      const ref = g.id || g.name;
      if (typeof ref !== 'string' || !ref) continue;
      const group = await findGroup(ctx.db, ref);
      if (!group || group.state === 'deleted') missing.push(`Group ${ref} was not found.`);
    }
    if (missing.length) errors.groups = missing;
  }

  // relationships: the other dataset must exist
  for (const [key, other] of [['relationships_as_subject', 'object'], ['relationships_as_object', 'subject']] as const) {
    if (!Array.isArray(data[key])) continue;
    const itemErrors: Record<string, unknown>[] = Array.isArray(errors[key]) ? (errors[key] as Record<string, unknown>[]) : data[key].map(() => ({}));
    for (const [i, r] of (data[key] as Record<string, any>[]).entries()) {
      const ref = r[other] ?? r[`${other}_package_id`] ?? r.__extras?.[`${other}_package_id`];
      const found = typeof ref === 'string' ? await findPackage(ctx.db, ref) : undefined;
      if (!found) (itemErrors[i] as Record<string, string[]>)[other] = [typeof ref === 'string' ? `Dataset ${ref} was not found` : 'Missing value'];
      else r._other = found.id;
    }
    if (itemErrors.some((e) => Object.keys(e).length)) errors[key] = itemErrors;
  }

  if (Object.keys(errors).length) throw new ValidationError(errors);

  const custom: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (!PACKAGE_SCHEMA_KEYS.has(k) && !COMPUTED_PACKAGE_KEYS.has(k)) {
      custom[k] = v;
      delete data[k];
    }
  }
  return { data, custom };
}

// --- resources ------------------------------------------------------------------------------

/** Splits a validated resource dict into columns and extras. */
function resourceParts(r: Record<string, any>): { cols: ResourceWrite; extras: Record<string, unknown>; sent: Set<string> } {
  const cols: Record<string, unknown> = {};
  const extras: Record<string, unknown> = {};
  const known = new Set<string>([...RESOURCE_FIELDS, 'id', 'datastore_active']);
  for (const [k, v] of Object.entries(r)) {
    if (known.has(k)) cols[k] = v;
    else if (!RESOURCE_SERVICE_KEYS.has(k) && !Object.prototype.hasOwnProperty.call(resourceSchema, k)) extras[k] = v;
  }
  return { cols: cols as ResourceWrite, extras, sent: new Set(Object.keys(r)) };
}

const utcNow = () => new Date().toISOString().replace('Z', '');

function lastSegment(url: string): string {
  const seg = url.split('?')[0].split('#')[0].replace(/\/+$/, '').split('/').pop() ?? '';
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/**
 * Creates a resource from a validated dict (appended at position). An uploaded file makes it an
 * upload; the file is stored by fileOps after the writes.
 */
export async function createResource(ctx: ActionContext, packageId: string, r: Record<string, any>, position: number, fileOps: FileOps, file?: UploadedFile): Promise<ResourceRow> {
  const { cols, extras } = resourceParts(r);
  const w: ResourceWrite & { id?: string } = { ...cols, extras, position };
  if (!internal(ctx)) delete w.datastore_active;
  if (file) {
    w.url_type = 'upload';
    w.url = mungeFilename(file.filename);
    w.size = file.size;
    w.mimetype = cols.mimetype ?? guessMimetype(file.filename) ?? (file.mimetype && file.mimetype !== 'application/octet-stream' ? file.mimetype : null);
    w.last_modified = utcNow();
  }
  if (!w.format) w.format = guessFormat(file ? file.filename : String(w.url ?? '')) || (w.format ?? '');
  const row = await insertResource(ctx.db, packageId, w);
  if (file) fileOps.store(row.id, file);
  return row;
}

/** Updates a resource with package_update's replace semantics (reference §4.4). */
export async function replaceResource(ctx: ActionContext, old: ResourceRow, r: Record<string, any>, position: number | undefined, fileOps: FileOps, file?: UploadedFile): Promise<ResourceRow> {
  const { cols, extras, sent } = resourceParts(r);
  const w: ResourceWrite = { state: 'active', extras };
  // cleared when not sent
  w.description = cols.description ?? null;
  w.resource_type = cols.resource_type ?? null;
  w.mimetype = cols.mimetype ?? null;
  w.mimetype_inner = cols.mimetype_inner ?? null;
  // kept when not sent
  for (const k of ['name', 'format', 'hash', 'size', 'created', 'last_modified', 'cache_url', 'cache_last_updated', 'url_type'] as const) {
    if (sent.has(k)) (w as Record<string, unknown>)[k] = cols[k] ?? null;
  }
  if (sent.has('clear_upload') && r.clear_upload) w.url_type = null;
  if (internal(ctx) && cols.datastore_active !== undefined) w.datastore_active = cols.datastore_active;
  if (position !== undefined) w.position = position;
  const wasUpload = old.url_type === 'upload';
  if (file) {
    w.url_type = 'upload';
    w.url = mungeFilename(file.filename);
    w.size = file.size;
    w.mimetype = cols.mimetype ?? guessMimetype(file.filename) ?? (file.mimetype && file.mimetype !== 'application/octet-stream' ? file.mimetype : null);
    if (!sent.has('format') || !cols.format) w.format = guessFormat(file.filename) || (cols.format ?? old.format);
    w.last_modified = utcNow();
    fileOps.store(old.id, file);
  } else {
    const urlType = w.url_type !== undefined ? w.url_type : old.url_type;
    if (urlType === 'upload' && wasUpload) {
      // the file stays; the URL sent back is the download URL: keep its file name
      if (typeof cols.url === 'string' && cols.url) w.url = old.url.includes('/') ? cols.url : mungeFilename(lastSegment(cols.url));
      else w.url = old.url;
    } else {
      w.url = typeof cols.url === 'string' ? cols.url : '';
      if (wasUpload) fileOps.remove(old.id);
    }
  }
  return updateResource(ctx.db, old.id, w);
}

/** A resource dict's `upload` may name a file of the request ({__file: field}, set by package_revise). */
function attachedFile(ctx: ActionContext, upload: unknown): UploadedFile | undefined {
  if (!upload || typeof upload !== 'object' || typeof (upload as any).__file !== 'string') return undefined;
  return ctx.files?.[(upload as any).__file];
}

/** The resource list of a package_create/update: matched by id, others created, missing ones deleted. */
async function saveResources(ctx: ActionContext, pkgId: string, list: Record<string, any>[] | undefined, fileOps: FileOps): Promise<void> {
  const current = await resourcesOf(ctx.db, [pkgId]);
  const byId = new Map(current.map((r) => [r.id, r]));
  const keep = new Set<string>();
  const order: string[] = [];
  for (const [i, r] of (list ?? []).entries()) {
    let old = typeof r.id === 'string' ? byId.get(r.id) : undefined;
    if (!old && typeof r.id === 'string') {
      const any = await findResource(ctx.db, r.id);
      if (any && any.package_id === pkgId) old = any; // a deleted resource of this dataset comes back
    }
    const file = attachedFile(ctx, r.upload);
    const row = old ? await replaceResource(ctx, old, r, i, fileOps, file) : await createResource(ctx, pkgId, r, i, fileOps, file);
    keep.add(row.id);
    order.push(row.id);
  }
  for (const r of current) {
    if (keep.has(r.id)) continue;
    await markResourceDeleted(ctx.db, r.id);
    if (r.url_type === 'upload') fileOps.remove(r.id);
  }
  await setPositions(ctx.db, order);
}

// --- groups ---------------------------------------------------------------------------------

/** Group ids named in a groups list (missing groups and organizations left out). */
export async function namedGroupIds(ctx: ActionContext, groups: unknown): Promise<string[]> {
  const out: string[] = [];
  if (!Array.isArray(groups)) return out;
  for (const g of groups) {
    const ref = g && typeof g === 'object' ? ((g as any).id || (g as any).name) : typeof g === 'string' ? g : undefined;
    if (!ref || typeof ref !== 'string') continue;
    const group = await findGroup(ctx.db, ref);
    if (group && !group.is_organization && group.state !== 'deleted' && !out.includes(group.id)) out.push(group.id);
  }
  return out;
}

async function saveGroups(ctx: ActionContext, pkgId: string, groups: unknown, isNew: boolean): Promise<void> {
  const wanted = await namedGroupIds(ctx, groups);
  const current = isNew ? [] : (await packageGroups(ctx.db, [pkgId])).map((g) => g.id);
  for (const id of wanted) if (!current.includes(id)) await addPackageToGroup(ctx.db, pkgId, id);
  for (const id of current) {
    if (wanted.includes(id)) continue;
    // only memberships of groups the caller can read are removed
    if (internal(ctx) || ctx.identity.sysadmin || (await hasGroupPermission(ctx, id, 'read'))) await removePackageFromGroup(ctx.db, pkgId, id);
  }
}

// --- relationships --------------------------------------------------------------------------

/** The other datasets of the relationships a validated dict sends. */
function relationshipOthers(data: Record<string, any>): string[] {
  return ['relationships_as_subject', 'relationships_as_object'].flatMap((k) => (Array.isArray(data[k]) ? data[k].map((r: any) => r._other as string) : []));
}

async function saveRelationships(ctx: ActionContext, pkgId: string, data: Record<string, any>): Promise<void> {
  for (const [key, asSubject] of [['relationships_as_subject', true], ['relationships_as_object', false]] as const) {
    const list = data[key];
    if (!Array.isArray(list)) continue;
    const existing = (await relationshipsOf(ctx.db, [pkgId])).filter((r) => (asSubject ? r.subject_package_id === pkgId : r.object_package_id === pkgId));
    const keep = new Set<string>();
    for (const r of list) {
      const [subjectId, objectId] = asSubject ? [pkgId, r._other] : [r._other, pkgId];
      if (!(await findRelationship(ctx.db, subjectId, r.type, objectId)) && !internal(ctx)) {
        // a new relationship needs edit rights on the other dataset too (package_relationship_create's rule)
        const other = await findPackage(ctx.db, r._other);
        if (!other || !(await canEditPackage(ctx, other))) throw denied(ctx, 'edit these packages');
      }
      const saved = asSubject
        ? await saveRelationship(ctx.db, pkgId, r.type, r._other, r.comment ?? null)
        : await saveRelationship(ctx.db, r._other, r.type, pkgId, r.comment ?? null);
      keep.add(saved.id);
    }
    for (const r of existing) if (!keep.has(r.id)) await deleteRelationship(ctx.db, r.id);
  }
}

// --- create / update ------------------------------------------------------------------------

function coreColumns(data: Record<string, any>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of PACKAGE_TEXT_FIELDS) out[k] = data[k] ?? null;
  return out;
}

export async function createPackage(ctx: ActionContext, input: Record<string, unknown>): Promise<PackageRow> {
  const { data, custom } = await validatePackage(ctx, input);
  await freeDeletedName(ctx.db, data.name);
  // (the new row is seen by no one else until commit: only the other ends need the lock)
  const others = relationshipOthers(data);
  if (others.length) await lockPackages(ctx.db, others);
  const fileOps = new FileOps(ctx);
  const row = await insertPackage(ctx.db, {
    ...coreColumns(data),
    id: data.id,
    name: data.name,
    state: data.state ?? 'active',
    type: data.type || 'dataset',
    owner_org: data.owner_org ?? null,
    private: data.private ?? false,
    creator_user_id: ctx.identity.user?.id ?? null,
    plugin_data: data.plugin_data ?? null,
    custom_fields: Object.keys(custom).length ? custom : null,
  });
  await setExtras(ctx.db, row.id, (data.extras ?? []).filter((e: any) => !e.deleted).map((e: any) => ({ key: e.key, value: e.value })));
  await setPackageTags(ctx.db, row.id, data.tags ?? []);
  await saveGroups(ctx, row.id, data.groups, true);
  await saveResources(ctx, row.id, data.resources, fileOps);
  await saveRelationships(ctx, row.id, data);
  await notifyPackageChange(ctx, row.id);
  await fileOps.run();
  return row;
}

/** package_update: a full replace (reference §4.4). */
export async function updatePackageFrom(ctx: ActionContext, pkg: PackageRow, input: Record<string, unknown>): Promise<PackageRow> {
  const full: Record<string, unknown> = { ...input };
  if (full.name === undefined || full.name === null) full.name = pkg.name;
  if (!('owner_org' in full)) full.owner_org = pkg.owner_org ?? undefined;
  if (full.private === undefined || full.private === null) full.private = pkg.private;
  const { data, custom } = await validatePackage(ctx, full, pkg);
  // The dataset and both ends of its relationships, all at once in id order (as
  // package_relationship_create locks them), before anything is written.
  await lockPackages(ctx.db, [pkg.id, ...relationshipOthers(data)]);
  if (data.name !== pkg.name) await freeDeletedName(ctx.db, data.name, pkg.id);
  const fileOps = new FileOps(ctx);
  const row = await updatePackage(ctx.db, pkg.id, {
    ...coreColumns(data),
    name: data.name,
    state: data.state ?? pkg.state,
    owner_org: 'owner_org' in data ? data.owner_org : pkg.owner_org,
    private: data.private ?? pkg.private,
    plugin_data: data.plugin_data ?? pkg.plugin_data,
    custom_fields: Object.keys(custom).length ? custom : null,
  });
  await setExtras(ctx.db, pkg.id, (data.extras ?? []).filter((e: any) => !e.deleted).map((e: any) => ({ key: e.key, value: e.value })));
  await setPackageTags(ctx.db, pkg.id, data.tags ?? []);
  await saveGroups(ctx, pkg.id, data.groups, false);
  await saveResources(ctx, pkg.id, data.resources, fileOps);
  await saveRelationships(ctx, pkg.id, data);
  await notifyPackageChange(ctx, pkg.id);
  await fileOps.run();
  return row;
}

// --- auth rules -----------------------------------------------------------------------------

/** CKAN's _check_group_auth: the caller needs manage_group on every group added. */
async function checkGroupAuth(ctx: ActionContext, groups: unknown, pkg?: PackageRow): Promise<void> {
  if (!Array.isArray(groups) || !groups.length) return;
  const current = pkg ? (await packageGroups(ctx.db, [pkg.id])).map((g) => g.id) : [];
  for (const g of groups) {
    const ref = g && typeof g === 'object' ? ((g as any).id || (g as any).name) : typeof g === 'string' ? g : undefined;
    if (!ref || typeof ref !== 'string') continue;
    const group = await findGroup(ctx.db, ref);
    // (a group that does not exist is the validation's error)
    if (!group || current.includes(group.id)) continue;
    if (!(await hasGroupPermission(ctx, group.id, 'manage_group'))) throw denied(ctx, 'edit these groups');
  }
}

const packageCreateAuth: AuthFunction = async (ctx, params) => {
  // (groups that do not exist are reported by the validation, as Validation Errors)
  await checkPackageCreate(ctx, params);
};

/** The dataset named by id (or name) of an update; missing id and missing dataset as CKAN reports them. */
async function targetPackage(ctx: ActionContext, params: Record<string, any>, key: 'id' | 'name_or_id' = 'id'): Promise<PackageRow> {
  const ref = params.id ?? params.name ?? params.name_or_id;
  if (ref === undefined || ref === null || ref === '') throw new ValidationError({ [key]: ['Missing value'] });
  return packageOr404(ctx, String(ref));
}

const packageUpdateAuth: AuthFunction = async (ctx, params) => {
  const pkg = await targetPackage(ctx, params);
  if (!(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit package ${pkg.id}`);
  await checkGroupAuth(ctx, params.groups, pkg);
};

const packageDeleteAuth: AuthFunction = async (ctx, params) => {
  const pkg = await targetPackage(ctx, params);
  if (!(await canDeletePackage(ctx, pkg))) throw denied(ctx, `delete package ${pkg.id}`);
};

const packageShowAuth: AuthFunction = async (ctx, params) => {
  const pkg = await targetPackage(ctx, params, 'name_or_id');
  if (!(await canReadPackage(ctx, pkg))) throw denied(ctx, `read package ${params.id ?? params.name_or_id}`);
};

/** Who may revise: the editors of the dataset named by match (the handler reports a missing match). */
const packageReviseAuth: AuthFunction = async (ctx, params) => {
  const ref = reviseTarget(params);
  if (!ref) return;
  const pkg = await findPackage(ctx.db, ref);
  if (pkg && !(await canEditPackage(ctx, pkg))) throw denied(ctx, `edit package ${pkg.id}`);
};

const orgAdminAuth: AuthFunction = async (ctx, params) => {
  if (typeof params.org_id !== 'string' || !params.org_id) throw denied(ctx, 'edit these packages');
  const org = await findGroup(ctx.db, params.org_id);
  // An organization that does not exist is Not Found (before any permission check), as in CKAN.
  if (!org) throw new NotFoundError('Organization was not found.');
  if (!(await canBulkUpdate(ctx, org.id))) throw denied(ctx, 'edit these packages');
};

// --- package_revise helpers -----------------------------------------------------------------

class DataError extends Error {}

type Json = any;
const joinPath = (p: (string | number)[]) => p.map(String).join('__');

function parseJsonOrString(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

function checkDict(data: Json, select: Record<string, Json>, path: (string | number)[] = []): (string | number)[][] {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [path];
  const out: (string | number)[][] = [];
  for (const k of Object.keys(select).sort()) {
    const v = select[k];
    if (!(k in data)) out.push([...path, k]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...checkDict(data[k], v, [...path, k]));
    else if (Array.isArray(v)) out.push(...checkList(data[k], v, [...path, k]));
    else if (data[k] !== v) out.push([...path, k]);
  }
  return out;
}

function checkList(data: Json, select: Json[], path: (string | number)[]): (string | number)[][] {
  if (!Array.isArray(data)) return [path];
  const out: (string | number)[][] = [];
  select.forEach((v, i) => {
    if (i >= data.length) out.push([...path, i]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...checkDict(data[i], v, [...path, i]));
    else if (Array.isArray(v)) out.push(...checkList(data[i], v, [...path, i]));
    else if (data[i] !== v) out.push([...path, i]);
  });
  return out;
}

function resolveStringKey(data: Json, key: string): [Json, (string | number)[]] {
  const path: (string | number)[] = [];
  let current = data;
  for (const k of key.split('__')) {
    if (current && typeof current === 'object' && !Array.isArray(current)) {
      if (!(k in current)) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
      path.push(k);
      current = current[k];
      continue;
    }
    if (!Array.isArray(current)) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
    if (k.length >= 5) {
      const i = current.findIndex((rec) => rec && typeof rec === 'object' && typeof rec.id === 'string' && rec.id.startsWith(k));
      if (i < 0) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
      path.push(i);
      current = current[i];
      continue;
    }
    let index = /^-?\d+$/.test(k) ? Number(k) : NaN;
    if (Number.isNaN(index) || index < -current.length || index >= current.length) throw new DataError(`Unmatched key ${joinPath([...path, k])}`);
    if (index < 0) index += current.length;
    path.push(index);
    current = current[index];
  }
  return [current, path];
}

function checkStringKey(data: Json, key: string, value: Json): (string | number)[][] {
  const [current, path] = resolveStringKey(data, key);
  if (value && typeof value === 'object' && !Array.isArray(value)) return checkDict(current, value, path);
  if (Array.isArray(value)) return checkList(current, value, path);
  return current !== value ? [path] : [];
}

function filterGlobMatch(data: Json, globs: string[]): void {
  filterGlob(data, globs.map((p) => [p.startsWith('+'), p.replace(/^[-+]+/, '').split('__')] as [boolean, string[]]));
}

function filterGlob(data: Json, globs: [boolean, string[]][]): void {
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const protectedKeys: Record<string, Json> = {};
    const children = new Map<string, [boolean, string[]][]>();
    for (const [keep, g] of globs) {
      const head = g[0];
      if (head === '*') {
        if (keep) Object.assign(protectedKeys, data);
        else for (const k of Object.keys(data)) delete data[k];
        continue;
      }
      if (!(head in data)) continue;
      if (g.length > 1) (children.get(head) ?? children.set(head, []).get(head)!).push([keep, g.slice(1)]);
      else if (keep) protectedKeys[head] = data[head];
      else delete data[head];
    }
    Object.assign(data, protectedKeys);
    for (const [head, sub] of children) if (head in data) filterGlob(data[head], sub);
    return;
  }
  if (!Array.isArray(data)) return;
  const prot = new Set<number>();
  const removed = new Set<number>();
  const children = new Map<number, [boolean, string[]][]>();
  for (const [keep, g] of globs) {
    const head = g[0];
    if (head === '*') {
      for (let i = 0; i < data.length; i++) {
        if (keep && !removed.has(i)) prot.add(i);
        if (!keep && !prot.has(i)) removed.add(i);
      }
      continue;
    }
    let index: number;
    try {
      index = resolveStringKey(data, head)[1][0] as number;
    } catch {
      continue;
    }
    if (g.length > 1) (children.get(index) ?? children.set(index, []).get(index)!).push([keep, g.slice(1)]);
    else if (keep) {
      if (!removed.has(index)) prot.add(index);
    } else if (!prot.has(index)) removed.add(index);
  }
  for (const [i, sub] of children) if (!(removed.has(i) && !prot.has(i))) filterGlob(data[i], sub);
  const kept = data.filter((_: unknown, i: number) => !(removed.has(i) && !prot.has(i)));
  data.splice(0, data.length, ...kept);
}

function updateMergeDict(data: Json, update: Json, path: (string | number)[] = []): void {
  if (!update || typeof update !== 'object' || Array.isArray(update)) throw new DataError(`Expected dict for ${joinPath(path)}`);
  for (const [k, v] of Object.entries(update)) {
    if (!(k in data)) data[k] = v;
    else if (data[k] && typeof data[k] === 'object' && !Array.isArray(data[k])) updateMergeDict(data[k], v, [...path, k]);
    else if (Array.isArray(data[k])) updateMergeList(data[k], v, [...path, k]);
    else data[k] = v;
  }
}

function updateMergeList(data: Json[], update: Json, path: (string | number)[]): void {
  if (!Array.isArray(update)) throw new DataError(`Expected list for ${joinPath(path)}`);
  update.forEach((v, i) => {
    if (i >= data.length) data.push(v);
    else if (data[i] && typeof data[i] === 'object' && !Array.isArray(data[i])) updateMergeDict(data[i], v, [...path, i]);
    else if (Array.isArray(data[i])) updateMergeList(data[i], v, [...path, i]);
    else data[i] = v;
  });
}

function updateMergeStringKey(data: Json, key: string, value: Json): void {
  const parts = key.split('__');
  const k = parts[parts.length - 1];
  const parentKey = parts.slice(0, -1).join('__');
  const [current, path] = parentKey ? resolveStringKey(data, parentKey) : [data, [] as (string | number)[]];
  if (current && typeof current === 'object' && !Array.isArray(current)) {
    updateMergeDict(current, { [k]: value }, path);
  } else if (Array.isArray(current)) {
    if (k === 'extend') {
      if (!Array.isArray(value)) throw new DataError(`Expected list for ${parentKey}`);
      current.push(...value);
      return;
    }
    const [child, [index]] = resolveStringKey(current, k);
    if (child && typeof child === 'object' && !Array.isArray(child)) updateMergeDict(child, value, [...path, index]);
    else if (Array.isArray(child)) updateMergeList(child, value, [...path, index]);
    else current[index as number] = value;
  } else throw new DataError(`Expected list or dict for ${parentKey}`);
}

function listOrString(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const parsed = parseJsonOrString(v);
  if (Array.isArray(parsed)) return parsed.map(String);
  if (typeof parsed === 'string') return parsed.split(',').map((s) => s.trim()).filter(Boolean);
  return [String(parsed)];
}

function reviseTarget(params: Record<string, any>): string | undefined {
  const match = parseJsonOrString(params.match);
  const m = match && typeof match === 'object' ? (match as Record<string, any>) : {};
  const ref = params.match__id ?? m.id ?? params.match__name ?? m.name;
  return typeof ref === 'string' && ref ? ref : undefined;
}

async function packageRevise(ctx: ActionContext, p: Record<string, any>) {
  const errors: Record<string, string[]> = {};
  const match = p.match === undefined ? undefined : parseJsonOrString(p.match);
  const update = p.update === undefined ? undefined : parseJsonOrString(p.update);
  if (match !== undefined && (!match || typeof match !== 'object' || Array.isArray(match))) errors.match = ['Must be a JSON object'];
  if (update !== undefined && (!update || typeof update !== 'object' || Array.isArray(update))) errors.update = ['Must be a JSON object'];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const ref = reviseTarget(p);
  if (!ref) throw new ValidationError({ match__id: ['Missing value'] });
  const pkg = await packageOr404(ctx, ref);
  if (!(await canReadPackage(ctx, pkg))) throw denied(ctx, `read package ${ref}`);
  const orig = await showPackage(ctx, pkg);
  const unmatched: (string | number)[][] = [];
  if (match) unmatched.push(...checkDict(orig, match as Record<string, Json>));
  const flatMatch = Object.keys(p).filter((k) => k.startsWith('match__')).sort();
  for (const k of flatMatch) {
    try {
      unmatched.push(...checkStringKey(orig, k.slice(7), parseJsonOrString(p[k])));
    } catch (e) {
      if (e instanceof DataError) unmatched.push(k.slice(7).split('__'));
      else throw e;
    }
  }
  if (unmatched.length) throw new ValidationError({ match: unmatched.map(joinPath) });
  const revised: Record<string, any> = structuredClone(orig);
  const filter = listOrString(p.filter);
  if (filter) {
    filterGlobMatch(revised, filter);
    revised.id = orig.id;
  }
  if (update) {
    try {
      updateMergeDict(revised, update);
    } catch (e) {
      if (e instanceof DataError) throw new ValidationError({ update: [e.message] });
      throw e;
    }
  }
  const updateKeys = Object.keys(p).filter((k) => k.startsWith('update__'))
    .sort((a, b) => {
      const ka = a.endsWith('extend') ? a.slice(0, -6) : a;
      const kb = b.endsWith('extend') ? b.slice(0, -6) : b;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  for (const k of updateKeys) {
    try {
      // a file sent under this key is attached to the resource it names
      const value = ctx.files?.[k] ? { __file: k } : parseJsonOrString(p[k]);
      updateMergeStringKey(revised, k.slice(8), value);
    } catch (e) {
      if (e instanceof DataError) throw new ValidationError({ [k]: [e.message] });
      throw e;
    }
  }
  revised.id = orig.id;
  const result: Record<string, any> = { package: await ctx.call('package_update', revised, { files: ctx.files }) };
  const include = listOrString(p.include);
  if (include) filterGlobMatch(result, include);
  return result;
}

// --- handlers -------------------------------------------------------------------------------

async function packageShow(ctx: ActionContext, p: Record<string, any>) {
  const pkg = await targetPackage(ctx, p, 'name_or_id');
  return showPackage(ctx, pkg, { includeTracking: p.include_tracking, includePluginData: p.include_plugin_data });
}

async function bulkUpdate(ctx: ActionContext, p: Record<string, any>, changes: { private?: boolean; state?: string }) {
  const errors: Record<string, string[]> = {};
  if (!Array.isArray(p.datasets) && typeof p.datasets !== 'string') errors.datasets = ['Missing value'];
  if (typeof p.org_id !== 'string' || !p.org_id) errors.org_id = ['Missing value'];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const org = await findGroup(ctx.db, p.org_id);
  if (!org) throw new NotFoundError('Organization was not found.');
  const ids = Array.isArray(p.datasets) ? p.datasets.map(String) : [p.datasets];
  const r = await ctx.db.query<{ id: string }>("SELECT id FROM packages WHERE (id = ANY($1::text[]) OR name = ANY($1::text[])) AND owner_org = $2 AND state <> 'deleted' ORDER BY id", [ids, org.id]);
  await lockPackages(ctx.db, r.rows.map((x) => x.id));
  for (const row of r.rows) {
    await updatePackage(ctx.db, row.id, changes);
    if (changes.state === 'deleted') await removeMembershipsAndCollaborators(ctx.db, row.id);
    await notifyPackageChange(ctx, row.id, changes.state === 'deleted' ? 'deleted' : 'changed');
  }
  return null;
}

const limitOffset = {
  limit: [ignoreMissing, naturalNumber],
  offset: [ignoreMissing, naturalNumber],
};

export const packageActions: ActionDefinition<any, any>[] = [
  {
    name: 'package_create',
    sideEffectFree: false,
    auth: packageCreateAuth,
    authBeforeValidation: true,
    help: 'Create a new dataset (package).\n\nYou must be authorized to create new datasets. If you specify any groups for the new dataset, you must also be authorized to edit these groups.\n\n:param name: the name of the new dataset: 2-100 characters, lowercase alphanumeric, - and _\n:param title: (optional, default: same as name)\n:param private: (optional, default false; needs an organization)\n:param author, author_email, maintainer, maintainer_email, license_id, notes, url, version (at most 100 characters): (optional)\n:param state: (optional, sysadmins only; default active)\n:param type: (optional, default dataset)\n:param resources: list of resource dicts (optional)\n:param tags: list of tag dicts (optional); or tag_string "a,b"\n:param extras: list of {key, value} (optional)\n:param groups: list of {id or name} (optional)\n:param owner_org: id or name of the organization (required unless svc.auth.create_unowned_dataset)\n:param relationships_as_subject, relationships_as_object: (optional)\n:param id: (optional, sysadmins only)\nOther keys are kept as custom fields and returned as sent.\n:returns: the new dataset\n:rtype: dictionary',
    handler: async (ctx, p) => showPackage(ctx, await createPackage(ctx, p)),
  },
  {
    name: 'package_show',
    sideEffectFree: true,
    auth: packageShowAuth,
    schema: {
      id: [ignoreMissing, unicodeString],
      name_or_id: [(v, f) => (v === MISSING || v === null || v === undefined || v === '' ? f.data.id ?? v : v), notEmpty, unicodeString],
      use_default_schema: bool(false),
      include_tracking: bool(false),
      include_plugin_data: bool(false),
    },
    help: 'Return the metadata of a dataset (package) and its resources.\n\n:param id: the id or name of the dataset\n:param use_default_schema: (optional, default false)\n:param include_tracking: add tracking_summary (optional, default false)\n:param include_plugin_data: add plugin_data (sysadmins only, default false)\n:rtype: dictionary',
    handler: (ctx, p) => packageShow(ctx, { ...p, id: p.name_or_id }),
  },
  {
    name: 'package_update',
    sideEffectFree: false,
    auth: packageUpdateAuth,
    authBeforeValidation: true,
    help: 'Update a dataset (package). This replaces the dataset: resources, tags, extras and groups not sent are removed, and text fields not sent are cleared; name, owner_org, private, state and relationships not sent stay. Use package_patch to change some fields only.\n\n:param id: the id or name of the dataset\nFor the other parameters see package_create.\n:returns: the updated dataset\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      return showPackage(ctx, await updatePackageFrom(ctx, pkg, p));
    },
  },
  {
    name: 'package_patch',
    sideEffectFree: false,
    auth: packageUpdateAuth,
    authBeforeValidation: true,
    help: 'Patch a dataset: the fields sent replace those of the dataset, the others stay (lists sent replace the whole list).\n\n:param id: the id or name of the dataset\n:returns: the updated dataset\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      const current = await showPackage(ctx, pkg);
      const merged = { ...current, ...p, id: pkg.id };
      return ctx.call('package_update', merged, { files: ctx.files });
    },
  },
  {
    name: 'package_revise',
    sideEffectFree: false,
    auth: packageReviseAuth,
    help: 'Revise a dataset selectively with match, filter and update.\n\n:param match: a dict with the id or name of the dataset; every value given must equal the current one (also match__path=value)\n:param filter: patterns of fields to remove (-path) or protect (+path); * matches everything at a level; __ nests; list items by index or id prefix (at least 5 characters)\n:param update: a dict merged into the dataset (also update__path=value and update__resources__extend=[...])\n:param include: patterns filtering the response\n:returns: {"package": the updated dataset}\n:rtype: dictionary',
    handler: packageRevise,
  },
  {
    name: 'package_delete',
    sideEffectFree: false,
    auth: packageDeleteAuth,
    authBeforeValidation: true,
    help: 'Delete a dataset (state deleted). Its group memberships and collaborators are removed.\n\n:param id: the id or name of the dataset',
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      await lockPackages(ctx.db, [pkg.id]);
      await updatePackage(ctx.db, pkg.id, { state: 'deleted' });
      await removeMembershipsAndCollaborators(ctx.db, pkg.id);
      await notifyPackageChange(ctx, pkg.id, 'deleted');
      return null;
    },
  },
  {
    name: 'dataset_purge',
    sideEffectFree: false,
    auth: sysadminOnly,
    authBeforeValidation: true,
    help: 'Purge a dataset: removes it for good with its resources, their uploaded files, memberships, relationships, extras and tags no longer used. Sysadmins only.\n\n:param id: the id or name of the dataset',
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      await lockPackages(ctx.db, [pkg.id]);
      const resources = await allResourcesOf(ctx.db, pkg.id);
      const tagIds = (await ctx.db.query<{ tag_id: string }>('SELECT tag_id FROM package_tags WHERE package_id = $1', [pkg.id])).rows.map((r) => r.tag_id);
      // Listeners run before the rows go, so they can still see what belonged to the dataset.
      await notifyPackageChange(ctx, pkg.id, 'purged');
      await purgePackage(ctx.db, pkg.id);
      await deleteUnusedTags(ctx.db, tagIds);
      await afterCommit(ctx, () => resources.forEach((r) => removeResourceFile(ctx.config, r.id)));
      return null;
    },
  },
  {
    name: 'package_list',
    sideEffectFree: true,
    auth: anyone,
    schema: limitOffset,
    help: 'Return the names of the site\'s active public datasets, by name.\n\n:param limit: at most this many (optional)\n:param offset: skip this many (optional; used with limit)\n:rtype: list of strings',
    handler: (ctx, p) => activePublicNames(ctx.db, p.limit || undefined, p.limit ? p.offset ?? 0 : 0),
  },
  {
    name: 'current_package_list_with_resources',
    sideEffectFree: true,
    auth: anyone,
    schema: { ...limitOffset, page: [ignoreMissing, intValidator] },
    help: 'Return active datasets with their resources, most recently modified first (private datasets for sysadmins only).\n\n:param limit: (optional, default 10)\n:param offset: (optional)\n:param page: (deprecated, use offset) page number from 1, in pages of limit (ignored without limit)\n:rtype: list of dictionaries',
    handler: async (ctx, p) => {
      const limit = Math.min(p.limit ?? 10, ctx.config.int('svc.search.rows_max'));
      let offset = p.offset ?? 0;
      if (p.offset === undefined && p.page !== undefined) {
        if (p.page < 1) throw new ValidationError({ page: ['Must be larger than 0'] });
        // CKAN: page counts in pages of the limit sent; without a limit it is ignored (offset 0).
        offset = p.limit ? (p.page - 1) * limit : 0;
      }
      const privateCond = ctx.identity.sysadmin ? '' : ' AND NOT private';
      const rows = (await ctx.db.query<PackageRow>(
        `SELECT * FROM packages WHERE state = 'active'${privateCond} ORDER BY metadata_modified DESC, id LIMIT $1 OFFSET $2`, [limit, offset],
      )).rows;
      return buildPackageDicts(ctx, rows);
    },
  },
  {
    name: 'package_autocomplete',
    sideEffectFree: true,
    auth: anyone,
    schema: { q: [notEmpty, unicodeString], limit: [defaultValue(10), naturalNumber, clampTo(() => 1000)] },
    help: 'Return datasets whose name or title contains q.\n\n:param q: the text to look for\n:param limit: at most this many (default 10)\n:returns: list of {name, title, match_field, match_displayed}\n:rtype: list',
    handler: async (ctx, p) => {
      const like = `%${String(p.q).replace(/[\\%_]/g, (c) => '\\' + c)}%`;
      const rows = (await ctx.db.query<{ name: string; title: string | null }>(
        `SELECT name, title FROM packages WHERE state = 'active' AND NOT private AND (name ILIKE $1 OR title ILIKE $1)
         ORDER BY (name ILIKE $1) DESC, name LIMIT $2`,
        [like, Math.max(0, p.limit)],
      )).rows;
      const q = String(p.q).toLowerCase();
      return rows.map((r) => (r.name.includes(q)
        ? { name: r.name, title: r.title, match_field: 'name', match_displayed: r.name }
        : { name: r.name, title: r.title, match_field: 'title', match_displayed: `${r.title} (${r.name})` }));
    },
  },
  {
    name: 'package_owner_org_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    help: 'Move a dataset to another organization (empty organization_id: no organization). Sysadmins only.\n\n:param id: the id or name of the dataset\n:param organization_id: the id or name of the organization',
    handler: async (ctx, p) => {
      const pkg = await targetPackage(ctx, p);
      let orgId: string | null = null;
      if (p.organization_id) {
        const org = await findGroup(ctx.db, String(p.organization_id));
        if (!org || !org.is_organization) throw new NotFoundError('Organization was not found.');
        orgId = org.id;
      } else if (pkg.private) {
        throw new ValidationError({ private: ["Datasets with no organization can't be private."] });
      }
      await updatePackage(ctx.db, pkg.id, { owner_org: orgId });
      await notifyPackageChange(ctx, pkg.id);
      return null;
    },
  },
  {
    name: 'bulk_update_private',
    sideEffectFree: false,
    auth: orgAdminAuth,
    help: 'Make datasets of an organization private. Organization admins only; datasets of other organizations are left alone.\n\n:param datasets: list of dataset ids\n:param org_id: id of the organization',
    handler: (ctx, p) => bulkUpdate(ctx, p, { private: true }),
  },
  {
    name: 'bulk_update_public',
    sideEffectFree: false,
    auth: orgAdminAuth,
    help: 'Make datasets of an organization public. Organization admins only.\n\n:param datasets: list of dataset ids\n:param org_id: id of the organization',
    handler: (ctx, p) => bulkUpdate(ctx, p, { private: false }),
  },
  {
    name: 'bulk_update_delete',
    sideEffectFree: false,
    auth: orgAdminAuth,
    help: 'Delete datasets of an organization. Organization admins only.\n\n:param datasets: list of dataset ids\n:param org_id: id of the organization',
    handler: (ctx, p) => bulkUpdate(ctx, p, { state: 'deleted' }),
  },
];
