// DCAT output through HTTP: /dataset/{id}.{format} in every format and profile, read back with the
// RDF libraries; the DCAT-AP 3 / 2 and DCAT-US 3 mapping of core fields, extras and resources; a
// data store table as a dcat:DataService; Croissant record sets; private datasets; bad input.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from 'n3';
import { startApp, type TestApp } from './helpers/app.ts';
import { organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { instances, NS, objects, parseRdf, values } from './helpers/rdf.ts';

let t: TestApp;
let editor: TestUser;
let river: any;
let secret: any;
let tableId: string;

const FORMATS = {
  ttl: 'text/turtle',
  n3: 'text/n3',
  nt: 'application/n-triples',
  jsonld: 'application/ld+json',
  xml: 'application/rdf+xml',
  rdf: 'application/rdf+xml',
};

before(async () => {
  t = await startApp();
  editor = (await organizationWithTeam(t, { name: 'dcat-org', title: 'Rivers Agency' }, { dcat_editor: 'editor' })).users.dcat_editor;
  river = await t.ok(
    'package_create',
    {
      name: 'river-levels',
      title: 'River levels',
      notes: 'Water levels of the rivers, hourly.',
      owner_org: 'dcat-org',
      license_id: 'cc-by',
      tags: [{ name: 'water' }, { name: 'hydrology' }],
      author: 'Ann Author',
      author_email: 'ann@example.org',
      maintainer: 'Max Maintainer',
      maintainer_email: 'max@example.org',
      version: '2.1',
      url: 'https://example.org/rivers',
      extras: [
        { key: 'temporal_start', value: '2020-01-01' },
        { key: 'temporal_end', value: '2020-12-31' },
        { key: 'spatial_uri', value: 'http://sws.geonames.org/2950159/' },
        { key: 'spatial_text', value: 'Berlin' },
        { key: 'language', value: '["http://publications.europa.eu/resource/authority/language/ENG"]' },
        { key: 'theme', value: '["http://publications.europa.eu/resource/authority/data-theme/ENVI"]' },
        { key: 'frequency', value: 'http://publications.europa.eu/resource/authority/frequency/HOURLY' },
        { key: 'access_rights', value: 'http://publications.europa.eu/resource/authority/access-right/PUBLIC' },
        { key: 'liability', value: 'No warranty.' },
        { key: 'purpose', value: 'Flood warnings' },
      ],
      resources: [
        {
          name: 'Levels CSV',
          url: 'https://example.org/levels.csv',
          format: 'CSV',
          size: 4096,
          hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        },
        { name: 'Odd format', url: 'https://example.org/levels.dat', format: 'Proprietary DAT' },
      ],
    },
    { token: editor.token },
  );
  secret = await t.ok(
    'package_create',
    { name: 'secret-levels', title: 'Secret levels', owner_org: 'dcat-org', private: true },
    { token: editor.token },
  );
  const table = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'river-levels', name: 'Levels table' },
      fields: [
        { id: 'station', type: 'text' },
        { id: 'level', type: 'numeric' },
      ],
      records: [{ station: 'A', level: 1.5 }],
    },
    { token: editor.token },
  );
  tableId = table.resource_id;
});
after(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

async function rdfOf(url: string, ext: string, headers: Record<string, string> = {}): Promise<Store> {
  const r = await get(url, headers);
  assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
  return parseRdf(r.body, ext);
}

const datasetUri = () => `http://test.local/dataset/${river.id}`;

describe('dataset endpoint', () => {
  test('every format answers with its media type and parses to the same DCAT-AP 3 dataset', async () => {
    let triples: number | undefined;
    for (const [ext, type] of Object.entries(FORMATS)) {
      const r = await get(`/dataset/river-levels.${ext}`);
      assert.equal(r.statusCode, 200, ext);
      assert.equal(r.headers['content-type'], `${type}; charset=utf-8`);
      const store = await parseRdf(r.body, ext);
      assert.deepEqual(instances(store, `${NS.dcat}Dataset`), [datasetUri()], ext);
      assert.deepEqual(values(store, datasetUri(), `${NS.dct}title`), ['River levels'], ext);
      // blank node labels differ, the number of triples does not
      triples ??= store.size;
      assert.equal(store.size, triples, `${ext} has as many triples as ttl`);
    }
  });

  test('every profile in every format', async () => {
    const expect: Record<string, string> = {
      euro_dcat_ap_3: `${NS.dcat}Dataset`,
      euro_dcat_ap_2: `${NS.dcat}Dataset`,
      dcat_us_3: `${NS.dcat}Dataset`,
      schemaorg: `${NS.schema}Dataset`,
      croissant: `${NS.schema}Dataset`,
    };
    for (const [profile, cls] of Object.entries(expect)) {
      for (const ext of ['ttl', 'jsonld', 'xml', 'nt', 'n3']) {
        const store = await rdfOf(`/dataset/river-levels.${ext}?profiles=${profile}`, ext);
        assert.ok(instances(store, cls).length === 1, `${profile} ${ext}: one ${cls}`);
      }
    }
  });

  test('DCAT-AP 3: core fields, extras, contact point, publisher, coverage and distributions', async () => {
    const s = await rdfOf('/dataset/river-levels.ttl', 'ttl');
    const d = datasetUri();
    assert.deepEqual(values(s, d, `${NS.dct}description`), ['Water levels of the rivers, hourly.']);
    assert.deepEqual(values(s, d, `${NS.dcat}keyword`).sort(), ['hydrology', 'water']);
    assert.deepEqual(values(s, d, `${NS.dcat}version`), ['2.1']);
    assert.deepEqual(values(s, d, `${NS.owl}versionInfo`), []);
    assert.deepEqual(values(s, d, `${NS.dcat}landingPage`), ['https://example.org/rivers']);
    assert.deepEqual(values(s, d, `${NS.dct}identifier`), [river.id]);
    assert.deepEqual(values(s, d, `${NS.dct}language`), ['http://publications.europa.eu/resource/authority/language/ENG']);
    assert.deepEqual(values(s, d, `${NS.dcat}theme`), ['http://publications.europa.eu/resource/authority/data-theme/ENVI']);
    assert.deepEqual(values(s, d, `${NS.dct}accrualPeriodicity`), ['http://publications.europa.eu/resource/authority/frequency/HOURLY']);
    assert.deepEqual(values(s, d, `${NS.dct}accessRights`), ['http://publications.europa.eu/resource/authority/access-right/PUBLIC']);
    const issued = objects(s, d, `${NS.dct}issued`)[0] as any;
    assert.equal(issued.datatype.value, `${NS.xsd}dateTime`);
    assert.match(issued.value, /Z$/);
    // the maintainer is the contact point
    const [contact] = objects(s, d, `${NS.dcat}contactPoint`);
    assert.deepEqual(values(s, contact, `${NS.vcard}fn`), ['Max Maintainer']);
    assert.deepEqual(values(s, contact, `${NS.vcard}hasEmail`), ['mailto:max@example.org']);
    // the organization is the publisher
    assert.deepEqual(values(s, d, `${NS.dct}publisher`), ['http://test.local/organization/dcat-org']);
    assert.deepEqual(values(s, 'http://test.local/organization/dcat-org', `${NS.foaf}name`), ['Rivers Agency']);
    const [period] = objects(s, d, `${NS.dct}temporal`);
    assert.deepEqual(values(s, period, `${NS.dcat}startDate`), ['2020-01-01']);
    assert.deepEqual(values(s, period, `${NS.dcat}endDate`), ['2020-12-31']);
    assert.deepEqual(values(s, d, `${NS.dct}spatial`), ['http://sws.geonames.org/2950159/']);
    assert.deepEqual(values(s, 'http://sws.geonames.org/2950159/', `${NS.skos}prefLabel`), ['Berlin']);

    const csv = river.resources.find((r: any) => r.format === 'CSV');
    const dist = `${d}/resource/${csv.id}`;
    assert.ok(values(s, d, `${NS.dcat}distribution`).includes(dist));
    assert.deepEqual(values(s, dist, `${NS.dcat}accessURL`), ['https://example.org/levels.csv']);
    assert.deepEqual(values(s, dist, `${NS.dcat}mediaType`), ['https://www.iana.org/assignments/media-types/text/csv']);
    assert.deepEqual(values(s, dist, `${NS.dct}format`), ['https://www.iana.org/assignments/media-types/text/csv']);
    const size = objects(s, dist, `${NS.dcat}byteSize`)[0] as any;
    assert.equal(size.value, '4096');
    assert.equal(size.datatype.value, `${NS.xsd}nonNegativeInteger`);
    const [checksum] = objects(s, dist, `${NS.spdx}checksum`);
    assert.deepEqual(values(s, checksum, `${NS.spdx}algorithm`), [`${NS.spdx}checksumAlgorithm_sha256`]);
    assert.deepEqual(values(s, checksum, `${NS.spdx}checksumValue`), [csv.hash]);
    assert.deepEqual(values(s, dist, `${NS.dct}license`), ['http://www.opendefinition.org/licenses/cc-by']);
    // a format without a media type is a labelled dct:MediaTypeOrExtent
    const odd = river.resources.find((r: any) => r.format === 'Proprietary DAT');
    const [format] = objects(s, `${d}/resource/${odd.id}`, `${NS.dct}format`);
    assert.equal(format.termType, 'BlankNode');
    assert.deepEqual(values(s, format, `${NS.rdfs}label`), ['Proprietary DAT']);
  });

  test('DCAT-AP 2 writes owl:versionInfo and decimal byte sizes; DCAT-US 3 adds its properties', async () => {
    const ap2 = await rdfOf('/dataset/river-levels.ttl?profiles=euro_dcat_ap_2', 'ttl');
    assert.deepEqual(values(ap2, datasetUri(), `${NS.owl}versionInfo`), ['2.1']);
    assert.deepEqual(values(ap2, datasetUri(), `${NS.dcat}version`), []);
    const csv = river.resources.find((r: any) => r.format === 'CSV');
    assert.equal((objects(ap2, `${datasetUri()}/resource/${csv.id}`, `${NS.dcat}byteSize`)[0] as any).datatype.value, `${NS.xsd}decimal`);

    const us = await rdfOf('/dataset/river-levels.jsonld?profiles=dcat_us_3', 'jsonld');
    assert.deepEqual(values(us, datasetUri(), `${NS.dcatus}purpose`), ['Flood warnings']);
    const [liability] = objects(us, datasetUri(), `${NS.dcatus}liabilityStatement`);
    assert.deepEqual(values(us, liability, `${NS.rdfs}label`), ['No warranty.']);
    assert.deepEqual(values(us, `${datasetUri()}/resource/${csv.id}`, `${NS.dct}identifier`), [csv.id]);
  });

  test('a data store table is served by a dcat:DataService described by our OpenAPI document', async () => {
    const s = await rdfOf('/dataset/river-levels.ttl', 'ttl');
    const dist = `${datasetUri()}/resource/${tableId}`;
    const [service] = values(s, dist, `${NS.dcat}accessService`);
    assert.ok(service, 'the table has an access service');
    assert.deepEqual(instances(s, `${NS.dcat}DataService`), [service]);
    assert.deepEqual(values(s, service, `${NS.dcat}endpointURL`), [
      `http://test.local/api/3/action/datastore_search?resource_id=${tableId}`,
    ]);
    const [description] = values(s, service, `${NS.dcat}endpointDescription`);
    assert.equal(description, 'http://test.local/api/3/openapi.json');
    assert.deepEqual(values(s, service, `${NS.dcat}servesDataset`), [datasetUri()]);
    assert.equal((await get('/api/3/openapi.json')).statusCode, 200);
    // DCAT-US: the table's data dictionary is datastore_info
    const us = await rdfOf('/dataset/river-levels.ttl?profiles=dcat_us_3', 'ttl');
    const [dictionary] = objects(us, dist, `${NS.dcatus}describedBy`);
    assert.deepEqual(values(us, dictionary, `${NS.dcat}accessURL`), [`http://test.local/api/3/action/datastore_info?id=${tableId}`]);
  });

  test('Croissant: the table is a cr:RecordSet with a cr:Field per column', async () => {
    const s = await rdfOf('/dataset/river-levels.ttl?profiles=croissant', 'ttl');
    const sets = instances(s, `${NS.cr}RecordSet`);
    assert.equal(sets.length, 1);
    const fields = instances(s, `${NS.cr}Field`);
    const names = fields.flatMap((f) => values(s, f, `${NS.schema}name`)).sort();
    assert.deepEqual(names, ['level', 'station']);
  });

  test('dcat_dataset_show returns the document as text; formats by name; a private dataset only for its readers', async () => {
    const text = await t.ok('dcat_dataset_show', { id: 'river-levels', format: 'turtle' });
    assert.equal(typeof text, 'string');
    assert.equal(instances(await parseRdf(text, 'ttl'), `${NS.dcat}Dataset`).length, 1);
    const xml = await t.ok('dcat_dataset_show', { id: 'river-levels' });
    assert.match(xml, /^<\?xml/);

    assert.equal((await get('/dataset/secret-levels.ttl')).statusCode, 404);
    assert.equal((await get(`/dataset/${secret.id}.jsonld`)).statusCode, 404);
    const denied = await t.call('dcat_dataset_show', { id: 'secret-levels', format: 'ttl' });
    assert.equal(denied.body.success, false);
    const own = await rdfOf('/dataset/secret-levels.ttl', 'ttl', { authorization: editor.token });
    assert.deepEqual(values(own, `http://test.local/dataset/${secret.id}`, `${NS.dct}title`), ['Secret levels']);
  });

  test('bad input: unknown format 404, unknown profile 400 naming profiles (409 from the action), unknown dataset 404', async () => {
    const unknownFormat = await get('/dataset/river-levels.docx');
    assert.equal(unknownFormat.statusCode, 404);
    assert.match(unknownFormat.body, /Unknown RDF format "docx"/);
    const badProfile = await get('/dataset/river-levels.ttl?profiles=euro_dcat_ap_3,nope');
    assert.equal(badProfile.statusCode, 400);
    assert.match(badProfile.body, /^profiles: Unknown RDF profile "nope"/);
    const action = await t.call('dcat_dataset_show', { id: 'river-levels', profiles: 'nope' });
    assert.equal(action.status, 409);
    assert.equal(action.body.error?.__type, 'Validation Error');
    assert.ok(action.body.error?.profiles);
    const badFormat = await t.call('dcat_dataset_show', { id: 'river-levels', format: 'docx' });
    assert.equal(badFormat.status, 409);
    assert.ok(badFormat.body.error?.format);
    assert.equal((await get('/dataset/no-such-dataset.ttl')).statusCode, 404);
  });
});

describe('content negotiation and alternate links', () => {
  test('the dataset page answers RDF to an RDF Accept and HTML to a browser', async () => {
    const ttl = await get('/dataset/river-levels', { accept: 'text/turtle' });
    assert.equal(ttl.headers['content-type'], 'text/turtle; charset=utf-8');
    assert.equal(instances(await parseRdf(ttl.body, 'ttl'), `${NS.dcat}Dataset`).length, 1);
    const weighted = await get('/dataset/river-levels', { accept: 'application/rdf+xml;q=0.5, application/ld+json' });
    assert.equal(weighted.headers['content-type'], 'application/ld+json; charset=utf-8');
    const browser = await get('/dataset/river-levels', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    assert.match(String(browser.headers['content-type']), /^text\/html/);
    for (const [ext, type] of [
      ['ttl', 'text/turtle'],
      ['xml', 'application/rdf+xml'],
      ['jsonld', 'application/ld+json'],
    ]) {
      assert.ok(browser.body.includes(`<link rel="alternate" type="${type}" href="http://test.local/dataset/river-levels.${ext}">`), ext);
    }
    const privateAsRdf = await get('/dataset/secret-levels', { accept: 'text/turtle' });
    assert.equal(privateAsRdf.statusCode, 404);
  });
});
