// The declarations of a dataset dict and a resource dict, with CKAN's messages. package_create /
// update and resource_create / update validate with them in their handlers (the rules need the
// stored dataset: its resources, its organization), and their help and OpenAPI come from them.
import type { ActionContext } from '../context.ts';
import { canEditPackage, ownerOrgChangeError } from '../auth/authz.ts';
import { canonicalFormat } from '../model/resources.ts';
import { findGroup, packageNameHolder, type PackageRow } from '../model/packages.ts';
import { RELATIONSHIP_TYPES } from '../model/relationships.ts';
import { Type, type TSchema } from '@sinclair/typebox';
import { compileParams, p } from './params.ts';
import { Invalid, MISSING, Stop, type Schema, type Validator } from './validate.ts';
import { emailValidator, intValidator, isoDate, oneOf, unicodeString } from './validators.ts';

/** What package and resource validators need to know besides the data. */
export interface PackageValidationContext {
  ctx: ActionContext;
  /** The dataset being updated (absent on create). */
  pkg?: PackageRow;
  /** Ids of the dataset's current resources (an inline resource with one of these is an update). */
  existingResourceIds?: Set<string>;
  /** A file is uploaded with this resource (its url is then not required). */
  upload?: unknown;
  /** The dict as sent (a custom schema's validators may read other fields of it). */
  input?: Record<string, unknown>;
  /**
   * A new dataset's name and id are left to its insert (model/packages.ts insertPackage: a name or
   * id another dataset holds makes it write nothing, and the validation runs again with them looked
   * up): a round trip or two less a create. Only where a failure ends the whole call (validatePackage decides).
   */
  nameCheckedByInsert?: boolean;
}

const isBlank = (v: unknown) => v === MISSING || v === null || v === undefined || v === '';
const vctx = (f: { context: any }) => f.context as PackageValidationContext;

export const PACKAGE_NAME_MAX = 100;
export const PACKAGE_VERSION_MAX = 100;

/** "That URL is already in use." and the length messages (they accumulate with nameValidator's). */
export const packageNameValidator: Validator = async (v, f) => {
  if (typeof v !== 'string') return v;
  const { ctx, pkg, nameCheckedByInsert } = vctx(f);
  const holder = nameCheckedByInsert ? undefined : await packageNameHolder(ctx.db, v);
  if (holder && holder.id !== (pkg?.id ?? f.data.id)) throw new Invalid('That URL is already in use.');
  if (v.length < 2) throw new Invalid(`Name "${v}" length is less than minimum 2`);
  if (v.length > PACKAGE_NAME_MAX) throw new Invalid(`Name "${v}" length is more than maximum ${PACKAGE_NAME_MAX}`);
  return v;
};

export const packageVersionValidator: Validator = (v) => {
  if (typeof v === 'string' && v.length > PACKAGE_VERSION_MAX)
    throw new Invalid(`Version must be a maximum of ${PACKAGE_VERSION_MAX} characters long`);
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
  // The web form's first stage saves a new dataset as a draft (CKAN's allow_state_change).
  if (!pkg && v === 'draft' && ctx.web) return v;
  throw new Stop();
};

const packageIdFree: Validator = async (v, f) => {
  // (left to the insert as the name is: insertPackage's unlessTaken)
  if (vctx(f).nameCheckedByInsert) return v;
  const r = await vctx(f).ctx.db.query('SELECT 1 FROM packages WHERE id = $1', [v]);
  if (r.rows.length) throw new Invalid('Dataset id already exists');
  return v;
};

/** CKAN's owner_org_validator: resolves a name to the organization id. */
export const ownerOrgValidator: Validator = async (v, f) => {
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
  if (!/^[\p{L}\p{N}_ \-.]*$/u.test(name))
    out.push(`Tag "${name}" can only contain alphanumeric characters, spaces (" "), hyphens ("-"), underscores ("_") or dots (".")`);
  return out;
}

const tagCheck =
  (i: number): Validator =>
  (v) => {
    const name = String(v);
    const all = [name.length < 2, name.length > 100, !/^[\p{L}\p{N}_ \-.]*$/u.test(name)];
    if (all[i]) throw new Invalid(tagNameErrors(name).find((m) => m.includes(['less than', 'more than', 'can only'][i]))!);
    return v;
  };

const tagParams = {
  name: p
    .string('the tag')
    .required()
    .use((v: string) => v.trim(), tagCheck(0), tagCheck(1), tagCheck(2)),
  vocabulary_id: p.string('id or name of the vocabulary (free tag when not given)'),
};

// --- resources ------------------------------------------------------------------------------

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
export const RESOURCE_SERVICE_KEYS = new Set([
  'package_id',
  'position',
  'state',
  'metadata_modified',
  'tracking_summary',
  'upload',
  'clear_upload',
  'revision_timestamp',
]);

/** A value that is given unless blank: missing, null and "" leave the key out. */
const unlessBlank = <T>(description: string, validators: Validator[], schema: TSchema = Type.String(), typeName = 'string') =>
  p.custom<T>(description, validators, schema, typeName).ignoreEmpty();

export const resourceParams = {
  id: unlessBlank<string>('the id (a new resource gets one)', [unicodeString]),
  upload: p.any('a file (multipart/form-data request); the resource then points at its download URL', Type.String({ format: 'binary' })),
  url_type: p.string('upload for an uploaded file, datastore for a data store table'),
  url: p.custom<string>('the URL (required for a new resource unless a file is uploaded)', [resourceUrl], Type.String()).handlesMissing(),
  description: p.string('the description'),
  format: p.string('the format (guessed from the URL or file when not given)').use((v: string) => canonicalFormat(v)),
  hash: p.string('a hash of the data'),
  name: p.string('the name'),
  resource_type: p.string('the resource type'),
  mimetype: p.string('the MIME type'),
  mimetype_inner: p.string('the MIME type inside an archive'),
  cache_url: p.string('a cached copy'),
  size: unlessBlank<number>('the size in bytes', [intValidator], Type.Integer(), 'int'),
  created: unlessBlank<string>('creation time (ISO 8601)', [isoDate], Type.String({ format: 'date-time' })),
  last_modified: unlessBlank<string>('last change of the data (ISO 8601)', [isoDate], Type.String({ format: 'date-time' })),
  cache_last_updated: unlessBlank<string>('time of the cached copy (ISO 8601)', [isoDate], Type.String({ format: 'date-time' })),
  datastore_active: p.boolean('the resource has a data store table (set by the data store)'),
  package_id: p.any('the dataset (resource_create: required)').hidden(),
  position: p.any('computed').hidden(),
  state: p.any('computed').hidden(),
  metadata_modified: p.any('computed').hidden(),
  tracking_summary: p.any('computed').hidden(),
};
/** Other keys of a resource are kept as its extra fields. */
export const resourceSchema: Schema = compileParams(resourceParams, 'keep');

// --- datasets -------------------------------------------------------------------------------

/** Keys the service computes: accepted in input (ckanapi dumps send them) and ignored. */
export const COMPUTED_PACKAGE_KEYS = new Set([
  'isopen',
  'license_title',
  'license_url',
  'num_resources',
  'num_tags',
  'organization',
  'metadata_created',
  'metadata_modified',
  'creator_user_id',
  'tracking_summary',
]);

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

const relationshipItem = (otherKey: 'object' | 'subject') => ({
  [otherKey]: p.string(`id or name of the ${otherKey} dataset`),
  [`${otherKey}_package_id`]: p.string(`another name of ${otherKey}`),
  __extras: p.object(`may hold ${otherKey}_package_id`),
  type: p.enum(RELATIONSHIP_TYPES, 'the relationship type').required(),
  comment: p.string('a comment'),
  id: p.any('ignored').hidden(),
});

const PACKAGE_STATES = ['active', 'draft', 'deleted'] as const;

const packageFields = {
  name: p.name('the name: 2-100 characters, lowercase alphanumeric, - and _').required().use(packageNameValidator),
  title: p.string('the title (default: the name)'),
  author: p.string('the author'),
  author_email: p.string("the author's email").use(optionalEmail),
  maintainer: p.string('the maintainer'),
  maintainer_email: p.string("the maintainer's email").use(optionalEmail),
  license_id: p.string('the license (see license_list)'),
  notes: p.string('a description (Markdown)'),
  url: p.string('the URL of the source'),
  version: p.string('the version (at most 100 characters)').use(packageVersionValidator),
  state: p
    .custom<'active' | 'draft' | 'deleted'>(
      'the state (create: sysadmins only; default active)',
      [oneOf(PACKAGE_STATES)],
      Type.Union(PACKAGE_STATES.map((s) => Type.Literal(s))),
    )
    .first(stateValidator),
  type: p.string('the type (default dataset)'),
  owner_org: p
    .custom<string | null>(
      'id or name of the organization (required unless svc.auth.create_unowned_dataset)',
      [ownerOrgValidator],
      Type.String(),
    )
    .handlesMissing(),
  private: p
    .boolean("private datasets are seen by the organization's members only (needs an organization; default false)")
    .use(noOrgNotPrivate),
  plugin_data: p.object('data of plugins (sysadmins only)').first(sysadminOnlyField),
  tag_string: p.string('free tags as "a,b,c"'),
  tags: p.listOf(tagParams, 'tags: list of {name, vocabulary_id}'),
  extras: p.listOf(
    {
      key: p.string('the key').required(),
      value: p
        .custom<string | null>('the value (other JSON becomes its text)', [extraValueRequired, extraValue], Type.Unknown(), 'any')
        .handlesMissing(),
      deleted: p.any('leave the extra out'),
    },
    'custom fields: list of {key, value}',
  ),
  resources: p.listOf(resourceParams, 'the resources (other keys of a resource are kept as its extra fields)', { extras: 'keep' }),
  groups: p.listOf({ id: p.string('id'), name: p.string('name') }, 'groups: list of {id or name}'),
  relationships_as_subject: p.listOf(relationshipItem('object'), 'relationships with this dataset as subject'),
  relationships_as_object: p.listOf(relationshipItem('subject'), 'relationships with this dataset as object'),
};

/** The dataset dict of package_create (id: sysadmins only) and package_update (id: the dataset). */
export function packageParams(opts: { create: boolean }) {
  return {
    id: opts.create
      ? p.uuid('the id (sysadmins only)').first(sysadminOnlyField).use(packageIdFree)
      : p.any('the id or name of the dataset', Type.String()),
    ...packageFields,
  };
}

/** Other keys of a dataset are kept as custom fields and returned as sent. */
export function packageSchema(opts: { create: boolean }): Schema {
  return compileParams(packageParams(opts), 'keep');
}

/** Names of the dataset schema's fields (an extra may not reuse one). */
export const PACKAGE_SCHEMA_KEYS = new Set([...Object.keys(packageParams({ create: true })), ...COMPUTED_PACKAGE_KEYS]);
