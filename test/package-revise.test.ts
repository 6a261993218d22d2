import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let pkg: any;

before(async () => {
  t = await startApp({ plugins: [] });
  editor = await t.user('rev_editor');
  outsider = await t.user('rev_outsider');
  await t.ok('organization_create', { name: 'rev-org', users: [{ name: editor.name, capacity: 'editor' }] }, { token: t.sysadminToken });
  pkg = await t.ok(
    'package_create',
    {
      name: 'rev',
      title: 'Revisable',
      notes: 'old notes',
      owner_org: 'rev-org',
      tags: [{ name: 't1' }],
      resources: [
        { url: 'http://r/1.csv', name: 'big.csv' },
        { url: 'http://r/2.csv', name: 'second' },
      ],
    },
    { token: editor.token },
  );
});
after(async () => {
  await t?.close();
});

test('match and update', async () => {
  let r = await t.call('package_revise', { update: { notes: 'x' } }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.match__id, ['Missing value']);
  r = await t.call(
    'package_revise',
    { match: { name: 'rev', notes: 'wrong', resources: [{ name: 'big.csv' }, { name: 'nope' }] }, update: { notes: 'x' } },
    { token: editor.token },
  );
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.match, ['notes', 'resources__1__name']);
  const out = await t.ok(
    'package_revise',
    { match: { name: 'rev', notes: 'old notes' }, update: { notes: 'new notes', resources: [{ description: 'first!' }] } },
    { token: editor.token },
  );
  assert.equal(out.package.notes, 'new notes');
  assert.equal(out.package.title, 'Revisable');
  assert.equal(out.package.resources[0].description, 'first!');
  assert.equal(out.package.resources[0].name, 'big.csv');
  assert.equal(out.package.resources.length, 2);
  assert.deepEqual(
    out.package.tags.map((x: any) => x.name),
    ['t1'],
  );
  r = await t.call('package_revise', { match: { name: 'rev' }, update: { notes: 'x' } }, { token: outsider.token });
  assert.equal(r.status, 403);
});

test('flattened keys, filter, extend and include (JSON strings too)', async () => {
  const rid = pkg.resources[1].id;
  let out = await t.ok(
    'package_revise',
    {
      match__name: 'rev',
      update__title: 'Flat',
      [`update__resources__${rid.slice(0, 6)}`]: JSON.stringify({ description: 'by id' }),
      'update__resources__-1__format': 'tsv',
    },
    { token: editor.token },
  );
  assert.equal(out.package.title, 'Flat');
  assert.equal(out.package.resources[1].description, 'by id');
  assert.equal(out.package.resources[1].format, 'TSV');
  out = await t.ok(
    'package_revise',
    {
      match: JSON.stringify({ id: pkg.id }),
      update__resources__extend: JSON.stringify([{ name: 'new one', url: 'http://r/3.json' }]),
      include: '+package__name,-package__*',
    },
    { token: editor.token },
  );
  assert.deepEqual(out, { package: { name: 'rev' } } as any);
  assert.equal((await t.ok('package_show', { id: 'rev' })).resources[2].name, 'new one');
  out = await t.ok('package_revise', { match: { id: pkg.id }, filter: ['-resources__0'] }, { token: editor.token });
  assert.deepEqual(
    out.package.resources.map((x: any) => x.name),
    ['second', 'new one'],
  );
  out = await t.ok(
    'package_revise',
    { match: { id: pkg.id }, filter: ['+resources', '+name', '+owner_org', '-*'], update: { title: 'Fresh' } },
    { token: editor.token },
  );
  assert.equal(out.package.title, 'Fresh');
  assert.equal(out.package.notes, null);
  assert.deepEqual(out.package.tags, []);
  assert.equal(out.package.resources.length, 2);
  const r = await t.call('package_revise', { match: { id: pkg.id }, update__resources__9__name: 'x' }, { token: editor.token });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body.error!.update__resources__9__name, ['Unmatched key resources__9']);
});

test('package_show options', async () => {
  const shown = await t.ok('package_show', { id: 'rev', include_tracking: true, use_default_schema: true }, { method: 'GET' });
  assert.deepEqual(shown.tracking_summary, { total: 0, recent: 0 });
  assert.deepEqual(shown.resources[0].tracking_summary, { total: 0, recent: 0 });
  const plain = await t.ok('package_show', { name_or_id: 'rev' });
  assert.equal(plain.tracking_summary, undefined);
  const bad = await t.call('package_show', { id: 'rev', include_tracking: 'maybe' });
  assert.equal(bad.status, 409);
});
