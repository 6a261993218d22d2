// Resources of datasets: the only place that writes resource SQL.
import { randomUUID } from 'node:crypto';
import { escapeLike, listSql, type ListSql } from '../db/sql.ts';
import type { Queryable } from '../db/database.ts';

export interface ResourceRow {
  id: string;
  package_id: string;
  url: string;
  format: string | null;
  description: string | null;
  hash: string | null;
  name: string | null;
  resource_type: string | null;
  mimetype: string | null;
  mimetype_inner: string | null;
  size: string | number | null;
  created: string;
  last_modified: string | null;
  metadata_modified: string;
  cache_url: string | null;
  cache_last_updated: string | null;
  url_type: string | null;
  position: number;
  state: string;
  datastore_active: boolean;
  extras: Record<string, unknown> | null;
}

/** Resource columns a caller may write (everything else of a resource dict is an extra key). */
export const RESOURCE_FIELDS = [
  'url',
  'format',
  'description',
  'hash',
  'name',
  'resource_type',
  'mimetype',
  'mimetype_inner',
  'size',
  'created',
  'last_modified',
  'cache_url',
  'cache_last_updated',
  'url_type',
] as const;

const NOW = "(now() at time zone 'utc')";

export async function findResource(db: Queryable, id: string): Promise<ResourceRow | undefined> {
  return (await db.query<ResourceRow>('SELECT * FROM resources WHERE id = $1', [id])).rows[0];
}

/** The resources with these ids, in any state and of any dataset. */
export async function resourcesByIds(db: Queryable, ids: string[]): Promise<ResourceRow[]> {
  if (!ids.length) return [];
  return (await db.query<ResourceRow>('SELECT * FROM resources WHERE id = ANY($1::text[])', [ids])).rows;
}

/** Active resources of the datasets of $1, by position. */
export const resourcesOfSql: ListSql = {
  select: "SELECT * FROM resources WHERE package_id = ANY($1::text[]) AND state = 'active'",
  order: 'package_id, position, created',
};

export async function resourcesOf(db: Queryable, packageIds: string[]): Promise<ResourceRow[]> {
  if (!packageIds.length) return [];
  return (await db.query<ResourceRow>(listSql(resourcesOfSql), [packageIds])).rows;
}

export type ResourceWrite = Partial<
  Pick<ResourceRow, (typeof RESOURCE_FIELDS)[number] | 'extras' | 'position' | 'datastore_active' | 'state'>
>;

function value(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
}

export async function insertResource(db: Queryable, packageId: string, r: ResourceWrite & { id?: string }): Promise<ResourceRow> {
  const row: Record<string, unknown> = { id: r.id ?? randomUUID(), package_id: packageId, url: r.url ?? '' };
  for (const k of [...RESOURCE_FIELDS, 'extras', 'position', 'datastore_active'] as const) {
    if (k !== 'url' && r[k] !== undefined) row[k] = r[k];
  }
  if (row.created === undefined || row.created === null) delete row.created;
  const cols = Object.keys(row);
  const r2 = await db.query<ResourceRow>(
    `INSERT INTO resources (${cols.join(', ')}, metadata_modified${row.created === undefined ? ', created' : ''})
     VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}, ${NOW}${row.created === undefined ? `, ${NOW}` : ''}) RETURNING *`,
    Object.values(row).map(value),
  );
  return r2.rows[0];
}

/**
 * Inserts new resources of one dataset in one statement (ids given). Keys left out take the
 * column defaults, as insertResource's do.
 */
export async function insertResources(db: Queryable, packageId: string, list: (ResourceWrite & { id: string })[]): Promise<void> {
  if (!list.length) return;
  const records = list.map((r) => {
    const rec: Record<string, unknown> = { id: r.id };
    for (const k of [...RESOURCE_FIELDS, 'extras', 'position', 'datastore_active'] as const) if (r[k] !== undefined) rec[k] = r[k];
    return rec;
  });
  await db.query(INSERT_RESOURCES, [packageId, JSON.stringify(records)]);
}

const column = (k: string) => (k === 'url' ? "coalesce(n.url, '')" : k === 'created' ? `coalesce(n.created, ${NOW})` : `n.${k}`);
/** insertResources' statement, named: planned once per connection (no RETURNING: a column added later changes no result type). */
const INSERT_RESOURCES = {
  name: 'svc_resources_insert',
  text: `INSERT INTO resources (id, package_id, ${RESOURCE_FIELDS.join(', ')}, extras, position, datastore_active, metadata_modified)
     SELECT n.id, $1, ${RESOURCE_FIELDS.map(column).join(', ')}, n.extras, coalesce(n.position, 0), coalesce(n.datastore_active, false), ${NOW}
     FROM json_populate_recordset(NULL::resources, $2::json) WITH ORDINALITY AS n ORDER BY n.ordinality`,
};

/** Sets the given columns (state active) and metadata_modified. */
export async function updateResource(db: Queryable, id: string, changes: ResourceWrite): Promise<ResourceRow> {
  const params: unknown[] = [id];
  const sets: string[] = [];
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) continue;
    params.push(value(v));
    sets.push(`${k} = $${params.length}`);
  }
  sets.push(`metadata_modified = ${NOW}`);
  return (await db.query<ResourceRow>(`UPDATE resources SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params)).rows[0];
}

/**
 * updateResource for several resources in one statement: each row gets the columns its changes
 * hold (null included, undefined left out) and metadata_modified.
 */
export async function updateResources(db: Queryable, list: { id: string; changes: ResourceWrite }[]): Promise<void> {
  if (!list.length) return;
  const docs = list.map(({ id, changes }) => ({ ...changes, id }));
  const cols = [...RESOURCE_FIELDS, 'extras', 'position', 'datastore_active', 'state'];
  await db.query(
    `UPDATE resources r SET ${cols.map((c) => `${c} = CASE WHEN d.doc::jsonb ? '${c}' THEN v.${c} ELSE r.${c} END`).join(', ')},
       metadata_modified = ${NOW}
     FROM json_array_elements($1::json) AS d(doc), json_populate_record(NULL::resources, d.doc) AS v
     WHERE r.id = v.id`,
    [JSON.stringify(docs)],
  );
}

export async function markResourceDeleted(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE resources SET state = 'deleted', metadata_modified = ${NOW} WHERE id = $1`, [id]);
}

export async function markResourcesDeleted(db: Queryable, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.query(`UPDATE resources SET state = 'deleted', metadata_modified = ${NOW} WHERE id = ANY($1::text[])`, [ids]);
}

/** Positions 0..n-1 in the given order. */
export async function setPositions(db: Queryable, orderedIds: string[]): Promise<void> {
  if (!orderedIds.length) return;
  await db.query('UPDATE resources r SET position = t.pos - 1 FROM unnest($1::text[]) WITH ORDINALITY AS t(id, pos) WHERE r.id = t.id', [
    orderedIds,
  ]);
}

/** All resources of a dataset, any state (purge removes their files). */
export async function allResourcesOf(db: Queryable, packageId: string): Promise<ResourceRow[]> {
  return (await db.query<ResourceRow>('SELECT * FROM resources WHERE package_id = $1', [packageId])).rows;
}

/**
 * Formats in use containing q (lower case), most used first, counting only resources of datasets
 * matching visible (an SQL condition over alias p whose parameters are already in params).
 */
export async function formatsLike(db: Queryable, q: string, limit: number, visible: string, params: unknown[]): Promise<string[]> {
  params.push(`%${escapeLike(q)}%`, limit);
  const n = params.length;
  const r = await db.query<{ f: string }>(
    `SELECT lower(r.format) AS f FROM resources r JOIN packages p ON p.id = r.package_id
     WHERE r.state = 'active' AND p.state = 'active' AND ${visible} AND r.format ILIKE $${n - 1} AND r.format <> ''
     GROUP BY lower(r.format) ORDER BY count(*) DESC, lower(r.format) LIMIT $${n}`,
    params,
  );
  return r.rows.map((x) => x.f);
}

// --- formats: canonical short names (CKAN's unified_resource_format) and guesses from URLs ---
// [canonical, aliases and mime types (lower case), file extensions]
const FORMATS: [string, string[], string[]][] = [
  ['CSV', ['csv', 'text/csv', 'application/csv', 'comma separated values file'], ['csv']],
  ['TSV', ['tsv', 'text/tab-separated-values', 'tab separated values file'], ['tsv', 'tab']],
  ['XLS', ['xls', 'application/vnd.ms-excel', 'excel', 'excel 97-2003 workbook'], ['xls']],
  ['XLSX', ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'excel workbook'], ['xlsx']],
  ['ODS', ['ods', 'application/vnd.oasis.opendocument.spreadsheet'], ['ods']],
  ['JSON', ['json', 'application/json', 'text/json'], ['json']],
  ['GeoJSON', ['geojson', 'application/geo+json', 'application/vnd.geo+json'], ['geojson']],
  ['JSON-LD', ['json-ld', 'jsonld', 'application/ld+json'], ['jsonld']],
  ['XML', ['xml', 'application/xml', 'text/xml'], ['xml']],
  ['RDF', ['rdf', 'application/rdf+xml', 'rdf/xml'], ['rdf']],
  ['TTL', ['ttl', 'turtle', 'text/turtle'], ['ttl']],
  ['HTML', ['html', 'text/html', 'htm', 'web page'], ['html', 'htm']],
  ['TXT', ['txt', 'text/plain', 'text'], ['txt']],
  ['PDF', ['pdf', 'application/pdf'], ['pdf']],
  ['DOC', ['doc', 'application/msword'], ['doc']],
  ['DOCX', ['docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'], ['docx']],
  ['ODT', ['odt', 'application/vnd.oasis.opendocument.text'], ['odt']],
  ['PPT', ['ppt', 'application/vnd.ms-powerpoint'], ['ppt']],
  ['PPTX', ['pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'], ['pptx']],
  ['ZIP', ['zip', 'application/zip', 'application/x-zip-compressed'], ['zip']],
  ['GZ', ['gz', 'gzip', 'application/gzip', 'application/x-gzip'], ['gz']],
  ['TAR', ['tar', 'application/x-tar'], ['tar']],
  ['7Z', ['7z', 'application/x-7z-compressed'], ['7z']],
  ['KML', ['kml', 'application/vnd.google-earth.kml+xml'], ['kml']],
  ['KMZ', ['kmz', 'application/vnd.google-earth.kmz'], ['kmz']],
  ['SHP', ['shp', 'shapefile', 'esri shapefile'], ['shp']],
  ['GPKG', ['gpkg', 'geopackage', 'application/geopackage+sqlite3'], ['gpkg']],
  ['GML', ['gml', 'application/gml+xml'], ['gml']],
  ['WMS', ['wms', 'web mapping service'], []],
  ['WFS', ['wfs', 'web feature service'], []],
  ['WMTS', ['wmts'], []],
  ['API', ['api'], []],
  ['SPARQL', ['sparql', 'application/sparql-results+xml'], ['sparql']],
  ['PNG', ['png', 'image/png'], ['png']],
  ['JPEG', ['jpeg', 'jpg', 'image/jpeg'], ['jpg', 'jpeg']],
  ['GIF', ['gif', 'image/gif'], ['gif']],
  ['TIFF', ['tiff', 'tif', 'image/tiff', 'geotiff'], ['tif', 'tiff']],
  ['SVG', ['svg', 'image/svg+xml'], ['svg']],
  ['MP3', ['mp3', 'audio/mpeg'], ['mp3']],
  ['MP4', ['mp4', 'video/mp4'], ['mp4']],
  ['Parquet', ['parquet', 'application/vnd.apache.parquet'], ['parquet']],
  ['SQL', ['sql', 'application/sql'], ['sql']],
  ['RSS', ['rss', 'application/rss+xml'], ['rss']],
  ['Atom Feed', ['atom', 'atom feed', 'application/atom+xml'], ['atom']],
  ['NetCDF', ['netcdf', 'nc', 'application/x-netcdf'], ['nc']],
  ['MD', ['md', 'markdown', 'text/markdown'], ['md']],
];

const BY_NAME = new Map<string, string>();
const BY_EXT = new Map<string, string>();
const MIME = new Map<string, string>();
for (const [canonical, aliases, exts] of FORMATS) {
  BY_NAME.set(canonical.toLowerCase(), canonical);
  for (const a of aliases) {
    BY_NAME.set(a, canonical);
    if (a.includes('/') && !MIME.has(canonical)) MIME.set(canonical, a);
  }
  for (const e of exts) BY_EXT.set(e, canonical);
}

/** 'csv', 'text/csv' -> 'CSV'; unknown formats are kept as sent. */
export function canonicalFormat(format: string): string {
  const f = format.trim();
  return BY_NAME.get(f.toLowerCase()) ?? f;
}

function extension(urlOrName: string): string {
  let p = urlOrName;
  try {
    p = new URL(urlOrName).pathname;
  } catch {
    p = urlOrName.split(/[?#]/)[0];
  }
  const base = p.split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** The format a URL or file name suggests ('' when unknown). */
export function guessFormat(urlOrName: string): string {
  return BY_EXT.get(extension(urlOrName)) ?? '';
}

/** A mime type for a file name, from its extension (undefined when unknown). */
export function guessMimetype(name: string): string | undefined {
  const f = BY_EXT.get(extension(name));
  return f ? MIME.get(f) : undefined;
}
