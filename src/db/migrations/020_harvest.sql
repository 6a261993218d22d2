-- Harvesting (ckanext-harvest's model): sources, jobs (one run of a source), objects (one remote
-- record seen by a job) and their errors. A source's datasets are found through its current
-- objects: the object last imported for each remote guid.
CREATE TABLE harvest_source (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  title text NOT NULL,
  url text NOT NULL,
  source_type text NOT NULL,
  frequency text NOT NULL DEFAULT 'MANUAL',
  -- the config as sent (ckanext-harvest answers it as this text)
  config text,
  notes text,
  owner_org text REFERENCES groups (id),
  private boolean NOT NULL DEFAULT false,
  active boolean NOT NULL DEFAULT true,
  state text NOT NULL DEFAULT 'active',
  creator_user_id text REFERENCES users (id) ON DELETE SET NULL,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  metadata_modified timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  -- when the scheduler runs it next (NULL: MANUAL, inactive or deleted)
  next_run timestamp
);
CREATE INDEX harvest_source_next_run_idx ON harvest_source (next_run) WHERE next_run IS NOT NULL;
CREATE INDEX harvest_source_owner_org_idx ON harvest_source (owner_org);

CREATE TABLE harvest_job (
  id text PRIMARY KEY,
  source_id text NOT NULL REFERENCES harvest_source (id) ON DELETE CASCADE,
  -- New, Running, Finished, Aborted
  status text NOT NULL DEFAULT 'New',
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  gather_started timestamp,
  gather_finished timestamp,
  finished timestamp,
  -- the newest remote modification time the gather saw (the remote's clock): the next run reads
  -- what changed since then
  remote_modified text
);
CREATE INDEX harvest_job_source_idx ON harvest_job (source_id, created DESC);
-- Two runs of one source never overlap.
CREATE UNIQUE INDEX harvest_job_one_unfinished_idx ON harvest_job (source_id) WHERE status IN ('New', 'Running');

CREATE TABLE harvest_object (
  id text PRIMARY KEY,
  guid text NOT NULL,
  harvest_job_id text NOT NULL REFERENCES harvest_job (id) ON DELETE CASCADE,
  harvest_source_id text NOT NULL REFERENCES harvest_source (id) ON DELETE CASCADE,
  package_id text REFERENCES packages (id) ON DELETE SET NULL,
  -- the object last imported for its guid: the dataset's current copy
  current boolean NOT NULL DEFAULT false,
  -- WAITING (gathered, to import), COMPLETE, ERROR
  state text NOT NULL DEFAULT 'WAITING',
  -- create, update, delete, skip (not modified)
  operation text NOT NULL,
  -- added, updated, deleted, not modified, errored (set when the object is done)
  report_status text,
  -- the record as received, and as the reader read it ({dataset, organization}: what is imported)
  content text,
  payload jsonb,
  -- of the record and of the source settings that shape the dataset: equal means nothing to write
  content_hash text,
  remote_url text,
  metadata_modified_date text,
  gathered timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  import_started timestamp,
  import_finished timestamp,
  UNIQUE (harvest_job_id, guid)
);
CREATE UNIQUE INDEX harvest_object_current_idx ON harvest_object (harvest_source_id, guid) WHERE current;
CREATE INDEX harvest_object_guid_idx ON harvest_object (harvest_source_id, guid);
CREATE INDEX harvest_object_package_idx ON harvest_object (package_id);
CREATE INDEX harvest_object_waiting_idx ON harvest_object (harvest_job_id) WHERE state = 'WAITING';

CREATE TABLE harvest_object_error (
  id text PRIMARY KEY,
  harvest_object_id text NOT NULL REFERENCES harvest_object (id) ON DELETE CASCADE,
  message text NOT NULL,
  stage text NOT NULL,
  line int,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc')
);
CREATE INDEX harvest_object_error_object_idx ON harvest_object_error (harvest_object_id);

CREATE TABLE harvest_gather_error (
  id text PRIMARY KEY,
  harvest_job_id text NOT NULL REFERENCES harvest_job (id) ON DELETE CASCADE,
  message text NOT NULL,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc')
);
CREATE INDEX harvest_gather_error_job_idx ON harvest_gather_error (harvest_job_id);
