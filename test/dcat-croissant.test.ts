// Croissant 1.0 (plugin croissant): /dataset/{id}/croissant.jsonld for every dataset the caller may
// read, each data store table a cr:RecordSet whose cr:Fields are typed from the data dictionary and
// read from the table's CSV dump (which really has those columns), embedded in the pages of
// datasets with data store tables. Valid JSON-LD whose expansion has the Croissant properties.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import jsonld from 'jsonld';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

const S = 'https://schema.org/';
const CR = 'http://mlcommons.org/croissant/';
type Node = Record<string, any>;

let t: TestApp;
let admin: { token: string };
let member: { token: string };
let tableId: string;
let fileId: string;

before(async () => {
  t = await startApp({ plugins: ['datastore', 'structured_data', 'croissant'] });
  admin = { token: t.sysadminToken };
  const m = await t.user('cr_member');
  member = m;
  await t.ok('organization_create', { name: 'ml-lab', title: 'ML Lab' }, admin);
  await t.ok('organization_member_create', { id: 'ml-lab', username: m.name, role: 'member' }, admin);
  const pkg = await t.ok(
    'package_create',
    {
      name: 'weather-ml',
      title: 'Weather for learning',
      notes: 'Hourly observations of the weather stations, cleaned for training forecasting models.',
      owner_org: 'ml-lab',
      license_id: 'cc-by',
      author: 'Wendy Weather',
      extras: [{ key: 'cite_as', value: 'Weather W. (2024)' }],
      resources: [
        {
          name: 'Archive',
          url: 'https://example.org/weather.zip',
          format: 'ZIP',
          size: 12323,
          hash: 'b221d9dbb083a7f33428d7c2a3c3198ae925614d70210e28716ccaa7cd4ddb79',
        },
      ],
    },
    admin,
  );
  fileId = pkg.resources[0].id;
  tableId = (
    await t.ok(
      'datastore_create',
      {
        resource: { package_id: 'weather-ml', name: 'Observations' },
        fields: [
          { id: 'station', type: 'text', info: { label: 'Station', notes: 'Station code' } },
          { id: 'observed', type: 'timestamp' },
          { id: 'day', type: 'date' },
          { id: 'temperature', type: 'numeric', info: { notes: 'Degrees Celsius' } },
          { id: 'rain_mm', type: 'float8' },
          { id: 'gusts', type: 'int4' },
          { id: 'checked', type: 'bool' },
          { id: 'flags', type: '_text' },
        ],
        primary_key: ['station'],
        records: [
          {
            station: 'A1',
            observed: '2024-01-01T10:00:00',
            day: '2024-01-01',
            temperature: 3.5,
            rain_mm: 0.2,
            gusts: 4,
            checked: true,
            flags: ['x'],
          },
        ],
      },
      admin,
    )
  ).resource_id;
  await t.ok('package_create', { name: 'hidden-ml', title: 'Hidden ML', private: true, owner_org: 'ml-lab' }, admin);
});
after(async () => {
  await t?.close();
});

async function expanded(doc: unknown): Promise<Node[]> {
  return (await jsonld.expand(doc as jsonld.JsonLdDocument)) as Node[];
}
const one = (node: Node, iri: string): any => (node[iri] ?? [])[0];
const all = (node: Node, iri: string): any[] => node[iri] ?? [];
const value = (node: Node, iri: string): unknown => one(node, iri)?.['@value'];

test('/dataset/{id}/croissant.jsonld: a Croissant 1.0 dataset whose expansion has the required properties', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/dataset/weather-ml/croissant.jsonld' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^application\/ld\+json/);
  const doc = res.json();
  assert.equal(doc['@context'].cr, CR);
  const [ds] = (await expanded(doc)).filter((n) => (n['@type'] ?? []).includes(`${S}Dataset`));
  assert.ok(ds, 'an expanded schema.org Dataset');
  assert.equal(value(ds, 'http://purl.org/dc/terms/conformsTo'), 'http://mlcommons.org/croissant/1.0');
  assert.equal(value(ds, `${S}name`), 'Weather for learning');
  assert.match(String(value(ds, `${S}description`)), /^Hourly observations/);
  assert.equal(value(ds, `${S}license`), 'http://www.opendefinition.org/licenses/cc-by');
  assert.equal(value(ds, `${S}url`), 'http://test.local/dataset/weather-ml');
  assert.equal(value(one(ds, `${S}creator`), `${S}name`), 'Wendy Weather');
  assert.match(String(value(ds, `${S}datePublished`)), /^\d{4}-\d\d-\d\dT/);
  assert.equal(value(ds, `${CR}citeAs`), 'Weather W. (2024)');

  const files = all(ds, `${S}distribution`);
  const archive = files.find((f) => f['@id'] === `http://test.local/dataset/weather-ml/resource/${fileId}`);
  assert.deepEqual(archive['@type'], [`${CR}FileObject`]);
  assert.equal(value(archive, `${S}contentUrl`), 'https://example.org/weather.zip');
  assert.equal(value(archive, `${S}encodingFormat`), 'ZIP');
  assert.equal(value(archive, `${S}contentSize`), '12323');
  assert.equal(value(archive, `${S}sha256`), 'b221d9dbb083a7f33428d7c2a3c3198ae925614d70210e28716ccaa7cd4ddb79');
  const dumpUrl = `http://test.local/datastore/dump/${tableId}`;
  const dump = files.find((f) => f['@id'] === dumpUrl);
  assert.deepEqual(dump['@type'], [`${CR}FileObject`]);
  assert.equal(value(dump, `${S}encodingFormat`), 'text/csv');
});

test('a data store table is a cr:RecordSet: a cr:Field per column typed from the data dictionary, read from the dump', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/dataset/weather-ml/croissant.jsonld' })).json();
  const [ds] = (await expanded(doc)).filter((n) => (n['@type'] ?? []).includes(`${S}Dataset`));
  const sets = all(ds, `${CR}recordSet`);
  assert.equal(sets.length, 1);
  const [set] = sets;
  assert.deepEqual(set['@type'], [`${CR}RecordSet`]);
  assert.equal(value(set, `${S}name`), 'Observations');
  const fields = all(set, `${CR}field`);
  const byName = Object.fromEntries(fields.map((f) => [value(f, `${S}name`), f]));
  const typeOf = (name: string) => one(byName[name], `${CR}dataType`)?.['@id'];
  assert.deepEqual(
    Object.keys(byName).map((name) => [name, typeOf(name)]),
    [
      ['station', `${S}Text`],
      ['observed', `${S}DateTime`],
      ['day', `${S}Date`],
      ['temperature', `${S}Float`],
      ['rain_mm', `${S}Float`],
      ['gusts', `${S}Integer`],
      ['checked', `${S}Boolean`],
      ['flags', `${S}Text`],
    ],
  );
  assert.equal(value(byName.flags, `${CR}repeated`), true);
  assert.equal(value(byName.station, `${S}description`), 'Station code');
  assert.equal(value(byName.temperature, `${S}description`), 'Degrees Celsius');
  for (const f of fields) {
    assert.deepEqual(f['@type'], [`${CR}Field`]);
    const source = one(f, `${CR}source`);
    assert.equal(one(source, `${CR}fileObject`)['@id'], `http://test.local/datastore/dump/${tableId}`);
    assert.equal(value(one(source, `${CR}extract`), `${CR}column`), value(f, `${S}name`));
  }
  assert.equal(one(set, `${CR}key`)['@id'], byName.station['@id'], 'the primary key is the record set key');

  // The file the fields are read from has exactly these columns.
  const csv = await t.app.inject({ method: 'GET', url: `/datastore/dump/${tableId}` });
  assert.equal(csv.statusCode, 200);
  const header = csv.body
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)[0]
    .split(',');
  assert.deepEqual(
    Object.keys(byName).filter((name) => !header.includes(name)),
    [],
    `the dump's columns ${header.join(',')}`,
  );
});

test('the page of a dataset with data store tables embeds the schema.org and Croissant descriptions of one node', async () => {
  const body = (await new WebClient(t.app).get('/dataset/weather-ml')).body;
  const scripts = [...body.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  const docs = JSON.parse(scripts[0][1]);
  assert.ok(Array.isArray(docs));
  assert.deepEqual(
    docs.map((d: Node) => d['@type']),
    ['Dataset', 'sc:Dataset'],
  );
  const flat = (await jsonld.flatten(docs)) as unknown as Node[] | { '@graph': Node[] };
  const datasets = (Array.isArray(flat) ? flat : flat['@graph']).filter((n) =>
    ([] as string[]).concat(n['@type'] ?? []).includes(`${S}Dataset`),
  );
  assert.equal(datasets.length, 1, 'both describe the same dataset node');
  assert.ok(datasets[0][`${CR}recordSet`], 'with its record set');
  assert.ok(datasets[0][`${S}isAccessibleForFree`], 'and the schema.org properties');

  // A dataset without data store tables: no Croissant in its page, but the endpoint answers.
  await t.ok('package_create', { name: 'plain-ml', owner_org: 'ml-lab', resources: [{ url: 'https://example.org/a.csv' }] }, admin);
  const plain = JSON.parse(
    /<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec((await new WebClient(t.app).get('/dataset/plain-ml')).body)![1],
  );
  assert.equal(plain['@type'], 'Dataset');
  const endpoint = (await t.app.inject({ method: 'GET', url: '/dataset/plain-ml/croissant.jsonld' })).json();
  assert.equal(endpoint.conformsTo, 'http://mlcommons.org/croissant/1.0');
  assert.equal(endpoint.recordSet, undefined);
});

test('private, unknown and badly signed requests: 404 for what the caller may not read, 403 for a bad token', async () => {
  const get = (url: string, token?: string) => t.app.inject({ method: 'GET', url, headers: token ? { authorization: token } : {} });
  const anonymous = await get('/dataset/hidden-ml/croissant.jsonld');
  assert.equal(anonymous.statusCode, 404);
  assert.ok(!anonymous.body.includes('Hidden ML'));
  const asMember = await get('/dataset/hidden-ml/croissant.jsonld', member.token);
  assert.equal(asMember.statusCode, 200);
  assert.equal(asMember.json().name, 'Hidden ML');
  assert.equal((await get('/dataset/no-such-dataset/croissant.jsonld')).statusCode, 404);
  assert.equal((await get('/dataset/weather-ml/croissant.jsonld', 'not-a-token')).statusCode, 403);
});
