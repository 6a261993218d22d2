// A map's points, read by PostgreSQL through the data store's read path (the read-only role, a
// row limit): up to MAX_POINTS rows come as they are; a larger table comes as at most
// GRID × GRID cells, each the mean position of its rows and how many they are.
import type { DatastoreBackend, DatastoreField } from '../datastore/backend.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import type { Bbox } from '../search/spatial-geojson.ts';
import type { MapConfig } from './map-config.ts';

export const MAX_POINTS = 5000;
const GRID = 70;

/** [longitude, latitude, rows at this place, label or null] */
export type MapPoint = [number, number, number, string | null];

export interface MapStats {
  /** Rows whose coordinates are degrees (latitude -90..90, longitude -180..180). */
  placed: number;
  /** Rows with both coordinates set but out of those ranges (or not numbers). */
  misplaced: number;
  extent: Bbox | null;
}

export interface MapPoints extends MapStats {
  kind: 'points';
  config: MapConfig;
  points: MapPoint[];
  /** The points are grid cells (more rows than MAX_POINTS). */
  aggregated: boolean;
}

/** A column's value as float8 (text: only when it is a plain decimal number). */
function coordinate(field: DatastoreField | undefined, name: string): string {
  const c = `d.${qi(name)}`;
  if (field?.type !== 'text') return `${c}::float8`;
  return `(CASE WHEN ${c} ~ '^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)\\s*$' THEN ${c}::float8 END)`;
}

function expressions(config: MapConfig, fields: DatastoreField[]) {
  const field = (n: string) => fields.find((f) => f.id === n);
  const lat = coordinate(field(config.latitude_field), config.latitude_field);
  const lon = coordinate(field(config.longitude_field), config.longitude_field);
  return { lat, lon, placed: `${lat} BETWEEN -90 AND 90 AND ${lon} BETWEEN -180 AND 180` };
}

/** How many rows the map can place, how many it cannot, and where they are (one scan). */
export async function mapStats(backend: DatastoreBackend, table: string, config: MapConfig, fields: DatastoreField[]): Promise<MapStats> {
  const { lat, lon, placed } = expressions(config, fields);
  const set = `d.${qi(config.latitude_field)} IS NOT NULL AND d.${qi(config.longitude_field)} IS NOT NULL`;
  const r = await backend.readQuery(
    `SELECT count(*) FILTER (WHERE ${placed})::int AS "placed",
       count(*) FILTER (WHERE ${set} AND NOT coalesce(${placed}, false))::int AS "misplaced",
       min(${lon}) FILTER (WHERE ${placed}) AS "minx", min(${lat}) FILTER (WHERE ${placed}) AS "miny",
       max(${lon}) FILTER (WHERE ${placed}) AS "maxx", max(${lat}) FILTER (WHERE ${placed}) AS "maxy"
     FROM ${qi(table)} AS d`,
    { rowLimit: 1 },
  );
  const row = r.records[0] ?? {};
  const placedRows = Number(row.placed ?? 0);
  return {
    placed: placedRows,
    misplaced: Number(row.misplaced ?? 0),
    extent: placedRows ? { minx: Number(row.minx), miny: Number(row.miny), maxx: Number(row.maxx), maxy: Number(row.maxy) } : null,
  };
}

/**
 * The columns' values must be degrees: a table where no row, or fewer than half the rows with both
 * set, has a latitude within -90..90 and a longitude within -180..180 is refused (errors name the
 * latitude_field option).
 */
export function checkDegrees(stats: MapStats, config: MapConfig): void {
  if (stats.placed === 0 && stats.misplaced === 0) return;
  if (stats.placed < stats.misplaced)
    throw new ValidationError({
      latitude_field: [
        `${stats.misplaced} of ${stats.placed + stats.misplaced} rows have no latitude in -90..90 and longitude in -180..180 in "${config.latitude_field}" and "${config.longitude_field}": these are not degrees`,
      ],
    });
}

/** The points of the map (config checked against the table before: checkMapConfig). */
export async function mapPoints(backend: DatastoreBackend, table: string, config: MapConfig, fields: DatastoreField[]): Promise<MapPoints> {
  const stats = await mapStats(backend, table, config, fields);
  const { lat, lon, placed } = expressions(config, fields);
  const t = `${qi(table)} AS d`;
  const label = config.label_field === undefined ? 'NULL' : `left(d.${qi(config.label_field)}::text, 200)`;
  const base = { kind: 'points' as const, config, ...stats };
  if (!stats.placed || !stats.extent) return { ...base, points: [], aggregated: false };
  if (stats.placed <= MAX_POINTS) {
    const r = await backend.readQuery(`SELECT ${lon} AS "x", ${lat} AS "y", ${label} AS "l" FROM ${t} WHERE ${placed} ORDER BY d."_id"`, {
      rowLimit: MAX_POINTS,
    });
    return {
      ...base,
      points: r.records.map((p) => [Number(p.x), Number(p.y), 1, p.l === null || p.l === undefined ? null : String(p.l)]),
      aggregated: false,
    };
  }
  const e = stats.extent;
  // The upper bounds a little beyond the largest values, so that those fall in the last cell.
  const params = [e.minx, e.maxx + 1e-9 + (e.maxx - e.minx) * 1e-9, e.miny, e.maxy + 1e-9 + (e.maxy - e.miny) * 1e-9];
  const r = await backend.readQuery(
    `SELECT avg(${lon}) AS "x", avg(${lat}) AS "y", count(*)::int AS "n" FROM ${t} WHERE ${placed}
     GROUP BY width_bucket(${lon}, $1::float8, $2::float8, ${GRID}), width_bucket(${lat}, $3::float8, $4::float8, ${GRID})
     ORDER BY 3 DESC`,
    { params, rowLimit: GRID * GRID },
  );
  return { ...base, points: r.records.map((p) => [Number(p.x), Number(p.y), Number(p.n), null]), aggregated: true };
}
