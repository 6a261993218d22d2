// A write of one dataset runs the statements of one id (oneIdSql: its index row, its dict), planned
// once per connection, and the index's functions are PL/pgSQL (migration 025), planned once per
// session (issue #32). The row written for one dataset is the row the statement of many ids
// writes (a rebuild), every key the expression indexes hold is the same, and what a caller finds
// and reads is the same.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { searchEngine } from '../src/search/service.ts';
import { oneIdSql } from '../src/db/sql.ts';

let t: TestApp;
const admin = () => ({ token: t.sysadminToken });
const NAMES = ['oir-water', 'oir-river', 'oir-private', 'oir-draft'];

before(async () => {
  t = await startApp({ plugins: ['activity'] });
  await t.ok('organization_create', { name: 'oir-org', title: 'One Row Org' }, admin());
  await t.ok('group_create', { name: 'oir-group', title: 'Rivers and lakes' }, admin());
  const common = { owner_org: 'oir-org', license_id: 'cc-by' };
  await t.ok(
    'package_create',
    {
      ...common,
      name: 'oir-water',
      title: 'Water quality monitoring 2024',
      notes: 'Monthly water quality monitoring of rivers.csv and lakes (v1.2) by the agency.',
      tags: [{ name: 'water' }, { name: 'quality' }, { name: 'rivers' }],
      groups: [{ name: 'oir-group' }],
      extras: [
        { key: 'theme', value: 'environment' },
        { key: 'start', value: '2024-01-31' },
        { key: 'count', value: '42' },
      ],
      resources: [
        { url: 'http://example.org/water.csv', name: 'Water CSV', format: 'CSV', description: 'monthly values' },
        { url: 'http://example.org/water.json', name: 'Water JSON', format: 'JSON' },
      ],
    },
    admin(),
  );
  await t.ok(
    'package_create',
    { ...common, name: 'oir-river', title: 'River levels', notes: 'water levels of the river', tags: [{ name: 'water' }] },
    admin(),
  );
  await t.ok('package_create', { ...common, name: 'oir-private', private: true, title: 'Private water quality' }, admin());
  await t.ok('package_create', { ...common, name: 'oir-draft', state: 'draft', title: 'Draft water quality' }, admin());
});
after(async () => {
  await t?.close();
});

/** Every column of the datasets' index rows, the keys of the expression indexes and their typed values, as text. */
async function rows(): Promise<string[]> {
  const r = await t.services.db.query<{ row: string }>(
    `SELECT row(s.*)::text || ' ' || package_search_phrase_keys(s.doc)::text || ' ' || package_search_weighted_keys(s.doc)::text
       || ' ' || package_search_extra_keys(s.extras)::text
       || ' ' || coalesce((SELECT string_agg(row(v.*)::text, ',' ORDER BY row(v.*)::text) FROM package_search_field_values v
         WHERE v.package_id = s.package_id), '') AS row
     FROM package_search_index s WHERE s.name = ANY($1::text[]) ORDER BY s.name`,
    [NAMES],
  );
  return r.rows.map((x) => x.row);
}

const found = async (params: Record<string, unknown>) =>
  (await t.ok('package_search', { rows: 100, include_private: true, include_drafts: true, ...params }, admin())).results
    .map((d: any) => d.name)
    .sort();

const QUERIES: Record<string, unknown>[] = [
  { q: '"water quality monitoring"' },
  { q: '"quality monitoring"' },
  { q: 'title:water' },
  { q: 'notes:river' },
  { q: 'rivers.csv' },
  { fq: 'theme:environment' },
  { fq: 'tags:water' },
  { fq: 'groups:oir-group' },
  { fq: 'res_format:CSV' },
  { q: 'water', 'facet.field': '["tags","res_format"]' },
];

test('the index row written for one dataset is the row the statement of many writes, and searches find the same', async () => {
  const one = await rows();
  assert.equal(one.length, NAMES.length);
  const answers = [];
  for (const q of QUERIES) answers.push(await found(q));
  assert.deepEqual(answers[0], ['oir-water']);
  assert.deepEqual(answers[5], ['oir-water']);
  const ids = (await t.services.db.query<{ id: string }>('SELECT id FROM packages WHERE name = ANY($1::text[])', [NAMES])).rows.map(
    (r) => r.id,
  );
  // many at once (a rebuild's statement), then each alone again
  await t.services.db.transaction((tx) => searchEngine(t.services).index(tx, ids));
  assert.deepEqual(await rows(), one);
  for (const id of ids) await t.services.db.transaction((tx) => searchEngine(t.services).index(tx, [id]));
  assert.deepEqual(await rows(), one);
  for (const [k, q] of QUERIES.entries()) assert.deepEqual(await found(q), answers[k], JSON.stringify(q));
});

test('package_create answers the dict that package_show gives', async () => {
  const created = await t.ok(
    'package_create',
    { name: 'oir-dict', owner_org: 'oir-org', tags: [{ name: 'water' }], resources: [{ url: 'http://example.org/d.csv' }] },
    admin(),
  );
  const shown = await t.ok('package_show', { id: 'oir-dict' }, admin());
  assert.deepEqual(created, shown);
});

test('oneIdSql: every $1::text[] becomes the array of the one id; any other use of $1 is refused', () => {
  assert.equal(
    oneIdSql('SELECT 1 WHERE a = ANY($1::text[]) AND $2 OR b = ANY($1::text[])'),
    'SELECT 1 WHERE a = ANY(ARRAY[$1::text]) AND $2 OR b = ANY(ARRAY[$1::text])',
  );
  assert.throws(() => oneIdSql('SELECT $1::text[], $1'));
  assert.equal(oneIdSql('SELECT $10, $1::text[]'), 'SELECT $10, ARRAY[$1::text]');
});
