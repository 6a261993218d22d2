// A harvest import writes its dataset through package_create / package_update, reading only the
// id of their answer: the dataset's dict is not built for it (no activity plugin: nothing else
// reads it), and a new dataset's name, made free by the import itself, is checked by its insert
// (an error of the write ends the import's savepoint), not looked up again by the validation,
// nor its id.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';
import { harvestNow } from './helpers/harvest.ts';
import type { Database } from '../src/db/database.ts';
import { countedStatements, noteTransactionStatements } from './helpers/statements.ts';

let remote: TestApp;
let t: TestApp;
const statements: string[] = [];
const NAMES = ['his-one', 'his-two', 'his-three'];

before(async () => {
  remote = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false } });
  await remote.app.listen({ port: 0, host: '127.0.0.1' });
  await remote.ok('organization_create', { name: 'his-remote' }, asSysadmin(remote));
  for (const [i, name] of NAMES.entries())
    await remote.ok(
      'package_create',
      {
        name,
        title: `Import ${name}`,
        owner_org: 'his-remote',
        tags: [{ name: 'his-shared' }, { name: `his-own-${i}` }],
        extras: [{ key: 'theme', value: 'water' }],
        resources: [{ url: `http://example.org/${i}.csv`, format: 'CSV' }],
      },
      asSysadmin(remote),
    );
  t = await startApp({
    plugins: ['harvest'],
    config: { 'svc.jobs.in_process_worker': false, 'svc.harvest.allow_private_urls': true, 'svc.harvest.scheduler': false },
  });
  await t.ok('organization_create', { name: 'his-local' }, asSysadmin(t));
  // a local dataset holds the name of a remote one: the import takes another name
  await t.ok('package_create', { name: 'his-two', owner_org: 'his-local' }, asSysadmin(t));
  const url = `http://127.0.0.1:${(remote.app.server.address() as AddressInfo).port}`;
  await t.ok('harvest_source_create', { name: 'his-src', url, source_type: 'ckan', owner_org: 'his-local' }, asSysadmin(t));
  noteTransactionStatements(t.services.db as Database, statements);
});

after(async () => {
  await t?.close();
  await remote?.close();
});

const matching = (sql: string[], re: RegExp) => sql.filter((s) => re.test(s)).length;

test('harvest imports: no dataset dict built, the name checked by the insert', async () => {
  const { result: job, sql } = await countedStatements(statements, () => harvestNow(t, 'his-src'));
  assert.equal(job.stats.added, 3, JSON.stringify(job));
  assert.equal(matching(sql, /^\s*INSERT INTO packages|INSERT INTO packages \(/), 3);
  assert.equal(matching(sql, /json_build_object/), 0, 'no dict read for the answer');
  assert.equal(matching(sql, /FROM packages WHERE name = \$1 AND state <> 'deleted'/), 0, 'no second look-up of the name');
  assert.equal(matching(sql, /^\s*SELECT 1 FROM packages WHERE id = \$1/), 0, 'no look-up of the id');

  const names = (await t.ok('package_list', {})).sort();
  assert.equal(names.length, 4);
  assert.ok(names.includes('his-one') && names.includes('his-three'));
  assert.ok(
    names.some((n: string) => n.startsWith('his-two-')),
    names.join(),
  );
  const shown = await t.ok('package_show', { id: 'his-one' }, asSysadmin(t));
  assert.deepEqual(
    shown.tags.map((x: any) => x.name),
    ['his-own-0', 'his-shared'],
  );
  assert.equal(shown.resources.length, 1);
  assert.ok(shown.extras.some((e: any) => e.key === 'harvest_source_id'));
  const found = await t.ok('package_search', { q: 'his-shared', rows: 10 });
  assert.equal(found.count, 3);
});

test('an import update reads no dict either', async () => {
  await remote.ok('package_patch', { id: 'his-one', notes: 'changed over there' }, asSysadmin(remote));
  const { result: job, sql } = await countedStatements(statements, () => harvestNow(t, 'his-src'));
  assert.equal(job.stats.updated, 1, JSON.stringify(job));
  assert.equal(matching(sql, /json_build_object/), 0);
  assert.equal((await t.ok('package_show', { id: 'his-one' }, asSysadmin(t))).notes, 'changed over there');
});
