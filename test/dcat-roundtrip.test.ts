// Dataset -> RDF -> dataset through HTTP: GET /dataset/{id}.{format} (the dcat plugin's output),
// POST dcat_parse with that text, and every mapped field is back, in every format; once with the
// DCAT fields as legacy extras (core schema), once as top-level fields of a custom schema. A
// catalog is followed page by page through its hydra paging, as a DCAT harvester does.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

const FORMATS = ['ttl', 'rdf', 'xml', 'jsonld', 'n3', 'nt'];

let legacy: TestApp;
let scheming: TestApp;

before(async () => {
  legacy = await startApp({ plugins: ['dcat'], config: { 'svc.dcat.datasets_per_page': 1 } });
  scheming = await startApp({
    plugins: ['dcat'],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'dcat', 'dcat-ap-schema.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.dcat.schemas:presets.yaml'],
    },
  });
});
after(async () => {
  await legacy?.close();
  await scheming?.close();
});

async function rdfOf(t: TestApp, url: string): Promise<string> {
  const r = await t.app.inject({ method: 'GET', url });
  assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
  return r.body;
}

async function roundTrip(t: TestApp, id: string, format: string): Promise<Record<string, any>> {
  const text = await rdfOf(t, `/dataset/${id}.${format}`);
  const parsed = await t.ok('dcat_parse', { data: text, format: format === 'rdf' ? 'xml' : format });
  assert.equal(parsed.datasets.length, 1, `${format}: one dataset`);
  return parsed.datasets[0];
}

const extras = (d: any): Record<string, string> => Object.fromEntries((d.extras ?? []).map((e: any) => [e.key, e.value]));
const sorted = (v: string) => (JSON.parse(v) as string[]).sort();
/** Times as CKAN returns them and as RDF carries them (xsd:dateTime, maybe with Z) compared as instants. */
const instant = (v: string) => new Date(/Z|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`).toISOString();

const LIST_EXTRAS = ['language', 'theme', 'conforms_to', 'documentation', 'alternate_identifier', 'is_referenced_by', 'hvd_category'];
const TEXT_EXTRAS = [
  'identifier',
  'version_notes',
  'frequency',
  'access_rights',
  'provenance',
  'temporal_start',
  'temporal_end',
  'spatial_uri',
  'spatial_text',
  'contact_uri',
  'contact_name',
  'contact_email',
  'publisher_uri',
  'publisher_name',
  'publisher_email',
  'publisher_url',
  'creator_name',
  'creator_email',
];

test('legacy shape: core fields and DCAT extras survive RDF in every format', async () => {
  const sys = { token: legacy.sysadminToken };
  const org = await legacy.ok('organization_create', { name: 'river-city', title: 'River City' }, sys);
  const given: Record<string, string> = {
    identifier: 'river-levels-0001',
    version_notes: 'Gauge 7 recalibrated.',
    frequency: 'http://publications.europa.eu/resource/authority/frequency/DAILY',
    access_rights: 'http://publications.europa.eu/resource/authority/access-right/PUBLIC',
    provenance: "Measured by the city's gauges.",
    temporal_start: '1990-01-01',
    temporal_end: '2026-12-31',
    spatial_uri: 'https://sws.geonames.org/2950159/',
    spatial_text: 'Berlin',
    spatial: '{"type": "Point", "coordinates": [13.4, 52.5]}',
    contact_uri: 'https://river-city.example.org/contact/water',
    contact_name: 'Water office',
    contact_email: 'water@example.org',
    publisher_uri: 'https://river-city.example.org/',
    publisher_name: 'River City council',
    publisher_email: 'council@example.org',
    publisher_url: 'https://river-city.example.org/council',
    creator_name: 'Hydrology lab',
    creator_email: 'lab@example.org',
    language:
      '["http://publications.europa.eu/resource/authority/language/ENG", "http://publications.europa.eu/resource/authority/language/DEU"]',
    theme: '["http://publications.europa.eu/resource/authority/data-theme/ENVI"]',
    conforms_to: '["https://www.iso.org/standard/32554.html"]',
    documentation: '["https://rivers.example.org/handbook.pdf"]',
    alternate_identifier: '["doi:10.1234/river"]',
    is_referenced_by: '["https://doi.org/10.5555/paper"]',
    hvd_category: '["http://data.europa.eu/bna/c_dd313021"]',
  };
  const d = await legacy.ok(
    'package_create',
    {
      name: 'river-levels',
      title: 'River levels',
      notes: 'Water levels measured every 15 minutes.\n\nSince *1990*.',
      owner_org: org.id,
      license_id: 'cc-by',
      version: '2.1',
      url: 'https://rivers.example.org/levels',
      tags: [{ name: 'water' }, { name: 'rivers' }],
      extras: Object.entries(given).map(([key, value]) => ({ key, value })),
      resources: [
        {
          name: 'Levels (CSV)',
          description: 'All gauges, one row per reading.',
          url: 'https://rivers.example.org/levels.csv',
          format: 'CSV',
          mimetype: 'text/csv',
          size: 123456,
          hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
          hash_algorithm: 'sha256',
          rights: 'Free to reuse with attribution.',
          status: 'http://purl.org/adms/status/Completed',
          issued: '2020-01-15',
          modified: '2026-11-01',
        },
        { name: 'Gauges map', url: 'https://maps.example.org/gauges', format: 'WMS' },
      ],
    },
    sys,
  );
  // a second dataset with nothing but core fields: the contact comes from the maintainer, the publisher from the organization
  const plain = await legacy.ok(
    'package_create',
    {
      name: 'bridges',
      title: 'Bridges',
      notes: 'Every bridge.',
      owner_org: org.id,
      maintainer: 'Bridge desk',
      maintainer_email: 'bridges@example.org',
    },
    sys,
  );

  for (const format of FORMATS) {
    const p = await roundTrip(legacy, d.id, format);
    for (const key of ['title', 'notes', 'version', 'url', 'license_id']) assert.equal(p[key], d[key], `${format}: ${key}`);
    assert.deepEqual(p.tags.map((x: any) => x.name).sort(), ['rivers', 'water'], `${format}: tags`);
    const e = extras(p);
    for (const key of TEXT_EXTRAS) assert.equal(e[key], given[key], `${format}: ${key}`);
    for (const key of LIST_EXTRAS) assert.deepEqual(e[key] && sorted(e[key]), sorted(given[key]!), `${format}: ${key}`);
    assert.deepEqual(JSON.parse(e.spatial!), JSON.parse(given.spatial!), `${format}: spatial`);
    assert.equal(instant(e.issued!), instant(d.metadata_created), `${format}: issued is metadata_created`);
    assert.equal(instant(e.modified!), instant(d.metadata_modified), `${format}: modified is metadata_modified`);
    assert.match(e.uri!, new RegExp(`/dataset/${d.id}$`), `${format}: uri`);

    assert.equal(p.resources.length, 2, `${format}: resources`);
    for (const res of d.resources) {
      const back = p.resources.find((r: any) => r.name === res.name);
      assert.ok(back, `${format}: resource ${res.name}`);
      assert.equal(back.url, res.url, `${format}: url`);
      assert.equal(back.format.toUpperCase(), res.format.toUpperCase(), `${format}: format`);
      assert.match(back.uri, new RegExp(`/resource/${res.id}$`), `${format}: resource uri`);
      if (res.hash_algorithm) {
        // an algorithm name comes back as the SPDX term it was written as (ckanext-dcat keeps the IRI)
        assert.equal(back.hash_algorithm, `http://spdx.org/rdf/terms#checksumAlgorithm_${res.hash_algorithm}`, `${format}: hash_algorithm`);
      }
      for (const key of ['description', 'mimetype', 'size', 'hash', 'rights', 'status', 'issued', 'modified']) {
        if (res[key] !== undefined && res[key] !== null && res[key] !== '') assert.equal(back[key], res[key], `${format}: resource ${key}`);
      }
    }

    const q = await roundTrip(legacy, plain.id, format);
    const f = extras(q);
    assert.equal(f.contact_name, 'Bridge desk', `${format}: maintainer as contact point`);
    assert.equal(f.contact_email, 'bridges@example.org');
    assert.equal(f.publisher_name, 'River City', `${format}: organization as publisher`);
    assert.match(f.publisher_uri!, /\/organization\/river-city$/);
  }
});

test('scheming shape: the DCAT fields of the schema come back top-level, in every format', async () => {
  const sys = { token: scheming.sysadminToken };
  const org = await scheming.ok('organization_create', { name: 'state-agency', title: 'State agency' }, sys);
  const fields = {
    contact: [{ name: 'Air desk', email: 'air@example.eu', url: 'https://air.example.eu/contact' }],
    publisher: [
      {
        uri: 'https://env.example.eu/',
        name: 'Environment agency',
        email: 'info@env.example.eu',
        type: 'http://purl.org/adms/publishertype/NationalAuthority',
      },
    ],
    creator: [{ name: 'Sensor team', email: 'sensors@env.example.eu' }],
    temporal_coverage: [{ start: '2019-01-01', end: '2019-12-31' }],
    spatial_coverage: [{ uri: 'https://sws.geonames.org/2988507/', text: 'Paris' }],
    language: ['http://publications.europa.eu/resource/authority/language/FRA'],
    theme: [
      'http://publications.europa.eu/resource/authority/data-theme/ENVI',
      'http://publications.europa.eu/resource/authority/data-theme/HEAL',
    ],
    conforms_to: ['https://www.iso.org/standard/32554.html'],
    documentation: ['https://air.example.eu/docs'],
    alternate_identifier: ['doi:10.1234/air'],
    identifier: 'aq-2019',
    issued: '2019-03-01',
    modified: '2026-10-02',
    frequency: 'http://publications.europa.eu/resource/authority/frequency/HOURLY',
    version_notes: 'First release.',
    temporal_resolution: 'PT1H',
    spatial_resolution_in_meters: '100',
  };
  const d = await scheming.ok(
    'package_create',
    {
      name: 'air-quality',
      title: 'Air quality',
      notes: 'Hourly readings.',
      owner_org: org.id,
      license_id: 'odc-by',
      tag_string: 'air,pollution',
      ...fields,
      resources: [
        {
          name: 'Readings (JSON)',
          url: 'https://air.example.eu/api/readings.json',
          format: 'JSON',
          size: 2048,
          language: ['http://publications.europa.eu/resource/authority/language/FRA'],
          documentation: ['https://air.example.eu/api/docs'],
        },
      ],
    },
    sys,
  );
  for (const format of FORMATS) {
    const p = await roundTrip(scheming, d.id, format);
    assert.equal(p.title, 'Air quality');
    assert.equal(p.license_id, 'odc-by', `${format}: license_id`);
    assert.deepEqual(p.tags.map((x: any) => x.name).sort(), ['air', 'pollution']);
    for (const [key, value] of Object.entries(fields)) {
      const back = Array.isArray(value) && typeof value[0] === 'string' ? [...p[key]].sort() : p[key];
      const want = Array.isArray(value) && typeof value[0] === 'string' ? [...(value as string[])].sort() : value;
      assert.deepEqual(back, want, `${format}: ${key}`);
    }
    const res = p.resources[0];
    assert.equal(res.url, 'https://air.example.eu/api/readings.json');
    assert.equal(res.size, 2048);
    assert.deepEqual(res.language, ['http://publications.europa.eu/resource/authority/language/FRA'], `${format}: resource language`);
    assert.deepEqual(res.documentation, ['https://air.example.eu/api/docs'], `${format}: resource documentation`);
    assert.equal(p.extras, undefined, `${format}: nothing left over as extras`);
  }
});

test('a catalog followed through its hydra paging gives every dataset once, in every format', async () => {
  const all = (await legacy.ok('package_search', { rows: 100 })).results.map((d: any) => d.title).sort();
  assert.ok(all.length >= 2, 'the first test made the datasets');
  for (const format of FORMATS) {
    const titles: string[] = [];
    let url: string | undefined = `/catalog.${format}`;
    let pages = 0;
    while (url && pages++ < 10) {
      const parsed: any = await legacy.ok('dcat_parse', { data: await rdfOf(legacy, url), format: format === 'rdf' ? 'xml' : format });
      assert.equal(parsed.total_items, all.length, `${format}: total_items`);
      titles.push(...parsed.datasets.map((d: any) => d.title));
      url = parsed.next_page?.replace(/^https?:\/\/[^/]+/, '');
    }
    assert.deepEqual(titles.sort(), all, `${format}: every dataset once`);
  }
});
