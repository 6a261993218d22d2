// GeoJSON dumps: a FeatureCollection of the rows of a table with coordinates, one Feature per row
// (its other columns as properties). Where the points are is found before the answer starts:
// latitude/longitude columns by name and value range, or a column of GeoJSON geometries.
import { quoteIdent as qi } from '../db/sql.ts';
import type { DatastoreBackend, DatastoreField, DumpChunk } from './backend.ts';

/** The table has nothing a map can place; the message says what was looked for. */
export class NoCoordinatesError extends Error {}

export type GeoPlan = { kind: 'point'; lat: string; lon: string } | { kind: 'geometry'; column: string };

const NUMERIC = new Set(['int', 'int2', 'int4', 'int8', 'float4', 'float8', 'numeric']);
const LAT_WORDS = new Set(['lat', 'latitude', 'breite', 'breitengrad']);
const LON_WORDS = new Set(['lon', 'lng', 'long', 'longitude', 'laenge', 'längengrad']);
const GEOMETRY_NAMES = new Set(['geometry', 'geom', 'the_geom', 'geojson', 'shape', 'location', 'geo']);
const GEOMETRY_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);

/** A column name's last word (snake, kebab, space or camel case) and what comes before it. */
function lastWord(name: string): { word: string; prefix: string } {
  const m = /^(.*?)[_\s-]*([A-Za-zÀ-ÿ]+)$/.exec(name.replace(/([a-z])([A-Z])/g, '$1_$2'));
  return m ? { word: m[2].toLowerCase(), prefix: m[1].toLowerCase() } : { word: name.toLowerCase(), prefix: '' };
}

/** Latitude/longitude column pairs by name (same prefix first: start_lat with start_lon). */
export function coordinatePairs(fields: DatastoreField[]): { lat: string; lon: string }[] {
  const numeric = fields.filter((f) => NUMERIC.has(f.type) && f.id !== '_id');
  const lats = numeric.filter((f) => LAT_WORDS.has(lastWord(f.id).word));
  const lons = numeric.filter((f) => LON_WORDS.has(lastWord(f.id).word));
  const pairs: { lat: string; lon: string }[] = [];
  for (const lat of lats) {
    const lon = lons.find((l) => lastWord(l.id).prefix === lastWord(lat.id).prefix);
    if (lon) pairs.push({ lat: lat.id, lon: lon.id });
  }
  if (!pairs.length && lats.length === 1 && lons.length === 1) pairs.push({ lat: lats[0].id, lon: lons[0].id });
  return pairs;
}

/** Whether a value is a GeoJSON geometry object. */
function isGeometry(v: unknown): boolean {
  if (typeof v === 'string') {
    try {
      return isGeometry(JSON.parse(v));
    } catch {
      return false;
    }
  }
  if (!v || typeof v !== 'object') return false;
  const g = v as { type?: unknown; coordinates?: unknown; geometries?: unknown };
  return typeof g.type === 'string' && GEOMETRY_TYPES.has(g.type) && (Array.isArray(g.coordinates) || Array.isArray(g.geometries));
}

/**
 * Where the dump's rows are on a map: the first coordinate pair whose values are all latitudes and
 * longitudes, else the first column whose first value is a GeoJSON geometry. Throws
 * NoCoordinatesError naming what was looked for.
 */
export async function geoPlan(backend: DatastoreBackend, table: string, fields: DatastoreField[]): Promise<GeoPlan> {
  const t = qi(table);
  const outOfRange: string[] = [];
  for (const { lat, lon } of coordinatePairs(fields)) {
    const r = await backend.readQuery(
      `SELECT count(*) FILTER (WHERE ${qi(lat)} NOT BETWEEN -90 AND 90 OR ${qi(lon)} NOT BETWEEN -180 AND 180)::int AS bad FROM ${t}`,
      { rowLimit: 1 },
    );
    if (Number(r.records[0]?.bad ?? 0) === 0) return { kind: 'point', lat, lon };
    outOfRange.push(`${lat}/${lon}`);
  }
  const candidates = fields.filter((f) => f.type === 'json' || (f.type === 'text' && GEOMETRY_NAMES.has(f.id.toLowerCase())));
  candidates.sort((a, b) => Number(GEOMETRY_NAMES.has(b.id.toLowerCase())) - Number(GEOMETRY_NAMES.has(a.id.toLowerCase())));
  for (const f of candidates.slice(0, 5)) {
    const r = await backend.readQuery(`SELECT ${qi(f.id)} AS g FROM ${t} WHERE ${qi(f.id)} IS NOT NULL LIMIT 1`, { rowLimit: 1 });
    if (r.records.length && isGeometry(r.records[0].g)) return { kind: 'geometry', column: f.id };
  }
  throw new NoCoordinatesError(
    outOfRange.length
      ? `The columns ${outOfRange.join(', ')} hold values outside latitude -90..90 / longitude -180..180, and no column holds GeoJSON geometries.`
      : 'The table has no coordinates: no numeric latitude and longitude columns (named lat/latitude and lon/lng/longitude) and no column of GeoJSON geometries.',
  );
}

function geometryOf(plan: GeoPlan, row: unknown[], index: Map<string, number>): unknown {
  if (plan.kind === 'geometry') {
    const v = row[index.get(plan.column)!];
    if (v === null || v === undefined) return null;
    const g = typeof v === 'string' ? safeParse(v) : v;
    return isGeometry(g) ? g : null;
  }
  const [la, lo] = [row[index.get(plan.lat)!], row[index.get(plan.lon)!]];
  if (la === null || lo === null || la === undefined || lo === undefined) return null;
  const [lat, lon] = [Number(la), Number(lo)];
  return Number.isFinite(lat) && Number.isFinite(lon) && Math.abs(lat) <= 90 && Math.abs(lon) <= 180
    ? { type: 'Point', coordinates: [lon, lat] }
    : null;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

/** The dump's chunks as a GeoJSON FeatureCollection (RFC 7946: [longitude, latitude]); rows without a place have a null geometry. */
export async function* writeGeoJson(plan: GeoPlan, chunks: AsyncIterable<DumpChunk>): AsyncGenerator<string> {
  yield '{"type":"FeatureCollection","features":[';
  let first = true;
  for await (const c of chunks) {
    const index = new Map(c.fields.map((f, i) => [f.id, i]));
    const idAt = index.get('_id');
    const shown = c.fields
      .map((f, i) => [f.id, i] as const)
      .filter(([id]) => id !== '_id' && !(plan.kind === 'geometry' && id === plan.column));
    let out = '';
    for (const row of c.rows) {
      const properties: Record<string, unknown> = {};
      for (const [id, i] of shown) properties[id] = row[i] ?? null;
      const feature: Record<string, unknown> = { type: 'Feature' };
      if (idAt !== undefined) feature.id = row[idAt];
      feature.geometry = geometryOf(plan, row, index);
      feature.properties = properties;
      out += (first ? '\n' : ',\n') + JSON.stringify(feature);
      first = false;
    }
    if (out) yield out;
  }
  yield '\n]}\n';
}
