// Parallel writers on PostgreSQL (harvesters, `ckanapi load -p 3`): races never answer 500; a
// genuine conflict is the loser's Validation Error with the sequential message. PGlite runs one
// statement at a time, so these races cannot happen there: the file is skipped on it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp, type ApiResponse } from './helpers/app.ts';

let t: TestApp;
const N = 20;
const skip = !onPostgres && 'PGlite serializes every statement: no races to test';

before(async () => {
  if (skip) return;
  t = await startApp({ plugins: [] });
  await t.ok('organization_create', { name: 'conc-org' }, { token: t.sysadminToken });
  await t.ok('group_create', { name: 'conc-group' }, { token: t.sysadminToken });
});
after(async () => {
  await t?.close();
});

const admin = () => ({ token: t.sysadminToken });

/** Runs n calls at once; none may be a 500 or lack the envelope. */
async function parallel(n: number, fn: (i: number) => Promise<ApiResponse>): Promise<ApiResponse[]> {
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
  for (const a of answers) {
    assert.ok(a.status < 500, `${a.status} ${JSON.stringify(a.body.error)}`);
    assert.equal(typeof a.body.success, 'boolean');
  }
  return answers;
}

function oneWinner(answers: ApiResponse[], field: string, message: string) {
  const won = answers.filter((a) => a.body.success);
  const lost = answers.filter((a) => !a.body.success);
  assert.equal(won.length, 1, `exactly one succeeds: ${JSON.stringify(lost.map((a) => a.body.error))}`);
  for (const a of lost) {
    assert.equal(a.status, 409);
    assert.equal(a.body.error!.__type, 'Validation Error');
    assert.deepEqual(a.body.error![field], [message]);
  }
}

test('datasets created at once with the same new free tags all succeed', { skip }, async () => {
  const answers = await parallel(8, (i) =>
    t.call(
      'package_create',
      {
        name: `conc-tags-${i}`,
        owner_org: 'conc-org',
        tags: [{ name: 'brand-new' }, { name: 'also-new' }, { name: `own-${i}` }],
        extras: [{ key: 'k', value: String(i) }],
      },
      admin(),
    ),
  );
  assert.ok(
    answers.every((a) => a.body.success),
    JSON.stringify(answers.map((a) => a.body.error)),
  );
  const tags = await t.ok('tag_list', {});
  assert.ok(tags.includes('brand-new') && tags.includes('also-new'));
  assert.equal(tags.filter((x: string) => x === 'brand-new').length, 1);
});

test('the same dataset name created at once: one wins, the others get the sequential Validation Error', { skip }, async () => {
  const answers = await parallel(N, () => t.call('package_create', { name: 'conc-same', owner_org: 'conc-org' }, admin()));
  oneWinner(answers, 'name', 'That URL is already in use.');
});

test('the same dataset id created at once under different names: one wins, the others get the sequential Validation Error', {
  skip,
}, async () => {
  const id = '6f1c2a3b-0d4e-4f5a-9b6c-7d8e9f0a1b2c';
  const answers = await parallel(N, (i) => t.call('package_create', { id, name: `conc-id-${i}`, owner_org: 'conc-org' }, admin()));
  oneWinner(answers, 'id', 'Dataset id already exists');
});

test('the same user name created at once: one wins, the others are 409', { skip }, async () => {
  const answers = await parallel(N, (i) =>
    t.call('user_create', { name: 'conc-user', email: `conc${i}@example.org`, password: 'long enough pass' }, admin()),
  );
  oneWinner(answers, 'name', 'That login name is not available.');
});

test('the same e-mail address taken by two new users at once: one wins', { skip }, async () => {
  const answers = await parallel(N, (i) =>
    t.call('user_create', { name: `conc-mail-${i}`, email: 'Shared@example.org', password: 'long enough pass' }, admin()),
  );
  oneWinner(answers, 'email', "The email address 'Shared@example.org' belongs to a registered user.");
});

test('the same group name created at once: one wins, the others are 409', { skip }, async () => {
  const answers = await parallel(N, () => t.call('group_create', { name: 'conc-same-group' }, admin()));
  const won = answers.filter((a) => a.body.success);
  assert.equal(won.length, 1);
  for (const a of answers.filter((x) => !x.body.success)) {
    assert.equal(a.status, 409);
    assert.ok(a.body.error!.name, JSON.stringify(a.body.error));
  }
});

test('adding and removing the same member at once never fails', { skip }, async () => {
  const u = await t.user('conc-member');
  await parallel(N, (i) =>
    i % 2
      ? t.call(
          'member_create',
          { id: 'conc-org', object: u.name, object_type: 'user', capacity: i % 4 === 1 ? 'editor' : 'member' },
          admin(),
        )
      : t.call('member_delete', { id: 'conc-org', object: u.name, object_type: 'user' }, admin()),
  );
  const members = await t.ok('member_list', { id: 'conc-org', object_type: 'user' }, admin());
  assert.ok(members.filter((m: string[]) => m[0] === u.id).length <= 1);
});

test('adding one dataset to a group at once: all succeed, one membership', { skip }, async () => {
  const pkg = await t.ok('package_create', { name: 'conc-grouped', owner_org: 'conc-org' }, admin());
  const answers = await parallel(N, () =>
    t.call('member_create', { id: 'conc-group', object: pkg.id, object_type: 'package', capacity: 'public' }, admin()),
  );
  assert.ok(
    answers.every((a) => a.body.success),
    JSON.stringify(answers.map((a) => a.body.error)),
  );
  const shown = await t.ok('package_show', { id: pkg.id });
  assert.deepEqual(
    shown.groups.map((g: { name: string }) => g.name),
    ['conc-group'],
  );
});

test('resources created at once on one dataset get distinct positions', { skip }, async () => {
  const pkg = await t.ok('package_create', { name: 'conc-resources', owner_org: 'conc-org' }, admin());
  const answers = await parallel(N, (i) => t.call('resource_create', { package_id: pkg.id, url: `http://example.org/${i}.csv` }, admin()));
  assert.ok(answers.every((a) => a.body.success));
  const positions = answers.map((a) => a.body.result.position).sort((a, b) => a - b);
  assert.deepEqual(
    positions,
    Array.from({ length: N }, (_, i) => i),
  );
  const shown = await t.ok('package_show', { id: pkg.id });
  assert.deepEqual(
    shown.resources.map((r: { position: number }) => r.position),
    Array.from({ length: N }, (_, i) => i),
  );
});

test('reordering while resources are deleted never deadlocks into an error', { skip }, async () => {
  const pkg = await t.ok(
    'package_create',
    {
      name: 'conc-reorder',
      owner_org: 'conc-org',
      resources: Array.from({ length: 12 }, (_, i) => ({ url: `http://example.org/${i}` })),
    },
    admin(),
  );
  const ids: string[] = pkg.resources.map((r: { id: string }) => r.id);
  const started = Date.now();
  const answers = await parallel(N, (i) =>
    i % 2
      ? t.call('package_resource_reorder', { id: pkg.id, order: [...ids].reverse() }, admin())
      : t.call('resource_delete', { id: ids[i] }, admin()),
  );
  // A reorder naming a resource deleted meanwhile is the sequential answer: a Validation Error.
  for (const a of answers) if (!a.body.success) assert.equal(a.body.error!.__type, 'Validation Error', JSON.stringify(a.body.error));
  assert.ok(Date.now() - started < 5000, 'no lock waits of seconds');
  const shown = await t.ok('package_show', { id: pkg.id });
  assert.deepEqual(
    shown.resources.map((r: { position: number }) => r.position),
    shown.resources.map((_: unknown, i: number) => i),
  );
});

test('relationships written both ways at once, and package updates of the same datasets, never fail', { skip }, async () => {
  const a = await t.ok('package_create', { name: 'conc-rel-a', owner_org: 'conc-org' }, admin());
  const b = await t.ok('package_create', { name: 'conc-rel-b', owner_org: 'conc-org' }, admin());
  const answers = await parallel(N, (i) => {
    if (i % 3 === 0)
      return t.call('package_relationship_create', { subject: a.name, object: b.name, type: 'links_to', comment: `c${i}` }, admin());
    if (i % 3 === 1)
      return t.call('package_relationship_create', { subject: b.name, object: a.name, type: 'linked_from', comment: `c${i}` }, admin());
    return t.call(
      'package_patch',
      { id: i % 2 ? a.id : b.id, notes: `n${i}`, tags: [{ name: `rel-${i % 4}` }], extras: [{ key: 'x', value: String(i) }] },
      admin(),
    );
  });
  assert.ok(
    answers.every((x) => x.body.success),
    JSON.stringify(answers.map((x) => x.body.error)),
  );
  // Never two of one relationship (a package_patch sent from an older show may remove it: that is update semantics).
  const rels = await t.ok('package_relationships_list', { id: a.name });
  assert.ok(rels.length <= 1, JSON.stringify(rels));
});

test('collaborators and group memberships written at once', { skip }, async () => {
  const pkg = await t.ok('package_create', { name: 'conc-collab', owner_org: 'conc-org' }, admin());
  const answers = await parallel(N, (i) =>
    i % 2
      ? t.call('package_patch', { id: pkg.id, groups: [{ name: 'conc-group' }], notes: String(i) }, admin())
      : t.call('member_delete', { id: 'conc-group', object: pkg.id, object_type: 'package' }, admin()),
  );
  assert.ok(
    answers.every((x) => x.body.success),
    JSON.stringify(answers.map((x) => x.body.error)),
  );
});

test('20 parallel package_patch calls, each with its own field: every acknowledged field is kept', { skip }, async () => {
  const pkg = await t.ok('package_create', { name: 'conc-patch-fields', owner_org: 'conc-org' }, admin());
  const answers = await parallel(N, (i) => t.call('package_patch', { id: pkg.id, [`field_${i}`]: `value ${i}` }, admin()));
  assert.ok(
    answers.every((x) => x.body.success),
    JSON.stringify(answers.map((x) => x.body.error)),
  );
  const shown = await t.ok('package_show', { id: pkg.id });
  const lost = Array.from({ length: N }, (_, i) => i).filter((i) => shown[`field_${i}`] !== `value ${i}`);
  assert.deepEqual(lost, [], `fields lost: ${lost.map((i) => `field_${i}`).join(', ')}`);
});

test('parallel package_revise and resource_patch calls keep every acknowledged change', { skip }, async () => {
  const pkg = await t.ok(
    'package_create',
    { name: 'conc-revise-fields', owner_org: 'conc-org', resources: [{ url: 'http://example.org/r.csv' }] },
    admin(),
  );
  const res = pkg.resources[0].id;
  const answers = await parallel(N, (i) =>
    i % 2
      ? t.call('package_revise', { match: { id: pkg.id }, update: { [`rev_${i}`]: `r${i}` } }, admin())
      : t.call('resource_patch', { id: res, [`col_${i}`]: `c${i}` }, admin()),
  );
  assert.ok(
    answers.every((x) => x.body.success),
    JSON.stringify(answers.map((x) => x.body.error)),
  );
  const shown = await t.ok('package_show', { id: pkg.id });
  const lost: string[] = [];
  for (let i = 0; i < N; i++) {
    if (i % 2 && shown[`rev_${i}`] !== `r${i}`) lost.push(`rev_${i}`);
    if (!(i % 2) && shown.resources[0][`col_${i}`] !== `c${i}`) lost.push(`col_${i}`);
  }
  assert.deepEqual(lost, []);
});
