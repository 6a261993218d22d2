-- The catalog: datasets (packages), resources, groups and organizations, members, tags,
-- extras, relationships and collaborators. Names follow CKAN's model.
CREATE TABLE groups (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  title text,
  type text NOT NULL DEFAULT 'group',
  description text,
  image_url text,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  is_organization boolean NOT NULL DEFAULT false,
  approval_status text NOT NULL DEFAULT 'approved',
  state text NOT NULL DEFAULT 'active'
);
CREATE INDEX groups_type_idx ON groups (is_organization, state);

CREATE TABLE group_extras (
  id text PRIMARY KEY,
  group_id text NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
  key text NOT NULL,
  value text,
  state text NOT NULL DEFAULT 'active',
  UNIQUE (group_id, key)
);

CREATE TABLE packages (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  title text,
  version text,
  url text,
  notes text,
  license_id text,
  author text,
  author_email text,
  maintainer text,
  maintainer_email text,
  state text NOT NULL DEFAULT 'active',
  type text NOT NULL DEFAULT 'dataset',
  owner_org text REFERENCES groups (id),
  private boolean NOT NULL DEFAULT false,
  creator_user_id text REFERENCES users (id) ON DELETE SET NULL,
  metadata_created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  metadata_modified timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  plugin_data jsonb,
  -- top-level keys outside the core schema (custom dataset fields), returned as sent
  custom_fields jsonb
);
CREATE INDEX packages_owner_org_idx ON packages (owner_org);
CREATE INDEX packages_state_idx ON packages (state, private);
CREATE INDEX packages_modified_idx ON packages (metadata_modified DESC);
CREATE INDEX packages_creator_idx ON packages (creator_user_id);

CREATE TABLE package_extras (
  package_id text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
  key text NOT NULL,
  value text,
  PRIMARY KEY (package_id, key)
);

CREATE TABLE vocabularies (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE
);

CREATE TABLE tags (
  id text PRIMARY KEY,
  name text NOT NULL,
  vocabulary_id text REFERENCES vocabularies (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX tags_name_vocab_idx ON tags (name, coalesce(vocabulary_id, ''));

CREATE TABLE package_tags (
  package_id text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
  tag_id text NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
  state text NOT NULL DEFAULT 'active',
  PRIMARY KEY (package_id, tag_id)
);
CREATE INDEX package_tags_tag_idx ON package_tags (tag_id);

CREATE TABLE resources (
  id text PRIMARY KEY,
  package_id text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
  url text NOT NULL DEFAULT '',
  format text,
  description text,
  hash text,
  name text,
  resource_type text,
  mimetype text,
  mimetype_inner text,
  size bigint,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  last_modified timestamp,
  metadata_modified timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  cache_url text,
  cache_last_updated timestamp,
  url_type text,
  position integer NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'active',
  datastore_active boolean NOT NULL DEFAULT false,
  -- keys outside the core resource fields, returned flattened into the resource dict
  extras jsonb
);
CREATE INDEX resources_package_idx ON resources (package_id, position);

-- Membership of users, datasets and groups in groups/organizations.
CREATE TABLE members (
  id text PRIMARY KEY,
  group_id text NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
  table_name text NOT NULL CHECK (table_name IN ('user', 'package', 'group')),
  table_id text NOT NULL,
  capacity text NOT NULL,
  state text NOT NULL DEFAULT 'active',
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc')
);
CREATE UNIQUE INDEX members_unique_idx ON members (group_id, table_name, table_id) WHERE state = 'active';
CREATE INDEX members_object_idx ON members (table_id, table_name);

CREATE TABLE package_relationships (
  id text PRIMARY KEY,
  subject_package_id text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
  object_package_id text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
  type text NOT NULL,
  comment text,
  state text NOT NULL DEFAULT 'active'
);
CREATE INDEX package_relationships_subject_idx ON package_relationships (subject_package_id);
CREATE INDEX package_relationships_object_idx ON package_relationships (object_package_id);

-- Dataset collaborators.
CREATE TABLE package_members (
  package_id text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  capacity text NOT NULL,
  modified timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  PRIMARY KEY (package_id, user_id)
);
CREATE INDEX package_members_user_idx ON package_members (user_id);
