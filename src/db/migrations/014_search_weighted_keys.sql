-- Words of one part of the text (title:water, notes:river) from the index alone. The word index
-- on doc knows which datasets hold a word, not in which part (its weight: A title, C notes), so
-- `title:water` read and filtered every dataset with "water" anywhere (26,756 of 100,000 in the
-- bench catalog: 110 ms). Here every lexeme of doc is a key behind each weight it carries
-- ("a:water"), indexed by an expression index and never stored; a field's query is the same
-- tsquery with its lexemes behind the field's weight (src/search/sql-builder.ts). Words and
-- prefixes are answered exactly by the keys; a phrase adds the positional test on the field's part.
CREATE FUNCTION package_search_weighted_keys(doc tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(array_to_tsvector(array_agg(lower(w) || ':' || u.lexeme)), ''::tsvector)
  FROM unnest(doc) u, unnest(u.weights) w
$$;

-- The query of one weight: each quoted lexeme of the tsquery's text behind that weight, and its
-- phrase operators AND (the keys have no positions: a phrase is then tested on the part itself).
-- Inlined and folded to a constant when the query is planned, so that the index above is used.
CREATE FUNCTION package_search_weighted_query(q tsquery, weight text) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT regexp_replace(regexp_replace(q::text, ' <(?:-|[0-9]+)> ', ' & ', 'g'),
    '''((?:[^'']|'''')*)''', '''' || weight || ':\1''', 'g')::tsquery
$$;

CREATE INDEX package_search_weighted_idx ON package_search_index USING gin (package_search_weighted_keys(doc));
