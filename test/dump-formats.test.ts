// Parquet and GeoJSON dumps over HTTP (/datastore/dump/{id}?format=parquet|geojson): Parquet files
// read back by an independent reader (DuckDB) with their types and values, GeoJSON
// FeatureCollections from latitude/longitude or geometry columns, a clear 409 for tables without
// coordinates, and both formats in the resource page's download list.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startApp, type TestApp } from './helpers/app.ts';
import { organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { TsvRows } from '../src/datastore/dump-parquet.ts';

let t: TestApp;
let editor: TestUser;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'views-dump-'));

before(async () => {
  t = await startApp();
  editor = (await organizationWithTeam(t, { name: 'views-dump-org' }, { views_dump_editor: 'editor' })).users.views_dump_editor;
  await t.ok('package_create', { name: 'views-dumps', owner_org: 'views-dump-org' }, { token: editor.token });
});
after(async () => {
  await t?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function newTable(body: Record<string, unknown>): Promise<string> {
  const r = await t.ok('datastore_create', { resource: { package_id: 'views-dumps', name: 'table' }, ...body }, { token: editor.token });
  return r.resource_id;
}

const dump = (id: string, qs: string) =>
  t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?${qs}`, headers: { authorization: editor.token } });

/** The rows and column types DuckDB reads from a Parquet answer. */
async function readParquet(
  payload: Buffer,
): Promise<{ types: Record<string, string>; rows: Record<string, unknown>[]; rowGroups: number }> {
  const file = path.join(tmp, `${Math.random().toString(36).slice(2)}.parquet`);
  fs.writeFileSync(file, payload);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const lit = `'${file.replace(/'/g, "''")}'`;
    const types = Object.fromEntries(
      (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${lit})`))
        .getRowObjects()
        .map((r) => [String(r.column_name), String(r.column_type)]),
    );
    const rows = (await c.runAndReadAll(`SELECT * FROM read_parquet(${lit})`)).getRowObjectsJson() as Record<string, unknown>[];
    const rowGroups = Number(
      (await c.runAndReadAll(`SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata(${lit})`)).getRowObjects()[0].n,
    );
    return { types, rows, rowGroups };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

test('Parquet dump: typed columns and their values, read back by DuckDB', async () => {
  const id = await newTable({
    fields: [
      { id: 'name', type: 'text' },
      { id: 'n', type: 'int' },
      { id: 'big', type: 'int8' },
      { id: 'amount', type: 'numeric' },
      { id: 'ratio', type: 'float8' },
      { id: 'ok', type: 'bool' },
      { id: 'at', type: 'timestamp' },
      { id: 'day', type: 'date' },
      { id: 'doc', type: 'json' },
      { id: 'tags', type: 'text[]' },
    ],
    records: [
      {
        name: 'alpha, "quoted"',
        n: 1,
        big: 9007199254740,
        amount: '1.50',
        ratio: 0.25,
        ok: true,
        at: '2020-01-02T03:04:05',
        day: '2020-01-02',
        doc: { x: [1, 2] },
        tags: ['a', 'b'],
      },
      {
        name: 'beta',
        n: -7,
        big: -3,
        amount: 2,
        ratio: -1e10,
        ok: false,
        at: '1969-12-31 23:59:59',
        day: '1900-03-01',
        doc: [1],
        tags: [],
      },
      { name: null, n: null, big: null, amount: null, ratio: null, ok: null, at: null, day: null, doc: null, tags: null },
    ],
  });
  const r = await dump(id, 'format=parquet');
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers['content-type'], 'application/vnd.apache.parquet');
  assert.equal(r.headers['content-disposition'], `attachment; filename="${id}.parquet"`);
  assert.equal(r.rawPayload.subarray(0, 4).toString(), 'PAR1');
  const { types, rows } = await readParquet(r.rawPayload);
  assert.deepEqual(types, {
    _id: 'INTEGER',
    name: 'VARCHAR',
    n: 'INTEGER',
    big: 'BIGINT',
    amount: 'DOUBLE',
    ratio: 'DOUBLE',
    ok: 'BOOLEAN',
    at: 'TIMESTAMP',
    day: 'DATE',
    doc: 'JSON',
    tags: 'JSON',
  });
  assert.deepEqual(rows[0], {
    _id: 1,
    name: 'alpha, "quoted"',
    n: 1,
    big: '9007199254740',
    amount: 1.5,
    ratio: 0.25,
    ok: true,
    at: '2020-01-02 03:04:05',
    day: '2020-01-02',
    doc: '{"x":[1,2]}',
    tags: '["a","b"]',
  });
  assert.deepEqual(rows[1], {
    _id: 2,
    name: 'beta',
    n: -7,
    big: '-3',
    amount: 2,
    ratio: -1e10,
    ok: false,
    at: '1969-12-31 23:59:59',
    day: '1900-03-01',
    doc: '[1]',
    tags: '[]',
  });
  assert.deepEqual(rows[2], {
    _id: 3,
    name: null,
    n: null,
    big: null,
    amount: null,
    ratio: null,
    ok: null,
    at: null,
    day: null,
    doc: null,
    tags: null,
  });
});

test('Parquet dump: the same fields, filters, q, sort and limit as the other formats; an empty result is a valid file', async () => {
  const id = await newTable({
    fields: [
      { id: 'city', type: 'text' },
      { id: 'pop', type: 'int' },
    ],
    records: [
      { city: 'Lyon', pop: 500 },
      { city: 'Paris', pop: 2100 },
      { city: 'Nice', pop: 340 },
      { city: 'Lille', pop: 230 },
    ],
  });
  let r = await dump(id, `format=parquet&fields=city,pop&sort=${encodeURIComponent('pop desc')}&limit=2`);
  let got = await readParquet(r.rawPayload);
  assert.deepEqual(got.rows, [
    { city: 'Paris', pop: 2100 },
    { city: 'Lyon', pop: 500 },
  ]);
  r = await dump(id, `format=parquet&filters=${encodeURIComponent('{"city":"Nice"}')}`);
  assert.deepEqual((await readParquet(r.rawPayload)).rows, [{ _id: 3, city: 'Nice', pop: 340 }]);
  // With q, as in the other formats, each row's rank comes too.
  r = await dump(id, 'format=parquet&q=Lille&fields=city');
  got = await readParquet(r.rawPayload);
  assert.deepEqual(got.types, { city: 'VARCHAR', rank: 'DOUBLE' });
  assert.equal(got.rows.length, 1);
  assert.equal(got.rows[0].city, 'Lille');
  assert.ok((got.rows[0].rank as number) > 0);
  r = await dump(id, `format=parquet&filters=${encodeURIComponent('{"city":"Nowhere"}')}`);
  assert.equal(r.statusCode, 200);
  got = await readParquet(r.rawPayload);
  assert.deepEqual(got.rows, []);
  assert.deepEqual(Object.keys(got.types), ['_id', 'city', 'pop']);
  r = await dump(id, 'format=parquet&sort=nope');
  assert.equal(r.statusCode, 400);
  assert.equal(r.body, 'sort: invalid value "nope"');
  r = await dump(id, 'format=orc');
  assert.equal(r.statusCode, 400);
  assert.match(r.body, /^format: .*"parquet","geojson"/);
});

test('Parquet dump of many rows: several row groups, every row in order', async () => {
  const id = await newTable({ fields: [{ id: 'n', type: 'int' }] });
  const records = Array.from({ length: 60000 }, (_, i) => ({ n: i }));
  for (let i = 0; i < records.length; i += 20000) {
    await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records.slice(i, i + 20000) }, { token: editor.token });
  }
  const r = await dump(id, 'format=parquet&fields=n');
  const got = await readParquet(r.rawPayload);
  assert.equal(got.rows.length, 60000);
  assert.ok(got.rowGroups >= 2, `row groups: ${got.rowGroups}`);
  assert.ok(got.rows.every((row, i) => row.n === i));
});

test('GeoJSON dump from latitude/longitude columns: a FeatureCollection with the rows as properties', async () => {
  const id = await newTable({
    fields: [
      { id: 'station', type: 'text' },
      { id: 'Latitude', type: 'float8' },
      { id: 'Longitude', type: 'numeric' },
      { id: 'level', type: 'int' },
    ],
    records: [
      { station: 'Pont Neuf', Latitude: 48.857, Longitude: 2.341, level: 3 },
      { station: 'Unknown', Latitude: null, Longitude: null, level: 1 },
      { station: 'Quito', Latitude: -0.18, Longitude: -78.47, level: 9 },
    ],
  });
  let r = await dump(id, 'format=geojson');
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers['content-type'], 'application/geo+json; charset=utf-8');
  assert.equal(r.headers['content-disposition'], `attachment; filename="${id}.geojson"`);
  const fc = JSON.parse(r.body);
  assert.equal(fc.type, 'FeatureCollection');
  assert.equal(fc.features.length, 3);
  assert.deepEqual(fc.features[0], {
    type: 'Feature',
    id: 1,
    geometry: { type: 'Point', coordinates: [2.341, 48.857] },
    properties: { station: 'Pont Neuf', Latitude: 48.857, Longitude: 2.341, level: 3 },
  });
  assert.equal(fc.features[1].geometry, null);
  assert.deepEqual(fc.features[2].geometry.coordinates, [-78.47, -0.18]);
  r = await dump(id, `format=geojson&filters=${encodeURIComponent('{"station":"Quito"}')}&fields=station,Latitude,Longitude`);
  assert.deepEqual(JSON.parse(r.body).features, [
    {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [-78.47, -0.18] },
      properties: { station: 'Quito', Latitude: -0.18, Longitude: -78.47 },
    },
  ]);
  // Without its coordinate columns the same table has nothing to place.
  r = await dump(id, 'format=geojson&fields=station,level');
  assert.equal(r.statusCode, 409);
  assert.match(r.body, /no coordinates/);
});

test('GeoJSON dump from a column of GeoJSON geometries', async () => {
  const id = await newTable({
    fields: [
      { id: 'name', type: 'text' },
      { id: 'geometry', type: 'json' },
    ],
    records: [
      {
        name: 'square',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 1],
              [0, 0],
            ],
          ],
        },
      },
      { name: 'none', geometry: null },
    ],
  });
  const r = await dump(id, 'format=geojson');
  assert.equal(r.statusCode, 200);
  const fc = JSON.parse(r.body);
  assert.deepEqual(fc.features[0].geometry, {
    type: 'Polygon',
    coordinates: [
      [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
        [0, 0],
      ],
    ],
  });
  assert.deepEqual(fc.features[0].properties, { name: 'square' });
  assert.equal(fc.features[1].geometry, null);
});

test('GeoJSON dump of a table without coordinates, or with values no latitude can have: 409 saying why', async () => {
  const plain = await newTable({ fields: [{ id: 'name', type: 'text' }], records: [{ name: 'x' }] });
  let r = await dump(plain, 'format=geojson');
  assert.equal(r.statusCode, 409);
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
  assert.match(r.body, /^format: The table has no coordinates: no numeric latitude and longitude columns/);
  const projected = await newTable({
    fields: [
      { id: 'lat', type: 'float8' },
      { id: 'lon', type: 'float8' },
    ],
    records: [{ lat: 5400000, lon: 650000 }],
  });
  r = await dump(projected, 'format=geojson');
  assert.equal(r.statusCode, 409);
  assert.match(r.body, /lat\/lon hold values outside latitude -90\.\.90/);
});

test('the resource page lists Parquet and GeoJSON among the table downloads', async () => {
  const id = await newTable({ fields: [{ id: 'x', type: 'int' }], records: [{ x: 1 }] });
  const page = await t.app.inject({ method: 'GET', url: `/dataset/views-dumps/resource/${id}` });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, new RegExp(`href="/datastore/dump/${id}\\?format=parquet"[^>]*>Parquet`));
  assert.match(page.body, new RegExp(`href="/datastore/dump/${id}\\?format=geojson"[^>]*>GeoJSON`));
});

test('the TSV text a Parquet dump is made from is read whole, wherever its pieces are cut', () => {
  const text = 'a\t"b\tc"\t\n"x ""q"" é"\t""\t"line\none"\n\t\t€\n';
  const expected = [
    ['a', 'b\tc', null],
    ['x "q" é', '', 'line\none'],
    [null, null, '€'],
  ];
  const bytes = Buffer.from(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const rows: (string | null)[][] = [];
    const reader = new TsvRows();
    reader.push(bytes.subarray(0, cut), (r) => rows.push(r));
    reader.push(bytes.subarray(cut), (r) => rows.push(r));
    reader.end();
    assert.deepEqual(rows, expected, `cut at ${cut}`);
  }
  const unfinished = new TsvRows();
  unfinished.push(Buffer.from('a\tb'), () => undefined);
  assert.throws(() => unfinished.end(), /inside a line/);
});
