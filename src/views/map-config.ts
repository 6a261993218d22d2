// A map view's configuration: the latitude and longitude columns of a data store table, named by
// the view or found by their names (lat, latitude, y, lon, lng, long, longitude, x and the like),
// and an optional column whose value labels each point.
import type { DatastoreField } from '../datastore/backend.ts';
import { ValidationError } from '../errors.ts';

export interface MapConfig {
  latitude_field: string;
  longitude_field: string;
  label_field?: string;
}

const NUMBER_TYPES = new Set(['int', 'int2', 'int4', 'int8', 'float4', 'float8', 'float', 'numeric']);
/** Column types a coordinate may be read from (text only when it holds a plain decimal number). */
const isCoordinateType = (type: string) => NUMBER_TYPES.has(type) || type === 'text';

/** Names in their simplest form (lower case, letters and digits only), best first. */
const LATITUDE_NAMES = ['latitude', 'lat', 'decimallatitude', 'latdd', 'latwgs84', 'wgs84lat', 'y', 'breite', 'latitud'];
const LONGITUDE_NAMES = ['longitude', 'lon', 'lng', 'long', 'decimallongitude', 'londd', 'lonwgs84', 'wgs84lon', 'x', 'laenge', 'longitud'];

const simple = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The first column (numeric columns before text ones) whose name is one of names, best name first. */
function byName(fields: DatastoreField[], names: string[]): DatastoreField | undefined {
  const usable = fields.filter((f) => f.id !== '_id' && isCoordinateType(f.type));
  const ranked = [...usable.filter((f) => NUMBER_TYPES.has(f.type)), ...usable.filter((f) => !NUMBER_TYPES.has(f.type))];
  for (const n of names) {
    const f = ranked.find((c) => simple(c.id) === n);
    if (f) return f;
  }
  // Prefixed or suffixed names: station_lat, lat_deg, gps_longitude.
  const parts = (f: DatastoreField) => f.id.toLowerCase().split(/[^a-z0-9]+/);
  return ranked.find((c) => parts(c).some((p) => names.slice(0, 4).includes(p)));
}

/** The coordinate columns found by their names, undefined when the table has no such pair. */
function pickCoordinateColumns(fields: DatastoreField[]): { latitude_field: string; longitude_field: string } | undefined {
  const lat = byName(fields, LATITUDE_NAMES);
  const lon = byName(
    fields.filter((f) => f.id !== lat?.id),
    LONGITUDE_NAMES,
  );
  if (!lat || !lon) return undefined;
  return { latitude_field: lat.id, longitude_field: lon.id };
}

/** The view's options checked against the table's columns (errors name the option); columns found by name when not named. */
export function checkMapConfig(
  options: { latitude_field?: string; longitude_field?: string; label_field?: string },
  fields: DatastoreField[],
): MapConfig {
  const byId = new Map(fields.filter((f) => f.id !== '_id').map((f) => [f.id, f]));
  const known = [...byId.keys()].map((k) => JSON.stringify(k)).join(', ');
  let { latitude_field: lat, longitude_field: lon } = options;
  if (!lat && !lon) {
    const picked = pickCoordinateColumns(fields);
    if (!picked)
      throw new ValidationError({
        latitude_field: ['The table has no latitude and longitude columns by their names: name them in latitude_field and longitude_field'],
      });
    ({ latitude_field: lat, longitude_field: lon } = picked);
  }
  const errors: Record<string, string[]> = {};
  const check = (key: string, name: string | undefined) => {
    if (!name) errors[key] = ['Missing value'];
    else if (!byId.has(name)) errors[key] = [`Column "${name}" is not in the table (its columns: ${known})`];
    else if (!isCoordinateType(byId.get(name)!.type)) errors[key] = [`Column "${name}" holds ${byId.get(name)!.type} values, not numbers`];
  };
  check('latitude_field', lat);
  check('longitude_field', lon);
  if (!errors.longitude_field && lat === lon) errors.longitude_field = ['Must be another column than latitude_field'];
  const label = options.label_field;
  if (label !== undefined && !byId.has(label)) errors.label_field = [`Column "${label}" is not in the table (its columns: ${known})`];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { latitude_field: lat!, longitude_field: lon!, ...(label !== undefined ? { label_field: label } : {}) };
}
