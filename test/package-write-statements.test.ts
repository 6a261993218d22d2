// package_create / package_update write a dataset in few round trips (harvests create datasets by
// the thousand, issue #29 and #32), with the same answers: resources in one statement, the tags
// that exist in one, nothing deleted for a new dataset, the dataset's dict read once for its
// activity and the answer. Statements are counted on the transaction of each call.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import type { Database } from '../src/db/database.ts';
import { countedStatements, noteTransactionStatements } from './helpers/statements.ts';

let t: TestApp;
const statements: string[] = [];
const admin = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: ['activity'] });
  // every statement of every transaction a call opens is noted (text only)
  const db = t.services.db as Database;
  noteTransactionStatements(db, statements);
  await t.ok('organization_create', { name: 'ws-org' }, admin());
  await t.ok('package_create', { name: 'ws-first', owner_org: 'ws-org', tags: [{ name: 'economy' }, { name: 'health' }] }, admin());
});
after(async () => {
  await t?.close();
});

const counted = <T>(fn: () => Promise<T>) => countedStatements(statements, fn);
const matching = (sql: string[], re: RegExp) => sql.filter((s) => re.test(s)).length;
const TAG_WRITES = /INSERT INTO (package_)?tags\b|DELETE FROM package_tags\b/;

const dict = {
  name: 'ws-ds',
  title: 'Written in few statements',
  owner_org: 'ws-org',
  tags: [{ name: 'economy' }, { name: 'health' }],
  extras: [
    { key: 'b', value: '2' },
    { key: 'a', value: '1' },
  ],
  resources: [
    { url: 'http://example.org/a.csv', name: 'A' },
    { url: 'http://example.org/b.json', format: 'JSON', description: 'bee' },
    { url: 'http://example.org/c', name: 'C', size: 12, created: '2020-01-02T03:04:05', custom_key: 'kept' },
  ],
};

test('package_create: resources in one statement, existing tags in one, nothing deleted, the dict read once', async () => {
  const { result: created, sql } = await counted(() => t.ok('package_create', dict, admin()));
  assert.equal(matching(sql, /INSERT INTO resources/), 1);
  assert.equal(matching(sql, TAG_WRITES), 1);
  assert.equal(matching(sql, /^\s*DELETE FROM package_(extras|tags)\b/), 0);
  assert.equal(matching(sql, /json_build_object/), 1);
  assert.equal(matching(sql, /^\s*SELECT 1 FROM activities/), 0, 'the activity type is decided by its insert');

  const shown = await t.ok('package_show', { id: 'ws-ds' }, admin());
  assert.deepEqual(created, shown);
  assert.deepEqual(
    shown.resources.map((r: any) => [r.position, r.name, r.format, r.description, r.size, r.url]),
    [
      [0, 'A', 'CSV', '', null, 'http://example.org/a.csv'],
      [1, null, 'JSON', 'bee', null, 'http://example.org/b.json'],
      [2, 'C', '', '', 12, 'http://example.org/c'],
    ],
  );
  assert.equal(shown.resources[2].created, '2020-01-02T03:04:05');
  assert.equal(shown.resources[2].custom_key, 'kept');
  assert.equal(shown.resources[0].created, shown.metadata_created);
  assert.deepEqual(
    shown.tags.map((x: any) => x.name),
    ['economy', 'health'],
  );
  const [activity] = await t.ok('package_activity_list', { id: 'ws-ds' });
  assert.equal(activity.activity_type, 'new package');
  assert.deepEqual(await t.ok('activity_data_show', { id: activity.id, object_type: 'package' }, admin()), shown);
});

test('package_create with tags that do not exist yet links them all', async () => {
  const { result, sql } = await counted(() =>
    t.ok(
      'package_create',
      { name: 'ws-new-tags', owner_org: 'ws-org', tags: [{ name: 'zz-new' }, { name: 'economy' }, { name: 'aa-new' }] },
      admin(),
    ),
  );
  assert.equal(matching(sql, TAG_WRITES), 2);
  assert.deepEqual(
    result.tags.map((x: any) => x.name),
    ['aa-new', 'economy', 'zz-new'],
  );
  assert.ok((await t.ok('tag_list', {})).includes('zz-new'));
});

test('package_update: extras, tags and resources replaced as sent, unchanged rows left alone, the dict read once', async () => {
  const before = await t.ok('package_show', { id: 'ws-ds' }, admin());
  const { result: updated, sql } = await counted(() =>
    t.ok(
      'package_update',
      {
        ...before,
        extras: [
          { key: 'a', value: '1' },
          { key: 'c', value: '3' },
        ],
        tags: [{ name: 'health' }, { name: 'brand-new-tag' }],
        resources: [before.resources[2], { url: 'http://example.org/d.csv' }, { ...before.resources[0], name: 'A2' }],
      },
      admin(),
    ),
  );
  assert.equal(matching(sql, /json_build_object/), 1);
  assert.equal(matching(sql, /INSERT INTO package_extras/), 1);
  assert.equal(matching(sql, /^\s*DELETE FROM package_extras/), 0);
  const shown = await t.ok('package_show', { id: 'ws-ds' }, admin());
  assert.deepEqual(updated, shown);
  assert.deepEqual(shown.extras, [
    { key: 'a', value: '1' },
    { key: 'c', value: '3' },
  ]);
  assert.deepEqual(
    shown.tags.map((x: any) => x.name),
    ['brand-new-tag', 'health'],
  );
  assert.deepEqual(
    shown.resources.map((r: any) => [r.position, before.resources.findIndex((b: any) => b.id === r.id), r.name]),
    [
      [0, 2, 'C'],
      [1, -1, null],
      [2, 0, 'A2'],
    ],
  );
  const [activity] = await t.ok('package_activity_list', { id: 'ws-ds' });
  assert.equal(activity.activity_type, 'changed package');
  assert.deepEqual(await t.ok('activity_data_show', { id: activity.id, object_type: 'package' }, admin()), shown);

  // nothing sent: every extra and tag goes
  const cleared = await t.ok('package_update', { ...shown, extras: [], tags: [] }, admin());
  assert.deepEqual([cleared.extras, cleared.tags], [[], []]);
});

test('a private dataset related to another: the answer shows the relationship, the public activity does not name it', async () => {
  await t.ok('package_create', { name: 'ws-hidden', owner_org: 'ws-org', private: true }, admin());
  const created = await t.ok(
    'package_create',
    { name: 'ws-related', owner_org: 'ws-org', relationships_as_subject: [{ object: 'ws-hidden', type: 'depends_on' }] },
    admin(),
  );
  assert.equal(created.relationships_as_subject.length, 1);
  assert.deepEqual(created, await t.ok('package_show', { id: 'ws-related' }, admin()));
  const [activity] = await t.ok('package_activity_list', { id: 'ws-related' }, admin());
  const recorded = await t.ok('activity_data_show', { id: activity.id, object_type: 'package' }, admin());
  assert.deepEqual(recorded.relationships_as_subject, []);
});

test('a deleted dataset gives up its name to a new one', async () => {
  const old = await t.ok('package_create', { name: 'ws-reused', owner_org: 'ws-org' }, admin());
  await t.ok('package_delete', { id: old.id }, admin());
  const fresh = await t.ok('package_create', { name: 'ws-reused', owner_org: 'ws-org' }, admin());
  assert.notEqual(fresh.id, old.id);
  assert.equal((await t.ok('package_show', { id: old.id }, admin())).name, old.id);
});

test('datasets created at once with the same new tags each get all their tags', {
  skip: !onPostgres && 'PGlite has no races',
}, async () => {
  const names = Array.from({ length: 8 }, (_, i) => `ws-conc-${i}`);
  const answers = await Promise.all(
    names.map((name, i) =>
      t.call(
        'package_create',
        { name, owner_org: 'ws-org', tags: [{ name: 'ws-race-1' }, { name: 'ws-race-2' }, { name: `ws-own-${i}` }] },
        admin(),
      ),
    ),
  );
  assert.ok(
    answers.every((a) => a.body.success),
    JSON.stringify(answers.map((a) => a.body.error)),
  );
  for (const [i, name] of names.entries()) {
    const shown = await t.ok('package_show', { id: name }, admin());
    assert.deepEqual(
      shown.tags.map((x: any) => x.name),
      ['ws-own-' + i, 'ws-race-1', 'ws-race-2'],
    );
  }
});
