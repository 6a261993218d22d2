-- The functions of the search index's expression indexes (migrations 013, 014), of its generated
-- column (018) and of the index statement (017: derived keys, typed values) as PL/pgSQL, each the
-- same query as before (the same results: the indexes stay valid). An SQL function that cannot be
-- inlined is parsed and planned again in every statement that calls it (its plan lives as long as
-- the statement), and a package_create writes one index row a statement: the five took 1.5-2 ms
-- of planning a write. PL/pgSQL keeps a query's plan for the session: the write plans them once
-- per connection.
CREATE OR REPLACE FUNCTION package_search_phrase_keys(doc tsvector) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (WITH p AS MATERIALIZED (SELECT u.lexeme AS l, pos FROM unnest(doc) u, unnest(u.positions) pos)
  SELECT coalesce(array_to_tsvector(array_agg(DISTINCT a.l || ' ' || b.l || ' ' || coalesce(c.l, ''))), ''::tsvector)
  FROM p a JOIN p b ON b.pos = a.pos + 1 LEFT JOIN p c ON c.pos = a.pos + 2);
END $$;

CREATE OR REPLACE FUNCTION package_search_weighted_keys(doc tsvector) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT coalesce(array_to_tsvector(array_agg(lower(w) || ':' || u.lexeme)), ''::tsvector)
  FROM unnest(doc) u, unnest(u.weights) w);
END $$;

CREATE OR REPLACE FUNCTION package_search_extra_keys(extras jsonb) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT coalesce(array_agg(DISTINCT length(x.field) || ':' || x.field || '=' || x.value), '{}') FROM (
    SELECT e.key AS field, e.value #>> '{}' AS value FROM jsonb_each(extras) e
    WHERE jsonb_typeof(e.value) IN ('string', 'number', 'boolean')
    UNION ALL
    SELECT e.key, i #>> '{}' FROM jsonb_each(extras) e,
      jsonb_array_elements(CASE WHEN jsonb_typeof(e.value) = 'array' THEN e.value ELSE '[]' END) i
    WHERE jsonb_typeof(i) IN ('string', 'number', 'boolean')
  ) x
  WHERE length(x.value) <= 200 AND length(x.field) <= 200);
END $$;

CREATE OR REPLACE FUNCTION package_search_derived_keys(custom jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT coalesce(jsonb_object_agg(k, v), '{}'::jsonb) FROM (
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
  WHERE NOT custom ? k);
END $$;

CREATE OR REPLACE FUNCTION package_search_typed_values(extras jsonb)
RETURNS TABLE (field text, num numeric, ts timestamp) LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT x.field, x.num, x.ts FROM (
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
  WHERE x.num IS NOT NULL OR x.ts IS NOT NULL;
END $$;
