import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';

let t: TestApp;
let editor: TestUser;
const sys = () => asSysadmin(t);

before(async () => {
  t = await startApp({ plugins: [] });
  ({
    users: { voc_editor: editor },
  } = await organizationWithTeam(t, { name: 'voc-org' }, { voc_editor: 'editor' }));
});
after(async () => {
  await t?.close();
});

test('vocabularies: create, show, list, update, delete, errors', async () => {
  const v = await t.ok('vocabulary_create', { name: 'genre', tags: [{ name: 'jazz' }, { name: 'rock' }] }, sys());
  assert.equal(v.name, 'genre');
  assert.deepEqual(
    v.tags.map((x: any) => x.name),
    ['jazz', 'rock'],
  );
  assert.equal(v.tags[0].vocabulary_id, v.id);
  assert.deepEqual((await t.ok('vocabulary_show', { id: 'genre' }, { method: 'GET' })).id, v.id);
  assert.deepEqual(
    (await t.ok('vocabulary_list')).map((x: any) => x.name),
    ['genre'],
  );

  let r = await t.call('vocabulary_create', { name: 'genre' }, sys());
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.name, ['That vocabulary name is already in use.']);
  r = await t.call('vocabulary_create', { name: 'g' }, sys());
  assert.deepEqual(r.body.error!.name, ['Name must be at least 2 characters long']);
  r = await t.call('vocabulary_create', { name: 'colours', tags: [{ name: 'x' }] }, sys());
  assert.equal(r.status, 409);
  assert.equal((await t.ok('vocabulary_list')).length, 1, 'a failed create changes nothing');
  r = await t.call('vocabulary_create', { name: 'colours' }, { token: editor.token });
  assert.equal(r.status, 403);
  r = await t.call('vocabulary_show', { id: 'nope' });
  assert.equal(r.status, 404);

  const u = await t.ok('vocabulary_update', { id: v.id, name: 'music', tags: [{ name: 'jazz' }, { name: 'blues' }] }, sys());
  assert.equal(u.name, 'music');
  assert.deepEqual(
    u.tags.map((x: any) => x.name),
    ['blues', 'jazz'],
  );
  r = await t.call('vocabulary_update', { id: 'nope', name: 'xx' }, sys());
  assert.equal(r.status, 404);

  // tag_create adds a tag to a vocabulary
  const tag = await t.ok('tag_create', { name: 'soul', vocabulary_id: 'music' }, sys());
  assert.deepEqual(Object.keys(tag).sort(), ['display_name', 'id', 'name', 'vocabulary_id']);
  r = await t.call('tag_create', { name: 'soul', vocabulary_id: 'music' }, sys());
  assert.deepEqual(r.body.error!.name, ['Tag soul already belongs to vocabulary music']);
  r = await t.call('tag_create', { name: 'funk', vocabulary_id: 'nope' }, sys());
  assert.deepEqual(r.body.error!.vocabulary_id, ['Tag vocabulary was not found.']);
  r = await t.call('tag_create', { name: 'funk' }, sys());
  assert.deepEqual(r.body.error!.vocabulary_id, ['Missing value']);
  r = await t.call('tag_create', { name: 'funk', vocabulary_id: 'music' }, { token: editor.token });
  assert.equal(r.status, 403);
  assert.deepEqual(await t.ok('tag_list', { vocabulary_id: 'music' }), ['blues', 'jazz', 'soul']);

  await t.ok('vocabulary_delete', { id: 'music' }, sys());
  r = await t.call('vocabulary_show', { id: 'music' });
  assert.equal(r.status, 404);
  r = await t.call('tag_show', { id: 'soul', vocabulary_id: 'music' });
  assert.equal(r.status, 404);
});

test('vocabulary tags on datasets; tag_show, tag_list, tag_delete', async () => {
  await t.ok('vocabulary_create', { name: 'country', tags: [{ name: 'France' }, { name: 'Peru' }] }, sys());
  let r = await t.call(
    'package_create',
    { name: 'voc-bad', owner_org: 'voc-org', tags: [{ name: 'Chile', vocabulary_id: 'country' }] },
    { token: editor.token },
  );
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.tags, ['Tag Chile does not belong to vocabulary country']);
  r = await t.call(
    'package_create',
    { name: 'voc-bad', owner_org: 'voc-org', tags: [{ name: 'Peru', vocabulary_id: 'nope' }] },
    { token: editor.token },
  );
  assert.equal(r.status, 409);

  await t.ok(
    'package_create',
    { name: 'voc-a', owner_org: 'voc-org', tags: [{ name: 'economy' }, { name: 'Peru', vocabulary_id: 'country' }] },
    { token: editor.token },
  );
  await t.ok(
    'package_create',
    { name: 'voc-private', private: true, owner_org: 'voc-org', tags: [{ name: 'secret-tag' }, { name: 'economy' }] },
    { token: editor.token },
  );

  // free tags only, and only of public datasets
  assert.deepEqual(await t.ok('tag_list'), ['economy']);
  assert.deepEqual(await t.ok('tag_list', { query: 'ECO' }), ['economy']);
  assert.deepEqual(await t.ok('tag_list', { query: 'zzz' }), []);
  const all = await t.ok('tag_list', { all_fields: true }, { method: 'GET' });
  assert.equal(all[0].name, 'economy');
  assert.equal(all[0].vocabulary_id, null);
  r = await t.call('tag_list', { vocabulary_id: 'nope' });
  assert.equal(r.status, 404);

  const free = await t.ok('tag_show', { id: 'economy', include_datasets: true });
  assert.deepEqual(
    free.packages.map((x: any) => x.name),
    ['voc-a'],
    'private datasets are not listed',
  );
  const peru = await t.ok('tag_show', { id: 'Peru', vocabulary_id: 'country' });
  assert.equal(peru.name, 'Peru');
  assert.equal(peru.packages, undefined);
  r = await t.call('tag_show', { id: 'Peru' });
  assert.equal(r.status, 404, 'without vocabulary_id only free tags are found');
  assert.equal(r.body.error!.message, 'Not found: Could not find tag "Peru"');
  r = await t.call('tag_show', {});
  assert.deepEqual(r.body.error!.id, ['Missing value']);

  r = await t.call('tag_delete', { id: 'economy' }, { token: editor.token });
  assert.equal(r.status, 403);
  assert.equal(await t.ok('tag_delete', { id: 'economy' }, sys()), null);
  const pkg = await t.ok('package_show', { id: 'voc-a' });
  assert.deepEqual(pkg.tags, []);
  assert.deepEqual(await t.ok('tag_list'), []);
  r = await t.call('tag_delete', { id: 'economy' }, sys());
  assert.equal(r.status, 404);
  // the vocabulary tag is still there after the dataset is updated without it
  await t.ok('package_patch', { id: 'voc-a', tags: [] }, { token: editor.token });
  assert.deepEqual(await t.ok('tag_list', { vocabulary_id: 'country' }), ['France', 'Peru']);
});
