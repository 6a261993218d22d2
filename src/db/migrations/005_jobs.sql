-- Background jobs: a queue in the catalog database. Workers take a job with
-- FOR UPDATE SKIP LOCKED and hold a lease they renew while it runs; a job whose lease expired
-- (its worker died) is queued again, or failed after max_attempts.
CREATE TABLE jobs (
  id text PRIMARY KEY,
  type text NOT NULL,
  queue text NOT NULL DEFAULT 'default',
  title text,
  data jsonb NOT NULL DEFAULT '{}',
  -- queued, running, finished, failed, canceled
  status text NOT NULL DEFAULT 'queued',
  result jsonb,
  error text,
  attempts int NOT NULL DEFAULT 0,
  max_attempts int NOT NULL DEFAULT 3,
  created timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
  started timestamp,
  ended timestamp,
  lease_until timestamp,
  worker text
);
CREATE INDEX jobs_queued_idx ON jobs (queue, created, id) WHERE status = 'queued';
CREATE INDEX jobs_running_idx ON jobs (lease_until) WHERE status = 'running';
