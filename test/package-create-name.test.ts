// package_create leaves the "name in use" check to the dataset's insert when that error ends the
// call (one round trip less a create, issue #29/#32): the answers stay those of the check — the
// name alone, the name with the other errors of the dict, a draft's name, a deleted dataset's
// name freed.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';
import type { Database } from '../src/db/database.ts';
import { noteTransactionStatements } from './helpers/statements.ts';

let t: TestApp;
const statements: string[] = [];
const admin = () => ({ token: t.sysadminToken });
const NAME_LOOKUP = /^SELECT \* FROM packages WHERE name = \$1/;

before(async () => {
  t = await startApp({ plugins: ['activity'] });
  noteTransactionStatements(t.services.db as Database, statements);
  await t.ok('organization_create', { name: 'cn-org' }, admin());
});
after(async () => {
  await t?.close();
});

test('package_create: the name is not looked up before the insert; a name in use is answered as before', async () => {
  statements.length = 0;
  const created = await t.ok('package_create', { name: 'cn-first', owner_org: 'cn-org', tags: [{ name: 'cn' }] }, admin());
  assert.equal(statements.filter((s) => NAME_LOOKUP.test(s.trim())).length, 0, 'no lookup of the name before the insert');
  assert.equal(created.name, 'cn-first');

  // the name alone is wrong (the answers compared as text: the same keys in the same order)
  const taken = await t.call('package_create', { name: 'cn-first', owner_org: 'cn-org' }, admin());
  assert.equal(taken.status, 409);
  assert.equal(
    JSON.stringify(taken.body.error),
    '{"name":["That URL is already in use."],"__type":"Validation Error","message":"Validation Error: name: That URL is already in use."}',
  );

  // the name and more: the whole error dict, in the validation's order (name first)
  const more = await t.call('package_create', { name: 'cn-first', owner_org: 'cn-nope', author_email: 'not an email' }, admin());
  assert.equal(more.status, 409);
  assert.equal(
    JSON.stringify(more.body.error),
    JSON.stringify({
      name: ['That URL is already in use.'],
      author_email: ['Email not an email is not a valid format'],
      owner_org: ['Organization does not exist'],
      __type: 'Validation Error',
      message:
        'Validation Error: name: That URL is already in use.; author_email: Email not an email is not a valid format; owner_org: Organization does not exist',
    }),
  );

  // a name too short
  const short = await t.call('package_create', { name: 'c', owner_org: 'cn-org' }, admin());
  assert.deepEqual(short.body.error?.name, ['Must be at least 2 characters long', 'Name "c" length is less than minimum 2']);

  // a draft holds its name
  await t.ok('package_create', { name: 'cn-draft', owner_org: 'cn-org', state: 'draft' }, admin());
  const draft = await t.call('package_create', { name: 'cn-draft', owner_org: 'cn-org' }, admin());
  assert.equal(JSON.stringify(draft.body.error), JSON.stringify(taken.body.error));

  // a deleted dataset's name is free: it moves to the new dataset
  await t.ok('package_delete', { id: 'cn-first' }, admin());
  const again = await t.ok('package_create', { name: 'cn-first', owner_org: 'cn-org' }, admin());
  assert.notEqual(again.id, created.id);
  assert.equal((await t.ok('package_show', { id: created.id }, admin())).state, 'deleted');

  // nothing of the refused creates was kept
  const names = (await t.ok('package_list', {}, admin())) as string[];
  assert.deepEqual(names.filter((n) => n.startsWith('cn-')).sort(), ['cn-first']); // (drafts are not listed)
  const activities = await t.ok('package_activity_list', { id: again.id }, admin());
  assert.deepEqual(
    activities.map((a: { activity_type: string }) => a.activity_type),
    ['new package'],
  );
});

test('package_create: a sent id is not looked up before the insert either; an id in use is answered as before', async () => {
  const first = await t.ok('package_create', { name: 'cn-id-first', owner_org: 'cn-org' }, admin());
  const ownId = randomUUID();
  statements.length = 0;
  const fresh = await t.ok('package_create', { id: ownId, name: 'cn-id-second', owner_org: 'cn-org' }, admin());
  assert.equal(fresh.id, ownId);
  assert.equal(statements.filter((s) => /^SELECT 1 FROM packages WHERE id = \$1/.test(s.trim())).length, 0, 'no lookup of the id');

  // the id alone, with its own dataset's name, with another's name, with another error: the whole dict, in order
  const answers = [];
  for (const sent of [
    { id: first.id, name: 'cn-id-third', owner_org: 'cn-org' },
    { id: first.id, name: 'cn-id-first', owner_org: 'cn-org' },
    { id: first.id, name: 'cn-id-second', owner_org: 'cn-org' },
    { id: ownId, name: 'cn-id-fourth', owner_org: 'cn-org', author_email: 'nope' },
  ]) {
    const r = await t.call('package_create', sent, admin());
    assert.equal(r.status, 409);
    answers.push(JSON.stringify(r.body.error));
  }
  assert.deepEqual(answers, [
    '{"id":["Dataset id already exists"],"__type":"Validation Error","message":"Validation Error: id: Dataset id already exists"}',
    '{"id":["Dataset id already exists"],"__type":"Validation Error","message":"Validation Error: id: Dataset id already exists"}',
    '{"id":["Dataset id already exists"],"name":["That URL is already in use."],"__type":"Validation Error","message":"Validation Error: id: Dataset id already exists; name: That URL is already in use."}',
    '{"id":["Dataset id already exists"],"author_email":["Email nope is not a valid format"],"__type":"Validation Error","message":"Validation Error: id: Dataset id already exists; author_email: Email nope is not a valid format"}',
  ]);
  // nothing was written by the refused creates
  assert.equal((await t.call('package_show', { id: 'cn-id-third' }, admin())).status, 404);
  assert.equal((await t.ok('package_show', { id: first.id }, admin())).name, 'cn-id-first');
});
