-- Users, API tokens and site settings (runtime-editable options, persisted secrets).
CREATE TABLE users (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  fullname text,
  about text,
  email text,
  password_hash text,
  apikey text UNIQUE,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  last_active timestamp,
  sysadmin boolean NOT NULL DEFAULT false,
  state text NOT NULL DEFAULT 'active',
  image_url text,
  activity_streams_email_notifications boolean NOT NULL DEFAULT false,
  reset_key text,
  plugin_extras jsonb
);
CREATE INDEX users_email_idx ON users (lower(email));

CREATE TABLE api_tokens (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  last_access timestamp,
  expires_at timestamp,
  plugin_extras jsonb
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

CREATE TABLE system_info (
  key text PRIMARY KEY,
  value text NOT NULL,
  updated_at timestamp NOT NULL DEFAULT (now() at time zone 'utc')
);
