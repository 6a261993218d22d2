// dcat_parse through HTTP: DCAT documents written for these tests (DCAT-AP 3 Turtle catalog page
// with hydra paging, DCAT-AP 2 RDF/XML, DCAT-US 3 JSON-LD) become dataset dicts in the legacy
// shape (extras) or, with a schema defining the DCAT fields, the scheming shape; hostile and
// malformed documents are Validation Errors naming the field, and nothing is fetched.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Parser, Writer } from 'n3';
import { startApp, type TestApp } from './helpers/app.ts';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'dcat', name), 'utf8');
const turtle = fixture('catalog-ap3.ttl');
const rdfXml = fixture('dataset-ap2.rdf');
const jsonLd = fixture('catalog-us3.jsonld');

let t: TestApp;
let scheming: TestApp;

before(async () => {
  t = await startApp({ plugins: ['dcat'] });
  scheming = await startApp({
    plugins: ['dcat'],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'dcat', 'dcat-ap-schema.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.dcat.schemas:presets.yaml'],
      'svc.dcat.parse.max_size': 1,
    },
  });
});
after(async () => {
  await t?.close();
  await scheming?.close();
});

const extras = (d: any): Record<string, string> => Object.fromEntries((d.extras ?? []).map((e: any) => [e.key, e.value]));

test('a DCAT-AP 3 Turtle catalog page: datasets in the legacy shape, the catalog and its hydra paging', async () => {
  const r = await t.ok('dcat_parse', { data: turtle, format: 'ttl' });
  assert.equal(r.format, 'turtle');
  assert.equal(r.next_page, 'https://opendata.example.org/catalog.ttl?page=2');
  assert.equal(r.total_items, 5);
  assert.equal(r.paging.last, 'https://opendata.example.org/catalog.ttl?page=3');
  assert.equal(r.catalog.title, 'River city open data', 'the English title of a multilingual catalog');
  assert.equal(r.catalog.homepage, 'https://opendata.example.org/');
  assert.deepEqual(r.datasets.map((d: any) => d.title).sort(), ['Bridges', 'River levels']);

  const river = r.datasets.find((d: any) => d.title === 'River levels');
  assert.equal(river.notes, 'Water levels measured every 15 minutes.\nSince 1990.');
  assert.equal(river.url, 'https://rivers.example.org/levels');
  assert.equal(river.version, '2.1');
  assert.deepEqual(river.tags.map((x: any) => x.name).sort(), ['rivers', 'water'], 'keywords of the preferred language only');
  assert.equal(river.license_id, 'cc-by', "the distribution's licence IRI matched to the register");
  const e = extras(river);
  assert.equal(e.uri, 'https://opendata.example.org/dataset/river-levels');
  assert.equal(e.issued, '2020-01-15');
  assert.equal(e.modified, '2026-11-01T10:30:00');
  assert.equal(e.identifier, 'river-levels-0001');
  assert.equal(e.dcat_type, 'http://purl.org/dc/dcmitype/Dataset');
  assert.equal(e.version_notes, 'Gauge 7 recalibrated.');
  assert.equal(e.frequency, 'http://publications.europa.eu/resource/authority/frequency/DAILY');
  assert.equal(e.provenance, "Measured by the city's gauges.");
  assert.equal(e.access_rights, 'http://publications.europa.eu/resource/authority/access-right/PUBLIC');
  assert.deepEqual(JSON.parse(e.language!).sort(), [
    'http://publications.europa.eu/resource/authority/language/DEU',
    'http://publications.europa.eu/resource/authority/language/ENG',
  ]);
  assert.deepEqual(JSON.parse(e.alternate_identifier!), ['doi:10.1234/river']);
  assert.deepEqual(JSON.parse(e.hvd_category!), ['http://data.europa.eu/bna/c_dd313021']);
  assert.equal(e.temporal_resolution, 'PT15M');
  assert.equal(e.spatial_resolution_in_meters, '10.0');
  assert.equal(e.contact_name, 'Water office');
  assert.equal(e.contact_email, 'water@example.org', 'mailto: dropped');
  assert.equal(e.publisher_uri, 'https://opendata.example.org/org/city');
  assert.equal(e.publisher_name, 'River City');
  assert.equal(e.publisher_type, 'http://purl.org/adms/publishertype/LocalAuthority');
  assert.equal(e.creator_name, 'Hydrology lab');
  assert.equal(e.temporal_start, '1990-01-01');
  assert.equal(e.temporal_end, '2026-12-31');
  assert.equal(e.spatial_uri, 'https://sws.geonames.org/2950159/');
  assert.equal(e.spatial_text, 'Berlin');
  assert.deepEqual(JSON.parse(e.spatial!), {
    type: 'Polygon',
    coordinates: [
      [
        [13.08, 52.33],
        [13.76, 52.33],
        [13.76, 52.67],
        [13.08, 52.67],
        [13.08, 52.33],
      ],
    ],
  });
  assert.deepEqual(JSON.parse(e.spatial_centroid!), { type: 'Point', coordinates: [13.4, 52.5] });

  assert.equal(river.resources.length, 1);
  const csv = river.resources[0];
  assert.equal(csv.name, 'Levels (CSV)');
  assert.equal(csv.url, 'https://rivers.example.org/levels.csv');
  assert.equal(csv.format, 'CSV', 'the EU file-type IRI as its code');
  assert.equal(csv.mimetype, 'text/csv', 'the IANA IRI as the media type');
  assert.equal(csv.size, 123456);
  assert.equal(csv.hash, '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08');
  assert.equal(csv.hash_algorithm, 'http://spdx.org/rdf/terms#checksumAlgorithm_sha256');
  assert.equal(csv.status, 'http://purl.org/adms/status/Completed');
  const services = JSON.parse(csv.access_services);
  assert.deepEqual(services[0].endpoint_url, ['https://opendata.example.org/api/3/action/datastore_search']);

  const bridges = r.datasets.find((d: any) => d.title === 'Bridges');
  assert.equal(bridges.license_id, 'odc-odbl');
  assert.equal(extras(bridges).temporal_start, '2001');
  assert.equal(extras(bridges).temporal_end, undefined);
  assert.deepEqual(JSON.parse(extras(bridges).spatial!), { type: 'Point', coordinates: [13.1, 52.4] });
  assert.equal(bridges.resources[0].url, 'https://maps.example.org/bridges', 'the access URL when there is no download URL');
  assert.equal(bridges.resources[0].format, 'WMS');
  assert.equal(bridges.resources[0].uri, undefined, 'a blank-node distribution has no URI');
});

test('a DCAT-AP 2 RDF/XML dataset, its format guessed', async () => {
  const r = await t.ok('dcat_parse', { data: rdfXml });
  assert.equal(r.format, 'xml');
  assert.equal(r.next_page, undefined);
  assert.equal(r.datasets.length, 1);
  const d = r.datasets[0];
  assert.equal(d.title, 'Air quality');
  assert.equal(d.notes, 'Hourly NO2 and PM10 & PM2.5 readings.');
  assert.deepEqual(d.tags.map((x: any) => x.name).sort(), ['air', 'pollution']);
  assert.equal(d.license_id, 'odc-by');
  const e = extras(d);
  assert.equal(e.contact_uri, 'https://data.example.eu/contact/air');
  assert.equal(e.contact_email, 'air@example.eu');
  assert.equal(e.publisher_email, 'info@env.example.eu');
  assert.equal(e.temporal_start, '2019-01-01', 'schema:startDate of DCAT-AP 1/2');
  assert.equal(e.temporal_end, '2019-12-31');
  assert.deepEqual(JSON.parse(e.theme!).length, 2);
  const res = d.resources[0];
  assert.equal(res.size, 2048);
  assert.equal(res.hash_algorithm, 'http://spdx.org/rdf/terms#checksumAlgorithm_md5');
  assert.deepEqual(JSON.parse(res.documentation), ['https://air.example.eu/docs'], 'a list in a resource without schema: JSON text');
});

test('a DCAT-US 3 JSON-LD catalog: the US fields only with the dcat_us_3 profile', async () => {
  const us = await t.ok('dcat_parse', { data: jsonLd, format: 'jsonld', profiles: 'dcat_us_3' });
  assert.equal(us.total_items, 1, 'hydra:totalItems on the collection');
  assert.equal(us.catalog.title, 'Example state data');
  const d = us.datasets[0];
  assert.equal(d.title, 'State parks');
  assert.equal(d.license_id, 'cc-zero', 'a licence on the dataset');
  const e = extras(d);
  assert.equal(e.liability, 'Provided as is.');
  assert.deepEqual(JSON.parse(e.purpose!), ['Planning visits.']);
  assert.deepEqual(JSON.parse(e.usage!), ['Not for navigation.']);
  assert.deepEqual(JSON.parse(e.contributor!), [{ name: 'Survey team' }]);
  assert.deepEqual(JSON.parse(e.bbox!), [{ west: '-124.4', east: '-114.1', north: '42.0', south: '32.5' }]);
  assert.equal(d.resources[0].character_encoding, 'UTF-8');
  assert.equal(d.resources[0].identifier, 'parks-001-geojson');
  assert.equal(d.resources[0].url, 'https://data.example.gov/files/parks.geojson');
  assert.equal(d.resources[0].mimetype, 'application/geo+json');

  const ap = await t.ok('dcat_parse', { data: jsonLd, profiles: ['euro_dcat_ap_3'] });
  assert.equal(extras(ap.datasets[0]).liability, undefined, 'DCAT-AP does not read DCAT-US properties');
  assert.equal(extras(ap.datasets[0]).identifier, 'parks-001');
});

test('N-Triples and N3 of the same graph give the same datasets as Turtle', async () => {
  const quads = new Parser().parse(turtle);
  const nt = new Writer({ format: 'N-Triples' }).quadsToString(quads);
  const fromTurtle = await t.ok('dcat_parse', { data: turtle });
  const fromNt = await t.ok('dcat_parse', { data: nt, format: 'nt' });
  const fromN3 = await t.ok('dcat_parse', { data: turtle, format: 'n3' });
  const byTitle = (r: any) => [...r.datasets].sort((a: any, b: any) => a.title.localeCompare(b.title));
  assert.deepEqual(byTitle(fromNt), byTitle(fromTurtle));
  assert.deepEqual(byTitle(fromN3), byTitle(fromTurtle));
  assert.equal(fromNt.next_page, fromTurtle.next_page);
});

test('with a schema defining the DCAT fields they stay top-level: lists as lists, agents as objects', async () => {
  const r = await scheming.ok('dcat_parse', { data: turtle });
  const river = r.datasets.find((d: any) => d.title === 'River levels');
  assert.deepEqual(river.contact, [{ name: 'Water office', email: 'water@example.org', url: 'https://example.org/water' }]);
  assert.deepEqual(river.publisher, [
    {
      uri: 'https://opendata.example.org/org/city',
      name: 'River City',
      url: 'https://river-city.example.org',
      type: 'http://purl.org/adms/publishertype/LocalAuthority',
    },
  ]);
  assert.deepEqual(river.temporal_coverage, [{ start: '1990-01-01', end: '2026-12-31' }]);
  assert.equal(river.spatial_coverage[0].uri, 'https://sws.geonames.org/2950159/');
  assert.equal(river.spatial_coverage[0].text, 'Berlin');
  assert.equal(JSON.parse(river.spatial_coverage[0].geom).type, 'Polygon');
  assert.deepEqual(river.theme, ['http://publications.europa.eu/resource/authority/data-theme/ENVI']);
  assert.equal(river.issued, '2020-01-15');
  const e = extras(river);
  assert.equal(river.uri, 'https://opendata.example.org/dataset/river-levels');
  assert.equal(e.dcat_type, 'http://purl.org/dc/dcmitype/Dataset', 'a field the schema lacks is still an extra');
  assert.equal(e.contact_name, undefined);
  assert.deepEqual(river.resources[0].documentation ?? [], [], 'no foaf:page on this distribution');
  const air = (await scheming.ok('dcat_parse', { data: rdfXml })).datasets[0];
  assert.deepEqual(air.resources[0].documentation, ['https://air.example.eu/docs'], 'a list the resource schema defines stays a list');
});

test('malformed documents, unknown formats and profiles: Validation Errors naming the field', async () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ data: '<http://a> <http://b> "unterminated .', format: 'ttl' }, 'data', /Error parsing the RDF file/],
    [
      { data: '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description>', format: 'xml' },
      'data',
      /Error parsing/,
    ],
    [{ data: '{"@context": {"dct": "http://purl.org/dc/terms/"}, "dct:title": ', format: 'jsonld' }, 'data', /not JSON/],
    [{ data: '"just a string"', format: 'jsonld' }, 'data', /object or an array/],
    [{ data: turtle, format: 'docx' }, 'format', /Unknown format "docx"/],
    [{ data: turtle, profiles: 'euro_dcat_ap_9' }, 'profiles', /Unknown RDF profile "euro_dcat_ap_9"/],
    [{ data: turtle, profiles: 'schemaorg' }, 'profiles', /None of the profiles schemaorg reads DCAT documents/],
    [{ format: 'ttl' }, 'data', /Missing value/],
  ];
  for (const [params, field, message] of cases) {
    const r = await t.call('dcat_parse', params);
    assert.equal(r.status, 409, JSON.stringify(params).slice(0, 80));
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.match(String(r.body.error![field]), message, `${field}: ${JSON.stringify(r.body.error)}`);
  }
});

test('hostile input: no remote @context fetched, no XML entities expanded, a size limit', async () => {
  let fetched = 0;
  const server = http.createServer((_req, res) => {
    fetched++;
    res.setHeader('content-type', 'application/ld+json');
    res.end(JSON.stringify({ '@context': { title: 'http://purl.org/dc/terms/title' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/context.jsonld`;
    const r = await t.call('dcat_parse', {
      data: JSON.stringify({ '@context': url, '@type': 'http://www.w3.org/ns/dcat#Dataset', title: 'x' }),
    });
    assert.equal(r.status, 409);
    assert.match(String(r.body.error!.data), /remote JSON-LD contexts are not loaded/);
    assert.equal(fetched, 0, 'the context URL was never requested');
  } finally {
    server.close();
  }

  const laughs =
    '<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' +
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:dct="http://purl.org/dc/terms/">' +
    '<rdf:Description rdf:about="http://x"><dct:title>&b;</dct:title></rdf:Description></rdf:RDF>';
  const x = await t.call('dcat_parse', { data: laughs });
  assert.equal(x.status, 409);
  assert.match(String(x.body.error!.data), /DOCTYPE/);

  const big = `# ${'x'.repeat(1024 * 1024)}\n${turtle}`;
  const tooBig = await scheming.call('dcat_parse', { data: big });
  assert.equal(tooBig.status, 409);
  assert.match(String(tooBig.body.error!.data), /at most 1 MB/);
  const fine = await t.ok('dcat_parse', { data: big });
  assert.equal(fine.datasets.length, 2, 'the default limit (10 MB) reads it');
});

test('an empty document and one without datasets parse to no datasets', async () => {
  assert.deepEqual((await t.ok('dcat_parse', { data: ' \n', format: 'ttl' })).datasets, []);
  const none = await t.ok('dcat_parse', { data: '<http://a> <http://b> <http://c> .' });
  assert.deepEqual(none.datasets, []);
  assert.equal(none.catalog, undefined);
});
