// JSON Schemas of the dicts actions return, for the OpenAPI document. They name the keys clients
// rely on; every dict may carry more (custom fields, plugin keys), so none is closed.
import { Type, type TSchema } from '@sinclair/typebox';

const open = { additionalProperties: true };
const str = Type.String();
const strOrNull = Type.Union([Type.String(), Type.Null()]);
const when = Type.String({ description: 'ISO 8601 date-time, UTC, no zone' });

export const tagSchema = Type.Object(
  {
    id: str,
    name: str,
    display_name: str,
    vocabulary_id: strOrNull,
    state: Type.Optional(str),
  },
  { ...open, title: 'Tag' },
);

export const extraSchema = Type.Object({ key: str, value: str }, open);

export const resourceSchema = Type.Object(
  {
    id: str,
    package_id: str,
    url: str,
    name: strOrNull,
    description: strOrNull,
    format: strOrNull,
    mimetype: strOrNull,
    mimetype_inner: strOrNull,
    size: Type.Union([Type.Integer(), Type.Null()]),
    hash: strOrNull,
    position: Type.Integer(),
    state: str,
    created: when,
    last_modified: Type.Union([when, Type.Null()]),
    metadata_modified: Type.Union([when, Type.Null()]),
    url_type: strOrNull,
    resource_type: strOrNull,
    datastore_active: Type.Optional(Type.Boolean()),
  },
  { ...open, title: 'Resource' },
);

export const groupSummarySchema = Type.Object(
  {
    id: str,
    name: str,
    title: str,
    description: str,
    display_name: str,
    image_display_url: str,
  },
  open,
);

export const organizationSummarySchema = Type.Object(
  {
    id: str,
    name: str,
    title: str,
    type: str,
    description: str,
    image_url: str,
    created: when,
    is_organization: Type.Boolean(),
    approval_status: str,
    state: str,
  },
  open,
);

export const datasetSchema = Type.Object(
  {
    id: str,
    name: str,
    title: str,
    type: str,
    state: str,
    private: Type.Boolean(),
    notes: strOrNull,
    url: strOrNull,
    version: strOrNull,
    author: strOrNull,
    author_email: strOrNull,
    maintainer: strOrNull,
    maintainer_email: strOrNull,
    license_id: strOrNull,
    license_title: Type.Optional(strOrNull),
    license_url: Type.Optional(strOrNull),
    isopen: Type.Boolean(),
    owner_org: strOrNull,
    creator_user_id: strOrNull,
    metadata_created: when,
    metadata_modified: when,
    num_resources: Type.Integer(),
    num_tags: Type.Integer(),
    organization: Type.Union([organizationSummarySchema, Type.Null()]),
    resources: Type.Array(resourceSchema),
    tags: Type.Array(tagSchema),
    extras: Type.Array(extraSchema),
    groups: Type.Array(groupSummarySchema),
    relationships_as_subject: Type.Array(Type.Unknown()),
    relationships_as_object: Type.Array(Type.Unknown()),
  },
  { ...open, title: 'Dataset' },
);

export const groupSchema = Type.Object(
  {
    id: str,
    name: str,
    title: str,
    type: str,
    description: str,
    image_url: str,
    image_display_url: str,
    created: when,
    state: str,
    is_organization: Type.Boolean(),
    approval_status: str,
    display_name: str,
    package_count: Type.Optional(Type.Integer()),
    num_followers: Type.Optional(Type.Integer()),
    extras: Type.Optional(Type.Array(extraSchema)),
    users: Type.Optional(Type.Array(Type.Unknown())),
    packages: Type.Optional(Type.Array(datasetSchema)),
    groups: Type.Optional(Type.Array(Type.Unknown())),
  },
  { ...open, title: 'Group', description: 'a group or an organization' },
);

export const userSchema = Type.Object(
  {
    id: str,
    name: str,
    fullname: strOrNull,
    display_name: str,
    about: strOrNull,
    created: when,
    sysadmin: Type.Boolean(),
    state: str,
    image_url: strOrNull,
    email_hash: str,
    number_created_packages: Type.Integer(),
    email: Type.Optional(strOrNull),
    apikey: Type.Optional(strOrNull),
  },
  { ...open, title: 'User' },
);

export const apiTokenSchema = Type.Object(
  {
    id: str,
    name: str,
    user_id: str,
    created_at: when,
    last_access: Type.Union([when, Type.Null()]),
  },
  { ...open, title: 'ApiToken' },
);

export const datastoreFieldSchema = Type.Object(
  {
    id: str,
    type: str,
    info: Type.Optional(Type.Record(str, Type.Unknown())),
  },
  open,
);

export const datastoreSearchSchema = Type.Object(
  {
    resource_id: str,
    fields: Type.Array(datastoreFieldSchema),
    records: Type.Union([Type.Array(Type.Unknown()), Type.String()], { description: 'objects, lists, or CSV/TSV text by records_format' }),
    total: Type.Optional(Type.Integer()),
    total_was_estimated: Type.Optional(Type.Boolean()),
    limit: Type.Optional(Type.Integer()),
    offset: Type.Optional(Type.Integer()),
    _links: Type.Optional(Type.Object({ start: str, next: str, prev: Type.Optional(str) }, open)),
    filters: Type.Optional(Type.Record(str, Type.Unknown())),
    sort: Type.Optional(str),
    q: Type.Optional(Type.Unknown()),
  },
  { ...open, title: 'DatastoreSearchResult' },
);

export const datastoreCreateSchema = Type.Object(
  {
    resource_id: str,
    fields: Type.Array(datastoreFieldSchema),
    method: Type.Optional(str),
    primary_key: Type.Optional(Type.Union([str, Type.Array(str)])),
    records: Type.Optional(Type.Array(Type.Unknown())),
  },
  { ...open, title: 'DatastoreWriteResult' },
);

/** A list of X. */
export const listOf = (item: TSchema, description?: string) => Type.Array(item, description ? { description } : {});
export const names = Type.Array(str, { description: 'names' });

/** Named dicts: the OpenAPI document lists them once under components and refers to them. */
export const namedSchemas: Record<string, TSchema> = {
  Dataset: datasetSchema,
  Resource: resourceSchema,
  Group: groupSchema,
  User: userSchema,
  Tag: tagSchema,
  ApiToken: apiTokenSchema,
  DatastoreSearchResult: datastoreSearchSchema,
  DatastoreWriteResult: datastoreCreateSchema,
};
