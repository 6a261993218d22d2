// Custom schemas in the OpenAPI document and in help_show: per type, the create/update/show
// components list the custom fields with their JSON types, enums and required names, and what svc
// accepts and answers agrees with them; without a schema the document is what it was.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';
import { BUILTIN_PRESET_FILES } from '../src/scheming/presets.ts';
import { isKnownValidator } from '../src/scheming/validators.ts';

const fixture = (name: string) => path.join(import.meta.dirname, 'fixtures', name);
const SCHEMAS = {
  'svc.scheming.dataset_schemas': [fixture('scheming-openapi-survey.yaml')],
  'svc.scheming.group_schemas': [fixture('scheming-openapi-group.json')],
  'svc.scheming.organization_schemas': [fixture('scheming-openapi-org.yaml')],
  'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
};

type Json = Record<string, any>;

async function documentOf(t: TestApp): Promise<Json> {
  const r = await t.app.inject({ method: 'GET', url: '/api/3/openapi.json' });
  assert.equal(r.statusCode, 200);
  return r.json();
}

/** Follows a $ref inside the document. */
function resolve(doc: Json, schema: Json): Json {
  return schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;
}

/** Where a value breaks a (simple) schema of the document: type, enum, items, properties, required; allOf/oneOf by their parts. */
function mismatches(doc: Json, value: unknown, schema: Json, at = '$'): string[] {
  schema = resolve(doc, schema);
  if (schema.allOf) return schema.allOf.flatMap((s: Json) => mismatches(doc, value, s, at));
  if (schema.oneOf) {
    const fits = schema.oneOf.filter((s: Json) => !mismatches(doc, value, s, at).length).length;
    return fits === 1 ? [] : [`${at}: fits ${fits} of the oneOf schemas`];
  }
  const types = [schema.type].flat().filter(Boolean);
  const typeOf = (v: unknown) =>
    v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v === 'number' ? 'number' : typeof v;
  const t = typeOf(value);
  if (types.length && !types.includes(t) && !(t === 'integer' && types.includes('number'))) return [`${at}: ${t}, not ${types}`];
  if ('const' in schema && value !== schema.const) return [`${at}: ${JSON.stringify(value)} is not ${schema.const}`];
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in ${schema.enum}`];
  if (schema.not?.enum?.includes(value)) return [`${at}: ${JSON.stringify(value)} is excluded`];
  const out: string[] = [];
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => out.push(...mismatches(doc, v, schema.items, `${at}[${i}]`)));
  if (t === 'object') {
    const obj = value as Json;
    for (const name of schema.required ?? []) if (!(name in obj)) out.push(`${at}.${name} missing`);
    for (const [name, s] of Object.entries(schema.properties ?? {})) {
      if (obj[name] !== undefined) out.push(...mismatches(doc, obj[name], s as Json, `${at}.${name}`));
    }
  }
  return out;
}

const survey = (org: string, extra: Json = {}): Json => ({
  type: 'field-survey',
  name: 'marsh-survey-2024',
  title: 'Marsh survey 2024',
  owner_org: org,
  habitat: 'wetland',
  methods: ['transect', 'trap'],
  started: '2024-04-02',
  observer_count: 4,
  peer_reviewed: true,
  contact_email: 'surveys@example.org',
  keywords_extra: ['reed', 'heron'],
  settings: { lens: '300mm', interval: 5 },
  summary_translated: { en: 'Spring survey of the marsh', fr: 'Relevé de printemps du marais' },
  sites: [
    { site_name: 'North reedbed', visited: '2024-04-03', cover: 'closed' },
    { site_name: 'Open water', cover: 'open' },
  ],
  resources: [{ url: 'https://example.org/counts.csv', name: 'Counts', sample_size: 120, collected_at: '2024-04-03T06:15:00' }],
  ...extra,
});

describe('OpenAPI document with custom schemas', () => {
  let t: TestApp;
  let doc: Json;
  let org: Json;
  before(async () => {
    t = await startApp({ plugins: [], config: SCHEMAS });
    doc = await documentOf(t);
    org = await t.ok(
      'organization_create',
      { name: 'wetland-trust', title: 'Wetland trust', department_code: 'WT-1' },
      { token: t.sysadminToken },
    );
  });
  after(async () => {
    await t?.close();
  });

  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  });

  test('the create component of a dataset type lists its fields with types, enum and required', () => {
    const create = doc.components.schemas['Dataset_field-survey_create'];
    assert.ok(create, Object.keys(doc.components.schemas).join(' '));
    const p = create.properties;
    assert.deepEqual(p.type.const, 'field-survey');
    assert.deepEqual(p.habitat.enum, ['wetland', 'forest', 'grassland']);
    assert.match(p.habitat.description, /^Habitat: The main habitat surveyed/);
    assert.match(p.habitat.description, /wetland \(Wetland\)/);
    assert.deepEqual(p.methods, {
      type: 'array',
      items: { type: 'string', enum: ['transect', 'trap'] },
      description: p.methods.description,
    });
    assert.equal(p.started.format, 'date');
    assert.equal(p.observer_count.type, 'integer');
    assert.equal(p.peer_reviewed.type, 'boolean');
    assert.equal(p.contact_email.format, 'email');
    assert.deepEqual(p.keywords_extra.items, { type: 'string' });
    assert.equal(p.settings.type, undefined, 'json_object: free JSON');
    // fluent: language -> text, the schema's form languages named
    assert.equal(p.summary_translated.type, 'object');
    assert.deepEqual(Object.keys(p.summary_translated.properties), ['en', 'fr']);
    assert.equal(p.summary_translated.description, 'Summary in each language');
    // repeating subfields: a list of objects with their own required names
    assert.equal(p.sites.type, 'array');
    assert.deepEqual(Object.keys(p.sites.items.properties), ['site_name', 'visited', 'cover']);
    assert.deepEqual(p.sites.items.required, ['site_name']);
    assert.deepEqual(p.sites.items.properties.cover.enum, ['open', 'closed']);
    assert.equal(p.sites.items.properties.visited.format, 'date');
    for (const name of ['name', 'title', 'habitat', 'type']) assert.ok(create.required.includes(name), name);
    for (const name of ['methods', 'observer_count', 'sites']) assert.ok(!create.required.includes(name), name);
    // core fields are still there
    assert.equal(p.private.type, 'boolean');
    // the type's resources
    const resource = resolve(doc, p.resources.items);
    assert.equal(resource.properties.sample_size.type, 'integer');
    // a datetime without zone is not RFC 3339's date-time
    assert.equal(resource.properties.collected_at.format, undefined);
    assert.deepEqual(resource.properties.collected_at.examples, ['2024-05-17T10:30:00']);
    assert.match(resource.properties.collected_at.description, /^Collected at\. A date and time without time zone/);
    assert.ok(resource.properties.url);
    assert.deepEqual(doc.components.schemas['Dataset_field-survey_update'].properties.habitat.enum, p.habitat.enum);
  });

  test('package_create/update/show refer to the components by type', () => {
    const action = (name: string) => doc.paths[`/api/3/action/${name}`];
    const refs = (s: Json) => s.oneOf.map((x: Json) => x.$ref.split('/').pop());
    const body = (name: string) => action(name).post.requestBody.content['application/json'].schema;
    const result = (name: string, method = 'post') =>
      action(name)[method].responses['200'].content['application/json'].schema.properties.result;
    // "dataset" has no schema here, and without svc.scheming.dataset_fallback it is refused
    assert.deepEqual(refs(body('package_create')), ['Dataset_field-survey_create']);
    assert.deepEqual(refs(body('package_update')), ['Dataset_field-survey_update']);
    assert.deepEqual(refs(result('package_show', 'get')), ['Dataset_field-survey_show']);
    assert.deepEqual(refs(result('package_create')), ['Dataset_field-survey_show']);
    assert.deepEqual(refs(result('package_search', 'get').properties.results.items), ['Dataset_field-survey_show']);
    assert.equal(doc.components.schemas.Dataset_create, undefined);
    assert.deepEqual(refs(body('group_create')), ['Group_theme_create']);
    assert.deepEqual(refs(body('organization_create')), ['Organization_organization_create']);
    assert.deepEqual(refs(result('organization_show', 'get')), ['Organization_organization_show']);
    const orgCreate = doc.components.schemas.Organization_organization_create;
    assert.ok(orgCreate.required.includes('department_code'));
    assert.deepEqual(doc.components.schemas.Group_theme_create.properties.colour.enum, ['red', 'blue']);
    // what help_show says is the operation's description too
    assert.match(action('package_create').post.description, /Dataset types of this site: "field-survey"/);
  });

  test('what svc accepts and answers fits the components', async () => {
    const sent = survey(org.id);
    const create = doc.components.schemas['Dataset_field-survey_create'];
    assert.deepEqual(mismatches(doc, sent, create), []);
    const created = await t.ok('package_create', sent, { token: t.sysadminToken });
    const shown = await t.ok('package_show', { id: created.id }, { method: 'GET' });
    const result = doc.paths['/api/3/action/package_show'].get.responses['200'].content['application/json'].schema.properties.result;
    assert.deepEqual(mismatches(doc, shown, doc.components.schemas['Dataset_field-survey_show']), []);
    assert.deepEqual(mismatches(doc, shown, result), [], 'exactly one of the oneOf');
    const search = await t.ok('package_search', { fq: 'dataset_type:field-survey' }, { method: 'GET' });
    const searchResult =
      doc.paths['/api/3/action/package_search'].get.responses['200'].content['application/json'].schema.properties.result;
    assert.equal(search.count, 1);
    assert.deepEqual(mismatches(doc, search, searchResult), []);
    for (const key of ['habitat', 'methods', 'observer_count', 'peer_reviewed', 'summary_translated', 'sites', 'settings']) {
      assert.deepEqual(shown[key], sent[key], key);
    }
    // a type without a schema: no component, and refused
    const body = doc.paths['/api/3/action/package_create'].post.requestBody.content['application/json'].schema;
    const plainBody = { name: 'plain-dataset', owner_org: org.id };
    assert.deepEqual(mismatches(doc, plainBody, body), ['$: fits 0 of the oneOf schemas']);
    const plain = await t.call('package_create', plainBody, { token: t.sysadminToken });
    assert.equal(plain.status, 409);
    assert.ok(plain.body.error?.type, JSON.stringify(plain.body.error));
    // a body the document refuses, svc refuses too, naming the field
    const wrongChoice = survey(org.id, { name: 'wrong-habitat', habitat: 'desert' });
    assert.ok(mismatches(doc, wrongChoice, create).some((m) => m.startsWith('$.habitat')));
    const refused = await t.call('package_create', wrongChoice, { token: t.sysadminToken });
    assert.equal(refused.status, 409);
    assert.ok(refused.body.error?.habitat, JSON.stringify(refused.body.error));
    const { habitat: _, ...noHabitat } = survey(org.id, { name: 'no-habitat' });
    assert.deepEqual(mismatches(doc, noHabitat, create), ['$.habitat missing']);
    const missing = await t.call('package_create', noHabitat, { token: t.sysadminToken });
    assert.equal(missing.status, 409);
    assert.ok(missing.body.error?.habitat, JSON.stringify(missing.body.error));
    const noSite = survey(org.id, { name: 'no-site-name', sites: [{ cover: 'open' }] });
    assert.deepEqual(mismatches(doc, noSite, create), ['$.sites[0].site_name missing']);
    const badSite = await t.call('package_create', noSite, { token: t.sysadminToken });
    assert.equal(badSite.status, 409);
    assert.ok(badSite.body.error?.sites, JSON.stringify(badSite.body.error));
  });

  test('help_show names the types and where their fields are', async () => {
    const help = (name: string) => t.ok('help_show', { name }, { method: 'GET' }) as Promise<string>;
    const create = await help('package_create');
    assert.match(create, /^Create a new dataset/);
    assert.match(create, /Dataset types of this site: "field-survey"\./);
    assert.match(create, /scheming_dataset_schema_show \(e\.g\. \{"type": "field-survey"\}\)/);
    // before the parameters, as a paragraph of the description
    assert.ok(create.indexOf('Dataset types') < create.indexOf(':param'));
    assert.match(await help('package_update'), /"field-survey"/);
    assert.match(await help('group_create'), /Group types of this site: "theme".*scheming_group_schema_show/s);
    assert.match(await help('organization_create'), /Organization types of this site: "organization".*scheming_organization_schema_show/s);
    assert.doesNotMatch(await help('package_search'), /types of this site/);
    // the type list follows the schemas: scheming_dataset_schema_list says the same
    const types = await t.ok('scheming_dataset_schema_list', {});
    for (const type of types) assert.match(create, new RegExp(`"${type}"`));
  });
});

describe('OpenAPI document with svc.scheming.dataset_fallback', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ plugins: [], config: { ...SCHEMAS, 'svc.scheming.dataset_fallback': true } });
  });
  after(async () => {
    await t?.close();
  });

  test('other types are a variant with the core fields, and what svc answers fits it', async () => {
    const doc = await documentOf(t);
    assert.equal((await new Validator().validate(doc)).valid, true);
    const action = doc.paths['/api/3/action/package_create'].post;
    const body = action.requestBody.content['application/json'].schema;
    assert.deepEqual(
      body.oneOf.map((x: Json) => x.$ref.split('/').pop()),
      ['Dataset_field-survey_create', 'Dataset_create'],
    );
    assert.deepEqual(doc.components.schemas.Dataset_create.properties.type.not, { enum: ['field-survey'] });
    assert.match(action.description, /Other types are validated by the default schema/);
    const org = await t.ok('organization_create', { name: 'fallback-org', department_code: 'F-1' }, { token: t.sysadminToken });
    const sent = { name: 'plain-dataset', owner_org: org.id, notes: 'no type' };
    assert.deepEqual(mismatches(doc, sent, body), []);
    const plain = await t.ok('package_create', sent, { token: t.sysadminToken });
    assert.equal(plain.type, 'dataset');
    const result = action.responses['200'].content['application/json'].schema.properties.result;
    assert.deepEqual(mismatches(doc, plain, result), []);
    const typed = await t.ok('package_create', survey(org.id), { token: t.sysadminToken });
    assert.deepEqual(mismatches(doc, typed, result), []);
  });
});

describe('OpenAPI document without custom schemas', () => {
  let plain: TestApp;
  let withOptions: TestApp;
  before(async () => {
    plain = await startApp({ plugins: [] });
    // the options present but naming no schema file: still no custom schema
    withOptions = await startApp({
      plugins: [],
      config: {
        'svc.scheming.dataset_schemas': '',
        'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      },
    });
  });
  after(async () => {
    await plain?.close();
    await withOptions?.close();
  });

  test('is the document built without schema options, with no per-type components', async () => {
    const a = await documentOf(plain);
    const b = await documentOf(withOptions);
    assert.deepEqual(b, a);
    const names = Object.keys(a.components.schemas);
    assert.deepEqual(
      names.filter((n) => /_(create|update|show)$/.test(n)),
      [],
    );
    const body = a.paths['/api/3/action/package_create'].post.requestBody.content['application/json'].schema;
    assert.equal(body.oneOf, undefined);
    assert.ok(body.properties.name);
    const help = await plain.ok('help_show', { name: 'package_create' });
    assert.doesNotMatch(help, /types of this site/);
    assert.equal(help, await withOptions.ok('help_show', { name: 'package_create' }));
  });
});

// --- docs/schemas.md: its example works as written, its tables list what svc has ----------------

const docsText = fs.readFileSync(path.join(import.meta.dirname, '..', 'docs', 'schemas.md'), 'utf8');

/** The code block after <!-- marker -->. */
function docsBlock(marker: string): string {
  const at = docsText.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, marker);
  const m = /```\w*\n([\s\S]*?)```/.exec(docsText.slice(at));
  assert.ok(m, marker);
  return m[1];
}

/** The first column's names (in backticks) and the second column of the table after <!-- marker -->. */
function docsTable(marker: string): [string, string][] {
  const at = docsText.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, marker);
  const rows: [string, string][] = [];
  for (const line of docsText.slice(at).split('\n').slice(1)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([^`]+)`$/.exec(cells[1]);
    if (name) rows.push([name[1], cells[2]]);
  }
  return rows;
}

describe('docs/schemas.md', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      plugins: [],
      config: {
        'svc.scheming.dataset_schemas': [fixture('scheming-openapi-docs-example.yaml')],
        'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      },
    });
  });
  after(async () => {
    await t?.close();
  });

  test('the example schema is the one tested here', () => {
    assert.equal(docsBlock('example-schema'), fs.readFileSync(fixture('scheming-openapi-docs-example.yaml'), 'utf8'));
  });

  test('the example create, searches, errors and pages work as the page says', async () => {
    await t.ok('organization_create', { name: 'hydro-office', title: 'Hydro office' }, { token: t.sysadminToken });
    const curl = docsBlock('example-create');
    const body = JSON.parse(/-d '([\s\S]*)'\s*$/.exec(curl.trim())![1]);
    const created = await t.ok('package_create', body, { token: t.sysadminToken });
    const shown = await t.ok('package_show', { id: 'upper-rhine-gauges' });
    assert.deepEqual(shown, created);
    for (const key of ['summary_translated', 'river_basin', 'operating_since', 'station_count', 'stations']) {
      assert.deepEqual(shown[key], body[key], key);
    }
    assert.equal(shown.resources[0].interval, '15min');

    const urls = docsBlock('example-search')
      .split('\n')
      .map((l) => /curl '([^']+)'/.exec(l)?.[1])
      .filter((u): u is string => !!u);
    assert.equal(urls.length, 6);
    for (const url of urls) {
      const r = await t.app.inject({
        method: 'GET',
        url: new URL(url.replace(/\\/g, '')).pathname + new URL(url.replace(/\\/g, '')).search,
      });
      assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
      assert.equal(r.json().result.count, 1, url);
    }
    const facets = (await t.ok('package_search', { 'facet.field': ['river_basin', 'stations_station_id'], rows: 0 }, { method: 'GET' }))
      .facets;
    assert.deepEqual(facets, { river_basin: { rhine: 1 }, stations_station_id: { 'RH-101': 1, 'RH-102': 1 } });
    for (const extra of [
      { q: 'Oberrheins' },
      { sort: 'station_count desc' },
      { fq: 'summary_translated-de:"Pegelstände des Oberrheins"' },
    ]) {
      const r = await t.ok('package_search', extra);
      assert.equal(r.count, 1, JSON.stringify(extra));
    }

    const wrong = await t.call('package_create', { ...body, name: 'wrong-basin', river_basin: 'nile' }, { token: t.sysadminToken });
    assert.equal(wrong.status, 409);
    const documented = JSON.parse(/```json\n(.*)\n```/.exec(docsText)![1]);
    assert.deepEqual(wrong.body.error?.river_basin, documented.error.river_basin);
    const noStation = await t.call(
      'package_create',
      { ...body, name: 'no-station-id', stations: [{ opened: '2001-01-01' }] },
      { token: t.sysadminToken },
    );
    assert.deepEqual(noStation.body.error?.stations, [{ station_id: ['Missing value'] }]);
    const untyped = await t.call('package_create', { name: 'untyped', owner_org: 'hydro-office' }, { token: t.sysadminToken });
    assert.deepEqual(untyped.body.error?.type, ['Unsupported dataset type: dataset (the types are: river-gauge)']);
    assert.match(docsText, /Unsupported dataset type: dataset \(the types are: river-gauge\)/);
    assert.equal((await t.call('package_search', { fq: 'name:wrong-basin OR name:no-station-id' })).body.result.count, 0);

    const search = await t.app.inject({ method: 'GET', url: '/river-gauge' });
    assert.equal(search.statusCode, 200);
    assert.match(search.body, /River basin/);
    const page = await t.app.inject({ method: 'GET', url: '/river-gauge/upper-rhine-gauges' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Number of stations/);
    const web = new WebClient(t.app);
    await web.login('test_sysadmin');
    const form = await web.get('/river-gauge/new');
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<select[^>]*name="river_basin"/);
    assert.match(form.body, /<input[^>]*name="operating_since"[^>]*type="date"|<input[^>]*type="date"[^>]*name="operating_since"/);
    assert.match(form.body, /lang="de"/);
    assert.match(form.body, /Zusammenfassung|Summary/);
    assert.match(form.body, /Station ID/);
  });

  test('the preset table lists every built-in preset with its file', () => {
    const builtIn = [...BUILTIN_PRESET_FILES].flatMap(([file, presets]) => presets.map((p) => [p.preset_name, file]));
    assert.deepEqual(
      docsTable('presets-table').sort(),
      builtIn.sort() as [string, string][],
      'docs/schemas.md "Presets" and src/scheming/presets.ts',
    );
  });

  test('the validator table lists every validator a schema may name', () => {
    const documented = docsTable('validators-table').map(([name]) => name);
    for (const name of documented) assert.ok(isKnownValidator(name), `${name} is documented but unknown`);
    // the names of the registry (FACTORIES in src/scheming/validators.ts)
    const source = fs.readFileSync(path.join(import.meta.dirname, '..', 'src', 'scheming', 'validators.ts'), 'utf8');
    const registry = /\nconst FACTORIES[^{]*\{([\s\S]*?)\n\};/.exec(source);
    assert.ok(registry, 'FACTORIES in src/scheming/validators.ts');
    const names = [...registry[1].matchAll(/^ {2}([A-Za-z_]\w*):/gm)].map((m) => m[1]);
    assert.ok(names.length > 40);
    for (const name of names) assert.ok(isKnownValidator(name), name);
    assert.deepEqual([...documented].sort(), [...names].sort(), 'docs/schemas.md "Validators" and the registry');
  });
});
