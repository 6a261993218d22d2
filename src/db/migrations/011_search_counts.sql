-- Dataset counts per value of the search index's facet columns, for the permission classes most
-- searches use, kept exact by statement triggers in the same transaction as every index change
-- (insert, update, delete, cascades from purged datasets). package_search answers the count and
-- the facets of a query without words or filters from them (src/search/postgres-engine.ts), and
-- expands wildcards on list fields (tags:wat*) to the values that exist, so that the GIN index of
-- the list serves them.
--   class 'all'    every indexed dataset (wildcard expansion)
--         'active' active datasets (sysadmins with include_private)
--         'public' active datasets that are not private (everyone)
--   field an index column; '' with value '' is the number of datasets of the class; 'doc' the
--         lexemes of the text (class 'public' only: about a hundred rows a dataset, the cost of
--         every index write): how many datasets a single word matches, the count of the broad
--         one-word queries that would otherwise visit most of the index.
-- A value no dataset has any more keeps its row with n = 0 (queries read n > 0).
CREATE TABLE package_search_value_counts (
  class text NOT NULL,
  field text NOT NULL,
  value text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (class, field, value)
);

-- The (class, field, value) triples one index row counts in (columns, not the row: a whole-row
-- argument of an inlined function trips the planner).
CREATE FUNCTION package_search_value_triples(state text, private boolean, organization text, owner_org text, license_id text,
  type text, tags text[], groups text[], res_format text[], res_type text[], doc tsvector)
RETURNS TABLE (class text, field text, value text) LANGUAGE sql IMMUTABLE AS $$
  SELECT c, f.field, f.value
  FROM unnest(CASE WHEN state <> 'active' THEN ARRAY['all'] WHEN private THEN ARRAY['all', 'active'] ELSE ARRAY['all', 'active', 'public'] END) c,
  (
    SELECT '' AS field, '' AS value
    UNION ALL SELECT 'organization', organization
    UNION ALL SELECT 'owner_org', owner_org
    UNION ALL SELECT 'license_id', license_id
    UNION ALL SELECT 'type', type
    UNION ALL SELECT 'tags', unnest(tags)
    UNION ALL SELECT 'groups', unnest(groups)
    UNION ALL SELECT 'res_format', unnest(res_format)
    UNION ALL SELECT 'res_type', unnest(res_type)
  ) f
  WHERE f.value IS NOT NULL AND (f.field = '' OR f.value <> '')
  UNION ALL
  SELECT 'public', 'doc', l FROM unnest(tsvector_to_array(doc)) l WHERE state = 'active' AND NOT private
$$;

-- Each trigger adds its statement's net changes in one upsert, in key order (concurrent writers
-- lock the rows they share in the same order); a statement that changes no counted value
-- (re-indexing an unchanged dataset) touches no row.
CREATE FUNCTION package_search_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_value_counts AS c (class, field, value, n)
  SELECT t.class, t.field, t.value, count(*) FROM new_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE FUNCTION package_search_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_value_counts AS c (class, field, value, n)
  SELECT t.class, t.field, t.value, -count(*) FROM old_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

-- Only rows whose counted columns changed take part (a rebuild re-indexes unchanged datasets).
CREATE FUNCTION package_search_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_value_counts AS c (class, field, value, n)
  SELECT class, field, value, sum(d) FROM (
    SELECT t.class, t.field, t.value, 1 AS d FROM new_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
    WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.package_id = r.package_id AND (o.state, o.private, o.organization, o.owner_org, o.license_id, o.type, o.tags, o.groups, o.res_format, o.res_type, o.doc) IS NOT DISTINCT FROM (r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc))
    UNION ALL
    SELECT t.class, t.field, t.value, -1 FROM old_rows r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
    WHERE NOT EXISTS (SELECT 1 FROM new_rows o WHERE o.package_id = r.package_id AND (o.state, o.private, o.organization, o.owner_org, o.license_id, o.type, o.tags, o.groups, o.res_format, o.res_type, o.doc) IS NOT DISTINCT FROM (r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc))
  ) x
  GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE FUNCTION package_search_count_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM package_search_value_counts;
  RETURN NULL;
END $$;

INSERT INTO package_search_value_counts (class, field, value, n)
SELECT t.class, t.field, t.value, count(*) FROM package_search_index r, package_search_value_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t GROUP BY 1, 2, 3;
-- the number of datasets is always there (0 when none)
INSERT INTO package_search_value_counts (class, field, value, n)
SELECT c, '', '', 0 FROM unnest(ARRAY['all', 'active', 'public']) c ON CONFLICT DO NOTHING;

CREATE TRIGGER package_search_count_inserted AFTER INSERT ON package_search_index
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION package_search_count_inserted();
CREATE TRIGGER package_search_count_deleted AFTER DELETE ON package_search_index
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION package_search_count_deleted();
CREATE TRIGGER package_search_count_updated AFTER UPDATE ON package_search_index
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION package_search_count_updated();
CREATE TRIGGER package_search_count_truncated AFTER TRUNCATE ON package_search_index
  FOR EACH STATEMENT EXECUTE FUNCTION package_search_count_truncated();
