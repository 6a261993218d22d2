// package_search over the custom fields of a scheming schema (test/fixtures/scheming-search-catalog.yaml),
// through HTTP: equality and ranges of dates and numbers compared as dates and numbers, the
// `{field}_{subfield}` lists of repeating subfields in fq and facets, choice fields as facets
// (counted per value, and the same counts as a scan of the matches), free text finding custom
// values, sorting by a schema's field, and private datasets never counted for those who may not
// read them.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

type U = { id: string; name: string; token: string };
let t: TestApp;
let alice: U; // admin of acme (sees its private dataset)
let bob: U; // no organization
const as = (u: U) => ({ token: u.token });
const sys = () => ({ token: t.sysadminToken });
// always true, but a filter: the count and the facets come from a scan of the matches
const SCAN = 'num_resources:[0 TO *]';

const search = (data: Record<string, unknown>, who: { token?: string } = {}) => t.ok('package_search', data, who);
const names = async (data: Record<string, unknown>, who: { token?: string } = {}) =>
  ((await search({ rows: 100, ...data }, who)).results as { name: string }[]).map((d) => d.name).sort();
const ordered = async (data: Record<string, unknown>) =>
  ((await search({ rows: 100, ...data })).results as { name: string }[]).map((d) => d.name);
const facet = (r: { facets: Record<string, Record<string, number>> }, field: string) => r.facets[field];

before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'scheming-search-catalog.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
    },
  });
  alice = await t.user('alice');
  bob = await t.user('bob');
  await t.ok('organization_create', { name: 'acme', title: 'Acme Works' }, as(alice));
  const create = (d: Record<string, unknown>, who = as(alice)) => t.ok('package_create', { owner_org: 'acme', ...d }, who);
  await create({
    name: 'river-levels',
    title: 'River levels',
    theme: ['environment', 'health'],
    frequency: 'monthly',
    coverage_start: '2019-05-01',
    issued: '2021-03-04T10:00:00',
    population: 1200,
    contact: [
      { name: 'Ada Lovelace', email: 'ada@example.org' },
      { name: 'Grace Hopper', email: 'grace@example.org' },
    ],
    summary_translated: { en: 'Gauges on the main rivers', de: 'Pegelstände der Hauptflüsse' },
  });
  await create({
    name: 'air-quality',
    title: 'Air quality',
    theme: ['environment'],
    coverage_start: '2021-02-01',
    population: 800,
    contact: [{ name: 'Ada Lovelace', email: 'ada@example.org' }],
  });
  await create({
    name: 'city-budget',
    title: 'City budget',
    theme: ['economy'],
    frequency: 'annual',
    coverage_start: '2022-07-15',
    issued: '2022-08-01T00:00:00',
    population: 5000,
  });
  await create({
    name: 'clinic-visits',
    title: 'Clinic visits',
    private: true,
    theme: ['health'],
    coverage_start: '2020-06-30',
    population: 3000,
    contact: [{ name: 'Secret Keeper', email: 'secret@example.org' }],
  });
});
after(async () => {
  await t?.close();
});

describe('package_search: custom fields of a schema', () => {
  test('fq on a choice field matches each value of a multiple choice', async () => {
    assert.deepEqual(await names({ fq: 'theme:environment' }), ['air-quality', 'river-levels']);
    assert.deepEqual(await names({ fq: 'theme:health' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'theme:health' }, as(alice)), ['river-levels']);
    assert.deepEqual(await names({ fq: 'theme:health', include_private: true }, as(alice)), ['clinic-visits', 'river-levels']);
    assert.deepEqual(await names({ fq: 'frequency:monthly' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'theme:environment AND -frequency:monthly' }), ['air-quality']);
  });

  test('ranges on a date field compare dates (Solr syntax, NOW, open ends)', async () => {
    assert.deepEqual(await names({ fq: 'coverage_start:[2020-01-01T00:00:00Z TO NOW]' }), ['air-quality', 'city-budget']);
    assert.deepEqual(await names({ fq: 'coverage_start:[* TO 2021-01-01T00:00:00Z]' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'coverage_start:[2021-02-01 TO 2021-02-01]' }), ['air-quality']);
    // exclusive bound
    assert.deepEqual(await names({ fq: 'coverage_start:{2021-02-01T00:00:00Z TO *]' }), ['city-budget']);
    assert.deepEqual(await names({ fq: 'coverage_start:2021-02-01' }), ['air-quality']);
    assert.deepEqual(await names({ fq: 'issued:[2021-03-04T09:00:00Z TO 2021-03-04T11:00:00Z]' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'coverage_start:[NOW-100YEARS TO NOW]', include_private: true }, as(alice)), [
      'air-quality',
      'city-budget',
      'clinic-visits',
      'river-levels',
    ]);
    const bad = await t.call('package_search', { fq: 'coverage_start:[2020-13-01 TO NOW]' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error?.__type, 'Search Query Error');
    assert.match(JSON.stringify(bad.body.error), /coverage_start/);
  });

  test('ranges on a number field compare numbers, not text', async () => {
    assert.deepEqual(await names({ fq: 'population:[1000 TO 5000]' }), ['city-budget', 'river-levels']);
    // as text, "1200" lies between "100" and "9"
    assert.deepEqual(await names({ fq: 'population:[9 TO 100]' }), []);
    assert.deepEqual(await names({ fq: 'population:{800 TO 1200]' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'population:[* TO 1000]' }), ['air-quality']);
    assert.deepEqual(await names({ fq: 'population:800' }), ['air-quality']);
    const bad = await t.call('package_search', { fq: 'population:[ten TO 20]' });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body.error), /population/);
  });

  test('repeating subfields are lists {field}_{subfield}: in fq and in facets', async () => {
    assert.deepEqual(await names({ fq: 'contact_email:"ada@example.org"' }), ['air-quality', 'river-levels']);
    assert.deepEqual(await names({ fq: 'contact_name:"Grace Hopper"' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'contact_email:"secret@example.org"' }), []);
    const r = await search({ 'facet.field': ['contact_name'] });
    assert.deepEqual(facet(r, 'contact_name'), { 'Ada Lovelace': 2, 'Grace Hopper': 1 });
  });

  test('choice facets count each value of a list once per dataset, never a private dataset for those who may not read it', async () => {
    const fields = ['theme', 'frequency', 'contact_email'];
    const callers: [string, Record<string, unknown>, { token?: string }, Record<string, number>][] = [
      ['anonymous', {}, {}, { environment: 2, health: 1, economy: 1 }],
      ['bob with include_private', { include_private: true }, as(bob), { environment: 2, health: 1, economy: 1 }],
      ['alice with include_private', { include_private: true }, as(alice), { environment: 2, health: 2, economy: 1 }],
      ['sysadmin with include_private', { include_private: true }, sys(), { environment: 2, health: 2, economy: 1 }],
    ];
    for (const [who, extra, token, themes] of callers) {
      const counted = await search({ 'facet.field': fields, 'facet.limit': -1, rows: 0, ...extra }, token);
      assert.deepEqual(facet(counted, 'theme'), themes, `${who}: theme`);
      const scanned = await search({ 'facet.field': fields, 'facet.limit': -1, rows: 0, fq: SCAN, ...extra }, token);
      assert.deepEqual(scanned.facets, counted.facets, `${who}: counted = scanned`);
      assert.equal(scanned.count, counted.count, `${who}: count`);
      const privateSeen = 'secret@example.org' in facet(counted, 'contact_email');
      assert.equal(privateSeen, themes.health === 2, `${who}: the private dataset's contact`);
    }
    // read from the counts kept per value (migration 017) since the first faceted query
    const listed = await t.services.db.query<{ field: string }>('SELECT field FROM package_search_counted_fields ORDER BY field');
    assert.deepEqual(
      listed.rows.map((r) => r.field),
      ['contact_email', 'contact_name', 'frequency', 'theme'],
    );
    assert.deepEqual(facet(await search({ 'facet.field': ['frequency'] }), 'frequency'), { monthly: 1, annual: 1 });
    // with words: the facets of the matches
    assert.deepEqual(facet(await search({ q: 'river', 'facet.field': ['theme'] }), 'theme'), { environment: 1, health: 1 });
  });

  test('one filter on a custom field: its count (read from the index of its values) is the count of its matches', async () => {
    const filters = [
      'theme:health',
      'theme:environment',
      'frequency:annual',
      'theme:nothing',
      'coverage_start:[2020-01-01T00:00:00Z TO NOW]',
      'coverage_start:2020-06-30',
      'population:[1000 TO *]',
      'population:3000',
      'issued:[* TO *]',
    ];
    const callers: [string, Record<string, unknown>, { token?: string }][] = [
      ['anonymous', {}, {}],
      ['bob with include_private', { include_private: true }, as(bob)],
      ['alice with include_private', { include_private: true }, as(alice)],
      ['sysadmin with include_private', { include_private: true }, sys()],
    ];
    for (const [who, extra, token] of callers) {
      for (const fq of filters) {
        const alone = await search({ fq, rows: 100, ...extra }, token);
        const scanned = await search({ fq: `${fq} AND ${SCAN}`, rows: 100, ...extra }, token);
        assert.equal(alone.count, scanned.count, `${who}: ${fq}`);
        assert.equal(alone.count, alone.results.length, `${who}: ${fq}: the count of the page's datasets`);
      }
    }
    assert.equal((await search({ fq: 'population:[1000 TO *]', include_private: true }, as(alice))).count, 3);
    assert.equal((await search({ fq: 'population:[1000 TO *]', include_private: true }, as(bob))).count, 2);
  });

  test('facet counts follow updates, deletions and visibility changes', async () => {
    const themes = async () => facet(await search({ 'facet.field': ['theme'] }), 'theme');
    await t.ok('package_patch', { id: 'air-quality', theme: ['economy', 'health'] }, as(alice));
    assert.deepEqual(await themes(), { economy: 2, health: 2, environment: 1 });
    await t.ok('package_patch', { id: 'clinic-visits', private: false }, as(alice));
    assert.deepEqual(await themes(), { health: 3, economy: 2, environment: 1 });
    await t.ok('package_delete', { id: 'clinic-visits' }, as(alice));
    assert.deepEqual(await themes(), { economy: 2, health: 2, environment: 1 });
    await t.ok('package_patch', { id: 'air-quality', theme: ['environment'] }, as(alice));
    assert.deepEqual(await themes(), { environment: 2, economy: 1, health: 1 });
    assert.deepEqual((await search({ 'facet.field': ['theme'], fq: SCAN })).facets, (await search({ 'facet.field': ['theme'] })).facets);
  });

  test('q finds custom values: choices, subfield values, every language of a multilingual text, numbers and dates', async () => {
    assert.deepEqual(await names({ q: 'Lovelace' }), ['air-quality', 'river-levels']);
    assert.deepEqual(await names({ q: 'Hopper' }), ['river-levels']);
    assert.deepEqual(await names({ q: 'Pegelstände' }), ['river-levels']);
    assert.deepEqual(await names({ q: 'gauges' }), ['river-levels']);
    assert.deepEqual(await names({ q: '5000' }), ['city-budget']);
    assert.deepEqual(await names({ q: '2022-07-15' }), ['city-budget']);
    assert.deepEqual(await names({ q: 'economy' }), ['city-budget']);
  });

  test('a multilingual text is found by language: {field}-{language}', async () => {
    assert.deepEqual(await names({ fq: 'summary_translated-de:"Pegelstände der Hauptflüsse"' }), ['river-levels']);
    assert.deepEqual(await names({ fq: 'summary_translated-en:"Pegelstände der Hauptflüsse"' }), []);
  });

  test('sort by a schema field: dates as dates, numbers as numbers', async () => {
    assert.deepEqual(await ordered({ sort: 'coverage_start desc' }), ['city-budget', 'air-quality', 'river-levels']);
    assert.deepEqual(await ordered({ sort: 'population asc' }), ['air-quality', 'river-levels', 'city-budget']);
    assert.deepEqual(await ordered({ sort: 'frequency asc, name asc' }), ['city-budget', 'river-levels', 'air-quality']);
    const bad = await t.call('package_search', { sort: 'not_in_the_schema asc' });
    assert.equal(bad.status, 400);
  });
});
