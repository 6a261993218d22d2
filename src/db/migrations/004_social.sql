-- Followers, resource views and term translations.
CREATE TABLE follows (
  follower_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- 'user', 'package' or 'group' (organizations are groups)
  object_type text NOT NULL CHECK (object_type IN ('user', 'package', 'group')),
  object_id text NOT NULL,
  datetime timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  PRIMARY KEY (follower_id, object_type, object_id)
);
CREATE INDEX follows_object_idx ON follows (object_id, object_type);

CREATE TABLE resource_views (
  id text PRIMARY KEY,
  resource_id text NOT NULL REFERENCES resources (id) ON DELETE CASCADE,
  title text,
  description text,
  view_type text NOT NULL,
  "order" integer NOT NULL DEFAULT 0,
  config jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX resource_views_resource_idx ON resource_views (resource_id, "order");

CREATE TABLE term_translations (
  term text NOT NULL,
  term_translation text NOT NULL,
  lang_code text NOT NULL,
  PRIMARY KEY (term, lang_code)
);
