// The DCAT output through HTTP, in every format and profile, validated with SHACL against shapes
// written from the specifications (test/fixtures/shacl): DCAT-AP 3 and 2 (mandatory and
// recommended classes and properties, ranges) and DCAT-US 3. A fully described dataset has no
// violation and no warning; the catalog page has no violation; the shapes do catch a dataset
// without a title.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import rdf from 'rdf-ext';
import SHACLValidator from 'rdf-validate-shacl';
import type { DatasetCore, Quad } from '@rdfjs/types';
import { startApp, type TestApp } from './helpers/app.ts';
import { readRdf, type RdfFormat } from '../src/dcat/parse/read-rdf.ts';

const FORMATS: [string, RdfFormat][] = [
  ['ttl', 'turtle'],
  ['rdf', 'xml'],
  ['xml', 'xml'],
  ['jsonld', 'jsonld'],
  ['n3', 'n3'],
  ['nt', 'ntriples'],
];
const SHAPES: Record<string, string[]> = {
  euro_dcat_ap_3: ['dcat-ap-3.ttl', 'dcat-ap-3-datatypes.ttl'],
  euro_dcat_ap_2: ['dcat-ap-3.ttl', 'dcat-ap-2-datatypes.ttl'],
  dcat_us_3: ['dcat-us-3.ttl'],
};

const SH = 'http://www.w3.org/ns/shacl#';

async function dataset(text: string, format: RdfFormat): Promise<DatasetCore> {
  const store = await readRdf(text, format);
  return rdf.dataset(store.getQuads(null, null, null, null) as Quad[]);
}

const validators = new Map<string, SHACLValidator>();
async function validatorFor(profile: string): Promise<SHACLValidator> {
  let v = validators.get(profile);
  if (!v) {
    const quads: Quad[] = [];
    for (const file of SHAPES[profile]!) {
      const text = fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'shacl', file), 'utf8');
      quads.push(...((await readRdf(text, 'turtle')).getQuads(null, null, null, null) as Quad[]));
    }
    // (the validator's own environment: rdf-ext's has no clownface)
    v = new SHACLValidator(rdf.dataset(quads));
    validators.set(profile, v);
  }
  return v;
}

interface Finding {
  severity: string;
  focus: string;
  path: string;
  message: string;
}

async function validate(profile: string, data: DatasetCore): Promise<Finding[]> {
  const report = await (await validatorFor(profile)).validate(data);
  return report.results.map((r) => ({
    severity: r.severity?.value.replace(SH, '') ?? '',
    focus: r.focusNode?.value ?? '',
    path: r.path?.value ?? '',
    message: r.message.map((m) => m.value).join('; '),
  }));
}

const show = (findings: Finding[]) => findings.map((f) => `${f.severity} ${f.focus} ${f.path}: ${f.message}`).join('\n');

let t: TestApp;
let id: string;

before(async () => {
  t = await startApp({
    plugins: ['dcat'],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'dcat', 'dcat-ap-schema.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.dcat.schemas:presets.yaml'],
    },
  });
  const sys = { token: t.sysadminToken };
  const org = await t.ok('organization_create', { name: 'water-board', title: 'Water board' }, sys);
  const d = await t.ok(
    'package_create',
    {
      name: 'river-levels',
      title: 'River levels',
      notes: 'Water levels measured every 15 minutes.',
      owner_org: org.id,
      license_id: 'cc-by',
      tag_string: 'water,rivers',
      url: 'https://rivers.example.org/levels',
      version: '2.1',
      identifier: 'river-levels-0001',
      contact: [{ name: 'Water office', email: 'water@example.org' }],
      temporal_coverage: [{ start: '1990-01-01', end: '2026-12-31' }],
      spatial_coverage: [
        { uri: 'https://sws.geonames.org/2950159/', text: 'Berlin', centroid: '{"type": "Point", "coordinates": [13.4, 52.5]}' },
      ],
      theme: ['http://publications.europa.eu/resource/authority/data-theme/ENVI'],
      language: ['http://publications.europa.eu/resource/authority/language/ENG'],
      frequency: 'http://publications.europa.eu/resource/authority/frequency/DAILY',
      access_rights: 'http://publications.europa.eu/resource/authority/access-right/PUBLIC',
      conforms_to: ['https://www.iso.org/standard/32554.html'],
      documentation: ['https://rivers.example.org/handbook.pdf'],
      alternate_identifier: ['doi:10.1234/river'],
      temporal_resolution: 'PT15M',
      spatial_resolution_in_meters: '10',
      resources: [
        {
          name: 'Levels (CSV)',
          description: 'All gauges, one row per reading.',
          url: 'https://rivers.example.org/levels.csv',
          format: 'CSV',
          size: 123456,
          hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
          availability: 'http://data.europa.eu/r5r/availability/stable',
          issued: '2020-01-15',
          modified: '2026-11-01',
        },
      ],
    },
    sys,
  );
  id = d.id;
});
after(async () => {
  await t?.close();
});

async function get(url: string): Promise<string> {
  const r = await t.app.inject({ method: 'GET', url });
  assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
  return r.body;
}

for (const profile of Object.keys(SHAPES)) {
  test(`${profile}: a fully described dataset has no violation and no warning, in every format`, async () => {
    for (const [ext, format] of FORMATS) {
      const data = await dataset(await get(`/dataset/${id}.${ext}?profiles=${profile}`), format);
      assert.ok(data.size > 20, `${ext}: the document has the dataset's triples`);
      const findings = await validate(profile, data);
      assert.deepEqual(show(findings), '', `${profile} ${ext}`);
    }
  });

  test(`${profile}: the catalog page has no violation, in every format`, async () => {
    for (const [ext, format] of FORMATS) {
      const data = await dataset(await get(`/catalog.${ext}?profiles=${profile}`), format);
      const findings = (await validate(profile, data)).filter((f) => f.severity === 'Violation');
      assert.deepEqual(show(findings), '', `${profile} ${ext}`);
    }
  });
}

test('the shapes catch what is missing: a dataset without a title, a distribution without an access URL', async () => {
  const store = await readRdf(await get(`/dataset/${id}.ttl`), 'turtle');
  const DCT_TITLE = 'http://purl.org/dc/terms/title';
  const ACCESS_URL = 'http://www.w3.org/ns/dcat#accessURL';
  const kept = store
    .getQuads(null, null, null, null)
    .filter((q) => !(q.subject.value.endsWith(`/dataset/${id}`) && q.predicate.value === DCT_TITLE) && q.predicate.value !== ACCESS_URL);
  const findings = await validate('euro_dcat_ap_3', rdf.dataset(kept as Quad[]));
  const violations = findings.filter((f) => f.severity === 'Violation');
  assert.ok(
    violations.some((f) => f.path === DCT_TITLE && f.focus.endsWith(`/dataset/${id}`)),
    show(findings),
  );
  assert.ok(
    violations.some((f) => f.path === ACCESS_URL),
    show(findings),
  );
  const us = await validate('dcat_us_3', rdf.dataset(kept as Quad[]));
  assert.ok(
    us.some((f) => f.severity === 'Violation' && f.path === DCT_TITLE),
    show(us),
  );
});
