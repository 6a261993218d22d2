// User actions: create, show, list, update, patch, delete, autocomplete.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let alice: { id: string; name: string; token: string };
let bob: { id: string; name: string; token: string };
before(async () => {
  t = await startApp({ plugins: [] });
  alice = await t.user('alice');
  bob = await t.user('bob');
});
after(async () => {
  await t?.close();
});

describe('user_create', () => {
  test('only sysadmins, unless svc.auth.create_user_via_api', async () => {
    const anon = await t.call('user_create', { name: 'newbie', email: 'n@example.org', password: 'longenough' });
    assert.equal(anon.status, 403);
    assert.match(anon.body.error!.message, /not authorized to create users/);
    t.services.config.set('svc.auth.create_user_via_api', true);
    try {
      const u = await t.ok('user_create', { name: 'newbie', email: 'n@example.org', password: 'longenough' });
      assert.equal(u.name, 'newbie');
      assert.equal(u.sysadmin, false);
      // a non-sysadmin cannot make a sysadmin
      const sneaky = await t.call('user_create', { name: 'sneaky', email: 's@example.org', password: 'longenough', sysadmin: true });
      assert.equal(sneaky.status, 409);
      assert.deepEqual(sneaky.body.error!.sysadmin, ['The input field sysadmin was not expected.']);
    } finally {
      t.services.config.set('svc.auth.create_user_via_api', false);
    }
  });

  test('validation messages accumulate and nothing is stored', async () => {
    const r = await t.call('user_create', { name: 'Bad Name', email: 'not-an-email', password: 'short' }, { token: t.sysadminToken });
    assert.equal(r.status, 409);
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.deepEqual(r.body.error!.name, ['Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_']);
    assert.deepEqual(r.body.error!.email, ['Email not-an-email is not a valid format']);
    assert.deepEqual(r.body.error!.password, ['Your password must be 8 characters or longer']);
    assert.match(r.body.error!.message, /name/);
    const taken = await t.call(
      'user_create',
      { name: 'alice', email: 'alice@example.org', password: 'longenough' },
      { token: t.sysadminToken },
    );
    assert.deepEqual(taken.body.error!.name, ['That login name is not available.']);
    assert.deepEqual(taken.body.error!.email, ["The email address 'alice@example.org' belongs to a registered user."]);
    const missing = await t.call('user_create', {}, { token: t.sysadminToken });
    assert.deepEqual(missing.body.error!.name, ['Missing value']);
    assert.deepEqual(missing.body.error!.email, ['Missing value']);
    assert.deepEqual(missing.body.error!.password, ['Missing value']);
    const names = await t.ok('user_list', { all_fields: false }, { token: t.sysadminToken });
    assert.ok(!names.includes('Bad Name'));
  });

  test('with_apitoken returns a working token; the password is never returned', async () => {
    const u = await t.ok(
      'user_create',
      { name: 'tokenuser', email: 'tu@example.org', password: 'longenough', with_apitoken: true },
      { token: t.sysadminToken },
    );
    assert.ok(u.token);
    assert.equal(u.password, undefined);
    assert.equal(u.password_hash, undefined);
    const me = await t.ok('user_show', {}, { token: u.token });
    assert.equal(me.name, 'tokenuser');
  });
});

describe('user_show', () => {
  test('email and apikey only for self and sysadmins; email_hash for all', async () => {
    const asAnon = await t.ok('user_show', { id: 'alice' });
    assert.equal(asAnon.email, undefined);
    assert.equal(asAnon.apikey, undefined);
    assert.equal(asAnon.email_hash, createHash('md5').update('alice@example.org').digest('hex'));
    assert.equal(asAnon.number_created_packages, 0);
    assert.equal(asAnon.display_name, 'alice');
    assert.equal((await t.ok('user_show', { id: 'alice' }, { token: bob.token })).email, undefined);
    assert.equal((await t.ok('user_show', { id: 'alice' }, { token: alice.token })).email, 'alice@example.org');
    assert.equal((await t.ok('user_show', { id: alice.id }, { token: t.sysadminToken })).email, 'alice@example.org');
  });

  test('password hash and plugin extras: shown to sysadmins, ignored (not an error) for everyone else', async () => {
    const sys = { token: t.sysadminToken };
    await t.ok('user_patch', { id: 'alice', plugin_extras: { sso: { sub: 'a-1' } } }, sys);
    for (const opts of [{ token: alice.token }, { token: bob.token }, {}]) {
      for (const method of ['POST', 'GET'] as const) {
        const r = await t.call('user_show', { id: 'alice', include_password_hash: true, include_plugin_extras: true }, { ...opts, method });
        assert.equal(r.status, 200, `${method} ${opts.token ? 'with a token' : 'anonymous'}`);
        assert.equal(r.body.result.password_hash, undefined);
        assert.equal(r.body.result.plugin_extras, undefined);
        assert.equal(r.body.result.name, 'alice');
      }
    }
    for (const method of ['POST', 'GET'] as const) {
      const shown = await t.ok('user_show', { id: 'alice', include_password_hash: true, include_plugin_extras: true }, { ...sys, method });
      assert.match(shown.password_hash, /^scrypt\$/, method);
      assert.deepEqual(shown.plugin_extras, { sso: { sub: 'a-1' } }, method);
      const self = await t.ok('user_show', { include_password_hash: 'true' }, { ...sys, method });
      assert.equal(self.name, 'test_sysadmin');
      assert.match(self.password_hash, /^scrypt\$/);
    }
    const plain = await t.ok('user_show', { id: 'alice' }, sys);
    assert.equal(plain.password_hash, undefined, 'only when asked');
    assert.equal(plain.plugin_extras, undefined);
  });

  test('unknown user is Not Found; no id and anonymous is a Validation Error', async () => {
    assert.equal((await t.call('user_show', { id: 'nobody' })).status, 404);
    assert.equal((await t.call('user_show', {})).status, 409);
  });

  test('public_user_details=false hides users from anonymous callers', async () => {
    t.services.config.set('svc.auth.public_user_details', false);
    try {
      assert.equal((await t.call('user_show', { id: 'alice' })).status, 403);
      assert.equal((await t.call('user_list', {})).status, 403);
      assert.equal((await t.call('user_show', { id: 'alice' }, { token: bob.token })).status, 200);
    } finally {
      t.services.config.set('svc.auth.public_user_details', true);
    }
  });
});

describe('user_show include_datasets', () => {
  test('yourself: your drafts and private datasets you may still see, not those of an organization you left', async () => {
    const sys = { token: t.sysadminToken };
    const carl = await t.user('carl');
    await t.ok('organization_create', { name: 'carl-org', users: [{ name: 'carl', capacity: 'editor' }] }, sys);
    await t.ok('organization_create', { name: 'carl-left', users: [{ name: 'carl', capacity: 'editor' }] }, sys);
    await t.ok('package_create', { name: 'carl-public', owner_org: 'carl-org' }, { token: carl.token });
    await t.ok('package_create', { name: 'carl-private', owner_org: 'carl-org', private: true }, { token: carl.token });
    await t.ok('package_create', { name: 'carl-gone', owner_org: 'carl-left', private: true }, { token: carl.token });
    const names = async (token?: string) =>
      ((await t.ok('user_show', { id: 'carl', include_datasets: true }, token ? { token } : {})).datasets as any[])
        .map((d) => d.name)
        .sort();
    assert.deepEqual(await names(carl.token), ['carl-gone', 'carl-private', 'carl-public']);
    await t.ok('organization_member_delete', { id: 'carl-left', username: 'carl' }, sys);
    assert.deepEqual(await names(carl.token), ['carl-private', 'carl-public'], 'not the private dataset of the organization carl left');
    assert.deepEqual(await names(t.sysadminToken), ['carl-gone', 'carl-private', 'carl-public']);
    assert.deepEqual(await names(bob.token), ['carl-public']);
    assert.deepEqual(await names(), ['carl-public']);
  });
});

describe('user_list and user_autocomplete', () => {
  test('q, order_by, all_fields; email filter is sysadmin only', async () => {
    const names = await t.ok('user_list', { all_fields: false, order_by: 'name' });
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.includes('alice') && names.includes('bob'));
    assert.ok(!names.includes('default'), 'the site user is not listed');
    const q = await t.ok('user_list', { q: 'ali' });
    assert.deepEqual(
      q.map((u: { name: string }) => u.name),
      ['alice'],
    );
    assert.equal(q[0].email, undefined);
    assert.equal((await t.call('user_list', { email: 'alice@example.org' }, { token: bob.token })).status, 403);
    const byEmail = await t.ok('user_list', { email: 'alice@example.org' }, { token: t.sysadminToken });
    assert.deepEqual(
      byEmail.map((u: { name: string }) => u.name),
      ['alice'],
    );
  });

  test('order_by: each allowed value sorts as CKAN does; any other value is a Validation Error', async () => {
    const sys = { token: t.sysadminToken };
    // created in this order: zq-d, zq-b, zq-c, zq-a
    const made: Record<string, { id: string; token: string }> = {};
    for (const n of ['zq-d', 'zq-b', 'zq-c', 'zq-a']) made[n] = await t.user(n);
    await t.ok('user_patch', { id: 'zq-d', fullname: 'Anna', about: 'b' }, sys);
    await t.ok('user_patch', { id: 'zq-b', about: 'a', sysadmin: true }, sys);
    await t.ok('user_patch', { id: 'zq-c', fullname: 'Bert' }, sys);
    await t.ok('user_patch', { id: 'zq-a', about: 'c' }, sys);
    await t.ok(
      'organization_create',
      { name: 'zq-org', users: ['zq-a', 'zq-c', 'zq-d'].map((name) => ({ name, capacity: 'editor' })) },
      sys,
    );
    // public active datasets count: zq-a 2, zq-c 1, zq-d 0 (a private one does not count), zq-b 0
    for (const [user, name, priv] of [
      ['zq-a', 'zq-a1', false],
      ['zq-a', 'zq-a2', false],
      ['zq-c', 'zq-c1', false],
      ['zq-d', 'zq-d1', true],
    ] as const) {
      await t.ok('package_create', { name, owner_org: 'zq-org', private: priv }, { token: made[user].token });
    }
    const order = async (order_by: string, method: 'GET' | 'POST' = 'POST') =>
      (await t.ok('user_list', { q: 'zq-', order_by }, { method })).map((u: { name: string }) => u.name);
    const ids = Object.entries(made)
      .sort(([, a], [, b]) => (a.id < b.id ? -1 : 1))
      .map(([n]) => n);
    const expected: Record<string, string[]> = {
      id: ids,
      name: ['zq-a', 'zq-b', 'zq-c', 'zq-d'],
      fullname: ['zq-d', 'zq-c', 'zq-a', 'zq-b'], // Anna, Bert, then those without one (by name)
      display_name: ['zq-d', 'zq-c', 'zq-a', 'zq-b'], // Anna, Bert, zq-a, zq-b
      created: ['zq-d', 'zq-b', 'zq-c', 'zq-a'],
      about: ['zq-b', 'zq-d', 'zq-a', 'zq-c'], // a, b, c, none
      sysadmin: ['zq-a', 'zq-c', 'zq-d', 'zq-b'], // not sysadmin first, by name
      number_created_packages: ['zq-b', 'zq-d', 'zq-c', 'zq-a'], // 0, 0, 1, 2
    };
    for (const [order_by, names] of Object.entries(expected)) {
      assert.deepEqual(await order(order_by), names, order_by);
      assert.deepEqual(await order(order_by, 'GET'), names, `${order_by} (GET)`);
    }
    assert.deepEqual(await order(''), expected.display_name, 'empty: the default');
    const counts = await t.ok('user_list', { q: 'zq-', order_by: 'number_created_packages' });
    assert.deepEqual(
      counts.map((u: any) => u.number_created_packages),
      [0, 0, 1, 2],
    );
    for (const order_by of ['edits', 'email', 'password_hash', 'state', 'last_active', 'name desc', 'NAME']) {
      const r = await t.call('user_list', { order_by });
      assert.equal(r.status, 409, order_by);
      assert.equal(r.body.error!.__type, 'Validation Error');
      assert.ok(r.body.error!.order_by, order_by);
    }
  });

  test('autocomplete returns id, name, fullname with a limit', async () => {
    const r = await t.ok('user_autocomplete', { q: 'b', limit: 5 });
    assert.ok(r.some((u: { name: string }) => u.name === 'bob'));
    assert.deepEqual(Object.keys(r[0]).sort(), ['fullname', 'id', 'name']);
    assert.equal((await t.ok('user_autocomplete', { q: 'a', limit: 1 })).length, 1);
  });
});

describe('user_update, user_patch, user_delete', () => {
  test('self may update; others may not; email required; renaming is sysadmin only', async () => {
    const carol = await t.user('carol');
    const upd = await t.ok('user_update', { id: 'carol', email: 'carol2@example.org', fullname: 'Carol C' }, { token: carol.token });
    assert.equal(upd.fullname, 'Carol C');
    assert.equal(upd.email, 'carol2@example.org');
    assert.equal((await t.call('user_update', { id: 'carol', email: 'x@example.org' }, { token: bob.token })).status, 403);
    const noEmail = await t.call('user_update', { id: 'carol', fullname: 'x' }, { token: carol.token });
    assert.deepEqual(noEmail.body.error!.email, ['Missing value']);
    const rename = await t.call('user_update', { id: 'carol', name: 'caroline', email: 'carol2@example.org' }, { token: carol.token });
    assert.deepEqual(rename.body.error!.name, ['That login name can not be modified.']);
    assert.equal((await t.ok('user_show', { id: 'carol' })).fullname, 'Carol C');
  });

  test("changing one's own password needs the old one", async () => {
    const dora = await t.user('dora');
    const wrong = await t.call(
      'user_update',
      { id: 'dora', email: 'dora@example.org', password: 'newpassword1', old_password: 'nope' },
      { token: dora.token },
    );
    assert.equal(wrong.status, 409);
    assert.ok(wrong.body.error!.old_password);
    await t.ok(
      'user_update',
      { id: 'dora', email: 'dora@example.org', password: 'newpassword1', old_password: 'correct horse battery' },
      { token: dora.token },
    );
  });

  test('user_patch keeps what is not sent', async () => {
    const ed = await t.user('ed');
    await t.ok('user_patch', { id: 'ed', fullname: 'Ed Example', about: 'hi' }, { token: ed.token });
    const p = await t.ok('user_patch', { id: 'ed', about: 'changed' }, { token: ed.token });
    assert.equal(p.fullname, 'Ed Example');
    assert.equal(p.about, 'changed');
    assert.equal(p.email, 'ed@example.org');
  });

  test('user_delete is sysadmin only and hides the user from lists', async () => {
    await t.user('fred');
    assert.equal((await t.call('user_delete', { id: 'fred' }, { token: bob.token })).status, 403);
    assert.equal(await t.ok('user_delete', { id: 'fred' }, { token: t.sysadminToken }), null);
    assert.ok(!(await t.ok('user_list', { all_fields: false })).includes('fred'));
    assert.equal((await t.call('user_show', { id: 'fred' })).status, 404);
    assert.equal((await t.call('user_delete', { id: 'nobody' }, { token: t.sysadminToken })).status, 404);
  });
});
