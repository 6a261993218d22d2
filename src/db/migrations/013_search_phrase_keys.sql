-- Phrase queries from the index alone. A phrase ("water quality monitoring") matched against the
-- dataset's tsvector must read the positions of every candidate row (the GIN index on doc only
-- knows which rows hold each word), which made a phrase several times slower than a word. Here
-- every two lexemes at consecutive positions of doc form one key with the lexeme that follows
-- them, when one does ("water qualiti monitor"), or with nothing ("water qualiti "); lexemes never
-- hold a space. The keys are indexed by an expression index and never stored: a phrase of three
-- lexemes is exactly one key, one of two the keys it begins (a prefix query), a longer one the
-- keys of its three-lexeme runs plus the positional test on doc (src/search/sql-builder.ts).
CREATE FUNCTION package_search_phrase_keys(doc tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  WITH p AS MATERIALIZED (SELECT u.lexeme AS l, pos FROM unnest(doc) u, unnest(u.positions) pos)
  SELECT coalesce(array_to_tsvector(array_agg(DISTINCT a.l || ' ' || b.l || ' ' || coalesce(c.l, ''))), ''::tsvector)
  FROM p a JOIN p b ON b.pos = a.pos + 1 LEFT JOIN p c ON c.pos = a.pos + 2
$$;

CREATE INDEX package_search_phrases_idx ON package_search_index USING gin (package_search_phrase_keys(doc));
