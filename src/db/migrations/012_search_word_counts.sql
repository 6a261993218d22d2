-- Facet counts of frequent words. A one-word query that matches most of the catalog ("data")
-- with facets would otherwise read every matching index row to count its values. For the words
-- in package_search_counted_words, package_search_value_counts also holds, in the class
-- 'public:<lexeme>', the counts of the class 'public' restricted to the datasets that have the
-- word (every field but 'doc'). The same statement triggers keep them exact. A word is added by
-- src/search/value-counts.ts (countWord) the first time a faceted query of it matches at least
-- svc.search.counted_word_min datasets: under a SHARE lock on the index (no write in flight), it
-- is listed and its counts are taken from one scan.
CREATE TABLE package_search_counted_words (
  word text PRIMARY KEY
);

-- The triples of package_search_value_triples plus, for an active public dataset, one per counted
-- word of its text and value of the class 'public' (not 'doc').
CREATE FUNCTION package_search_count_triples(state text, private boolean, organization text, owner_org text, license_id text,
  type text, tags text[], groups text[], res_format text[], res_type text[], doc tsvector)
RETURNS TABLE (class text, field text, value text) LANGUAGE sql STABLE AS $$
  SELECT * FROM package_search_value_triples(state, private, organization, owner_org, license_id, type, tags, groups, res_format, res_type, doc)
  UNION ALL
  SELECT 'public:' || w.word, t.field, t.value
  FROM package_search_counted_words w
  JOIN unnest(tsvector_to_array(doc)) l ON l = w.word
  CROSS JOIN package_search_value_triples(state, private, organization, owner_org, license_id, type, tags, groups, res_format, res_type, NULL) t
  WHERE state = 'active' AND NOT private AND t.class = 'public'
$$;

CREATE OR REPLACE FUNCTION package_search_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_value_counts AS c (class, field, value, n)
  SELECT t.class, t.field, t.value, count(*) FROM new_rows r, package_search_count_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_value_counts AS c (class, field, value, n)
  SELECT t.class, t.field, t.value, -count(*) FROM old_rows r, package_search_count_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION package_search_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO package_search_value_counts AS c (class, field, value, n)
  SELECT class, field, value, sum(d) FROM (
    SELECT t.class, t.field, t.value, 1 AS d FROM new_rows r, package_search_count_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
    WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.package_id = r.package_id AND (o.state, o.private, o.organization, o.owner_org, o.license_id, o.type, o.tags, o.groups, o.res_format, o.res_type, o.doc) IS NOT DISTINCT FROM (r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc))
    UNION ALL
    SELECT t.class, t.field, t.value, -1 FROM old_rows r, package_search_count_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc) t
    WHERE NOT EXISTS (SELECT 1 FROM new_rows o WHERE o.package_id = r.package_id AND (o.state, o.private, o.organization, o.owner_org, o.license_id, o.type, o.tags, o.groups, o.res_format, o.res_type, o.doc) IS NOT DISTINCT FROM (r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, r.doc))
  ) x
  GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;
