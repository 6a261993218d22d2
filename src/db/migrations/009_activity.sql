-- The activity stream (activity plugin) and each user's dashboard state.
CREATE TABLE activities (
  id text PRIMARY KEY,
  timestamp timestamp NOT NULL DEFAULT (clock_timestamp() at time zone 'utc'),
  user_id text,
  object_id text NOT NULL,
  activity_type text NOT NULL,
  data jsonb,
  -- who may see it: the dataset's permission labels when it was recorded ('public', 'member-ORG', ...)
  permission_labels text[] NOT NULL DEFAULT '{public}'
);
CREATE INDEX activities_object_idx ON activities (object_id, timestamp DESC);
CREATE INDEX activities_user_idx ON activities (user_id, timestamp DESC);
CREATE INDEX activities_timestamp_idx ON activities (timestamp DESC);

CREATE TABLE dashboards (
  user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  activity_stream_last_viewed timestamp NOT NULL DEFAULT (now() at time zone 'utc')
);
