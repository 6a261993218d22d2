// A GeoJSON file's features for a map: each geometry checked (features with none or a bad one are
// counted, not shown), at most MAX_FEATURES of them, with a label from a name-like property.
import { type Bbox, GeometryError, geometryBbox } from '../search/spatial-geojson.ts';

export const MAX_FEATURES = 5000;
const LABEL_KEYS = ['name', 'title', 'label', 'NAME', 'Name', 'id'];

export interface MapFeatures {
  kind: 'geojson';
  features: { geometry: unknown; label: string | null }[];
  /** Features in the file. */
  total: number;
  /** Features without a geometry or with one that is not valid GeoJSON (left out). */
  invalid: number;
  /** Valid features beyond MAX_FEATURES (left out). */
  leftOut: number;
  extent: Bbox | null;
}

function labelOf(properties: unknown): string | null {
  if (!properties || typeof properties !== 'object') return null;
  const p = properties as Record<string, unknown>;
  const key = LABEL_KEYS.find((k) => typeof p[k] === 'string' || typeof p[k] === 'number');
  return key === undefined ? null : String(p[key]).slice(0, 200);
}

/** The features of a GeoJSON text (a FeatureCollection, a Feature or a geometry); a GeometryError when it is none. */
export function geojsonFeatures(text: string): MapFeatures {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new GeometryError(`The file is not valid JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object') throw new GeometryError('The file holds no GeoJSON object');
  const d = doc as Record<string, unknown>;
  const items: { geometry: unknown; properties?: unknown }[] =
    d.type === 'FeatureCollection' && Array.isArray(d.features)
      ? (d.features as { geometry: unknown; properties?: unknown }[])
      : d.type === 'Feature'
        ? [d as { geometry: unknown }]
        : [{ geometry: d }];
  const out: MapFeatures = { kind: 'geojson', features: [], total: items.length, invalid: 0, leftOut: 0, extent: null };
  for (const item of items) {
    let box: Bbox;
    try {
      box = geometryBbox(item?.geometry ?? null);
    } catch (e) {
      if (!(e instanceof GeometryError)) throw e;
      out.invalid++;
      continue;
    }
    const x = out.extent;
    out.extent = x
      ? {
          minx: Math.min(x.minx, box.minx),
          miny: Math.min(x.miny, box.miny),
          maxx: Math.max(x.maxx, box.maxx),
          maxy: Math.max(x.maxy, box.maxy),
        }
      : box;
    if (out.features.length >= MAX_FEATURES) out.leftOut++;
    else out.features.push({ geometry: item.geometry, label: labelOf(item.properties) });
  }
  if (out.invalid === out.total && out.total > 0) throw new GeometryError('No feature of the file has a valid GeoJSON geometry');
  return out;
}
