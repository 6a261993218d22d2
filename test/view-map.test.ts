// The map view (view_type map) over HTTP: coordinate columns found by name and checked by range at
// resource_view_create (errors naming the option), a default view only for tables with coordinates,
// points bounded (a large table comes as grid cells whose row counts add up), uploaded GeoJSON
// files, who may read a map, and the resource page that draws it without JavaScript; in Chromium
// the Leaflet map (clustered above 2,000 points) is axe-clean, with screenshots.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { axeViolations, browserMissing, describeViolations, startBrowserApp, type BrowserApp } from './helpers/browser.ts';

const PLUGINS = ['datastore', 'datatables_view', 'map'];
/** Tests run without a network: no tiles. */
const CONFIG = { 'svc.views.map.tile_url': '', 'svc.views.default_views': ['datatables_view', 'map'] };

const STATIONS = [
  { station: 'Geneva', Latitude: 46.2, Longitude: 6.15, rain: 3.5 },
  { station: 'Bern', Latitude: 46.95, Longitude: 7.45, rain: 1 },
  { station: 'Zurich', Latitude: 47.37, Longitude: 8.54, rain: 0 },
  { station: 'Nowhere', Latitude: null, Longitude: null, rain: 2 },
];
const STATION_FIELDS = [
  { id: 'station', type: 'text' },
  { id: 'Latitude', type: 'float8' },
  { id: 'Longitude', type: 'float8' },
  { id: 'rain', type: 'numeric' },
];
const GEOJSON = {
  type: 'FeatureCollection',
  features: [
    {
      type: 'Feature',
      properties: { name: 'Lake <Geneva>' },
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [6.1, 46.2],
            [6.9, 46.2],
            [6.9, 46.5],
            [6.1, 46.2],
          ],
        ],
      },
    },
    {
      type: 'Feature',
      properties: { name: 'Rhone' },
      geometry: {
        type: 'LineString',
        coordinates: [
          [6.14, 46.2],
          [5.8, 46.1],
        ],
      },
    },
    { type: 'Feature', properties: { name: 'Lausanne' }, geometry: { type: 'Point', coordinates: [6.63, 46.52] } },
    { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [500, 0] } },
  ],
};

async function table(t: TestApp, token: string, pkg: string, fields: { id: string; type: string }[], records: Record<string, unknown>[]) {
  return (await t.ok('datastore_create', { resource: { package_id: pkg, name: 'places' }, fields, records }, { token }))
    .resource_id as string;
}

async function uploadGeojson(t: TestApp, token: string, pkg: string, content: string): Promise<any> {
  const boundary = `----svcmap${randomUUID()}`;
  const payload = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\n${pkg}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\nGeoJSON\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="places.geojson"\r\nContent-Type: application/geo+json\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/resource_create',
    payload,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: token },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().result;
}

/** rows points spread over Switzerland, in a fixed order. */
const manyPoints = (rows: number) =>
  Array.from({ length: rows }, (_, i) => ({ lat: 45.8 + ((i * 37) % 200) / 100, lon: 5.9 + ((i * 53) % 460) / 100, n: i }));

describe('map views over HTTP', () => {
  let t: TestApp;
  let editor: TestUser;
  let outsider: TestUser;
  let stations: string;

  before(async () => {
    t = await startApp({ plugins: PLUGINS, config: CONFIG });
    ({
      users: { views_map_editor: editor },
    } = await organizationWithTeam(t, { name: 'views-map-org' }, { views_map_editor: 'editor' }));
    outsider = await t.user('views_map_outsider');
    await t.ok('package_create', { name: 'views-map-public', owner_org: 'views-map-org' }, as(editor));
    await t.ok('package_create', { name: 'views-map-private', owner_org: 'views-map-org', private: true }, as(editor));
    stations = await table(t, editor.token, 'views-map-public', STATION_FIELDS, STATIONS);
  });
  after(async () => {
    await t?.close();
  });

  test('a map view with only resource_id, view_type and title finds the coordinate columns by name; its points come from the table', async () => {
    const view = await t.ok(
      'resource_view_create',
      { resource_id: stations, view_type: 'map', title: 'Stations', label_field: 'station' },
      as(editor),
    );
    assert.deepEqual(
      [view.latitude_field, view.longitude_field, view.label_field, view.cluster_markers],
      ['Latitude', 'Longitude', 'station', true],
    );
    const data = await t.ok('map_view_data', { id: view.id }, { method: 'GET' });
    assert.equal(data.kind, 'points');
    assert.equal(data.placed, 3, 'the row without coordinates is not placed');
    assert.equal(data.aggregated, false);
    assert.deepEqual(data.points, [
      [6.15, 46.2, 1, 'Geneva'],
      [7.45, 46.95, 1, 'Bern'],
      [8.54, 47.37, 1, 'Zurich'],
    ]);
    assert.deepEqual(data.extent, { minx: 6.15, miny: 46.2, maxx: 8.54, maxy: 47.37 });
    // Other names: lat/lng, text columns holding numbers, prefixed names.
    const other = await table(
      t,
      editor.token,
      'views-map-public',
      [
        { id: 'site_lat', type: 'text' },
        { id: 'site_lng', type: 'text' },
      ],
      [
        { site_lat: '10.5', site_lng: '-20.25' },
        { site_lat: 'n/a', site_lng: '3' },
      ],
    );
    const v2 = await t.ok('resource_view_create', { resource_id: other, view_type: 'map', title: 'Sites' }, as(editor));
    assert.deepEqual([v2.latitude_field, v2.longitude_field], ['site_lat', 'site_lng']);
    const d2 = await t.ok('map_view_data', { id: v2.id });
    assert.deepEqual(d2.points, [[-20.25, 10.5, 1, null]]);
    assert.equal(d2.misplaced, 1);
  });

  test('as a default view, a table with coordinates gets a map; one without, or with values that are not degrees, does not', async () => {
    const fresh = await table(t, editor.token, 'views-map-public', STATION_FIELDS, STATIONS.slice(0, 2));
    const made = await t.ok(
      'resource_create_default_resource_views',
      { resource: { id: fresh }, create_datastore_views: true },
      as(editor),
    );
    assert.deepEqual(
      made.map((v: any) => v.view_type),
      ['datatables_view', 'map'],
    );
    const map = made.find((v: any) => v.view_type === 'map');
    assert.deepEqual([map.title, map.latitude_field, map.longitude_field], ['Map', 'Latitude', 'Longitude']);
    const words = await table(t, editor.token, 'views-map-public', [{ id: 'word', type: 'text' }], [{ word: 'x' }]);
    const projected = await table(
      t,
      editor.token,
      'views-map-public',
      [
        { id: 'x', type: 'float8' },
        { id: 'y', type: 'float8' },
      ],
      [
        { x: 2600000, y: 1200000 },
        { x: 2601000, y: 1201000 },
      ],
    );
    for (const id of [words, projected]) {
      const none = await t.ok('resource_create_default_resource_views', { resource: { id }, create_datastore_views: true }, as(editor));
      assert.deepEqual(
        none.map((v: any) => v.view_type),
        ['datatables_view'],
      );
    }
    const r = await t.call('resource_view_create', { resource_id: projected, view_type: 'map', title: 'LV95' }, as(editor));
    assert.equal(r.status, 409);
    assert.match(r.body.error!.latitude_field[0], /2 of 2 rows .* not degrees/);
  });

  test('options that do not fit the table are Validation Errors naming the option, and no view is made', async () => {
    const before = (await t.ok('resource_view_list', { id: stations })).length;
    const bad = async (options: Record<string, unknown>) => {
      const r = await t.call('resource_view_create', { resource_id: stations, view_type: 'map', title: 'Bad', ...options }, as(editor));
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(r.body.error!.__type, 'Validation Error');
      return r.body.error!;
    };
    assert.match(
      (await bad({ latitude_field: 'nope', longitude_field: 'Longitude' })).latitude_field[0],
      /^Column "nope" is not in the table/,
    );
    assert.deepEqual((await bad({ latitude_field: 'Latitude' })).longitude_field, ['Missing value']);
    assert.deepEqual((await bad({ latitude_field: 'Latitude', longitude_field: 'Latitude' })).longitude_field, [
      'Must be another column than latitude_field',
    ]);
    assert.match((await bad({ label_field: 'missing' })).label_field[0], /^Column "missing" is not in the table/);
    assert.ok((await bad({ cluster_markers: 'maybe' })).cluster_markers);
    assert.equal((await t.ok('resource_view_list', { id: stations })).length, before);
    const words = await table(t, editor.token, 'views-map-public', [{ id: 'word', type: 'text' }], [{ word: 'x' }]);
    const r = await t.call('resource_view_create', { resource_id: words, view_type: 'map', title: 'None' }, as(editor));
    assert.equal(r.status, 409);
    assert.match(r.body.error!.latitude_field[0], /no latitude and longitude columns/);
    const plain = await t.ok(
      'resource_create',
      { package_id: 'views-map-public', url: 'http://example.org/a.csv', format: 'CSV' },
      as(editor),
    );
    const r2 = await t.call('resource_view_create', { resource_id: plain.id, view_type: 'map', title: 'No table' }, as(editor));
    assert.equal(r2.status, 409);
    assert.match(r2.body.error!.resource_id[0], /neither a data store table nor an uploaded GeoJSON file/);
  });

  test('a large table: at most 4,900 grid cells whose row counts add up to the rows', async () => {
    const rows = manyPoints(12000);
    const big = await table(
      t,
      editor.token,
      'views-map-public',
      [
        { id: 'lat', type: 'float8' },
        { id: 'lon', type: 'float8' },
        { id: 'n', type: 'int' },
      ],
      [],
    );
    for (let i = 0; i < rows.length; i += 4000)
      await t.ok('datastore_upsert', { resource_id: big, method: 'insert', records: rows.slice(i, i + 4000) }, as(editor));
    const view = await t.ok('resource_view_create', { resource_id: big, view_type: 'map', title: 'Big' }, as(editor));
    const data = await t.ok('map_view_data', { id: view.id });
    assert.equal(data.aggregated, true);
    assert.equal(data.placed, 12000);
    assert.ok(data.points.length <= 4900 && data.points.length > 100, `${data.points.length} cells`);
    assert.equal(
      data.points.reduce((n: number, p: number[]) => n + p[2], 0),
      12000,
    );
    for (const [lon, lat] of data.points)
      assert.ok(lon >= 5.9 - 1e-9 && lon <= 10.5 + 1e-9 && lat >= 45.8 - 1e-9 && lat <= 47.8 + 1e-9, `${lon} ${lat}`);
  });

  test('an uploaded GeoJSON file: its valid features with their names', async () => {
    const res = await uploadGeojson(t, editor.token, 'views-map-public', JSON.stringify(GEOJSON));
    const view = await t.ok('resource_view_create', { resource_id: res.id, view_type: 'map', title: 'Lake' }, as(editor));
    const data = await t.ok('map_view_data', { id: view.id });
    assert.equal(data.kind, 'geojson');
    assert.deepEqual(
      data.features.map((f: any) => [f.geometry.type, f.label]),
      [
        ['Polygon', 'Lake <Geneva>'],
        ['LineString', 'Rhone'],
        ['Point', 'Lausanne'],
      ],
    );
    assert.deepEqual([data.total, data.invalid, data.leftOut], [4, 1, 0]);
    assert.deepEqual(data.extent, { minx: 5.8, miny: 46.1, maxx: 6.9, maxy: 46.52 });
    const page = await t.app.inject({ method: 'GET', url: `/dataset/views-map-public/resource/${res.id}?view_id=${view.id}` });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /3 features of the GeoJSON file\. 1 feature without a valid geometry is not shown\./);
    assert.match(page.body, /<path d="M[^"]+Z" class="map-area"\/>/);
    assert.match(page.body, /<path d="M[^"]+" class="map-line"\/>/);
    assert.doesNotMatch(page.body, /Lake <Geneva>/, 'labels in the page are escaped');
    const notGeo = await uploadGeojson(
      t,
      editor.token,
      'views-map-public',
      '{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null}]}',
    );
    const r = await t.call('resource_view_create', { resource_id: notGeo.id, view_type: 'map', title: 'Bad' }, as(editor));
    assert.equal(r.status, 409);
    assert.match(r.body.error!.resource_id[0], /No feature of the file has a valid GeoJSON geometry/);
  });

  test('who may read a map: the readers of its dataset', async () => {
    const secret = await table(t, editor.token, 'views-map-private', STATION_FIELDS, STATIONS);
    const view = await t.ok('resource_view_create', { resource_id: secret, view_type: 'map', title: 'Secret' }, as(editor));
    assert.equal((await t.call('map_view_data', { id: view.id }, as(outsider))).status, 403);
    assert.equal((await t.call('map_view_data', { id: view.id })).status, 403);
    assert.equal((await t.call('map_view_data', { id: view.id }, as(editor))).status, 200);
    assert.equal((await t.call('map_view_data', { id: 'no-such-view' })).status, 404);
  });

  test('the resource page draws the map as SVG, says what it shows and lists the places, without JavaScript', async () => {
    const view = await t.ok(
      'resource_view_create',
      { resource_id: stations, view_type: 'map', title: 'Rain <gauges>', label_field: 'station' },
      as(editor),
    );
    const page = await t.app.inject({ method: 'GET', url: `/dataset/views-map-public/resource/${stations}?view_id=${view.id}` });
    assert.equal(page.statusCode, 200);
    const body = page.body;
    assert.match(body, /<svg [^>]*role="img" aria-labelledby="map-[^"]+-title map-[^"]+-desc"/);
    assert.match(body, /<title id="map-[^"]+-title">Rain &lt;gauges&gt;<\/title>/);
    assert.equal((body.match(/<circle [^>]*class="map-dot"/g) ?? []).length, 3);
    assert.match(body, /3 rows placed by their columns Latitude and Longitude\. Longitude 6\.15 to 8\.54, latitude 46\.2 to 47\.37\./);
    assert.match(body, /<tr><td class="cell-num">7\.45<\/td><td class="cell-num">46\.95<\/td><td>Bern<\/td><\/tr>/);
    assert.match(body, /<script type="application\/json" id="map-[^"]+-data">\{"kind":"points"/);
    assert.match(body, /data-tiles=""/);
    assert.match(body, /src="\/static\/[0-9a-f]+\/vendor\/leaflet\.js"/);
    const asset = body.match(/src="(\/static\/[0-9a-f]+\/vendor\/leaflet\.markercluster\.js)"/)![1];
    const js = await t.app.inject({ method: 'GET', url: asset });
    assert.equal(js.statusCode, 200);
    assert.match(js.headers['content-type'] as string, /javascript/);
  });
});

describe('map views in Chromium', { skip: browserMissing }, () => {
  let b: BrowserApp;
  let resourceId: string;
  let bigId: string;
  before(async () => {
    b = await startBrowserApp('views-map', { plugins: PLUGINS, config: CONFIG });
    const { users } = await organizationWithTeam(b.t, { name: 'views-map-org' }, { views_map_editor: 'editor' });
    const token = users.views_map_editor.token;
    await b.t.ok('package_create', { name: 'views-map-page', title: 'Rain gauges', owner_org: 'views-map-org' }, { token });
    resourceId = await table(b.t, token, 'views-map-page', STATION_FIELDS, STATIONS);
    await b.t.ok('resource_create_default_resource_views', { resource: { id: resourceId }, create_datastore_views: true }, { token });
    bigId = await table(
      b.t,
      token,
      'views-map-page',
      [
        { id: 'lat', type: 'float8' },
        { id: 'lon', type: 'float8' },
        { id: 'n', type: 'int' },
      ],
      manyPoints(3000),
    );
    await b.t.ok('resource_create_default_resource_views', { resource: { id: bigId }, create_datastore_views: true }, { token });
  });
  after(async () => {
    await b?.close();
  });

  test('the map view is drawn by Leaflet, clustered above 2,000 points, and axe-clean', async () => {
    const page = await b.visitor();
    for (const [id, clustered] of [
      [resourceId, false],
      [bigId, true],
    ] as const) {
      const view = (await b.t.ok('resource_view_list', { id })).find((v: any) => v.view_type === 'map');
      const url = `/dataset/views-map-page/resource/${id}?view_id=${view.id}`;
      const res = await page.goto(url);
      assert.equal(res?.status(), 200);
      await page
        .locator('.map-canvas.map-ready .leaflet-container')
        .waitFor({ timeout: 60_000 })
        .catch((e) => assert.fail(`${e.message}; ${b.problems.join('; ')}`));
      if (clustered) {
        await page.locator('.marker-cluster').first().waitFor({ timeout: 60_000 });
        assert.ok((await page.locator('.marker-cluster').count()) >= 1);
      } else assert.equal(await page.locator('path.leaflet-interactive').count(), 3, 'a dot per station');
      assert.ok(await page.getByRole('region', { name: 'Map' }).isVisible());
      await b.shot(page, clustered ? 'map-clustered' : 'map-points');
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
    }
    assert.deepEqual(b.problems, []);
  });
});
