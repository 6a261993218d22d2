// The extent of a geometry written as GeoJSON (a geometry, Feature or FeatureCollection, as text
// or parsed) or as WKT text: what schema.org's GeoShape box and GeoCoordinates need.

export interface Extent {
  west: number;
  south: number;
  east: number;
  north: number;
}

function addPositions(value: unknown, out: [number, number][]): void {
  if (!Array.isArray(value)) return;
  if (value.length >= 2 && typeof value[0] === 'number' && typeof value[1] === 'number') {
    out.push([value[0], value[1]]);
    return;
  }
  for (const v of value) addPositions(v, out);
}

function geoJsonPositions(g: any, out: [number, number][]): void {
  if (!g || typeof g !== 'object') return;
  if (g.type === 'FeatureCollection' && Array.isArray(g.features)) for (const f of g.features) geoJsonPositions(f, out);
  else if (g.type === 'Feature') geoJsonPositions(g.geometry, out);
  else if (g.type === 'GeometryCollection' && Array.isArray(g.geometries)) for (const x of g.geometries) geoJsonPositions(x, out);
  else addPositions(g.coordinates, out);
}

/** Positions (x y [z [m]], comma-separated) of a WKT text such as `POLYGON((1 2, 3 4, ...))` or `POINT(1 2)`. */
function wktPositions(text: string, out: [number, number][]): void {
  if (!/^\s*(SRID=\d+;\s*)?[A-Z]+(\s+(Z|M|ZM))?\s*\(/i.test(text)) return;
  const body = text.slice(text.indexOf('('));
  for (const tuple of body.split(/[(),]/)) {
    const nums = tuple.trim().split(/\s+/).filter(Boolean).map(Number);
    if (nums.length >= 2 && nums.every(Number.isFinite)) out.push([nums[0], nums[1]]);
  }
}

/** The longitude/latitude extent of a geometry, or undefined when it holds no valid position. */
export function geometryExtent(value: unknown): Extent | undefined {
  const positions: [number, number][] = [];
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.startsWith('{')) {
      try {
        geoJsonPositions(JSON.parse(s), positions);
      } catch {
        return undefined;
      }
    } else wktPositions(s, positions);
  } else geoJsonPositions(value, positions);
  let extent: Extent | undefined;
  for (const [lon, lat] of positions) {
    if (Math.abs(lon) > 180 || Math.abs(lat) > 90) continue;
    if (!extent) extent = { west: lon, south: lat, east: lon, north: lat };
    else {
      extent.west = Math.min(extent.west, lon);
      extent.east = Math.max(extent.east, lon);
      extent.south = Math.min(extent.south, lat);
      extent.north = Math.max(extent.north, lat);
    }
  }
  return extent;
}
