// package_search over custom fields by the indexes of migration 018, through HTTP: a field's value
// found by its exact key (also with a word, and for package extras whose key or value holds '='),
// sorting by a typed field page after page (the datasets with a value, then those without), and
// the counts of a choice field started while an index write is in flight (no lock: the write goes
// on, and the counts are exact once it has ended).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

// always true, but a filter: the count and the facets come from a scan of the matches
const SCAN = 'num_resources:[0 TO *]';

describe('custom fields of a schema', () => {
  let t: TestApp;
  let token: string;
  const search = (data: Record<string, unknown>, who: { token?: string } = {}) => t.ok('package_search', data, who);
  const names = async (data: Record<string, unknown>, who: { token?: string } = {}) =>
    ((await search({ rows: 100, ...data }, who)).results as { name: string }[]).map((d) => d.name);

  // name, theme, coverage_start, population (undefined: none)
  const DATASETS: [string, string[], string | undefined, number | undefined][] = [
    ['river-health', ['health', 'environment'], '2019-05-01', 1200],
    ['river-levels', ['environment'], '2021-02-01', 800],
    ['river-clinics', ['health'], undefined, 5000],
    ['budget', ['economy'], '2022-07-15', undefined],
    ['hospital-beds', ['health'], '2019-05-01', 3000],
    ['air', ['environment'], undefined, undefined],
    ['noise', ['health'], '2020-01-31', 800],
  ];

  before(async () => {
    t = await startApp({
      plugins: [],
      config: {
        'svc.scheming.dataset_schemas': [path.join(import.meta.dirname, 'fixtures', 'scheming-search-catalog.yaml')],
        'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      },
    });
    token = (await t.user('olga')).token;
    await t.ok('organization_create', { name: 'olga-org', title: 'Olga' }, { token });
    for (const [name, theme, coverage_start, population] of DATASETS) {
      await t.ok(
        'package_create',
        { name, title: name.replace('-', ' '), owner_org: 'olga-org', theme, coverage_start, population, notes: 'data' },
        { token },
      );
    }
    await t.ok(
      'package_create',
      { name: 'private-river', owner_org: 'olga-org', private: true, theme: ['health'], coverage_start: '1999-01-01' },
      {
        token,
      },
    );
  });
  after(async () => {
    await t?.close();
  });

  test('a word and a choice value: the datasets with both, and the facets of a scan', async () => {
    assert.deepEqual((await names({ q: 'river AND theme:health' })).sort(), ['river-clinics', 'river-health']);
    assert.deepEqual((await names({ q: 'river', fq: 'theme:health' })).sort(), ['river-clinics', 'river-health']);
    assert.deepEqual((await names({ fq: 'theme:health AND -theme:environment' })).sort(), ['hospital-beds', 'noise', 'river-clinics']);
    assert.deepEqual((await names({ fq: 'theme:Health' })).sort(), []);
    const r = await search({ q: 'data AND theme:health', 'facet.field': ['theme'], rows: 0 });
    const scanned = await search({ q: 'data AND theme:health', fq: SCAN, 'facet.field': ['theme'], rows: 0 });
    assert.equal(r.count, 4);
    assert.deepEqual(r.facets, scanned.facets);
    assert.deepEqual(r.facets.theme, { health: 4, environment: 1 });
    // the private dataset for its organization's member only
    assert.deepEqual((await names({ q: 'theme:health', include_private: true }, { token })).length, 5);
  });

  test('sorting by a typed field pages through the datasets with a value (least first), then those without', async () => {
    const pages = async (sort: string, who: { token?: string } = {}, extra: Record<string, unknown> = {}) => {
      const out: string[] = [];
      for (let start = 0; start < 10; start += 3) {
        const r = await search({ sort, rows: 3, start, ...extra }, who);
        out.push(...(r.results as { name: string }[]).map((d) => d.name));
      }
      return out;
    };
    // equal dates are ordered by the next key (name), datasets without a date by name
    assert.deepEqual(await pages('coverage_start asc, name asc'), [
      'hospital-beds',
      'river-health',
      'noise',
      'river-levels',
      'budget',
      'air',
      'river-clinics',
    ]);
    assert.deepEqual(await pages('coverage_start desc, name desc'), [
      'budget',
      'river-levels',
      'noise',
      'river-health',
      'hospital-beds',
      'river-clinics',
      'air',
    ]);
    assert.deepEqual(await pages('population asc, name asc'), [
      'noise',
      'river-levels',
      'river-health',
      'hospital-beds',
      'river-clinics',
      'air',
      'budget',
    ]);
    assert.deepEqual(await pages('population desc, name asc', {}, { fq: 'theme:health' }), [
      'river-clinics',
      'hospital-beds',
      'river-health',
      'noise',
    ]);
    assert.deepEqual((await pages('coverage_start asc, name asc', { token }, { include_private: true })).slice(0, 2), [
      'private-river',
      'hospital-beds',
    ]);
    // a page past every dataset with a value
    const last = await search({ sort: 'coverage_start asc, name asc', rows: 5, start: 6 });
    assert.deepEqual(
      (last.results as { name: string }[]).map((d) => d.name),
      ['river-clinics'],
    );
    assert.equal(last.count, 7);
    // a dataset's value changes: its place follows
    await t.ok('package_patch', { id: 'air', coverage_start: '2018-01-01' }, { token });
    assert.deepEqual((await pages('coverage_start asc, name asc')).slice(0, 2), ['air', 'hospital-beds']);
  });

  test('counting a choice field starts while an index write is in flight; once it ends the counts are exact', {
    skip: !onPostgres && 'PGlite runs one transaction at a time',
  }, async () => {
    const ready = async () =>
      (await t.services.db.query('SELECT 1 FROM package_search_counted_fields WHERE field = $1 AND ready', ['frequency'])).rows.length;
    const query = { 'facet.field': ['frequency'], rows: 0 };
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => {
      wrote = resolve;
    });
    // an index write whose triggers ran before the field was listed (so they did not count it)
    const writer = t.services.db.transaction(async (tx) => {
      await tx.query(`UPDATE package_search_index SET extras = extras || '{"frequency": "monthly"}' WHERE name = 'budget'`);
      wrote();
      await released;
    });
    await written;
    const during = await search(query);
    assert.deepEqual(during.facets.frequency, {});
    assert.equal(await ready(), 0);
    // another write is not held meanwhile
    await t.ok('package_patch', { id: 'noise', frequency: 'annual' }, { token });
    release();
    await writer;
    const counted = await search(query);
    assert.equal(await ready(), 1);
    assert.deepEqual(counted.facets.frequency, { annual: 1, monthly: 1 });
    assert.deepEqual((await search({ ...query, fq: SCAN })).facets, counted.facets);
  });
});

describe('package extras by their exact keys', () => {
  let t: TestApp;
  const names = async (fq: string) =>
    ((await t.ok('package_search', { fq, rows: 100 })).results as { name: string }[]).map((d) => d.name).sort();
  const long = `https://example.org/${'0123456789'.repeat(25)}`;

  before(async () => {
    t = await startApp({ plugins: [] });
    await t.ok('organization_create', { name: 'keys-org' }, { token: t.sysadminToken });
    const create = (name: string, extras: { key: string; value: string }[]) =>
      t.ok('package_create', { name, extras, owner_org: 'keys-org' }, { token: t.sysadminToken });
    await create('value-with-equals', [{ key: 'a', value: 'b=c' }]);
    await create('key-with-equals', [{ key: 'a=b', value: 'c' }]);
    await create('long-value', [{ key: 'note', value: long }]);
    await create('plain', [{ key: 'a', value: 'b' }]);
  });
  after(async () => {
    await t?.close();
  });

  test('a value is found by its own field only, also with = in the key or the value', async () => {
    assert.deepEqual(await names('a:"b=c"'), ['value-with-equals']);
    assert.deepEqual(await names('a:b'), ['plain']);
    assert.deepEqual(await names('extras_a:b'), ['plain']);
    assert.deepEqual(await names('a:c'), []);
  });

  test('a value longer than its key may be is found too', async () => {
    assert.deepEqual(await names(`note:"${long}"`), ['long-value']);
    assert.deepEqual(await names('note:"https://example.org/"'), []);
  });
});
