// A dataset's dict with every part (organization, groups, tags, extras, custom fields, resources,
// relationships), read in one statement as JSON: its values keep the types and order the actions
// have always returned, and every action returning dataset dicts returns the same one.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
const sys = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.auth.create_unowned_dataset': true } });
  await t.ok('organization_create', { name: 'dict-org', title: 'Dict Org', description: 'about' }, sys());
  for (const name of ['dict-zebra', 'dict-alpha']) await t.ok('group_create', { name, title: name.toUpperCase() }, sys());
  await t.ok('vocabulary_create', { name: 'dict-genre', tags: [{ name: 'jazz' }] }, sys());
  await t.ok(
    'package_create',
    {
      name: 'dict-full',
      title: 'Full dataset',
      owner_org: 'dict-org',
      license_id: 'cc-by',
      tags: [{ name: 'zinc' }, { name: 'apple' }, { name: 'jazz', vocabulary_id: 'dict-genre' }],
      extras: [
        { key: 'zeta', value: 'last' },
        { key: 'alpha', value: 'first' },
      ],
      groups: [{ name: 'dict-zebra' }, { name: 'dict-alpha' }],
      custom_thing: { nested: [1, 'two', null], flag: true },
      resources: [
        { url: 'http://example.org/big.csv', name: 'big', size: 5000000000, created: '2020-01-02T03:04:05.123456', rating: 'five' },
        { url: 'example.org/no-scheme.csv', name: 'second', format: 'CSV' },
        { url: 'http://example.org/c.json', name: 'third' },
      ],
    },
    sys(),
  );
  await t.ok('package_create', { name: 'dict-empty' }, sys());
  await t.ok('package_relationship_create', { subject: 'dict-full', object: 'dict-empty', type: 'depends_on', comment: 'needs' }, sys());
});
after(async () => {
  await t?.close();
});

test('every part of the dict keeps its values, types and order', async () => {
  const d = await t.ok('package_show', { id: 'dict-full' });
  assert.equal(d.organization.name, 'dict-org');
  assert.equal(d.organization.title, 'Dict Org');
  assert.equal(d.organization.is_organization, true);
  assert.match(d.organization.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/);
  assert.deepEqual(
    d.groups.map((g: { name: string; display_name: string }) => [g.name, g.display_name]),
    [
      ['dict-alpha', 'DICT-ALPHA'],
      ['dict-zebra', 'DICT-ZEBRA'],
    ],
  );
  assert.deepEqual(
    d.tags.map((x: { name: string }) => x.name),
    ['apple', 'zinc'],
    'free tags by name, vocabulary tags left out',
  );
  assert.deepEqual(d.extras, [
    { key: 'alpha', value: 'first' },
    { key: 'zeta', value: 'last' },
  ]);
  assert.deepEqual(d.custom_thing, { nested: [1, 'two', null], flag: true });
  assert.equal(d.license_title, 'Creative Commons Attribution');
  assert.deepEqual(
    d.resources.map((r: { name: string; position: number }) => [r.name, r.position]),
    [
      ['big', 0],
      ['second', 1],
      ['third', 2],
    ],
  );
  const [big, second] = d.resources;
  assert.equal(big.size, 5000000000, 'a size beyond 32 bits stays a number');
  assert.equal(big.created, '2020-01-02T03:04:05.123456');
  assert.equal(big.rating, 'five', 'a resource extra');
  assert.equal(big.datastore_active, false);
  assert.equal(second.size, null);
  assert.equal(second.url, 'http://example.org/no-scheme.csv');
  assert.equal(d.num_resources, 3);
  assert.equal(d.num_tags, 2);
  assert.match(d.metadata_modified, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/);
  assert.equal(d.private, false);
  assert.deepEqual(
    d.relationships_as_subject.map((r: { type: string; comment: string }) => [r.type, r.comment]),
    [['depends_on', 'needs']],
  );
  assert.deepEqual(d.relationships_as_object, []);
  assert.deepEqual(Object.keys(d), [...Object.keys(d)].sort(), 'keys in order');

  const empty = await t.ok('package_show', { id: 'dict-empty' });
  assert.equal(empty.organization, null);
  assert.deepEqual([empty.groups, empty.tags, empty.extras, empty.resources], [[], [], [], []]);
  assert.deepEqual(empty.relationships_as_object.length, 1);
});

test('search, lists and show return the same dicts', async () => {
  const shown = await Promise.all(['dict-empty', 'dict-full'].map((id) => t.ok('package_show', { id })));
  const found = await t.ok('package_search', { q: 'name:dict-*', sort: 'name asc' });
  assert.deepEqual(found.results, shown);
  const listed = await t.ok('current_package_list_with_resources', { limit: 10 });
  assert.deepEqual(
    listed
      .filter((d: { name: string }) => d.name.startsWith('dict-'))
      .sort((a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1)),
    shown,
  );
  const inGroup = await t.ok('group_show', { id: 'dict-alpha', include_datasets: true });
  assert.deepEqual(inGroup.packages, [shown[1]]);
});
