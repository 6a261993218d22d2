// What pages show of maps: a map view's figure on the resource page (map_view_data drawn as SVG,
// described in words, its data for js/map.js), a dataset's `spatial` extent on its page, and the
// search page's area box (ext_bbox from four inputs or the ext_bbox parameter itself).
import { NotFoundError, ValidationError } from '../../errors.ts';
import { type Bbox, GeometryError, geometryBbox, parseGeometryValue } from '../../search/spatial-geojson.ts';
import { mapSvg } from '../../views/map-svg.ts';
import type { WebContext } from '../router.ts';

type Dict = Record<string, any>;

/** Rows shown in a map's table. */
const TABLE_ROWS = 100;

/** Degrees as pages write them (at most 5 decimals, no grouping). */
const deg = (v: number) => String(Math.round(v * 1e5) / 1e5);

/** JSON that may stand inside a <script type="application/json"> element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const extentText = (ctx: WebContext, e: Bbox | null) =>
  e ? ctx.t('map.extent', { west: deg(e.minx), east: deg(e.maxx), south: deg(e.miny), north: deg(e.maxy) }) : '';

function tiles(ctx: WebContext) {
  return {
    tiles: ctx.services.config.get<string>('svc.views.map.tile_url'),
    attribution: ctx.services.config.get<string>('svc.views.map.tile_attribution'),
  };
}

/** The figure of a map view (views/map.njk), or { error } when the view cannot show its resource. */
export async function mapFigure(ctx: WebContext, view: { id: string; title: string; config: Dict }): Promise<Dict> {
  let data: Dict;
  try {
    data = await ctx.call('map_view_data', { id: view.id });
  } catch (e) {
    if (!(e instanceof ValidationError || e instanceof NotFoundError)) throw e;
    return { error: e instanceof ValidationError ? Object.values(e.errors).flat().join(' ') : e.message };
  }
  const words: string[] = [];
  let rows: { lon: string; lat: string; third: string }[];
  if (data.kind === 'points') {
    words.push(ctx.t('map.points', { count: data.placed, lat: data.config.latitude_field, lon: data.config.longitude_field }));
    if (data.aggregated) words.push(ctx.t('map.aggregated', { count: data.points.length }));
    if (data.misplaced) words.push(ctx.t('map.misplaced', { count: data.misplaced }));
    rows = (data.points as [number, number, number, string | null][])
      .slice(0, TABLE_ROWS)
      .map(([lon, lat, n, label]) => ({ lon: deg(lon), lat: deg(lat), third: data.aggregated ? String(n) : (label ?? '') }));
  } else {
    words.push(ctx.t('map.features', { count: data.features.length }));
    if (data.invalid) words.push(ctx.t('map.invalid', { count: data.invalid }));
    if (data.leftOut) words.push(ctx.t('map.left_out', { count: data.leftOut }));
    rows = [];
  }
  words.push(extentText(ctx, data.extent));
  const summary = words.filter(Boolean).join(' ');
  const svg = mapSvg(
    { extent: data.extent, points: data.points, geometries: data.features?.map((f: Dict) => f.geometry) },
    `map-${view.id}`,
    view.title,
    summary,
  );
  return {
    svg,
    summary,
    rows,
    aggregated: !!data.aggregated,
    cluster: view.config.cluster_markers !== false,
    json: scriptJson(data),
    ...tiles(ctx),
  };
}

/** The dataset's `spatial` geometry (a field of its schema or an extra), drawn; null when it has none or it is not one. */
export function datasetMap(ctx: WebContext, pkg: Dict): Dict | null {
  const value = pkg.spatial ?? (pkg.extras as { key: string; value: unknown }[] | undefined)?.find((e) => e.key === 'spatial')?.value;
  if (value === undefined || value === null || value === '') return null;
  let geometry: unknown;
  let extent: Bbox;
  try {
    geometry = parseGeometryValue(value);
    extent = geometryBbox(geometry);
  } catch (e) {
    if (e instanceof GeometryError) return null;
    throw e;
  }
  const summary = extentText(ctx, extent);
  const g = geometry as Dict;
  const shape = g.type === 'Feature' ? g.geometry : g;
  return {
    svg: mapSvg({ extent, geometries: [shape] }, `dataset-map-${pkg.id}`, ctx.t('map.dataset_label'), summary),
    summary,
    json: scriptJson({ kind: 'geojson', features: [{ geometry: shape, label: null }], extent }),
    ...tiles(ctx),
  };
}

const BBOX_KEYS = ['minx', 'miny', 'maxx', 'maxy'] as const;

/**
 * The search page's area: ext_bbox as given, or made from the four inputs when all are filled
 * (the page shows them again, and package_search checks the box).
 */
export function searchArea(ctx: WebContext): {
  ext_bbox: string;
  inputs: Record<string, string>;
  tiles: string;
  attribution: string;
} {
  const one = (k: string) => {
    const v = ctx.query[k];
    return (Array.isArray(v) ? v[0] : (v ?? '')).trim();
  };
  let ext = one('ext_bbox');
  const inputs: Record<string, string> = Object.fromEntries(BBOX_KEYS.map((k) => [k, one(k)]));
  if (!ext && BBOX_KEYS.every((k) => inputs[k] !== '')) ext = BBOX_KEYS.map((k) => inputs[k]).join(',');
  else if (ext && BBOX_KEYS.every((k) => inputs[k] === '')) {
    const parts = ext.split(',');
    if (parts.length === 4) BBOX_KEYS.forEach((k, i) => (inputs[k] = parts[i].trim()));
  }
  return { ext_bbox: ext, inputs, ...tiles(ctx) };
}
