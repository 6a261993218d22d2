// Validation schemas of datasets and resources, with CKAN's messages.
import type { ActionContext } from '../context.ts';
import { canEditPackage, ownerOrgChangeError } from '../auth/authz.ts';
import { canonicalFormat } from '../model/resources.ts';
import { findGroup, packageNameHolder, type PackageRow } from '../model/packages.ts';
import { RELATIONSHIP_TYPES } from '../model/relationships.ts';
import { Invalid, MISSING, Stop, type Schema, type Validator } from './validate.ts';
import {
  booleanValidator, emailValidator, ignoreMissing, intValidator, isoDate, jsonObject, nameValidator, notEmpty, oneOf, unicodeString, uuidValidator,
} from './validators.ts';

/** What package and resource validators need to know besides the data. */
export interface PackageValidationContext {
  ctx: ActionContext;
  /** The dataset being updated (absent on create). */
  pkg?: PackageRow;
  /** Ids of the dataset's current resources (an inline resource with one of these is an update). */
  existingResourceIds?: Set<string>;
  /** A file is uploaded with this resource (its url is then not required). */
  upload?: unknown;
}

const isBlank = (v: unknown) => v === MISSING || v === null || v === undefined || v === '';
const vctx = (f: { context: any }) => f.context as PackageValidationContext;

export const PACKAGE_NAME_MAX = 100;
export const PACKAGE_VERSION_MAX = 100;

/** "That URL is already in use." and the length messages (they accumulate with nameValidator's). */
export const packageNameValidator: Validator = async (v, f) => {
  if (typeof v !== 'string') return v;
  const { ctx, pkg } = vctx(f);
  const holder = await packageNameHolder(ctx.db, v);
  if (holder && holder.id !== (pkg?.id ?? f.data.id)) throw new Invalid('That URL is already in use.');
  if (v.length < 2) throw new Invalid(`Name "${v}" length is less than minimum 2`);
  if (v.length > PACKAGE_NAME_MAX) throw new Invalid(`Name "${v}" length is more than maximum ${PACKAGE_NAME_MAX}`);
  return v;
};

const versionValidator: Validator = (v) => {
  if (typeof v === 'string' && v.length > PACKAGE_VERSION_MAX) throw new Invalid(`Version must be a maximum of ${PACKAGE_VERSION_MAX} characters long`);
  return v;
};

const optionalEmail: Validator = (v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim();
  if (s) emailValidator(s, undefined as any);
  return s;
};

const sysadminOnlyField: Validator = (v, f) => {
  const { ctx } = vctx(f);
  if (!ctx.identity.sysadmin && !ctx.ignoreAuth) throw new Stop(`The input field ${f.key} was not expected.`);
  return v;
};

/**
 * CKAN's ignore_not_package_admin: on create, state is honoured for sysadmins only;
 * on update, for anyone who may update the dataset (package_change_state = package_update's rule).
 * Anyone else's is ignored.
 */
const stateValidator: Validator = async (v, f) => {
  const { ctx, pkg } = vctx(f);
  if (ctx.identity.sysadmin || ctx.ignoreAuth) return v;
  if (pkg && (await canEditPackage(ctx, pkg))) return v;
  throw new Stop();
};

const packageIdFree: Validator = async (v, f) => {
  const r = await vctx(f).ctx.db.query('SELECT 1 FROM packages WHERE id = $1', [v]);
  if (r.rows.length) throw new Invalid('Dataset id already exists');
  return v;
};

/** CKAN's owner_org_validator: resolves a name to the organization id. */
const ownerOrgValidator: Validator = async (v, f) => {
  const { ctx, pkg } = vctx(f);
  const unowned = ctx.config.bool('svc.auth.create_unowned_dataset');
  if (v === MISSING || v === null || v === undefined) {
    if (!unowned) throw new Stop('An organization must be provided');
    throw new Stop();
  }
  if (v === '') {
    if (!unowned) throw new Stop('An organization must be provided');
    return null;
  }
  if (typeof v !== 'string') throw new Stop('Organization does not exist');
  const group = await findGroup(ctx.db, v);
  if (!group || !group.is_organization || group.state === 'deleted') throw new Stop('Organization does not exist');
  const why = await ownerOrgChangeError(ctx, pkg ?? null, group.id);
  if (why) throw new Stop(why);
  return group.id;
};

const noOrgNotPrivate: Validator = (v, f) => {
  if (v === true && !f.data.owner_org) throw new Invalid("Datasets with no organization can't be private.");
  return v;
};

// --- tags -----------------------------------------------------------------------------------

export function tagNameErrors(name: string): string[] {
  const out: string[] = [];
  if (name.length < 2) out.push(`Tag "${name}" length is less than minimum 2`);
  if (name.length > 100) out.push(`Tag "${name}" length is more than maximum 100`);
  if (!/^[\p{L}\p{N}_ \-.]*$/u.test(name)) out.push(`Tag "${name}" can only contain alphanumeric characters, spaces (" "), hyphens ("-"), underscores ("_") or dots (".")`);
  return out;
}

const tagCheck = (i: number): Validator => (v) => {
  const name = String(v);
  const all = [name.length < 2, name.length > 100, !/^[\p{L}\p{N}_ \-.]*$/u.test(name)];
  if (all[i]) throw new Invalid(tagNameErrors(name).find((m) => m.includes(['less than', 'more than', 'can only'][i]))!);
  return v;
};

const tagSchema: Schema = {
  name: [notEmpty, unicodeString, (v: string) => v.trim(), tagCheck(0), tagCheck(1), tagCheck(2)],
  vocabulary_id: [ignoreMissing, unicodeString],
  $extras: 'drop',
};

// --- resources ------------------------------------------------------------------------------

const emptyToMissing: Validator = (v) => {
  if (isBlank(v)) throw new Stop();
  return v;
};

/** url: required for a new resource unless a file is uploaded. */
const resourceUrl: Validator = (v, f) => {
  if (typeof v === 'string') v = v.trim();
  if (isBlank(v)) {
    const { existingResourceIds } = vctx(f);
    const id = f.data.id;
    const isUpdate = typeof id === 'string' && !!existingResourceIds?.has(id);
    const named = (f.data as Record<string, any>).upload?.__file;
    const upload = vctx(f).upload ?? (typeof named === 'string' ? vctx(f).ctx.files?.[named] : undefined);
    // uploads and data store resources get their URL from the service
    if (!isUpdate && !upload && f.data.url_type !== 'datastore') throw new Stop('Missing value');
    throw new Stop();
  }
  return unicodeString(v, f);
};

/** Keys of a resource dict that are the service's, never stored as extras. */
export const RESOURCE_SERVICE_KEYS = new Set(['package_id', 'position', 'state', 'metadata_modified', 'tracking_summary', 'upload', 'clear_upload', 'revision_timestamp']);

export const resourceSchema: Schema = {
  id: [emptyToMissing, unicodeString],
  upload: [ignoreMissing],
  url_type: [ignoreMissing, unicodeString],
  url: [resourceUrl],
  description: [ignoreMissing, unicodeString],
  format: [ignoreMissing, unicodeString, (v: string) => canonicalFormat(v)],
  hash: [ignoreMissing, unicodeString],
  name: [ignoreMissing, unicodeString],
  resource_type: [ignoreMissing, unicodeString],
  mimetype: [ignoreMissing, unicodeString],
  mimetype_inner: [ignoreMissing, unicodeString],
  cache_url: [ignoreMissing, unicodeString],
  size: [emptyToMissing, intValidator],
  created: [emptyToMissing, isoDate],
  last_modified: [emptyToMissing, isoDate],
  cache_last_updated: [emptyToMissing, isoDate],
  datastore_active: [ignoreMissing, booleanValidator],
  package_id: [ignoreMissing],
  position: [ignoreMissing],
  state: [ignoreMissing],
  metadata_modified: [ignoreMissing],
  tracking_summary: [ignoreMissing],
  $extras: 'keep',
};

// --- datasets -------------------------------------------------------------------------------

/** Keys the service computes: accepted in input (ckanapi dumps send them) and ignored. */
export const COMPUTED_PACKAGE_KEYS = new Set(['isopen', 'license_title', 'license_url', 'num_resources', 'num_tags', 'organization',
  'metadata_created', 'metadata_modified', 'creator_user_id', 'tracking_summary']);

const extraValue: Validator = (v) => {
  if (v === null || typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
};

/** An extra's value must be sent (null is kept). */
const extraValueRequired: Validator = (v) => {
  if (v === MISSING || v === undefined) throw new Stop('Missing value');
  return v;
};

const relationshipItem = (otherKey: 'object' | 'subject'): Schema => ({
  [otherKey]: [ignoreMissing, unicodeString],
  [`${otherKey}_package_id`]: [ignoreMissing, unicodeString],
  __extras: [ignoreMissing, jsonObject],
  type: [notEmpty, unicodeString, oneOf(RELATIONSHIP_TYPES)],
  comment: [ignoreMissing, unicodeString],
  id: [ignoreMissing],
  $extras: 'drop',
});

export function packageSchema(opts: { create: boolean }): Schema {
  const schema: Schema = {
    id: opts.create ? [ignoreMissing, sysadminOnlyField, uuidValidator, packageIdFree] : [ignoreMissing],
    name: [notEmpty, nameValidator, packageNameValidator],
    title: [ignoreMissing, unicodeString],
    author: [ignoreMissing, unicodeString],
    author_email: [ignoreMissing, unicodeString, optionalEmail],
    maintainer: [ignoreMissing, unicodeString],
    maintainer_email: [ignoreMissing, unicodeString, optionalEmail],
    license_id: [ignoreMissing, unicodeString],
    notes: [ignoreMissing, unicodeString],
    url: [ignoreMissing, unicodeString],
    version: [ignoreMissing, unicodeString, versionValidator],
    state: [ignoreMissing, stateValidator, oneOf(['active', 'draft', 'deleted'])],
    type: [ignoreMissing, unicodeString],
    owner_org: [ownerOrgValidator],
    private: [ignoreMissing, booleanValidator, noOrgNotPrivate],
    plugin_data: [ignoreMissing, sysadminOnlyField, jsonObject],
    tag_string: [ignoreMissing, unicodeString],
    tags: { listOf: tagSchema },
    extras: { listOf: { key: [notEmpty, unicodeString], value: [extraValueRequired, extraValue], deleted: [ignoreMissing], $extras: 'drop' } },
    resources: { listOf: resourceSchema },
    groups: { listOf: { id: [ignoreMissing, unicodeString], name: [ignoreMissing, unicodeString], $extras: 'drop' } },
    relationships_as_subject: { listOf: relationshipItem('object') },
    relationships_as_object: { listOf: relationshipItem('subject') },
    $extras: 'keep',
  };
  return schema;
}

/** Names of the dataset schema's fields (an extra may not reuse one). */
export const PACKAGE_SCHEMA_KEYS = new Set([...Object.keys(packageSchema({ create: true })).filter((k) => k !== '$extras'), ...COMPUTED_PACKAGE_KEYS]);
