// Spatial search over HTTP, as ckanext-spatial: a dataset's `spatial` extra (a GeoJSON geometry) is
// checked at every write, package_search's ext_bbox finds the datasets whose geometry's extent
// intersects the box (with the visibility rules and the other filters), sort=spatial desc (and score
// without words) orders them by overlap, and a bad box or geometry is a Validation Error naming it.
// The search page's area box works without JavaScript and, in Chromium, by dragging on its map;
// a dataset's page shows its extent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { runCliIn } from './helpers/cli.ts';
import { axeViolations, browserMissing, describeViolations, startBrowserApp, type BrowserApp } from './helpers/browser.ts';

let t: TestApp;
let editor: TestUser;

const polygon = (minx: number, miny: number, maxx: number, maxy: number) => ({
  type: 'Polygon',
  coordinates: [
    [
      [minx, miny],
      [maxx, miny],
      [maxx, maxy],
      [minx, maxy],
      [minx, miny],
    ],
  ],
});

/** Datasets by name and their geometry (null: no spatial extra). */
const PLACES: Record<string, unknown> = {
  'spatial-lake': polygon(6.1, 46.2, 6.9, 46.5),
  'spatial-switzerland': polygon(5.9, 45.8, 10.5, 47.8),
  'spatial-europe': polygon(-25, 34, 45, 72),
  'spatial-bern': { type: 'Point', coordinates: [7.44, 46.95] },
  'spatial-fiji': {
    type: 'MultiPoint',
    coordinates: [
      [178.4, -18.1],
      [-179.9, -16.5],
    ],
  },
  'spatial-route': {
    type: 'Feature',
    properties: {},
    geometry: {
      type: 'LineString',
      coordinates: [
        [-74, 40.7],
        [-71, 42.3],
      ],
    },
  },
  'spatial-none': null,
};

const names = (r: any) => r.results.map((d: any) => d.name).sort();
const search = (params: Record<string, unknown>, opts = {}) => t.ok('package_search', { rows: 100, ...params }, opts);

before(async () => {
  t = await startApp({ config: { 'svc.views.map.tile_url': '' } });
  ({
    users: { spatial_editor: editor },
  } = await organizationWithTeam(t, { name: 'spatial-org' }, { spatial_editor: 'editor' }));
  for (const [name, geometry] of Object.entries(PLACES))
    await t.ok(
      'package_create',
      {
        name,
        owner_org: 'spatial-org',
        notes: name === 'spatial-lake' ? 'water quality' : 'other',
        extras: geometry ? [{ key: 'spatial', value: JSON.stringify(geometry) }] : [],
      },
      as(editor),
    );
  await t.ok(
    'package_create',
    {
      name: 'spatial-secret',
      owner_org: 'spatial-org',
      private: true,
      extras: [{ key: 'spatial', value: JSON.stringify(polygon(6, 46, 7, 47)) }],
    },
    as(editor),
  );
});
after(async () => {
  await t?.close();
});

test('ext_bbox finds the datasets whose extent intersects the box, private ones only for their readers', async () => {
  // Around Geneva: the lake, Switzerland, Europe; not Bern (a point outside), not the others.
  const r = await search({ ext_bbox: '6,46,6.5,46.4' });
  assert.deepEqual(names(r), ['spatial-europe', 'spatial-lake', 'spatial-switzerland']);
  assert.equal(r.count, 3);
  assert.deepEqual(names(await search({ ext_bbox: '7.4,46.9,7.5,47' })), ['spatial-bern', 'spatial-europe', 'spatial-switzerland']);
  assert.deepEqual(names(await search({ ext_bbox: '-75,40,-73,41' })), ['spatial-route']);
  assert.equal((await search({ ext_bbox: '100,-10,110,0' })).count, 0);
  const mine = await search({ ext_bbox: '6,46,6.5,46.4', include_private: true }, as(editor));
  assert.deepEqual(names(mine), ['spatial-europe', 'spatial-lake', 'spatial-secret', 'spatial-switzerland']);
  // Blank: no spatial filter (as CKAN without the box).
  assert.equal((await search({ ext_bbox: '', q: 'name:spatial-*' })).count, 7);
});

test('with words and filters: all must match; GET works the same', async () => {
  assert.deepEqual(names(await search({ ext_bbox: '6,46,6.5,46.4', q: 'water' })), ['spatial-lake']);
  assert.deepEqual(names(await search({ ext_bbox: '6,46,6.5,46.4', fq: 'name:spatial-europe' })), ['spatial-europe']);
  const got = await t.call('package_search', { ext_bbox: '6,46,6.5,46.4', rows: 100 }, { method: 'GET' });
  assert.equal(got.status, 200);
  assert.equal(got.body.result.count, 3);
});

test('ordered by overlap: sort=spatial desc, and the default sort when no words are scored', async () => {
  const box = '6,46,7,46.6';
  const byOverlap = ['spatial-lake', 'spatial-switzerland', 'spatial-europe'];
  assert.deepEqual(
    (await search({ ext_bbox: box, sort: 'spatial desc' })).results.map((d: any) => d.name),
    byOverlap,
  );
  assert.deepEqual(
    (await search({ ext_bbox: box })).results.map((d: any) => d.name),
    byOverlap,
  );
  assert.deepEqual(
    (await search({ ext_bbox: box, sort: 'spatial asc' })).results.map((d: any) => d.name),
    [...byOverlap].reverse(),
  );
  // Paging keeps the order.
  assert.deepEqual(
    (await search({ ext_bbox: box, sort: 'spatial desc', rows: 1, start: 1 })).results.map((d: any) => d.name),
    ['spatial-switzerland'],
  );
  const r = await t.call('package_search', { sort: 'spatial desc' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error!.__type, 'Search Query Error');
  assert.match(r.body.error!.message, /ext_bbox/);
});

test('a box across the antimeridian (maxx past 180, or minx before -180) finds what lies on either side', async () => {
  assert.deepEqual(names(await search({ ext_bbox: '175,-20,185,-15' })), ['spatial-fiji']);
  assert.deepEqual(names(await search({ ext_bbox: '-185,-20,-179,-15' })), ['spatial-fiji']);
  assert.equal((await search({ ext_bbox: '-180,-90,180,90', q: 'name:spatial-*' })).count, 6);
});

test('a bad ext_bbox is a Validation Error naming ext_bbox', async () => {
  for (const bbox of ['1,2,3', 'a,b,c,d', '1,2,3,4,5', '10,0,5,5', '0,10,5,5', '0,-100,5,5', '1,2,3,Infinity']) {
    const r = await t.call('package_search', { ext_bbox: bbox });
    assert.equal(r.status, 409, bbox);
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.ok(r.body.error!.ext_bbox?.[0], `${bbox}: ${JSON.stringify(r.body.error)}`);
  }
});

test('a spatial value that is no GeoJSON geometry is a Validation Error naming spatial, and nothing changes', async () => {
  const bad: [unknown, RegExp][] = [
    ['{not json', /Not valid JSON/],
    [{ type: 'Circle', coordinates: [0, 0] }, /type "Circle"/],
    [{ type: 'Point', coordinates: [200, 0] }, /longitude 200/],
    [{ type: 'Point', coordinates: [0, 95] }, /latitude 95/],
    [{ type: 'Point', coordinates: ['1', 2] }, /not a position/],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      },
      /not closed/,
    ],
    [{ type: 'LineString', coordinates: [[0, 0]] }, /at least 2 positions/],
    ['[1, 2]', /not a GeoJSON object/],
  ];
  for (const [value, message] of bad) {
    const r = await t.call(
      'package_create',
      {
        name: 'spatial-bad',
        owner_org: 'spatial-org',
        extras: [{ key: 'spatial', value: typeof value === 'string' ? value : JSON.stringify(value) }],
      },
      as(editor),
    );
    assert.equal(r.status, 409, JSON.stringify(value));
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.match(r.body.error!.spatial[0], message);
  }
  assert.equal((await t.call('package_show', { id: 'spatial-bad' }, as(editor))).status, 404);
  // An update with a bad geometry leaves the dataset and its extent as they were.
  const r = await t.call('package_patch', { id: 'spatial-bern', extras: [{ key: 'spatial', value: '{"type":"Point"}' }] }, as(editor));
  assert.equal(r.status, 409);
  assert.ok(r.body.error!.spatial);
  const shown = await t.ok('package_show', { id: 'spatial-bern' });
  assert.equal(JSON.parse(shown.extras.find((e: any) => e.key === 'spatial').value).coordinates[0], 7.44);
  assert.deepEqual(names(await search({ ext_bbox: '7.4,46.9,7.5,47', fq: 'name:spatial-bern' })), ['spatial-bern']);
});

test('a moved, removed or deleted geometry is found where it is now', async () => {
  await t.ok('package_create', { name: 'spatial-moving', owner_org: 'spatial-org' }, as(editor));
  const here = '20,20,21,21';
  assert.equal((await search({ ext_bbox: here })).count, 0);
  await t.ok(
    'package_patch',
    { id: 'spatial-moving', extras: [{ key: 'spatial', value: JSON.stringify(polygon(20.2, 20.2, 20.4, 20.4)) }] },
    as(editor),
  );
  assert.deepEqual(names(await search({ ext_bbox: here })), ['spatial-moving']);
  await t.ok(
    'package_patch',
    { id: 'spatial-moving', extras: [{ key: 'spatial', value: JSON.stringify({ type: 'Point', coordinates: [30, 30] }) }] },
    as(editor),
  );
  assert.equal((await search({ ext_bbox: here })).count, 0);
  assert.deepEqual(names(await search({ ext_bbox: '29,29,31,31' })), ['spatial-moving']);
  await t.ok('package_patch', { id: 'spatial-moving', extras: [] }, as(editor));
  assert.equal((await search({ ext_bbox: '29,29,31,31' })).count, 0);
  await t.ok(
    'package_patch',
    { id: 'spatial-moving', extras: [{ key: 'spatial', value: JSON.stringify({ type: 'Point', coordinates: [30, 30] }) }] },
    as(editor),
  );
  await t.ok('package_delete', { id: 'spatial-moving' }, as(editor));
  assert.equal((await search({ ext_bbox: '29,29,31,31' })).count, 0);
});

test('a cleared search index, rebuilt, finds and orders by the extents as before', async () => {
  const queries: Record<string, unknown>[] = [
    { ext_bbox: '6,46,7,46.6', sort: 'spatial desc' },
    { ext_bbox: '6,46,7,46.6', sort: 'spatial asc', include_private: true },
    { ext_bbox: '175,-20,185,-15' },
    { ext_bbox: '-180,-90,180,90', q: 'name:spatial-*', sort: 'name asc' },
  ];
  const answers = async () => {
    const out: unknown[] = [];
    for (const q of queries) {
      const r = await search(q, as(editor));
      out.push([r.count, r.results.map((d: any) => d.name)]);
    }
    return out;
  };
  const before = await answers();
  assert.equal((await runCliIn(t, ['search-index', 'clear'])).code, 0);
  assert.equal((await search({ ext_bbox: '6,46,7,46.6' })).count, 0);
  const rebuilt = await runCliIn(t, ['search-index', 'rebuild']);
  assert.equal(rebuilt.code, 0, rebuilt.err);
  assert.deepEqual(await answers(), before);
});

test('ext_bbox is answered by the search index rows alone (the extents table is only where they are read from)', async () => {
  const expected = ['spatial-lake', 'spatial-switzerland', 'spatial-europe'];
  await t.services.db.query('ALTER TABLE package_spatial_extents RENAME TO package_spatial_extents_away');
  try {
    // boxes not searched before (a cached result would not read the index)
    const r = await search({ ext_bbox: '6.01,46.01,7.01,46.61', sort: 'spatial desc' });
    assert.deepEqual(
      r.results.map((d: any) => d.name),
      expected,
    );
    assert.deepEqual(names(await search({ ext_bbox: '176,-21,184,-14' })), ['spatial-fiji']);
  } finally {
    await t.services.db.query('ALTER TABLE package_spatial_extents_away RENAME TO package_spatial_extents');
  }
});

test('the search page: the area from four inputs (no JavaScript), kept by its links; a bad one is an error on the page', async () => {
  const page = await t.app.inject({ method: 'GET', url: '/dataset?minx=6&miny=46&maxx=6.5&maxy=46.4&q=name:spatial-*' });
  assert.equal(page.statusCode, 200);
  for (const name of ['spatial-europe', 'spatial-lake', 'spatial-switzerland'])
    assert.match(page.body, new RegExp(`href="/dataset/${name}"`));
  assert.doesNotMatch(page.body, /href="\/dataset\/spatial-bern"/);
  assert.match(page.body, /<input id="bbox-minx" name="minx" type="number"[^>]* value="6"/);
  assert.match(page.body, /<input type="hidden" name="ext_bbox" value="6,46,6.5,46.4">/, 'the search and sort forms keep the area');
  assert.match(page.body, /<a class="button" href="\/dataset\?q=name%3Aspatial-\*">Any area<\/a>/);
  const bad = await t.app.inject({ method: 'GET', url: '/dataset?ext_bbox=1,2,3' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /Invalid ext_bbox: Must be four numbers/);
});

test("a dataset's page shows its spatial extent as a small map, in words", async () => {
  const page = await t.app.inject({ method: 'GET', url: '/dataset/spatial-lake' });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h2 id="dataset-map-title">Spatial extent<\/h2>/);
  assert.match(page.body, /<path d="M[^"]+Z" class="map-area"\/>/);
  assert.match(page.body, /Longitude 6\.1 to 6\.9, latitude 46\.2 to 46\.5\./);
  assert.doesNotMatch((await t.app.inject({ method: 'GET', url: '/dataset/spatial-none' })).body, /dataset-map-title/);
});

describe('spatial search in Chromium', { skip: browserMissing }, () => {
  let b: BrowserApp;
  before(async () => {
    b = await startBrowserApp('spatial-search', { config: { 'svc.views.map.tile_url': '' } });
    const { users } = await organizationWithTeam(b.t, { name: 'spatial-org' }, { spatial_editor: 'editor' });
    for (const [name, geometry] of Object.entries(PLACES))
      await b.t.ok(
        'package_create',
        {
          name,
          title: name.replace('spatial-', 'Place '),
          owner_org: 'spatial-org',
          extras: geometry ? [{ key: 'spatial', value: JSON.stringify(geometry) }] : [],
        },
        as(users.spatial_editor),
      );
  });
  after(async () => {
    await b?.close();
  });

  test("a box dragged on the search page's map fills the area inputs and finds the datasets there", async () => {
    const page = await b.visitor();
    await page.goto('/dataset');
    const map = page.locator('[data-bbox-map].leaflet-container');
    await map.waitFor({ timeout: 60_000 });
    const box = (await map.boundingBox())!;
    // The world at zoom 1 (512 px wide, centred): drag around western Europe and the Alps.
    const at = (lon: number, lat: number) => {
      const x = box.x + box.width / 2 + (lon / 360) * 512;
      const s = Math.sin((lat * Math.PI) / 180);
      const y =
        box.y +
        box.height / 2 -
        (Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 512 +
        (Math.log((1 + Math.sin((20 * Math.PI) / 180)) / (1 - Math.sin((20 * Math.PI) / 180))) / (4 * Math.PI)) * 512;
      return [x, y] as const;
    };
    await page.mouse.move(...at(0, 52));
    await page.mouse.down();
    await page.mouse.move(...at(10, 47), { steps: 5 });
    await page.mouse.move(...at(12, 44), { steps: 5 });
    await page.mouse.up();
    const west = Number(await page.locator('#bbox-minx').inputValue());
    const north = Number(await page.locator('#bbox-maxy').inputValue());
    assert.ok(Math.abs(west) < 3 && Math.abs(north - 52) < 3, `${west} ${north}`);
    await b.shot(page, 'search-box-drawn');
    await page.locator('.bbox-search button[type="submit"]').click();
    await page.waitForURL(/minx=/);
    const found = await page.locator('.dataset-item h3').allInnerTexts();
    const text = found.join(' ');
    for (const title of ['Place lake', 'Place switzerland', 'Place bern', 'Place europe'])
      assert.ok(text.includes(title), `${title} in ${text}`);
    assert.ok(!text.includes('Place route') && !text.includes('Place fiji'), text);
    await b.shot(page, 'search-box-results');
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(page.url(), violations)}`);
  });

  test("a dataset's extent is a Leaflet map on its page, axe-clean", async () => {
    const page = await b.visitor();
    await page.goto('/dataset/spatial-switzerland');
    await page.locator('.dataset-map .map-ready .leaflet-container').waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.dataset-map path.leaflet-interactive').count(), 1);
    await b.shot(page, 'dataset-extent');
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(page.url(), violations)}`);
    assert.deepEqual(b.problems, []);
  });
});
