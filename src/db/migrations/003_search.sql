-- The package_search index: one row per indexed dataset, written in the same transaction as every
-- dataset change (src/search/indexer.ts). Text fields are one weighted tsvector (A title,
-- B name/tags/groups/organization, C notes, D everything else); facet and filter fields are plain
-- columns and arrays; labels are the dataset's permission labels (src/auth/authz.ts).
CREATE TABLE package_search_index (
  package_id text PRIMARY KEY REFERENCES packages (id) ON DELETE CASCADE,
  name text NOT NULL,
  title text,
  state text NOT NULL,
  private boolean NOT NULL,
  type text NOT NULL,
  owner_org text,
  organization text,
  license_id text,
  version text,
  url text,
  author text,
  maintainer text,
  creator_user_id text,
  tags text[] NOT NULL DEFAULT '{}',
  groups text[] NOT NULL DEFAULT '{}',
  res_format text[] NOT NULL DEFAULT '{}',
  res_url text[] NOT NULL DEFAULT '{}',
  res_type text[] NOT NULL DEFAULT '{}',
  res_name text,
  res_description text,
  extras jsonb NOT NULL DEFAULT '{}',
  labels text[] NOT NULL,
  num_resources integer NOT NULL DEFAULT 0,
  num_tags integer NOT NULL DEFAULT 0,
  metadata_created timestamp NOT NULL,
  metadata_modified timestamp NOT NULL,
  doc tsvector NOT NULL
);
CREATE INDEX package_search_doc_idx ON package_search_index USING gin (doc);
CREATE INDEX package_search_tags_idx ON package_search_index USING gin (tags);
CREATE INDEX package_search_groups_idx ON package_search_index USING gin (groups);
CREATE INDEX package_search_res_format_idx ON package_search_index USING gin (res_format);
CREATE INDEX package_search_labels_idx ON package_search_index USING gin (labels);
CREATE INDEX package_search_extras_idx ON package_search_index USING gin (extras jsonb_path_ops);
CREATE INDEX package_search_modified_idx ON package_search_index (metadata_modified DESC, package_id);
-- What anonymous callers find (active public datasets): counted and paged from the index alone
-- (index-only scans) for queries without words.
CREATE INDEX package_search_public_modified_idx ON package_search_index (metadata_modified DESC, package_id)
  WHERE state = 'active' AND NOT private;
CREATE INDEX package_search_created_idx ON package_search_index (metadata_created DESC, package_id);
CREATE INDEX package_search_name_idx ON package_search_index (name COLLATE "C");
CREATE INDEX package_search_organization_idx ON package_search_index (organization);
CREATE INDEX package_search_license_idx ON package_search_index (license_id);

-- Bumped after every committed index change: cached search results of an older generation are
-- not used (src/search/postgres-engine.ts). A sequence: no row lock shared by writers.
CREATE SEQUENCE package_search_generation;
