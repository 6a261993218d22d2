// Statements tried inside a savepoint (src/db/database.ts: inSavepoint) leave the request's
// transaction usable: a data store delete whose filter value the column refuses names the field
// and deletes nothing; the same request type then works, and the table is as before.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;

before(async () => {
  t = await startApp();
  await t.ok('organization_create', { name: 'sp-org' }, { token: t.sysadminToken });
  await t.ok('package_create', { name: 'sp-data', owner_org: 'sp-org' }, { token: t.sysadminToken });
});
after(async () => {
  await t?.close();
});

test('a refused filter value names its field and deletes nothing; a good delete then works', async () => {
  const { resource_id: id } = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'sp-data', name: 'numbers' },
      fields: [
        { id: 'word', type: 'text' },
        { id: 'n', type: 'int' },
      ],
      records: [
        { word: 'one', n: 1 },
        { word: 'two', n: 2 },
        { word: 'three', n: 3 },
      ],
    },
    { token: t.sysadminToken },
  );
  const bad = await t.call('datastore_delete', { resource_id: id, filters: { word: 'one', n: 'many' } }, { token: t.sysadminToken });
  assert.equal(bad.status, 409);
  assert.equal(bad.body.error!.__type, 'Validation Error');
  assert.match(String(bad.body.error!.filters), /"n"/);
  const all = await t.ok('datastore_search', { resource_id: id, sort: 'n' });
  assert.equal(all.total, 3);

  await t.ok('datastore_delete', { resource_id: id, filters: { n: 2 } }, { token: t.sysadminToken });
  const left = await t.ok('datastore_search', { resource_id: id, sort: 'n' });
  assert.deepEqual(
    left.records.map((r: { word: string }) => r.word),
    ['one', 'three'],
  );
  assert.equal(left.total, 2);
});
