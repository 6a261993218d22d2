import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };

/** An organization made by a sysadmin, with these users (by name) as members. */
async function makeOrg(name: string, members: [string, string][] = []): Promise<string> {
  const users = members.map(([userName, capacity]) => ({ name: userName, capacity }));
  return (await t.ok('organization_create', { name, users }, { token: t.sysadminToken })).id;
}

before(async () => {
  t = await startApp({ plugins: [] });
  editor = await t.user('res_editor');
  outsider = await t.user('res_outsider');
  await makeOrg('res-org', [[editor.name, 'editor']]);
});
after(async () => {
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an invalid inline resource stores nothing and reports its position', async () => {
  const resources = [
    { url: 'http://a.org/1' },
    { url: 'http://a.org/2' },
    { name: 'no url' },
    { url: 'http://a.org/4' },
    { url: 'http://a.org/5' },
  ];
  const r = await t.call('package_create', { name: 'five', owner_org: 'res-org', resources }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.resources, [{}, {}, { url: ['Missing value'] }, {}, {}]);
  assert.equal((await t.call('package_show', { id: 'five' }, { token: t.sysadminToken })).status, 404);
  const count = await t.services.db.query("SELECT count(*)::int AS n FROM resources WHERE url LIKE 'http://a.org/%'");
  assert.equal(count.rows[0].n, 0);
  const bad = await t.call(
    'package_create',
    { name: 'five', owner_org: 'res-org', resources: [{ url: 'http://a.org/1', size: 'big', created: 'yesterday' }] },
    { token: editor.token },
  );
  assert.deepEqual(bad.body.error!.resources, [{ size: ['Invalid integer'], created: ['Date format incorrect'] }]);
});

test('resource_create, show, update, patch, delete', async () => {
  const pkg = await t.ok('package_create', { name: 'res-ds', owner_org: 'res-org' }, { token: editor.token });
  let r = await t.call('resource_create', { package_id: 'res-ds', name: 'x' }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.url, ['Missing value']);
  r = await t.call('resource_create', { url: 'http://x' }, { token: editor.token });
  assert.deepEqual(r.body.error!.package_id, ['Missing value']);
  r = await t.call('resource_create', { package_id: 'res-ds', url: 'http://x' }, { token: outsider.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, `Access denied: User res_outsider not authorized to create resources on dataset res-ds`);
  await sleep(5);
  const res = await t.ok(
    'resource_create',
    {
      package_id: 'res-ds',
      url: 'https://data.example.org/files/table.xlsx?x=1',
      name: 'Table',
      description: 'desc',
      datastore_active: true,
      size: '1234',
      created: '2020-01-02T03:04:05',
      language: ['en', 'fr'],
      custom: 'c',
    },
    { token: editor.token },
  );
  assert.equal(res.format, 'XLSX');
  assert.equal(res.position, 0);
  assert.equal(res.size, 1234);
  assert.equal(res.created, '2020-01-02T03:04:05');
  assert.equal(res.datastore_active, false);
  assert.deepEqual(res.language, ['en', 'fr']);
  assert.equal(res.custom, 'c');
  assert.equal(res.package_id, pkg.id);
  assert.equal(res.state, 'active');
  for (const k of [
    'cache_last_updated',
    'cache_url',
    'created',
    'datastore_active',
    'description',
    'format',
    'hash',
    'id',
    'last_modified',
    'metadata_modified',
    'mimetype',
    'mimetype_inner',
    'name',
    'package_id',
    'position',
    'resource_type',
    'size',
    'state',
    'url',
    'url_type',
  ]) {
    assert.ok(k in res, k);
  }
  const shown = await t.ok('resource_show', { id: res.id }, { method: 'GET' });
  assert.deepEqual(shown, res);
  const after1 = await t.ok('package_show', { id: 'res-ds' });
  assert.ok(after1.metadata_modified > pkg.metadata_modified);
  assert.deepEqual(after1.resources[0], res);
  const second = await t.ok(
    'resource_create',
    { package_id: pkg.id, url: 'example.org/data', format: 'text/csv' },
    { token: editor.token },
  );
  assert.equal(second.position, 1);
  assert.equal(second.format, 'CSV');
  assert.equal(second.url, 'http://example.org/data');

  // update replaces: description cleared, name kept, extras replaced
  await sleep(5);
  const upd = await t.ok('resource_update', { id: res.id, url: 'http://new.org/t.csv', other: 'o' }, { token: editor.token });
  assert.equal(upd.description, '');
  assert.equal(upd.name, 'Table');
  assert.equal(upd.format, 'XLSX');
  assert.equal(upd.other, 'o');
  assert.equal(upd.custom, undefined);
  assert.equal(upd.language, undefined);
  assert.equal(upd.position, 0);
  const after2 = await t.ok('package_show', { id: 'res-ds' });
  assert.ok(after2.metadata_modified > after1.metadata_modified);
  const patched = await t.ok('resource_patch', { id: res.id, description: 'again' }, { token: editor.token });
  assert.equal(patched.description, 'again');
  assert.equal(patched.url, 'http://new.org/t.csv');
  assert.equal(patched.other, 'o');
  r = await t.call('resource_update', { id: res.id, url: 'http://evil' }, { token: outsider.token });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, `Access denied: User res_outsider not authorized to edit resource ${res.id}`);
  assert.equal((await t.call('resource_show', { id: 'nope' })).status, 404);
  assert.equal((await t.call('resource_update', { id: 'nope', url: 'x' }, { token: editor.token })).status, 404);

  // delete: positions close up
  assert.equal((await t.call('resource_delete', { id: res.id }, { token: outsider.token })).status, 403);
  assert.equal(await t.ok('resource_delete', { id: res.id }, { token: editor.token }), null);
  assert.equal((await t.call('resource_show', { id: res.id })).status, 404);
  const after3 = await t.ok('package_show', { id: 'res-ds' });
  assert.equal(after3.num_resources, 1);
  assert.equal(after3.resources[0].id, second.id);
  assert.equal(after3.resources[0].position, 0);
});

test('resource ids and private datasets', async () => {
  const id = randomUUID();
  await t.ok(
    'package_create',
    { name: 'priv-res', owner_org: 'res-org', private: true, resources: [{ id, url: 'http://p.org/x' }] },
    { token: editor.token },
  );
  const r = await t.call('resource_show', { id });
  assert.equal(r.status, 403);
  assert.equal(r.body.error!.message, `Access denied: User  not authorized to read resource ${id}`);
  assert.equal((await t.ok('resource_show', { id }, { token: editor.token })).id, id);
  const dup = await t.call('resource_create', { package_id: 'res-ds', id, url: 'http://p.org/y' }, { token: editor.token });
  assert.equal(dup.status, 409);
  assert.deepEqual(dup.body.error!.id, ['Resource id already exists.']);
  const dup2 = await t.call(
    'package_create',
    { name: 'steal', owner_org: 'res-org', resources: [{ id, url: 'http://p.org/y' }] },
    { token: editor.token },
  );
  assert.deepEqual(dup2.body.error!.resources, [{ id: ['Resource id already exists.'] }]);
});

test('package_resource_reorder', async () => {
  const pkg = await t.ok(
    'package_create',
    {
      name: 'order',
      owner_org: 'res-org',
      resources: [
        { url: 'http://o/1', name: '1' },
        { url: 'http://o/2', name: '2' },
        { url: 'http://o/3', name: '3' },
      ],
    },
    { token: editor.token },
  );
  const [a, b, c] = pkg.resources.map((x: any) => x.id);
  const out = await t.ok('package_resource_reorder', { id: 'order', order: [c] }, { token: editor.token });
  assert.deepEqual(out, { id: 'order', order: [c, a, b] });
  const shown = await t.ok('package_show', { id: 'order' });
  assert.deepEqual(
    shown.resources.map((x: any) => [x.id, x.position]),
    [
      [c, 0],
      [a, 1],
      [b, 2],
    ],
  );
  const r = await t.call('package_resource_reorder', { id: 'order', order: ['zzz'] }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.equal(r.body.error!.order, 'resource_id zzz can not be found');
  assert.equal((await t.call('package_resource_reorder', { id: 'order', order: [a] }, { token: outsider.token })).status, 403);
  // package_update keeps ids matched, reorders by list position, deletes the missing one
  const upd = await t.ok('package_update', { id: 'order', resources: [{ id: b, url: 'http://o/2' }, { id: c }] }, { token: editor.token });
  assert.deepEqual(
    upd.resources.map((x: any) => x.id),
    [b, c],
  );
  assert.equal(upd.resources[1].url, '');
  assert.equal(upd.resources[1].name, '3');
});

test('data store resources need no url; their url is the dump', async () => {
  const res = await t.ok('resource_create', { package_id: 'res-ds', url_type: 'datastore', name: 'table' }, { token: editor.token });
  assert.equal(res.url, `http://test.local/datastore/dump/${res.id}`);
  assert.equal(res.url_type, 'datastore');
  assert.equal(res.datastore_active, false);
});
