// The example plugin of docs/plugins.md (examples/plugins/change_counter), loaded into the app as
// a built-in plugin would be, with each of its hooks checked through HTTP.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, asSysadmin, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { availablePlugins } from '../src/plugins/index.ts';
import { changeCounterPlugin } from '../examples/plugins/change_counter/index.ts';

let t: TestApp;
let editor: TestUser;
let outsider: TestUser;

before(async () => {
  // What listing the plugin in src/plugins/index.ts does.
  availablePlugins.change_counter = changeCounterPlugin;
  t = await startApp({ plugins: ['datastore', 'change_counter'], config: { 'svc.change_counter.keep_tag': 'protected' } });
  ({
    users: { editor_ed: editor },
  } = await organizationWithTeam(t, { name: 'acme' }, { editor_ed: 'editor' }));
  outsider = await t.user('outsider_olga');
});
after(async () => {
  await t?.close();
  delete availablePlugins.change_counter;
});

const dataset = (name: string, extra: Record<string, unknown> = {}) =>
  t.ok('package_create', { name, owner_org: 'acme', ...extra }, as(editor));

describe('example plugin change_counter', () => {
  test('a package change listener counts committed changes; the wrapped package_show shows them', async () => {
    await dataset('counted');
    assert.equal((await t.ok('package_show', { id: 'counted' })).num_changes, 1);
    await t.ok('package_patch', { id: 'counted', title: 'Counted' }, as(editor));
    await t.ok('resource_create', { package_id: 'counted', url: 'http://example.org/a.csv' }, as(editor));
    const refused = await t.call('package_patch', { id: 'counted', title: 'by an outsider' }, as(outsider));
    assert.equal(refused.status, 403);
    assert.equal((await t.ok('package_show', { id: 'counted' })).num_changes, 3, 'create, patch, resource; not the refused patch');
  });

  test('the new action: typed parameters, help_show, the OpenAPI document, and the dataset’s privacy', async () => {
    await dataset('secret', { private: true });
    const anon = await t.call('dataset_change_count', { id: 'counted' }, { method: 'GET' });
    assert.equal(anon.status, 200);
    assert.deepEqual({ name: anon.body.result.name, changes: anon.body.result.changes }, { name: 'counted', changes: 3 });
    const missing = await t.call('dataset_change_count', {});
    assert.equal(missing.status, 409);
    assert.deepEqual(missing.body.error?.id, ['Missing value']);
    assert.equal((await t.call('dataset_change_count', { id: 'secret' })).status, 403);
    assert.equal((await t.call('dataset_change_count', { id: 'secret' }, as(outsider))).status, 403);
    assert.equal((await t.ok('dataset_change_count', { id: 'secret' }, as(editor))).changes, 1);
    assert.match(await t.ok('help_show', { name: 'dataset_change_count' }), /example plugin change_counter/);
    const doc = await t.app.inject({ method: 'GET', url: '/api/3/openapi.json' });
    assert.ok(doc.json().paths['/api/3/action/dataset_change_count'], 'the action is in the OpenAPI document');
  });

  test('the wrapped auth function reads the declared option: datasets with the keep tag are deleted by sysadmins only', async () => {
    await dataset('kept', { tags: [{ name: 'protected' }] });
    await dataset('default-tag', { tags: [{ name: 'keep' }] });
    const refused = await t.call('package_delete', { id: 'kept' }, as(editor));
    assert.equal(refused.status, 403);
    assert.match(refused.body.error?.message, /tagged protected/);
    assert.equal((await t.ok('package_show', { id: 'kept' })).state, 'active');
    await t.ok('package_delete', { id: 'default-tag' }, as(editor)); // "keep" is the default the configuration replaced
    await t.ok('package_delete', { id: 'kept' }, asSysadmin(t));
  });

  test('the route answers as the requesting user', async () => {
    const pub = await t.app.inject({ method: 'GET', url: '/change-counter/counted' });
    assert.equal(pub.statusCode, 200);
    assert.equal(pub.body, 'counted: 3 changes\n');
    assert.equal((await t.app.inject({ method: 'GET', url: '/change-counter/secret' })).statusCode, 403);
    const member = await t.app.inject({ method: 'GET', url: '/change-counter/secret', headers: { authorization: editor.token } });
    assert.equal(member.statusCode, 200);
    assert.equal(member.body, 'secret: 1 changes\n');
    assert.equal((await t.app.inject({ method: 'GET', url: '/change-counter/nothing-here' })).statusCode, 404);
  });
});
