-- Web sessions: the cookie holds a random value, the table its SHA-256 (a leaked table cannot sign anyone in).
CREATE TABLE web_session (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'),
  expires timestamp NOT NULL
);
CREATE INDEX web_session_user_idx ON web_session (user_id);
CREATE INDEX web_session_expires_idx ON web_session (expires);
