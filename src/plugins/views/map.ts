// The map view (view type `map`): the points of a data store table's latitude and longitude
// columns (found by their names and value ranges when the view names none), or the features of an
// uploaded GeoJSON file. map_view_data gives what a page draws, bounded: a large table comes as
// grid cells with their row counts, a large file as its first features.
import { Type } from '@sinclair/typebox';
import type { Services } from '../../actions/context.ts';
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import type { ViewType } from '../../actions/resource-view.ts';
import { declareOption } from '../../config/options.ts';
import type { DatastoreBackend, DatastoreField } from '../../datastore/backend.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { readSmallFile } from '../../files/store.ts';
import { findResource } from '../../model/resources.ts';
import { findView } from '../../model/resource-views.ts';
import type { ResourceRow } from '../../model/resources.ts';
import { GeometryError } from '../../search/spatial-geojson.ts';
import { p } from '../../validation/params.ts';
import { checkMapConfig, type MapConfig } from '../../views/map-config.ts';
import { geojsonFeatures, MAX_FEATURES, type MapFeatures } from '../../views/map-geojson.ts';
import { checkDegrees, MAX_POINTS, mapPoints, mapStats, type MapPoints } from '../../views/map-query.ts';
import { canReadView } from './chart.ts';

declareOption({
  name: 'svc.views.map.tile_url',
  type: 'string',
  default: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
  validate: (v: string) =>
    v === '' || /^https?:\/\/\S+$/i.test(v) ? undefined : 'must be an http:// or https:// URL template ({z}/{x}/{y})',
  description:
    'Map tiles under map views, dataset extents and the search box ({z}, {x}, {y}, {s}); empty: points and shapes on a plain background',
});
declareOption({
  name: 'svc.views.map.tile_attribution',
  type: 'string',
  default: '© OpenStreetMap contributors',
  description: 'Credit shown on maps for their tiles (as the tile provider asks)',
});

/** GeoJSON files up to this size are read for a map. */
const GEOJSON_MAX_BYTES = 10 * 1024 * 1024;

const backendOf = (services: Services) => services.plugins.datastore as DatastoreBackend | undefined;

/** A resource the map reads as a GeoJSON file (by its format or its file name). */
const isGeojson = (r: Pick<ResourceRow, 'format' | 'url'>) =>
  ['geojson', 'application/geo+json'].includes((r.format ?? '').toLowerCase()) || /\.geojson$/i.test(r.url.split(/[?#]/)[0]);

async function tableFields(services: Services, resourceId: string): Promise<DatastoreField[] | undefined> {
  const backend = backendOf(services);
  if (!backend || !(await backend.resource_exists(resourceId))) return undefined;
  return backend.resource_fields(resourceId);
}

/** The features of an uploaded GeoJSON resource; a ValidationError naming resource_id when there are none to read. */
async function readGeojson(services: Services, resource: ResourceRow): Promise<MapFeatures> {
  if (resource.url_type !== 'upload')
    throw new ValidationError({ resource_id: ['A map reads GeoJSON files uploaded to this site; this resource links elsewhere'] });
  const bytes = await readSmallFile(services.config, resource.id, GEOJSON_MAX_BYTES);
  if (!bytes) throw new ValidationError({ resource_id: [`The GeoJSON file is missing or larger than ${GEOJSON_MAX_BYTES / 1048576} MB`] });
  try {
    return geojsonFeatures(bytes.toString('utf8'));
  } catch (e) {
    if (e instanceof GeometryError) throw new ValidationError({ resource_id: [e.message] });
    throw e;
  }
}

const notMappable = () =>
  new ValidationError({ resource_id: ['The resource has neither a data store table nor an uploaded GeoJSON file to map'] });

export const mapViewType: ViewType = {
  name: 'map',
  defaultTitle: 'Map',
  requiresDatastore: true,
  options: {
    latitude_field: p.string('the latitude column (default: found by its name: latitude, lat, y...)').ignoreEmpty(),
    longitude_field: p.string('the longitude column (default: found by its name: longitude, lon, lng, x...)').ignoreEmpty(),
    label_field: p.string('a column whose value labels each point').ignoreEmpty(),
    cluster_markers: p.boolean('group nearby points into clusters when there are more than 2,000').default(true),
  },
  canView: (r) => r.datastore_active || r.url_type === 'datastore',
  async prepare(services, resourceId, options, db) {
    const fields = await tableFields(services, resourceId);
    if (!fields) {
      const resource = await findResource(db, resourceId);
      if (!resource || !isGeojson(resource)) throw notMappable();
      await readGeojson(services, resource);
      return options;
    }
    const config = checkMapConfig(options as Partial<MapConfig>, fields);
    checkDegrees(await mapStats(backendOf(services)!, resourceId, config, fields), config);
    return { ...options, ...config };
  },
};

const pointSchema = Type.Tuple([Type.Number(), Type.Number(), Type.Integer(), Type.Union([Type.String(), Type.Null()])]);
const extentSchema = Type.Union([
  Type.Object({ minx: Type.Number(), miny: Type.Number(), maxx: Type.Number(), maxy: Type.Number() }),
  Type.Null(),
]);
const mapDataSchema = Type.Union(
  [
    Type.Object({
      kind: Type.Literal('points'),
      config: Type.Record(Type.String(), Type.Unknown()),
      points: Type.Array(pointSchema, { description: '[longitude, latitude, rows, label]' }),
      aggregated: Type.Boolean({ description: 'the points are grid cells, each with its number of rows' }),
      placed: Type.Integer({ description: 'rows with coordinates in degrees' }),
      misplaced: Type.Integer({ description: 'rows with coordinates out of range' }),
      extent: extentSchema,
    }),
    Type.Object({
      kind: Type.Literal('geojson'),
      features: Type.Array(Type.Object({ geometry: Type.Unknown(), label: Type.Union([Type.String(), Type.Null()]) })),
      total: Type.Integer(),
      invalid: Type.Integer(),
      leftOut: Type.Integer(),
      extent: extentSchema,
    }),
  ],
  { title: 'MapData' },
);

export const mapActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'map_view_data',
    sideEffectFree: true,
    auth: canReadView,
    description: `What a map view draws: the points of its data store table (at most ${MAX_POINTS}; a larger table as grid cells with their row counts), or the features of its GeoJSON file (at most ${MAX_FEATURES}).`,
    params: { id: p.string('the id of the map view').required() },
    returns: {
      description: 'points (kind points) or features (kind geojson), with the extent',
      rtype: 'dictionary',
      schema: mapDataSchema,
    },
    handler: async (ctx, prm): Promise<MapPoints | MapFeatures> => {
      const view = await findView(ctx.db, prm.id);
      const resource = view ? await findResource(ctx.db, view.resource_id) : undefined;
      if (!view || !resource || resource.state === 'deleted') throw new NotFoundError('Resource view not found');
      if (view.view_type !== 'map') throw new ValidationError({ id: ['Not a map view'] });
      const fields = await tableFields(ctx.services, resource.id);
      if (!fields) {
        if (!isGeojson(resource)) throw notMappable();
        return readGeojson(ctx.services, resource);
      }
      // Checked again: the table may have changed since the view was saved.
      const config = checkMapConfig(
        {
          latitude_field: view.config.latitude_field as string | undefined,
          longitude_field: view.config.longitude_field as string | undefined,
          label_field: (view.config.label_field as string | undefined) || undefined,
        },
        fields,
      );
      return mapPoints(backendOf(ctx.services)!, resource.id, config, fields);
    },
  }),
];
