// GeoJSON geometries as ckanext-spatial reads a dataset's `spatial` field: one geometry (or a
// Feature holding one) in longitude/latitude, checked position by position, and its bounding box.

/** A bounding box in degrees: west, south, east, north. */
export interface Bbox {
  minx: number;
  miny: number;
  maxx: number;
  maxy: number;
}

const GEOMETRY_TYPES = ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection'];

/** Why a value is not a geometry (thrown while walking it; the message is the user's). */
export class GeometryError extends Error {}

function position(value: unknown, where: string, box: Bbox): void {
  if (!Array.isArray(value) || value.length < 2 || value.length > 3 || !value.every((n) => typeof n === 'number' && Number.isFinite(n)))
    throw new GeometryError(`${where} is not a position: it must be [longitude, latitude] in numbers`);
  const [x, y] = value as number[];
  if (x < -180 || x > 180) throw new GeometryError(`${where} has the longitude ${x}, outside -180 to 180`);
  if (y < -90 || y > 90) throw new GeometryError(`${where} has the latitude ${y}, outside -90 to 90`);
  box.minx = Math.min(box.minx, x);
  box.maxx = Math.max(box.maxx, x);
  box.miny = Math.min(box.miny, y);
  box.maxy = Math.max(box.maxy, y);
}

function positions(value: unknown, where: string, box: Bbox, min: number): unknown[] {
  if (!Array.isArray(value) || value.length < min)
    throw new GeometryError(`${where} must be a list of at least ${min} position${min === 1 ? '' : 's'}`);
  value.forEach((p, i) => position(p, `${where}[${i}]`, box));
  return value;
}

function ring(value: unknown, where: string, box: Bbox): void {
  const ps = positions(value, where, box, 4) as number[][];
  const [first, last] = [ps[0], ps[ps.length - 1]];
  if (first[0] !== last[0] || first[1] !== last[1]) throw new GeometryError(`${where} is not closed: its last position must be its first`);
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value) || !value.length) throw new GeometryError(`${where} must be a non-empty list`);
  return value;
}

function geometry(g: unknown, where: string, box: Bbox, depth: number): void {
  if (!g || typeof g !== 'object' || Array.isArray(g)) throw new GeometryError(`${where} is not a GeoJSON object`);
  const { type, coordinates, geometries } = g as Record<string, unknown>;
  if (typeof type !== 'string' || !GEOMETRY_TYPES.includes(type))
    throw new GeometryError(`${where} has the type ${JSON.stringify(type ?? null)}; a geometry is one of ${GEOMETRY_TYPES.join(', ')}`);
  const at = `${where}.coordinates`;
  switch (type) {
    case 'Point':
      position(coordinates, at, box);
      return;
    case 'MultiPoint':
      positions(coordinates, at, box, 1);
      return;
    case 'LineString':
      positions(coordinates, at, box, 2);
      return;
    case 'MultiLineString':
      list(coordinates, at).forEach((l, i) => positions(l, `${at}[${i}]`, box, 2));
      return;
    case 'Polygon':
      list(coordinates, at).forEach((r, i) => ring(r, `${at}[${i}]`, box));
      return;
    case 'MultiPolygon':
      list(coordinates, at).forEach((p, i) => list(p, `${at}[${i}]`).forEach((r, j) => ring(r, `${at}[${i}][${j}]`, box)));
      return;
    default:
      if (depth > 4) throw new GeometryError(`${where} nests geometry collections too deeply`);
      list(geometries, `${where}.geometries`).forEach((c, i) => geometry(c, `${where}.geometries[${i}]`, box, depth + 1));
  }
}

/** The parsed value of a `spatial` field: a JSON text or an object. */
export function parseGeometryValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch (e) {
    throw new GeometryError(`Not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * The bounding box of a GeoJSON geometry (a Feature's geometry counts as one); a GeometryError
 * saying what is wrong and where when it is not one.
 */
export function geometryBbox(value: unknown): Bbox {
  let g = parseGeometryValue(value);
  if (g && typeof g === 'object' && (g as Record<string, unknown>).type === 'Feature') g = (g as Record<string, unknown>).geometry;
  const box = { minx: Infinity, miny: Infinity, maxx: -Infinity, maxy: -Infinity };
  geometry(g, 'the geometry', box, 0);
  return box;
}
