-- Failed web sign-ins, per account and per client address, kept in the catalog so that every
-- server process on one database counts the same failures (src/model/sign-in-failures.ts).
-- Rows older than the window are deleted as new ones arrive.
CREATE TABLE sign_in_failures (
  kind text NOT NULL CHECK (kind IN ('account', 'address')),
  key text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX sign_in_failures_key_idx ON sign_in_failures (kind, key, at DESC);
CREATE INDEX sign_in_failures_at_idx ON sign_in_failures (at);
