// The rows of the search index (package_search_index) and the typed values of custom fields
// (package_search_field_values), built by one statement from the catalog tables.
import { oneIdSql } from '../db/sql.ts';
import { TS_CONFIG, withWordParts } from './sql-builder.ts';

const INDEX_COLUMNS = [
  'package_id',
  'name',
  'title',
  'state',
  'private',
  'type',
  'owner_org',
  'organization',
  'license_id',
  'version',
  'url',
  'author',
  'maintainer',
  'creator_user_id',
  'tags',
  'groups',
  'res_format',
  'res_url',
  'res_type',
  'res_name',
  'res_description',
  'extras',
  'labels',
  'num_resources',
  'num_tags',
  'metadata_created',
  'metadata_modified',
  'extent',
  'doc',
];

/**
 * The permission labels of a dataset (alias p) in SQL, as packagePermissionLabels (auth/authz.ts)
 * gives them, so that the index row is written without reading the dataset first (one round trip
 * less a write); test/search-index-labels.test.ts holds the two to the same answers. $3: whether
 * collaborator labels are indexed.
 */
const LABELS_SQL = `CASE WHEN p.state = 'active' AND NOT p.private THEN ARRAY['public']
    WHEN p.state = 'draft' THEN ARRAY['creator-' || coalesce(p.creator_user_id, 'null')]
    ELSE ARRAY[CASE WHEN coalesce(p.owner_org, '') <> '' THEN 'member-' || p.owner_org ELSE 'creator-' || coalesce(p.creator_user_id, 'null') END]
      || CASE WHEN $3::boolean THEN ARRAY['collaborator-' || p.id] ELSE '{}'::text[] END END`;

// One statement builds the index rows of many datasets from the catalog tables ($1 ids; $2 true
// when deleted datasets leave the index, svc.search.remove_deleted_packages; $3 see LABELS_SQL),
// and their typed values (dates and numbers of the extras, migration 017). The extras hold the
// custom fields, the package extras and the keys derived from the custom fields' lists of objects
// and multilingual objects (package_search_derived_keys). It answers the ids it wrote no row for
// (no such dataset, or a deleted one with $2): the caller removes their rows, if any.
export const INDEX_SQL = `
WITH gone AS (DELETE FROM package_search_field_values WHERE package_id = ANY($1::text[])),
rows AS (INSERT INTO package_search_index (${INDEX_COLUMNS.join(', ')})
SELECT p.id, p.name, coalesce(nullif(p.title, ''), p.name), p.state, p.private, p.type, p.owner_org, o.name, p.license_id, p.version,
  p.url, p.author, p.maintainer, p.creator_user_id, coalesce(t.names, '{}'), coalesce(g.names, '{}'), coalesce(r.formats, '{}'),
  coalesce(r.urls, '{}'), coalesce(r.types, '{}'), r.names, r.descriptions,
  package_search_derived_keys(coalesce(p.custom_fields, '{}'::jsonb)) || coalesce(p.custom_fields, '{}'::jsonb) || coalesce(e.extras, '{}'::jsonb),
  ${LABELS_SQL},
  coalesce(r.n, 0), coalesce(cardinality(t.names), 0), p.metadata_created, p.metadata_modified,
  (SELECT x.extent FROM package_spatial_extents x WHERE x.package_id = p.id),
  setweight(to_tsvector('${TS_CONFIG}', ${withWordParts("coalesce(p.title, '')")}), 'A')
  || setweight(to_tsvector('${TS_CONFIG}', concat_ws(' ', p.name, array_to_string(t.names, ' '), g.text, o.name, o.title)), 'B')
  || setweight(to_tsvector('${TS_CONFIG}', ${withWordParts("coalesce(p.notes, '')")}), 'C')
  || setweight(to_tsvector('${TS_CONFIG}', concat_ws(' ', p.author, p.maintainer, p.url, p.version,
    ${withWordParts("concat_ws(' ', r.names, r.descriptions, e.text)")})), 'D')
  || setweight(jsonb_to_tsvector('${TS_CONFIG}', coalesce(p.custom_fields, '{}'::jsonb), '["string", "numeric"]'), 'D')
FROM packages p
LEFT JOIN groups o ON o.id = p.owner_org
LEFT JOIN LATERAL (
  SELECT array_agg(tg.name ORDER BY tg.name) AS names FROM package_tags pt JOIN tags tg ON tg.id = pt.tag_id
  WHERE pt.package_id = p.id AND pt.state = 'active' AND tg.vocabulary_id IS NULL) t ON true
LEFT JOIN LATERAL (
  SELECT array_agg(gr.name ORDER BY gr.name) AS names, string_agg(concat_ws(' ', gr.name, gr.title), ' ') AS text
  FROM members m JOIN groups gr ON gr.id = m.group_id
  WHERE m.table_name = 'package' AND m.table_id = p.id AND m.state = 'active' AND NOT gr.is_organization AND gr.state = 'active') g ON true
LEFT JOIN LATERAL (
  SELECT count(*) AS n, array_agg(DISTINCT rs.format) FILTER (WHERE coalesce(rs.format, '') <> '') AS formats,
    array_agg(rs.url ORDER BY rs.position) FILTER (WHERE rs.url <> '') AS urls,
    array_agg(DISTINCT rs.resource_type) FILTER (WHERE coalesce(rs.resource_type, '') <> '') AS types,
    string_agg(rs.name, ' ' ORDER BY rs.position) AS names, string_agg(rs.description, ' ' ORDER BY rs.position) AS descriptions
  FROM resources rs WHERE rs.package_id = p.id AND rs.state = 'active') r ON true
LEFT JOIN LATERAL (
  SELECT jsonb_object_agg(pe.key, pe.value) AS extras, string_agg(pe.value, ' ') AS text
  FROM package_extras pe WHERE pe.package_id = p.id) e ON true
WHERE p.id = ANY($1::text[]) AND NOT (p.state = 'deleted' AND $2::boolean)
ON CONFLICT (package_id) DO UPDATE SET ${INDEX_COLUMNS.slice(1)
  .map((c) => `${c} = EXCLUDED.${c}`)
  .join(', ')}
RETURNING package_id, extras, state, private),
typed AS (INSERT INTO package_search_field_values (package_id, field, num, ts, state, private, least_ts, least_num)
SELECT r.package_id, t.field, t.num, t.ts, r.state, r.private,
  t.ts IS NOT NULL AND row_number() OVER (PARTITION BY r.package_id, t.field ORDER BY t.ts NULLS LAST) = 1,
  t.num IS NOT NULL AND row_number() OVER (PARTITION BY r.package_id, t.field ORDER BY t.num NULLS LAST) = 1
FROM rows r, package_search_typed_values(r.extras) t)
SELECT ARRAY(SELECT unnest($1::text[]) EXCEPT SELECT package_id FROM rows) AS unwritten`;

/**
 * INDEX_SQL for one dataset (every create and update of one; $1 its id): planned once per
 * connection, not at every write (1.7-1.9 ms; oneIdSql).
 */
export const INDEX_ONE_SQL = oneIdSql(INDEX_SQL);
