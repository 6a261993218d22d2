-- Exact keys of the index row's extras (custom fields, package extras, derived subfield lists) for
-- package_search's `field:value` filters (src/search/sql-builder.ts).
--
-- The GIN jsonb_path_ops index of extras (migration 003) is lossy: every row it finds is rechecked,
-- and a filter ANDed with a word (`q=data AND theme:health`) then rechecks the word too, reading
-- each match's doc. Here each value of a key (a scalar, or each scalar item of a list) is one
-- key "<length of the field>:<field>=<value>" (the length keeps a field holding '=' apart),
-- whose GIN index answers a containment exactly. Values longer than 200 characters have no key
-- (a GIN entry has a size limit): a filter on such a value tests the extras themselves.
CREATE FUNCTION package_search_extra_keys(extras jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT length(x.field) || ':' || x.field || '=' || x.value), '{}') FROM (
    SELECT e.key AS field, e.value #>> '{}' AS value FROM jsonb_each(extras) e
    WHERE jsonb_typeof(e.value) IN ('string', 'number', 'boolean')
    UNION ALL
    SELECT e.key, i #>> '{}' FROM jsonb_each(extras) e,
      jsonb_array_elements(CASE WHEN jsonb_typeof(e.value) = 'array' THEN e.value ELSE '[]' END) i
    WHERE jsonb_typeof(i) IN ('string', 'number', 'boolean')
  ) x
  WHERE length(x.value) <= 200 AND length(x.field) <= 200
$$;

-- Kept by PostgreSQL with every write of extras (a stored generated column), whoever writes it.
ALTER TABLE package_search_index ADD COLUMN extra_keys text[] GENERATED ALWAYS AS (package_search_extra_keys(extras)) STORED;
CREATE INDEX package_search_extra_keys_idx ON package_search_index USING gin (extra_keys);

-- Counting a custom facet field (or a word's facets) starts without a lock on the index
-- (src/search/value-counts.ts): the field is listed not ready, so that the triggers count it
-- from then on; once every transaction that may have written without counting it has ended, one
-- statement adds what a scan of the index finds less what the triggers counted in its snapshot,
-- and marks it ready. Queries read the counts of ready ones only.
ALTER TABLE package_search_counted_fields ADD COLUMN ready boolean NOT NULL DEFAULT true;
ALTER TABLE package_search_counted_words ADD COLUMN ready boolean NOT NULL DEFAULT true;

-- Sorting by a typed custom field (a date or number of the schema) orders the datasets by their
-- least value of it (a list's least item). The row of that least value (one per dataset, field and
-- kind of value) is flagged, and a partial index of the flagged rows gives the datasets in that
-- order (src/search/typed-sort.ts) instead of a lookup of each match's least value.
ALTER TABLE package_search_field_values ADD COLUMN least_ts boolean NOT NULL DEFAULT false;
ALTER TABLE package_search_field_values ADD COLUMN least_num boolean NOT NULL DEFAULT false;
UPDATE package_search_field_values v SET least_ts = true
FROM (SELECT DISTINCT ON (package_id, field) ctid AS row FROM package_search_field_values WHERE ts IS NOT NULL ORDER BY package_id, field, ts) l
WHERE v.ctid = l.row;
UPDATE package_search_field_values v SET least_num = true
FROM (SELECT DISTINCT ON (package_id, field) ctid AS row FROM package_search_field_values WHERE num IS NOT NULL ORDER BY package_id, field, num) l
WHERE v.ctid = l.row;
CREATE INDEX package_search_field_values_least_ts_idx ON package_search_field_values (field, ts, package_id) WHERE least_ts;
CREATE INDEX package_search_field_values_least_num_idx ON package_search_field_values (field, num, package_id) WHERE least_num;
