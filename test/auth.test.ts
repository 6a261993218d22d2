// Credentials: API tokens (JWT, revocable, expiring), legacy keys, header names; no secrets in logs.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await startApp({ plugins: ['expire_api_token'] });
});
after(async () => {
  await t?.close();
});

const whoami = async (headers: Record<string, string>) => {
  const r = await t.app.inject({ method: 'GET', url: '/api/3/action/user_show', headers });
  return { status: r.statusCode, body: r.json() };
};

describe('API tokens', () => {
  test('a token works raw, with Bearer, and in X-SVC-API-Key', async () => {
    const bob = await t.user('bob');
    const variants: Record<string, string>[] = [
      { authorization: bob.token },
      { authorization: `Bearer ${bob.token}` },
      { 'x-svc-api-key': bob.token },
    ];
    for (const headers of variants) {
      const r = await whoami(headers);
      assert.equal(r.status, 200, JSON.stringify(headers));
      assert.equal(r.body.result.name, 'bob');
      assert.equal(r.body.result.email, 'bob@example.org');
    }
  });

  test('api_token_create / list / revoke; a revoked token is refused, not treated as anonymous', async () => {
    const carol = await t.user('carol');
    const { token } = await t.ok('api_token_create', { user: 'carol', name: 'laptop' }, { token: carol.token });
    assert.equal((await whoami({ authorization: token })).body.result.name, 'carol');
    const list = await t.ok('api_token_list', {}, { token: carol.token });
    const laptop = list.find((x: { name: string }) => x.name === 'laptop');
    assert.ok(laptop);
    assert.deepEqual(Object.keys(laptop).sort(), ['created_at', 'id', 'last_access', 'name', 'user_id']);
    assert.notEqual(laptop.last_access, null);
    await t.ok('api_token_revoke', { jti: laptop.id }, { token: carol.token });
    const after = await whoami({ authorization: token });
    assert.equal(after.status, 403);
    assert.equal(after.body.error.__type, 'Authorization Error');
    assert.match(after.body.error.message, /invalid, revoked or expired/);
  });

  test('tokens of other users cannot be listed, created or revoked', async () => {
    const dan = await t.user('dan');
    const eve = await t.user('eve');
    assert.equal((await t.call('api_token_create', { user: 'dan', name: 'x' }, { token: eve.token })).status, 403);
    assert.equal((await t.call('api_token_list', { user_id: 'dan' }, { token: eve.token })).status, 403);
    const [danToken] = await t.ok('api_token_list', {}, { token: dan.token });
    assert.equal((await t.call('api_token_revoke', { jti: danToken.id }, { token: eve.token })).status, 403);
    assert.equal((await t.call('api_token_list', {})).status, 403);
    // a sysadmin may
    assert.ok((await t.ok('api_token_list', { user: 'dan' }, { token: t.sysadminToken })).length >= 1);
  });

  test('expire_api_token: an expired token is refused', async () => {
    const fay = await t.user('fay');
    // Expiry times have whole seconds: a 2-second token is valid for at least one second.
    const { token } = await t.ok('api_token_create', { user: 'fay', name: 'short', expires_in: 2, unit: 'seconds' }, { token: fay.token });
    assert.equal((await whoami({ authorization: token })).status, 200);
    await new Promise((r) => setTimeout(r, 2300));
    const r = await whoami({ authorization: token });
    assert.equal(r.status, 403);
    assert.match(r.body.error.message, /expired/);
    const bad = await t.call('api_token_create', { user: 'fay', name: 'x', expires_in: 5, unit: 'fortnights' }, { token: fay.token });
    assert.equal(bad.status, 409);
    assert.ok(bad.body.error!.unit);
  });

  test('garbage and tampered tokens are refused', async () => {
    const gus = await t.user('gus');
    const [h, p] = gus.token.split('.');
    for (const bad of ['nonsense', `${h}.${p}.AAAA`, 'a.b.c']) {
      const r = await whoami({ authorization: bad });
      assert.equal(r.status, 403, bad);
    }
  });

  test('legacy per-user API keys still work', async () => {
    const hal = await t.user('hal');
    await t.services.db.query("UPDATE users SET apikey = 'a1b2c3d4-0000-4000-8000-000000000001' WHERE id = $1", [hal.id]);
    assert.equal((await whoami({ 'x-svc-api-key': 'a1b2c3d4-0000-4000-8000-000000000001' })).body.result.name, 'hal');
  });

  test("a deleted user's token no longer works", async () => {
    const ida = await t.user('ida');
    await t.ok('user_delete', { id: 'ida' }, { token: t.sysadminToken });
    assert.equal((await whoami({ authorization: ida.token })).status, 403);
  });
});

describe('renamed key header and logs', () => {
  test('apikey_header_name changes the alternative header; the log carries no credential', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _e, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const t2 = await startApp({ plugins: [], config: { apikey_header_name: 'X-My-Key' } });
    t2.services.logger = pino({ level: 'info' }, sink);
    try {
      const u = await t2.user('jo');
      const r = await t2.app.inject({ method: 'GET', url: '/api/3/action/user_show', headers: { 'x-my-key': u.token } });
      assert.equal(r.json().result.name, 'jo');
      await t2.app.inject({
        method: 'POST',
        url: '/api/3/action/user_create',
        headers: { authorization: t2.sysadminToken, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'kim', email: 'kim@example.org', password: 'hunter2hunter2' }),
      });
      const log = lines.join('');
      assert.match(log, /"action":"user_show"/);
      assert.match(log, /"status":200/);
      assert.ok(!log.includes(u.token), 'token in log');
      assert.ok(!log.includes('hunter2hunter2'), 'password in log');
      assert.ok(!log.includes(t2.sysadminToken), 'token in log');
    } finally {
      await t2.close();
    }
  });
});
