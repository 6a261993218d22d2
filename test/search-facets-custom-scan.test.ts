// Facets of custom fields scanned from the matches (not read from counts), through HTTP: a list's
// repeated item counts once per dataset, a number's value is its text, a dataset without the
// field counts for no value; alike in each statement that scans them (a filter alone: one
// statement per facet on PostgreSQL's pool, one for the count and every facet on PGlite; words
// ranked first: the statement of the count, the facets and the page).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
// always true, but a filter: the count and the facets come from a scan of the matches
const SCAN = 'num_resources:[0 TO *]';
const FIELDS = ['contact_name', 'population', 'theme', 'frequency'];

before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'scheming-search-catalog.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
    },
  });
  const alice = await t.user('alice');
  await t.ok('organization_create', { name: 'acme' }, { token: alice.token });
  const create = (d: Record<string, unknown>) => t.ok('package_create', { owner_org: 'acme', ...d }, { token: alice.token });
  await create({
    name: 'gauges',
    title: 'River gauges',
    theme: ['environment', 'health'],
    frequency: 'monthly',
    population: 1200,
    contact: [
      { name: 'Ada Lovelace', email: 'ada@example.org' },
      { name: 'Ada Lovelace', email: 'ada2@example.org' },
      { name: 'Grace Hopper', email: 'grace@example.org' },
    ],
  });
  await create({
    name: 'wells',
    title: 'River wells',
    theme: ['environment'],
    population: 800,
    contact: [{ name: 'Ada Lovelace', email: 'ada@example.org' }],
  });
  await create({ name: 'roads', title: 'Road works', frequency: 'annual', population: 1200 });
});

after(async () => {
  await t?.close();
});

describe('custom facets scanned from the matches', () => {
  const facets = async (data: Record<string, unknown>) =>
    (await t.ok('package_search', { 'facet.field': FIELDS, 'facet.limit': -1, ...data })).facets as Record<string, Record<string, number>>;

  test('a filter alone: each value once per dataset', async () => {
    assert.deepEqual(await facets({ fq: SCAN }), {
      contact_name: { 'Ada Lovelace': 2, 'Grace Hopper': 1 },
      population: { '1200': 2, '800': 1 },
      theme: { environment: 2, health: 1 },
      frequency: { monthly: 1, annual: 1 },
    });
  });

  test('words ranked first: the same values of the matches', async () => {
    assert.deepEqual(await facets({ q: 'river', fq: SCAN }), {
      contact_name: { 'Ada Lovelace': 2, 'Grace Hopper': 1 },
      population: { '1200': 1, '800': 1 },
      theme: { environment: 2, health: 1 },
      frequency: { monthly: 1 },
    });
    assert.deepEqual(await facets({ q: 'road', fq: SCAN }), {
      contact_name: {},
      population: { '1200': 1 },
      theme: {},
      frequency: { annual: 1 },
    });
  });

  test('facet.mincount and facet.limit apply to the scanned values', async () => {
    const r = await facets({ fq: SCAN, 'facet.mincount': 2, 'facet.limit': 1 });
    assert.deepEqual(r.contact_name, { 'Ada Lovelace': 2 });
    assert.deepEqual(r.population, { '1200': 2 });
  });
});
