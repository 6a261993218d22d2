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

-- The triples of migration 011 keep their function under a new name; the name the triggers call
-- gives them plus, for an active public dataset, one per counted word of its text and value of
-- the class 'public' (not 'doc').
ALTER FUNCTION package_search_value_triples(text, boolean, text, text, text, text, text[], text[], text[], text[], tsvector)
  RENAME TO package_search_field_triples;

CREATE FUNCTION package_search_value_triples(state text, private boolean, organization text, owner_org text, license_id text,
  type text, tags text[], groups text[], res_format text[], res_type text[], doc tsvector)
RETURNS TABLE (class text, field text, value text) LANGUAGE sql STABLE AS $$
  SELECT * FROM package_search_field_triples(state, private, organization, owner_org, license_id, type, tags, groups, res_format, res_type, doc)
  UNION ALL
  SELECT 'public:' || w.word, t.field, t.value
  FROM package_search_counted_words w
  JOIN unnest(tsvector_to_array(doc)) l ON l = w.word
  CROSS JOIN package_search_field_triples(state, private, organization, owner_org, license_id, type, tags, groups, res_format, res_type, NULL) t
  WHERE state = 'active' AND NOT private AND t.class = 'public'
$$;
