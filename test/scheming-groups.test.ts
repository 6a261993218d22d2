// Group and organization schemas (svc.scheming.group_schemas / organization_schemas): their fields
// are validated on create, update and patch, stored typed and shown as top-level keys.
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
      'svc.scheming.group_schemas': [fixture('scheming-validate-group.json')],
      'svc.scheming.organization_schemas': [fixture('scheming-validate-organization.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
    },
  });
  sys = t.sysadminToken;
});
after(async () => {
  await t?.close();
});

async function refused(action: string, data: Record<string, unknown>) {
  const r = await t.call(action, data, { token: sys });
  assert.equal(r.body.success, false, `${action} should fail: ${JSON.stringify(r.body.result)}`);
  assert.equal(r.body.error?.__type, 'Validation Error', JSON.stringify(r.body.error));
  return r.body.error as Record<string, any>;
}

test('group custom fields are validated, stored typed and shown by group_show and group_list', async () => {
  const created = await t.ok(
    'group_create',
    {
      name: 'birds',
      title: 'Birds',
      colour: 'green',
      since: '2024-03-01',
      homepage: 'https://birds.example.org',
      motto: { en: 'Look up', fr: 'Regardez' },
      curators: [{ name: 'Ann', email: 'ann@example.org' }],
    },
    { token: sys },
  );
  const shown = await t.ok('group_show', { id: 'birds' });
  for (const g of [created, shown]) {
    assert.equal(g.title, 'Birds');
    assert.equal(g.colour, 'green');
    assert.equal(g.since, '2024-03-01');
    assert.equal(g.homepage, 'https://birds.example.org');
    assert.deepEqual(g.motto, { en: 'Look up', fr: 'Regardez' });
    assert.deepEqual(g.curators, [{ name: 'Ann', email: 'ann@example.org' }]);
  }
  const list = await t.ok('group_list', { all_fields: true });
  assert.equal(list.find((g: any) => g.name === 'birds').colour, 'green');
});

test('a wrong group field is refused naming it, and nothing is stored', async () => {
  const e = await refused('group_create', {
    name: 'fish',
    colour: 'red',
    since: 'spring',
    homepage: 'not a url',
    motto: 'plain text is not an object',
    curators: [{ email: 'x@example.org' }],
  });
  assert.deepEqual(e.colour, ["Value must be one of ['green', 'blue']"]);
  assert.deepEqual(e.since, ['Date format incorrect']);
  assert.deepEqual(e.homepage, ['Please provide a valid URL']);
  assert.deepEqual(e.motto, ['Failed to decode JSON string']);
  assert.deepEqual(e.curators, [{ name: ['Missing value'] }]);
  assert.equal((await t.call('group_show', { id: 'fish' })).status, 404);

  const missing = await refused('group_create', { name: 'fish' });
  assert.deepEqual(missing.colour, ['Missing value']);
  assert.equal((await t.call('group_show', { id: 'fish' })).status, 404);
});

test('group_patch keeps custom fields not sent, group_update replaces them; a bad patch changes nothing', async () => {
  await t.ok(
    'group_create',
    { name: 'plants', colour: 'blue', since: '2020-01-01', homepage: 'https://plants.example.org' },
    { token: sys },
  );
  const patched = await t.ok('group_patch', { id: 'plants', colour: 'green' }, { token: sys });
  assert.equal(patched.colour, 'green');
  assert.equal(patched.since, '2020-01-01');
  assert.equal(patched.homepage, 'https://plants.example.org');

  const before = await t.ok('group_show', { id: 'plants' });
  const e = await refused('group_patch', { id: 'plants', colour: 'purple', since: '2021-01-01' });
  assert.deepEqual(e.colour, ["Value must be one of ['green', 'blue']"]);
  assert.deepEqual(await t.ok('group_show', { id: 'plants' }), before);

  const updated = await t.ok('group_update', { id: 'plants', colour: 'blue' }, { token: sys });
  assert.equal(updated.colour, 'blue');
  assert.equal(updated.since, undefined, 'group_update: a field not sent is cleared');
  const bad = await refused('group_update', { id: 'plants' });
  assert.deepEqual(bad.colour, ['Missing value']);
  assert.equal((await t.ok('group_show', { id: 'plants' })).colour, 'blue');
});

test('organization custom fields: created, shown, patched; a wrong country is refused', async () => {
  const org = await t.ok(
    'organization_create',
    { name: 'wetland-agency', title: 'Wetland Agency', country: 'de', address: ['Main St 1', 'Berlin'], staff: '12' },
    { token: sys },
  );
  assert.equal(org.country, 'de');
  assert.deepEqual(org.address, ['Main St 1', 'Berlin']);
  assert.equal(org.staff, 12);
  const patched = await t.ok('organization_patch', { id: 'wetland-agency', contact_email: 'info@example.org' }, { token: sys });
  assert.equal(patched.contact_email, 'info@example.org');
  assert.equal(patched.country, 'de');
  assert.deepEqual(patched.address, ['Main St 1', 'Berlin']);

  const e = await refused('organization_create', { name: 'nowhere', country: 'xx', contact_email: 'nope' });
  assert.deepEqual(e.country, ["Value must be one of ['de', 'fr']"]);
  assert.deepEqual(e.contact_email, ['Email nope is not a valid format']);
  assert.equal((await t.call('organization_show', { id: 'nowhere' })).status, 404);
});

test('an organization type without a schema is refused naming the types', async () => {
  const e = await refused('organization_create', { name: 'odd-one', type: 'publisher', country: 'de' });
  assert.match(e.type[0], /Unsupported organization type: publisher/);
  assert.match(e.type[0], /organization/);
});
