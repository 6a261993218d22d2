-- CKAN's task status records: the state of a background task about an entity (e.g. a loader run
-- for a resource), one per (entity_id, task_type, key).
CREATE TABLE task_status (
  id text PRIMARY KEY,
  entity_id text NOT NULL,
  entity_type text NOT NULL,
  task_type text NOT NULL,
  key text NOT NULL,
  value text,
  state text,
  error text,
  last_updated timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  UNIQUE (entity_id, task_type, key)
);
