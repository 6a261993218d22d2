// Saving a dataset from a dataset dict: validation with the declarations of package-schema.ts and
// the checks across fields, then core columns, extras, tags, groups, resources and relationships
// (package_create, package_update and everything built on them); the resources' writers are in
// package-resources.ts.
import type { ActionContext } from './context.ts';
import { FileOps, internal, saveResources } from './package-resources.ts';
import { endsWithItsTransaction } from './registry.ts';
import { canEditPackage, hasGroupPermission } from '../auth/authz.ts';
import { denied } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import {
  addPackageToGroup,
  findGroup,
  findPackage,
  freeDeletedName,
  insertPackage,
  lockAndReadPackage,
  lockPackages,
  packageGroups,
  PACKAGE_TEXT_FIELDS,
  notifyPackageChange,
  removePackageFromGroup,
  setExtras,
  updatePackage,
  type PackageRow,
} from '../model/packages.ts';
import { buildPackageDicts } from '../model/package-dict.ts';
import { findRelationship, relationshipsOf, saveRelationship, deleteRelationship } from '../model/relationships.ts';
import { resourcesByIds, resourcesOf, type ResourceRow } from '../model/resources.ts';
import { findVocabulary, setPackageTags } from '../model/tags.ts';
import { findTag } from '../model/vocabularies.ts';
import { validate, type Schema } from '../validation/validate.ts';
import {
  COMPUTED_PACKAGE_KEYS,
  PACKAGE_SCHEMA_KEYS,
  packageSchema,
  tagNameErrors,
  type PackageValidationContext,
} from '../validation/package-schema.ts';
import { datasetSchemaFor, expandFormComposite, packageSchemaOf } from '../scheming/schema-validation.ts';
import type { DatasetSchema } from '../scheming/types.ts';

export async function packageOr404(ctx: ActionContext, idOrName: unknown, message = 'Package was not found.'): Promise<PackageRow> {
  if (typeof idOrName !== 'string' || !idOrName) throw new NotFoundError(message);
  const pkg = await findPackage(ctx.db, idOrName);
  if (!pkg) throw new NotFoundError(message);
  return pkg;
}

export async function showPackage(
  ctx: ActionContext,
  pkg: PackageRow,
  opts: { includeTracking?: boolean; includePluginData?: boolean } = {},
) {
  return (await buildPackageDicts(ctx, [pkg], opts))[0];
}

// --- validation -----------------------------------------------------------------------------

export interface ValidPackage {
  data: Record<string, any>;
  custom: Record<string, unknown>;
  /** The dataset's active resources before the write (none for a new one). */
  existing: ResourceRow[];
  /** The resources named by the ids sent, by id (any dataset's, any state). */
  sentResources: Map<string, ResourceRow>;
  /** A new dataset's name and id were not looked up: its insert finds them taken (insertPackage's unlessTaken). */
  keysLeftToInsert: boolean;
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

/** The core dataset schema, compiled once for creates and once for updates (it depends on nothing else). */
const coreSchemas = new Map<boolean, Schema>();
function coreSchema(create: boolean): Schema {
  let schema = coreSchemas.get(create);
  if (!schema) coreSchemas.set(create, (schema = packageSchema({ create })));
  return schema;
}

/**
 * Validates a dataset dict; throws the whole error dict (CKAN's shape) when anything is wrong. A new
 * dataset's name and id in use are found by its insert when an error ends the call (a call of its
 * own, or one whose caller lets its errors end it: ctx.call's endsWithCaller): the insert then
 * writes nothing and the validation runs again with them looked up, for the whole error dict (a
 * name taken by a concurrent create fails the insert: "That URL is already in use."). When
 * anything else is wrong, the validation runs again with them checked, for the whole error dict.
 */
export async function validatePackage(ctx: ActionContext, sent: Record<string, unknown>, pkg?: PackageRow): Promise<ValidPackage> {
  if (pkg || !endsWithItsTransaction(ctx)) return validateDataset(ctx, sent, pkg, false);
  try {
    return await validateDataset(ctx, sent, pkg, true);
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return validateDataset(ctx, sent, pkg, false);
  }
}

async function validateDataset(
  ctx: ActionContext,
  sent: Record<string, unknown>,
  pkg: PackageRow | undefined,
  nameCheckedByInsert: boolean,
): Promise<ValidPackage> {
  // A dataset type with a custom schema (svc.scheming.dataset_schemas) is checked by it.
  const custom = datasetSchemaFor(ctx, pkg ? pkg.type : sent.type);
  const input = custom ? schemingInput(sent, custom) : sent;
  const schema = custom ? packageSchemaOf(custom, { create: !pkg }, ctx.config.str('svc.locale_default') || 'en') : coreSchema(!pkg);
  const existing = pkg ? await resourcesOf(ctx.db, [pkg.id]) : [];
  const vctx: PackageValidationContext = { ctx, pkg, existingResourceIds: new Set(existing.map((r) => r.id)), input, nameCheckedByInsert };
  const { data, errors } = await validate(schema, input, vctx);

  // tags: free tags from tag_string too; their errors are flat strings
  if (errors.tags) errors.tags = flattenTagErrors(errors.tags);
  if (typeof data.tag_string === 'string') {
    const names = data.tag_string
      .split(',')
      .map((s: string) => s.trim())
      .filter(Boolean);
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
      else if (!(await findTag(ctx.db, t.name, v.id))) vocabErrs.push(`Tag ${t.name} does not belong to vocabulary ${v.name}`);
      else t.vocabulary_id = v.id;
    }
    if (vocabErrs.length) errors.tags = [...((errors.tags as string[]) ?? []), ...vocabErrs];
  }

  // extras: unique keys, not a schema field
  if (Array.isArray(data.extras)) {
    const itemErrors: Record<string, unknown>[] = Array.isArray(errors.extras)
      ? (errors.extras as Record<string, unknown>[])
      : data.extras.map(() => ({}));
    const seen = new Map<string, number>();
    data.extras.forEach((e: Record<string, unknown>, i: number) => {
      if (typeof e.key !== 'string') return;
      seen.set(e.key, (seen.get(e.key) ?? 0) + 1);
      if (PACKAGE_SCHEMA_KEYS.has(e.key) || custom?.dataset_fields.some((f) => f.field_name === e.key)) {
        const ie = itemErrors[i] as Record<string, string[]>;
        ie.key = [...(ie.key ?? []), 'There is a schema field with the same name'];
      }
    });
    if (itemErrors.some((e) => Object.keys(e).length)) errors.extras = itemErrors;
    const dups = [...seen.entries()].filter(([, n]) => n > 1).map(([k]) => `Duplicate key "${k}"`);
    if (dups.length) errors.extras_validation = dups;
  }

  // resources: an id of another dataset's resource cannot be taken
  const sentResources = new Map<string, ResourceRow>();
  if (Array.isArray(data.resources)) {
    const itemErrors: Record<string, unknown>[] = Array.isArray(errors.resources)
      ? (errors.resources as Record<string, unknown>[])
      : data.resources.map(() => ({}));
    const ids = (data.resources as Record<string, unknown>[]).map((r) => r.id).filter((id): id is string => typeof id === 'string');
    for (const r of await resourcesByIds(ctx.db, ids)) sentResources.set(r.id, r);
    for (const [i, r] of (data.resources as Record<string, unknown>[]).entries()) {
      if (typeof r.id !== 'string') continue;
      const other = sentResources.get(r.id);
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
  for (const [key, other] of [
    ['relationships_as_subject', 'object'],
    ['relationships_as_object', 'subject'],
  ] as const) {
    if (!Array.isArray(data[key])) continue;
    const itemErrors: Record<string, unknown>[] = Array.isArray(errors[key])
      ? (errors[key] as Record<string, unknown>[])
      : data[key].map(() => ({}));
    for (const [i, r] of (data[key] as Record<string, any>[]).entries()) {
      const ref = r[other] ?? r[`${other}_package_id`] ?? r.__extras?.[`${other}_package_id`];
      const found = typeof ref === 'string' ? await findPackage(ctx.db, ref) : undefined;
      if (!found)
        (itemErrors[i] as Record<string, string[]>)[other] = [typeof ref === 'string' ? `Dataset ${ref} was not found` : 'Missing value'];
      else r._other = found.id;
    }
    if (itemErrors.some((e) => Object.keys(e).length)) errors[key] = itemErrors;
  }

  if (Object.keys(errors).length) throw new ValidationError(errors);

  const customFields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (!PACKAGE_SCHEMA_KEYS.has(k) && !COMPUTED_PACKAGE_KEYS.has(k)) {
      customFields[k] = v;
      delete data[k];
    }
  }
  return { data, custom: customFields, existing, sentResources, keysLeftToInsert: nameCheckedByInsert };
}

/** A form's repeating subfields (field-0-subfield keys) as lists, in the dataset and its resources. */
function schemingInput(input: Record<string, unknown>, schema: DatasetSchema): Record<string, unknown> {
  const out = expandFormComposite(input, schema.dataset_fields ?? []);
  if (Array.isArray(out.resources) && schema.resource_fields?.length)
    out.resources = out.resources.map((r) =>
      r && typeof r === 'object' && !Array.isArray(r) ? expandFormComposite(r as Record<string, unknown>, schema.resource_fields) : r,
    );
  return out;
}

// --- groups ---------------------------------------------------------------------------------

/** Group ids named in a groups list (missing groups and organizations left out). */
export async function namedGroupIds(ctx: ActionContext, groups: unknown): Promise<string[]> {
  const out: string[] = [];
  if (!Array.isArray(groups)) return out;
  for (const g of groups) {
    const ref = g && typeof g === 'object' ? (g as any).id || (g as any).name : typeof g === 'string' ? g : undefined;
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
    if (internal(ctx) || ctx.identity.sysadmin || (await hasGroupPermission(ctx, id, 'read')))
      await removePackageFromGroup(ctx.db, pkgId, id);
  }
}

// --- relationships --------------------------------------------------------------------------

/** The other datasets of the relationships a validated dict sends. */
function relationshipOthers(data: Record<string, any>): string[] {
  return ['relationships_as_subject', 'relationships_as_object'].flatMap((k) =>
    Array.isArray(data[k]) ? data[k].map((r: any) => r._other as string) : [],
  );
}

async function saveRelationships(ctx: ActionContext, pkgId: string, data: Record<string, any>, isNew: boolean): Promise<void> {
  // (read again only after a write; a new dataset has none)
  let read: Awaited<ReturnType<typeof relationshipsOf>> | undefined = isNew ? [] : undefined;
  for (const [key, asSubject] of [
    ['relationships_as_subject', true],
    ['relationships_as_object', false],
  ] as const) {
    const list = data[key];
    if (!Array.isArray(list)) continue;
    read ??= await relationshipsOf(ctx.db, [pkgId]);
    const existing = read.filter((r) => (asSubject ? r.subject_package_id === pkgId : r.object_package_id === pkgId));
    if (list.length || existing.length) read = undefined;
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

/** Saves a dataset dict (a new dataset, or a full replace of pkg): the row, extras, tags, groups, resources, relationships. */
async function saveDataset(ctx: ActionContext, input: Record<string, unknown>, pkg?: PackageRow): Promise<PackageRow> {
  const valid = await validatePackage(ctx, input, pkg);
  const { data, custom } = valid;
  // The dataset and both ends of its relationships, all at once in id order (as
  // package_relationship_create locks them), before anything is written. (A new row is seen by
  // no one else until commit; an updated one is locked already, by updatePackageFrom.)
  const others = relationshipOthers(data);
  if (others.length) await lockPackages(ctx.db, [...(pkg ? [pkg.id] : []), ...others]);
  // (insertPackage frees the name of a new dataset itself)
  if (pkg && data.name !== pkg.name) await freeDeletedName(ctx.db, data.name, pkg.id);
  const fileOps = new FileOps(ctx);
  const customFields = Object.keys(custom).length ? custom : null;
  const newRow: Parameters<typeof insertPackage>[1] = {
    ...coreColumns(data),
    id: data.id,
    name: data.name,
    state: data.state ?? 'active',
    type: data.type || 'dataset',
    owner_org: data.owner_org ?? null,
    private: data.private ?? false,
    creator_user_id: ctx.identity.user?.id ?? null,
    plugin_data: data.plugin_data ?? null,
    custom_fields: customFields,
  };
  const row = pkg
    ? await updatePackage(ctx.db, pkg.id, {
        ...coreColumns(data),
        name: data.name,
        state: data.state ?? pkg.state,
        owner_org: 'owner_org' in data ? data.owner_org : pkg.owner_org,
        private: data.private ?? pkg.private,
        plugin_data: data.plugin_data ?? pkg.plugin_data,
        custom_fields: customFields,
      })
    : ((await insertPackage(ctx.db, newRow, { unlessTaken: valid.keysLeftToInsert })) ?? (await insertChecked(ctx, input, newRow)));
  const id = pkg?.id ?? row.id;
  const isNew = !pkg;
  await setExtras(
    ctx.db,
    id,
    (data.extras ?? []).filter((e: any) => !e.deleted).map((e: any) => ({ key: e.key, value: e.value })),
    { isNew },
  );
  await setPackageTags(ctx.db, id, data.tags ?? [], { isNew });
  await saveGroups(ctx, id, data.groups, isNew);
  await saveResources(ctx, id, data.resources, fileOps, valid);
  await saveRelationships(ctx, id, data, isNew);
  await notifyPackageChange(ctx, id);
  await fileOps.run();
  return row;
}

/**
 * The insert, left the name and the id, found one of them taken: the validation with them looked
 * up throws the whole error dict. (Freed since by another transaction: inserted now.)
 */
async function insertChecked(ctx: ActionContext, input: Record<string, unknown>, row: Parameters<typeof insertPackage>[1]) {
  await validateDataset(ctx, input, undefined, false);
  return (await insertPackage(ctx.db, row))!;
}

export function createPackage(ctx: ActionContext, input: Record<string, unknown>): Promise<PackageRow> {
  return saveDataset(ctx, input);
}

/**
 * The dataset locked for this transaction and read again under the lock: a write that reads
 * what it keeps (patch, revise, update's kept fields) sees every write acknowledged before it.
 */
export async function lockedPackage(ctx: ActionContext, pkg: PackageRow): Promise<PackageRow> {
  return (await lockAndReadPackage(ctx.db, pkg.id)) ?? pkg;
}

/** package_patch: the dataset as it is under the lock, with the fields sent replaced, saved by package_update. */
export async function patchPackage(ctx: ActionContext, pkg: PackageRow, input: Record<string, unknown>): Promise<unknown> {
  const current = await showPackage(ctx, await lockedPackage(ctx, pkg));
  return ctx.call('package_update', { ...current, ...input, id: pkg.id }, { files: ctx.files });
}

/** package_update: a full replace (fields not sent are cleared, resources and lists not sent removed). */
export async function updatePackageFrom(ctx: ActionContext, stale: PackageRow, input: Record<string, unknown>): Promise<PackageRow> {
  const pkg = await lockedPackage(ctx, stale);
  const full: Record<string, unknown> = { ...input };
  if (full.name === undefined || full.name === null) full.name = pkg.name;
  if (!('owner_org' in full)) full.owner_org = pkg.owner_org ?? undefined;
  if (full.private === undefined || full.private === null) full.private = pkg.private;
  return saveDataset(ctx, full, pkg);
}
