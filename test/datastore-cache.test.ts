// Table descriptions are cached between requests: a change made by another API process on the
// same PostgreSQL data store reaches this one (NOTIFY), and changes made here are seen at once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, onPostgres, type TestApp } from './helpers/app.ts';

let a: TestApp;
let b: TestApp | undefined;

before(async () => {
  a = await startApp();
  if (onPostgres) {
    // A second API process on the same data store database.
    const cfg = a.services.config;
    b = await startApp({
      config: {
        'svc.datastore.write_url': cfg.str('svc.datastore.write_url'),
        'svc.datastore.read_url': cfg.str('svc.datastore.read_url'),
      },
    });
  }
  await a.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'cache-org', 'C', 'organization', true)",
    [randomUUID()],
  );
  await a.ok('package_create', { name: 'cache-ds', owner_org: 'cache-org' }, { token: a.sysadminToken });
});
after(async () => {
  await b?.close();
  await a?.close();
});

const fieldIds = (r: any) => r.fields.map((f: any) => f.id);

test('a new field, a dropped table and a new alias are seen by the next search', async () => {
  const id = (
    await a.ok(
      'datastore_create',
      { resource: { package_id: 'cache-ds' }, fields: [{ id: 'x', type: 'int' }], records: [{ x: 1 }] },
      { token: a.sysadminToken },
    )
  ).resource_id;
  assert.deepEqual(fieldIds(await a.ok('datastore_search', { resource_id: id })), ['_id', 'x']);
  await a.ok(
    'datastore_create',
    {
      resource_id: id,
      fields: [
        { id: 'x', type: 'int' },
        { id: 'y', type: 'text' },
      ],
      records: [{ x: 2, y: 'two' }],
      aliases: 'cache-alias',
    },
    { token: a.sysadminToken },
  );
  const r = await a.ok('datastore_search', { resource_id: 'cache-alias', sort: 'x' });
  assert.deepEqual(fieldIds(r), ['_id', 'x', 'y']);
  assert.equal(r.records[1].y, 'two');
  await a.ok('datastore_delete', { resource_id: id, force: true }, { token: a.sysadminToken });
  assert.equal((await a.call('datastore_search', { resource_id: id })).status, 404);
  assert.equal((await a.call('datastore_search', { resource_id: 'cache-alias' })).status, 404);
});

test('another process on the same PostgreSQL sees changes made here', { skip: !onPostgres && 'one process on PGlite' }, async () => {
  const id = (
    await a.ok(
      'datastore_create',
      { resource: { package_id: 'cache-ds' }, fields: [{ id: 'x', type: 'int' }], records: [{ x: 1 }] },
      { token: a.sysadminToken },
    )
  ).resource_id;
  const token = b!.sysadminToken;
  const searchB = () => b!.ok('datastore_search', { resource_id: id }, { token });
  assert.deepEqual(fieldIds(await searchB()), ['_id', 'x']);
  await a.ok(
    'datastore_create',
    {
      resource_id: id,
      fields: [
        { id: 'x', type: 'int' },
        { id: 'z', type: 'text' },
      ],
    },
    { token: a.sysadminToken },
  );
  let seen: string[] = [];
  for (let i = 0; i < 50 && !seen.includes('z'); i++) {
    seen = fieldIds(await searchB());
    if (!seen.includes('z')) await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(seen, ['_id', 'x', 'z']);
  await a.ok('datastore_delete', { resource_id: id, force: true }, { token: a.sysadminToken });
  let status = 200;
  for (let i = 0; i < 50 && status !== 404; i++) {
    status = (await b!.call('datastore_search', { resource_id: id }, { token })).status;
    if (status !== 404) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(status, 404);
});
