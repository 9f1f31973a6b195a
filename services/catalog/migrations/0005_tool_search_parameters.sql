-- What the search index reads of a tool's parameters, kept beside them: each parameter's name with its
-- description alone ({"name": {"description": "..."}}; a parameter without one stays without one).
-- The rebuild on start used to read this out of `parameters`, whose every value carries a JSON Schema:
-- at 100,000 tools Postgres spent about 5 s decompressing schemas to find the descriptions, half of the
-- restart (issue 30). Generated, so no write path can leave it behind; adding it rewrites the table once.
CREATE FUNCTION tool_search_parameters(parameters jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  SET search_path = pg_catalog
AS $$
  SELECT coalesce(jsonb_object_agg(p.key, CASE WHEN p.value ? 'description'
                                               THEN jsonb_build_object('description', p.value -> 'description')
                                               ELSE '{}'::jsonb END), '{}'::jsonb)
    FROM jsonb_each(CASE WHEN jsonb_typeof(parameters) = 'object' THEN parameters ELSE '{}'::jsonb END) AS p
$$;

ALTER TABLE tools ADD COLUMN search_parameters jsonb GENERATED ALWAYS AS (tool_search_parameters(parameters)) STORED;
