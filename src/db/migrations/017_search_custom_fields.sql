-- Custom fields (ckanext-scheming schemas) in package_search (src/search/schema-fields.ts).
--
-- 1. Derived keys of the index row's extras, made from the custom fields' values alone (never
--    from the configured schema, so a row stays right when the schema changes): a list of
--    objects (repeating subfields) gives `{field}_{subfield}`, the list of its items' values, as
--    CKAN + ckanext-scheming index them; an object of texts (a multilingual value, language ->
--    text) gives `{field}-{language}`. A key the dataset has itself wins.
CREATE FUNCTION package_search_derived_keys(custom jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(jsonb_object_agg(k, v), '{}'::jsonb) FROM (
    SELECT f.key || '_' || i.key AS k, jsonb_agg(i.value #>> '{}' ORDER BY n, i.key) AS v
    FROM jsonb_each(custom) f, jsonb_array_elements(f.value) WITH ORDINALITY AS a (item, n), jsonb_each(a.item) i
    WHERE jsonb_typeof(f.value) = 'array' AND jsonb_typeof(a.item) = 'object'
      AND jsonb_typeof(i.value) IN ('string', 'number', 'boolean')
    GROUP BY 1
    UNION ALL
    SELECT f.key || '-' || l.key, l.value
    FROM jsonb_each(custom) f, jsonb_each(f.value) l
    WHERE jsonb_typeof(f.value) = 'object' AND jsonb_typeof(l.value) = 'string'
  ) d
  WHERE NOT custom ? k
$$;

-- 2. Numbers and dates of custom field values, typed as the schema types its fields (int_validator,
--    isodate, ...): ranges compare numbers as numbers and dates as instants. Text that is not one
--    gives NULL (never an error: a value of any shape may be stored).
CREATE FUNCTION package_search_number(v text) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN v ~ '^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$' THEN v::numeric END
$$;

-- ISO 8601 as written by isodate / scheming_isodatetime(_tz) / convert_to_json_if_date: a date,
-- or a date and time, with an optional zone (none: UTC, as CKAN indexes them).
CREATE FUNCTION package_search_timestamp(v text) RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  m text[];
  y int; mo int; d int; h int; mi int; s float8; off interval := interval '0';
BEGIN
  m := regexp_match(v, '^\s*([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2}(?:\.[0-9]{1,9})?))?)?\s*(Z|[+-][0-9]{2}:?[0-9]{2})?\s*$');
  IF m IS NULL THEN RETURN NULL; END IF;
  y := m[1]::int; mo := m[2]::int; d := m[3]::int;
  h := coalesce(m[4], '0')::int; mi := coalesce(m[5], '0')::int; s := coalesce(m[6], '0')::float8;
  IF y < 1 OR mo NOT BETWEEN 1 AND 12 OR d < 1 OR h > 23 OR mi > 59 OR s >= 60
     OR d > extract(day FROM make_date(y, mo, 1) + interval '1 month' - interval '1 day') THEN
    RETURN NULL;
  END IF;
  IF m[7] IS NOT NULL AND m[7] <> 'Z' THEN
    off := make_interval(hours => substr(m[7], 2, 2)::int, mins => right(m[7], 2)::int);
    IF left(m[7], 1) = '-' THEN off := -off; END IF;
  END IF;
  RETURN make_timestamp(y, mo, d, h, mi, s) - off;
END $$;

-- The typed values of an index row's extras (each value, or each item of a list of values). Only
-- text that begins as a number or a date is parsed (this runs for every index write).
CREATE FUNCTION package_search_typed_values(extras jsonb)
RETURNS TABLE (field text, num numeric, ts timestamp) LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT x.field, x.num, x.ts FROM (
    SELECT v.field,
      CASE WHEN v.v ~ '^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$' THEN v.v::numeric END AS num,
      CASE WHEN v.v ~ '^\s*[0-9]{4}-[0-9]{2}-[0-9]{2}' THEN package_search_timestamp(v.v) END AS ts
    FROM (
      SELECT e.key AS field, e.value #>> '{}' AS v FROM jsonb_each(extras) e WHERE jsonb_typeof(e.value) IN ('string', 'number')
      UNION ALL
      SELECT e.key, i.value #>> '{}' FROM jsonb_each(extras) e,
        jsonb_array_elements(CASE WHEN jsonb_typeof(e.value) = 'array' THEN e.value ELSE '[]' END) i (value)
      WHERE jsonb_typeof(i.value) IN ('string', 'number')
    ) v
    WHERE length(v.v) <= 64 AND v.v ~ '^\s*[-+.0-9]'
  ) x
  WHERE x.num IS NOT NULL OR x.ts IS NOT NULL
$$;

-- One row per typed value of an indexed dataset, written with its index row
-- (src/search/postgres-engine.ts): ranges and sorts of typed fields by index. The dataset's state
-- and visibility are copied (every change of them writes the index row, and so these rows), so
-- that a query of nothing but one typed filter counts its matches from the index alone.
CREATE TABLE package_search_field_values (
  package_id text NOT NULL REFERENCES package_search_index (package_id) ON DELETE CASCADE,
  field text NOT NULL,
  num numeric,
  ts timestamp,
  state text NOT NULL,
  private boolean NOT NULL
);
CREATE INDEX package_search_field_values_package_idx ON package_search_field_values (package_id);
CREATE INDEX package_search_field_values_ts_idx ON package_search_field_values (field, ts, package_id) INCLUDE (state, private)
  WHERE ts IS NOT NULL;
CREATE INDEX package_search_field_values_num_idx ON package_search_field_values (field, num, package_id) INCLUDE (state, private)
  WHERE num IS NOT NULL;

-- 3. Facet counts of custom fields (choice fields, subfield lists), as migration 011 keeps them
--    for the facet columns: the fields are listed in package_search_counted_fields the first
--    time a query facets on one the schema declares (src/search/value-counts.ts), and from then
--    on statement triggers keep their counts per value exact for the classes 'public' and 'active'.
CREATE TABLE package_search_counted_fields (
  field text PRIMARY KEY
);
CREATE TABLE package_search_field_counts (
  class text NOT NULL,
  field text NOT NULL,
  value text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (class, field, value)
);

-- The (class, field, value) triples of one index row: each distinct value of each counted field.
CREATE FUNCTION package_search_custom_triples(state text, private boolean, extras jsonb)
RETURNS TABLE (class text, field text, value text) LANGUAGE sql STABLE AS $$
  SELECT c, f.field, v.value
  FROM package_search_counted_fields f
  CROSS JOIN LATERAL (
    SELECT DISTINCT x AS value FROM unnest(CASE WHEN jsonb_typeof(extras -> f.field) = 'array'
      THEN ARRAY(SELECT jsonb_array_elements_text(extras -> f.field)) ELSE ARRAY[extras ->> f.field] END) x
    WHERE x IS NOT NULL AND x <> '') v
  CROSS JOIN unnest(CASE WHEN private THEN ARRAY['active'] ELSE ARRAY['active', 'public'] END) c
  WHERE state = 'active' AND extras ? f.field
$$;

CREATE FUNCTION package_search_custom_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_field_counts AS c (class, field, value, n)
  SELECT t.class, t.field, t.value, count(*) FROM new_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE FUNCTION package_search_custom_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_field_counts AS c (class, field, value, n)
  SELECT t.class, t.field, t.value, -count(*) FROM old_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE FUNCTION package_search_custom_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_field_counts AS c (class, field, value, n)
  SELECT class, field, value, sum(d) FROM (
    SELECT t.class, t.field, t.value, 1 AS d FROM new_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
    WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.package_id = r.package_id
      AND (o.state, o.private, o.extras) IS NOT DISTINCT FROM (r.state, r.private, r.extras))
    UNION ALL
    SELECT t.class, t.field, t.value, -1 FROM old_rows r, package_search_custom_triples(r.state, r.private, r.extras) t
    WHERE NOT EXISTS (SELECT 1 FROM new_rows o WHERE o.package_id = r.package_id
      AND (o.state, o.private, o.extras) IS NOT DISTINCT FROM (r.state, r.private, r.extras))
  ) x
  GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE FUNCTION package_search_custom_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM package_search_field_counts;
  RETURN NULL;
END $$;

CREATE TRIGGER package_search_custom_count_inserted AFTER INSERT ON package_search_index
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION package_search_custom_count_inserted();
CREATE TRIGGER package_search_custom_count_deleted AFTER DELETE ON package_search_index
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION package_search_custom_count_deleted();
CREATE TRIGGER package_search_custom_count_updated AFTER UPDATE ON package_search_index
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION package_search_custom_count_updated();
CREATE TRIGGER package_search_custom_count_truncated AFTER TRUNCATE ON package_search_index
  FOR EACH STATEMENT EXECUTE FUNCTION package_search_custom_count_truncated();

-- Rows indexed before: the derived keys of the datasets that have lists of objects or objects
-- (only those rows are written), and the typed values of every row.
UPDATE package_search_index s SET extras = package_search_derived_keys(p.custom_fields) || s.extras
FROM packages p
WHERE p.id = s.package_id AND p.custom_fields IS NOT NULL AND package_search_derived_keys(p.custom_fields) <> '{}'::jsonb;
INSERT INTO package_search_field_values (package_id, field, num, ts, state, private)
SELECT s.package_id, t.field, t.num, t.ts, s.state, s.private FROM package_search_index s, package_search_typed_values(s.extras) t;
