// Spatial search as ckanext-spatial offers it: package_search's `ext_bbox=minx,miny,maxx,maxy`
// finds the datasets whose `spatial` extent intersects the box, and orders them by how well they
// overlap it (2 × the intersection's area / (the box's area + the extent's area), ckanext-spatial's
// ranking) when sorted by `spatial` or, with no words to score, by score. Extents are kept in
// package_spatial_extents (migration 019) with every dataset write; a bad geometry refuses the write.
// The search index row holds its dataset's extent too (migration 022, read from there when the row
// is written): the search tests and orders the rows themselves.
import type { Services } from '../context.ts';
import { SearchQueryError, ValidationError } from '../errors.ts';
import { boxText, setSpatialExtent, spatialValueOf } from '../model/spatial-extents.ts';
import { onPackageChange } from '../model/packages.ts';
import type { SortKey } from './engine.ts';
import { type Bbox, GeometryError, geometryBbox } from './spatial-geojson.ts';

/** The boxes of an ext_bbox (two when it crosses the antimeridian) and its area. */
export interface SpatialFilter {
  boxes: Bbox[];
  area: number;
}

/** Binds a parameter and returns its placeholder (the search's SqlBuilder). */
interface ParamBinder {
  param(v: unknown): string;
}

const bad = (message: string) => new ValidationError({ ext_bbox: [message] }, `Invalid ext_bbox: ${message}`);

/**
 * ext_bbox as ckanext-spatial reads it ("minx,miny,maxx,maxy" in degrees); undefined when absent or
 * blank. The box is moved by whole turns so that minx is within -180..180; a box that then reaches
 * past 180 is searched as two.
 */
export function spatialFilterOf(value: unknown): SpatialFilter | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && !value.trim())) return undefined;
  if (typeof value !== 'string') throw bad('Must be a string "minx,miny,maxx,maxy"');
  const parts = value.split(',').map((s) => s.trim());
  const numbers = parts.map((s) => (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s) ? Number(s) : Number.NaN));
  if (parts.length !== 4 || numbers.some((n) => !Number.isFinite(n)))
    throw bad(`Must be four numbers "minx,miny,maxx,maxy" (west, south, east, north in degrees), not ${JSON.stringify(value)}`);
  let [minx, miny, maxx, maxy] = numbers;
  if (minx > maxx) throw bad(`minx (${minx}) is greater than maxx (${maxx})`);
  if (miny > maxy) throw bad(`miny (${miny}) is greater than maxy (${maxy})`);
  if (miny < -90 || maxy > 90) throw bad('Latitudes (miny, maxy) must be within -90 to 90');
  if (maxx - minx >= 360) return { boxes: [{ minx: -180, miny, maxx: 180, maxy }], area: 360 * (maxy - miny) };
  while (minx < -180) [minx, maxx] = [minx + 360, maxx + 360];
  while (minx > 180) [minx, maxx] = [minx - 360, maxx - 360];
  const area = (maxx - minx) * (maxy - miny);
  if (maxx <= 180) return { boxes: [{ minx, miny, maxx, maxy }], area };
  return {
    boxes: [
      { minx, miny, maxx: 180, maxy },
      { minx: -180, miny, maxx: maxx - 360, maxy },
    ],
    area,
  };
}

/** The condition on the search index (alias s): the dataset's extent intersects the box. */
export function spatialCondition(filter: SpatialFilter, builder: ParamBinder): string {
  const tests = filter.boxes.map((b) => `s.extent && ${builder.param(boxText(b))}::box`);
  return tests.length === 1 ? tests[0] : `(${tests.join(' OR ')})`;
}

/**
 * The ORDER BY key of a sort key that orders by overlap: `spatial` (which needs ext_bbox), or
 * score with ext_bbox when the query has no words to score (as ckanext-spatial's boost makes the
 * score the overlap). Undefined for any other key.
 */
export function spatialSortKey(
  key: SortKey,
  filter: SpatialFilter | undefined,
  wordsScored: boolean,
  builder: ParamBinder,
): string | undefined {
  const byScore = key.field === 'score' || key.field === 'rank';
  if (key.field !== 'spatial' && !(byScore && filter && !wordsScored)) return undefined;
  if (!filter) throw new SearchQueryError('Sorting by spatial needs ext_bbox (the box to compare the datasets with)');
  const shared = filter.boxes.map((b) => `coalesce(area(s.extent # ${builder.param(boxText(b))}::box), 0)`).join(' + ');
  const overlap = `2 * (${shared}) / nullif(${builder.param(filter.area)}::float8 + area(s.extent), 0)`;
  return `${overlap} ${key.desc ? 'DESC' : 'ASC'} NULLS LAST`;
}

/**
 * Keeps each dataset's extent with its writes; a `spatial` value that is no geometry refuses the
 * write. Set up before the search index (services.ts), whose row of the write reads the extent.
 */
export function setupSpatial(services: Services): void {
  onPackageChange(services, async (db, packageId, change) => {
    if (change === 'purged') return;
    const { value, cleared } = await spatialValueOf(db, packageId);
    if (value === null) {
      // (removed by the read, unless only JavaScript's trim finds the value blank)
      if (!cleared) await setSpatialExtent(db, packageId, null);
      return;
    }
    try {
      await setSpatialExtent(db, packageId, geometryBbox(value));
    } catch (e) {
      if (e instanceof GeometryError) throw new ValidationError({ spatial: [`Not a GeoJSON geometry: ${e.message}`] });
      throw e;
    }
  });
}
