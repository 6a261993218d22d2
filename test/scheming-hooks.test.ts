// Schema-level validator hooks (before_validators / after_validators, CKAN's __before / __after)
// for datasets, groups and organizations, and the output validators of group_list /
// organization_list with all_fields, which show custom fields as group_show does.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

const fixture = (name: string) => path.join(import.meta.dirname, 'fixtures', name);

let t: TestApp;
let sys: string;

before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [fixture('scheming-hooks-dataset.yaml'), fixture('scheming-hooks-refusing.yaml')],
      'svc.scheming.group_schemas': [fixture('scheming-hooks-group.yaml')],
      'svc.scheming.organization_schemas': [fixture('scheming-hooks-organization.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
    },
  });
  sys = t.sysadminToken;
  await t.ok(
    'organization_create',
    { name: 'hook-org', title: 'Hook org', motto: { en: 'Hi', de: 'Hallo' }, regions: 'north' },
    { token: sys },
  );
});
after(async () => {
  await t?.close();
});

test('a schema whose hooks pass: the dataset is created with its fields and no trace of the hooks', async () => {
  const created = await t.ok(
    'package_create',
    { type: 'hooked', name: 'hooked-1', title: 'Hooked', owner_org: 'hook-org', shelf: 'B2' },
    { token: sys },
  );
  const shown = await t.ok('package_show', { id: 'hooked-1' });
  for (const d of [created, shown]) {
    assert.equal(d.shelf, 'B2');
    assert.equal(d.type, 'hooked');
    assert.ok(!('__before' in d) && !('__after' in d), 'the hooks leave no key behind');
  }
});

test('an after_validators chain that refuses is reported under __after, and nothing is stored', async () => {
  const r = await t.call('package_create', { type: 'sealed', name: 'sealed-1', title: 'Sealed', owner_org: 'hook-org' }, { token: sys });
  assert.equal(r.body.success, false);
  assert.equal(r.body.error?.__type, 'Validation Error');
  assert.deepEqual(r.body.error?.__after, ['Missing value']);
  const gone = await t.call('package_show', { id: 'sealed-1' }, { token: sys });
  assert.equal(gone.body.error?.__type, 'Not Found Error');
  // a field error and the hook's error come together, as CKAN reports them
  const both = await t.call('package_create', { type: 'sealed', name: 'Not A Name', owner_org: 'hook-org' }, { token: sys });
  assert.ok(both.body.error?.name, JSON.stringify(both.body.error));
  assert.deepEqual(both.body.error?.__after, ['Missing value']);
});

test('before_validators and after_validators run on updates too: package_patch of a hooked dataset', async () => {
  await t.ok('package_create', { type: 'hooked', name: 'hooked-2', title: 'Before', owner_org: 'hook-org' }, { token: sys });
  const patched = await t.ok('package_patch', { id: 'hooked-2', title: 'After', shelf: 'C3' }, { token: sys });
  assert.equal(patched.title, 'After');
  assert.equal(patched.shelf, 'C3');
  assert.ok(!('__after' in patched));
});

test('group hooks run on create and update; group_list with all_fields applies output validators like group_show', async () => {
  await t.ok('group_create', { name: 'hook-group', title: 'Hook group', settings: '{"zoom": 3}' }, { token: sys });
  const shown = await t.ok('group_show', { id: 'hook-group' });
  assert.deepEqual(shown.settings, { zoom: 3 }, 'scheming_load_json turns the stored text into its object');
  const list = await t.ok('group_list', { all_fields: true });
  const listed = list.find((g: any) => g.name === 'hook-group');
  assert.deepEqual(listed.settings, { zoom: 3 });
  assert.ok(!('__before' in listed));
  await t.ok('group_patch', { id: 'hook-group', settings: '{"zoom": 4}' }, { token: sys });
  const again = await t.ok('group_list', { all_fields: true, groups: ['hook-group'] });
  assert.deepEqual(again[0].settings, { zoom: 4 });
  // without all_fields: names only
  assert.ok((await t.ok('group_list', {})).includes('hook-group'));
});

test('organization_list with all_fields applies output validators like organization_show', async () => {
  const shown = await t.ok('organization_show', { id: 'hook-org' });
  assert.deepEqual(shown.regions, ['north'], 'scheming_multiple_choice_output makes the text a list');
  assert.deepEqual(shown.motto, { en: 'Hi', de: 'Hallo' });
  const list = await t.ok('organization_list', { all_fields: true });
  const listed = list.find((o: any) => o.name === 'hook-org');
  assert.deepEqual(listed.regions, ['north']);
  assert.deepEqual(listed.motto, { en: 'Hi', de: 'Hallo' });
});
