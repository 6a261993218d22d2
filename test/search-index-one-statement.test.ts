// A dataset's search index row is written in one statement that works out its permission labels
// itself (no read of the dataset before it), and its spatial extent is kept by one statement when
// it has none (the read of its `spatial` value removes it): one round trip less each for every
// package_create / package_update (issues #29 and #32). The labels stay those of
// packagePermissionLabels (auth/authz.ts) in every case, deleted datasets still leave the index
// (svc.search.remove_deleted_packages), and extents still follow their writes.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import type { Database } from '../src/db/database.ts';
import { packagePermissionLabels } from '../src/auth/authz.ts';
import { searchEngine } from '../src/search/service.ts';
import { noteTransactionStatements } from './helpers/statements.ts';

let t: TestApp;
const statements: string[] = [];
const admin = () => ({ token: t.sysadminToken });
const point = (x: number, y: number) => JSON.stringify({ type: 'Point', coordinates: [x, y] });

before(async () => {
  t = await startApp({ plugins: ['activity'] });
  noteTransactionStatements(t.services.db as Database, statements);
  await t.ok('organization_create', { name: 'ios-org' }, admin());
});
after(async () => {
  await t?.close();
});

const indexRow = async (name: string) =>
  (
    await t.services.db.query<{ labels: string[]; extent: string | null }>(
      'SELECT labels, extent::text FROM package_search_index WHERE name = $1',
      [name],
    )
  ).rows[0];
const extentRow = async (name: string) =>
  (
    await t.services.db.query<{ extent: string }>(
      'SELECT x.extent::text FROM package_spatial_extents x JOIN packages p ON p.id = x.package_id WHERE p.name = $1',
      [name],
    )
  ).rows[0];
const inBox = async (box: string) =>
  (await t.ok('package_search', { ext_bbox: box, rows: 100, include_private: true }, admin())).results.map((d: any) => d.name).sort();

test('package_create: the index row written without reading the dataset first, no extent removed on its own', async () => {
  statements.length = 0;
  await t.ok('package_create', { name: 'ios-one', owner_org: 'ios-org', notes: 'one statement' }, admin());
  const sql = statements.splice(0);
  assert.equal(sql.filter((s) => /INSERT INTO package_search_index/.test(s)).length, 1);
  assert.equal(sql.filter((s) => /^\s*SELECT id, owner_org, private, state, creator_user_id FROM packages/.test(s)).length, 0);
  assert.equal(sql.filter((s) => /^\s*DELETE FROM package_spatial_extents/.test(s)).length, 0);
  assert.deepEqual((await indexRow('ios-one')).labels, ['public']);
  assert.deepEqual(
    (await t.ok('package_search', { q: 'statement' })).results.map((d: any) => d.name),
    ['ios-one'],
  );
});

test('the labels written are packagePermissionLabels of the dataset, in every case, collaborators on and off', async () => {
  await t.ok('package_create', { name: 'ios-private', owner_org: 'ios-org', private: true }, admin());
  await t.ok('package_create', { name: 'ios-draft', owner_org: 'ios-org', state: 'draft' }, admin());
  await t.ok('package_create', { name: 'ios-gone', owner_org: 'ios-org' }, admin());
  // cases an action does not make: no organization, no creator, deleted and kept
  const db = t.services.db;
  const made = await db.query<{ id: string }>(
    `INSERT INTO packages (id, name, state, private, owner_org, creator_user_id, type, metadata_created, metadata_modified)
     SELECT gen_random_uuid()::text, 'ios-raw-' || n, s, pr, NULL, CASE WHEN c THEN (SELECT min(id) FROM users) END, 'dataset', now(), now()
     FROM unnest(ARRAY['active', 'active', 'draft', 'deleted', 'active', 'draft'], ARRAY[true, true, true, false, false, false],
       ARRAY[false, true, false, true, false, true]) WITH ORDINALITY AS x (s, pr, c, n)
     RETURNING id`,
  );
  const ids = made.rows.map((r) => r.id);
  const engine = searchEngine(t.services);
  for (const collaborators of [false, true]) {
    const withOpts = engine as unknown as { opts: { collaborators: () => boolean; removeDeleted: () => boolean } };
    const saved = { ...withOpts.opts };
    withOpts.opts.collaborators = () => collaborators;
    withOpts.opts.removeDeleted = () => false;
    try {
      const all = (await db.query<{ id: string }>("SELECT id FROM packages WHERE name LIKE 'ios-%'")).rows.map((r) => r.id);
      await db.transaction((tx) => engine.index(tx, all));
    } finally {
      Object.assign(withOpts.opts, saved);
    }
    const rows = await db.query<any>(
      `SELECT p.id, p.owner_org, p.private, p.state, p.creator_user_id, s.labels FROM packages p
       JOIN package_search_index s ON s.package_id = p.id WHERE p.name LIKE 'ios-%'`,
    );
    assert.equal(rows.rows.length, 4 + ids.length);
    for (const r of rows.rows) assert.deepEqual(r.labels, packagePermissionLabels(r, collaborators), JSON.stringify(r));
  }
  // deleted datasets leave the index by default (the raw deleted one too, when indexed again)
  await t.ok('package_delete', { id: 'ios-gone' }, admin());
  assert.equal(await indexRow('ios-gone'), undefined);
  await db.transaction((tx) => engine.index(tx, ids));
  assert.equal((await db.query("SELECT 1 FROM package_search_index WHERE name LIKE 'ios-raw-%'")).rows.length, ids.length - 1);
  await db.transaction((tx) => engine.index(tx, ['no-such-dataset']));
});

test('extents follow their writes: set, changed, removed, blank, blank only to JavaScript', async () => {
  await t.ok('package_create', { name: 'ios-place', owner_org: 'ios-org', extras: [{ key: 'spatial', value: point(7, 46) }] }, admin());
  assert.ok(await extentRow('ios-place'));
  assert.deepEqual(await inBox('6,45,8,47'), ['ios-place']);
  await t.ok('package_patch', { id: 'ios-place', extras: [{ key: 'spatial', value: point(20, 50) }] }, admin());
  assert.deepEqual(await inBox('6,45,8,47'), []);
  assert.deepEqual(await inBox('19,49,21,51'), ['ios-place']);
  await t.ok('package_patch', { id: 'ios-place', extras: [{ key: 'other', value: 'x' }] }, admin());
  assert.equal(await extentRow('ios-place'), undefined);
  assert.equal((await indexRow('ios-place')).extent, null);
  assert.deepEqual(await inBox('19,49,21,51'), []);
  for (const blank of ['  ', '\t\u00a0']) {
    await t.ok('package_patch', { id: 'ios-place', extras: [{ key: 'spatial', value: point(7, 46) }] }, admin());
    assert.ok(await extentRow('ios-place'));
    await t.ok('package_patch', { id: 'ios-place', extras: [{ key: 'spatial', value: blank }] }, admin());
    assert.equal(await extentRow('ios-place'), undefined, JSON.stringify(blank));
    assert.deepEqual(await inBox('6,45,8,47'), []);
  }
  // a bad geometry refuses the write and leaves the extent as it was
  await t.ok('package_patch', { id: 'ios-place', extras: [{ key: 'spatial', value: point(7, 46) }] }, admin());
  const refused = await t.call('package_patch', { id: 'ios-place', extras: [{ key: 'spatial', value: '{"type": "Nothing"}' }] }, admin());
  assert.equal(refused.body.error?.__type, 'Validation Error');
  assert.ok(await extentRow('ios-place'));
  assert.deepEqual(await inBox('6,45,8,47'), ['ios-place']);
});
