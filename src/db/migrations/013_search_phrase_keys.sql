-- Phrase queries from the index alone. A phrase ("water quality monitoring") matched against the
-- dataset's tsvector must read the positions of every candidate row (the GIN index on doc only
-- knows which rows hold each word), which made a phrase several times slower than a word. Here
-- every two and three lexemes at consecutive positions of doc form one key ("water qualiti",
-- "water qualiti monitor"; lexemes never hold a space), indexed by an expression index and never
-- stored: a phrase of two or three lexemes is exactly one key, a longer one the keys of its
-- three-lexeme runs plus the positional test on doc (src/search/sql-builder.ts).
CREATE FUNCTION package_search_phrase_keys(doc tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  WITH p AS MATERIALIZED (SELECT u.lexeme AS l, pos FROM unnest(doc) u, unnest(u.positions) pos)
  SELECT coalesce(array_to_tsvector(array_agg(DISTINCT k)), ''::tsvector) FROM (
    SELECT a.l || ' ' || b.l AS k FROM p a JOIN p b ON b.pos = a.pos + 1
    UNION ALL
    SELECT a.l || ' ' || b.l || ' ' || c.l FROM p a JOIN p b ON b.pos = a.pos + 1 JOIN p c ON c.pos = a.pos + 2
  ) x
$$;

CREATE INDEX package_search_phrases_idx ON package_search_index USING gin (package_search_phrase_keys(doc));
