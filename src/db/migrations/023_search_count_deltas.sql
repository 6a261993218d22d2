-- The counts of migrations 011, 012 and 017 without a shared row locked by every write. Their
-- triggers upserted each statement's net changes into the count rows, so every write of an active
-- public dataset locked the class totals (and the rows of its common words and values) until its
-- COMMIT, and concurrent writers waited for each other. Now the triggers append the changes to a
-- change table (insert only: no conflict, no row of another transaction locked), and the count of
-- a key is its kept row plus its pending changes, summed in the reader's snapshot: exact and
-- transactional as before (the views below are the one way to read them). A merge
-- (src/search/count-merge.ts) moves the committed changes into the kept rows in one statement
-- (DELETE ... RETURNING aggregated into an upsert): a reader's snapshot sees them on one side or
-- the other, never both or neither.
CREATE TABLE package_search_value_deltas (
  class text NOT NULL,
  field text NOT NULL,
  value text NOT NULL,
  n bigint NOT NULL
);
CREATE INDEX package_search_value_deltas_idx ON package_search_value_deltas (class, field, value);
CREATE TABLE package_search_field_deltas (
  class text NOT NULL,
  field text NOT NULL,
  value text NOT NULL,
  n bigint NOT NULL
);
CREATE INDEX package_search_field_deltas_idx ON package_search_field_deltas (class, field, value);
-- rows are inserted and deleted all the time: vacuum them by count, not by the table's size
ALTER TABLE package_search_value_deltas SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 20000);
ALTER TABLE package_search_field_deltas SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);

-- Kept plus pending. A condition on class, field or value reaches both tables' indexes (the
-- planner pushes conditions on grouping columns below the GROUP BY).
CREATE VIEW package_search_value_counts_now AS
SELECT class, field, value, sum(n)::bigint AS n FROM (
  SELECT class, field, value, n FROM package_search_value_counts
  UNION ALL
  SELECT class, field, value, n FROM package_search_value_deltas
) x GROUP BY class, field, value;
CREATE VIEW package_search_field_counts_now AS
SELECT class, field, value, sum(n)::bigint AS n FROM (
  SELECT class, field, value, n FROM package_search_field_counts
  UNION ALL
  SELECT class, field, value, n FROM package_search_field_deltas
) x GROUP BY class, field, value;

-- The index is written with INSERT ... ON CONFLICT DO UPDATE, which fires the statement triggers
-- of both INSERT and UPDATE, one of them with no rows: such a call returns at once (planning its
-- query took 1-5 ms a write).
CREATE OR REPLACE FUNCTION package_search_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
  INSERT INTO package_search_value_deltas (class, field, value, n)
  SELECT t.class, t.field, t.value, count(*) FROM new_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
  INSERT INTO package_search_value_deltas (class, field, value, n)
  SELECT t.class, t.field, t.value, -count(*) FROM old_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
  INSERT INTO package_search_value_deltas (class, field, value, n)
  SELECT class, field, value, sum(d) FROM (
    SELECT t.class, t.field, t.value, 1 AS d FROM new_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
    WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.package_id = r.package_id AND (o.state, o.private, o.organization, o.owner_org, o.license_id, o.type, o.tags, o.groups, o.res_format, o.res_type, o.doc) IS NOT DISTINCT FROM (r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc))
    UNION ALL
    SELECT t.class, t.field, t.value, -1 FROM old_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
    WHERE NOT EXISTS (SELECT 1 FROM new_rows o WHERE o.package_id = r.package_id AND (o.state, o.private, o.organization, o.owner_org, o.license_id, o.type, o.tags, o.groups, o.res_format, o.res_type, o.doc) IS NOT DISTINCT FROM (r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc))
  ) x
  GROUP BY 1, 2, 3 HAVING sum(d) <> 0;
  RETURN NULL;
END $$;

-- A merge in flight would write kept rows after this DELETE's snapshot: wait for it (its lock).
CREATE OR REPLACE FUNCTION package_search_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('svc.search_count_merge', 0));
  DELETE FROM package_search_value_counts;
  DELETE FROM package_search_value_deltas;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_custom_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
  INSERT INTO package_search_field_deltas (class, field, value, n)
  SELECT t.class, t.field, t.value, count(*) FROM new_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_custom_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
  INSERT INTO package_search_field_deltas (class, field, value, n)
  SELECT t.class, t.field, t.value, -count(*) FROM old_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_custom_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
  INSERT INTO package_search_field_deltas (class, field, value, n)
  SELECT class, field, value, sum(d) FROM (
    SELECT t.class, t.field, t.value, 1 AS d FROM new_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
    WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.package_id = r.package_id
      AND (o.state, o.private, o.extras) IS NOT DISTINCT FROM (r.state, r.private, r.extras))
    UNION ALL
    SELECT t.class, t.field, t.value, -1 FROM old_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
    WHERE NOT EXISTS (SELECT 1 FROM new_rows o WHERE o.package_id = r.package_id
      AND (o.state, o.private, o.extras) IS NOT DISTINCT FROM (r.state, r.private, r.extras))
  ) x
  GROUP BY 1, 2, 3 HAVING sum(d) <> 0;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_custom_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('svc.search_count_merge', 0));
  DELETE FROM package_search_field_counts;
  DELETE FROM package_search_field_deltas;
  RETURN NULL;
END $$;
