// Web pages against hostile use: repeated wrong passwords (per account and per address), forms
// posted from another site's page, the session cookie behind a proxy, and oversized query strings.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
before(async () => {
  t = await startApp({ plugins: [] });
});
after(async () => {
  await t?.close();
});

/** Posts the sign-in form as a browser at `address` would (its own CSRF cookie and token). */
async function signIn(login: string, password: string, opts: { address?: string; headers?: Record<string, string>; app?: TestApp } = {}) {
  const app = (opts.app ?? t).app;
  const web = new WebClient(app);
  const token = await web.csrfToken('/user/login');
  const body = new URLSearchParams({ _csrf_token: token, login, password });
  return app.inject({
    method: 'POST',
    url: '/user/login',
    remoteAddress: opts.address ?? '192.0.2.1',
    headers: {
      cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'content-type': 'application/x-www-form-urlencoded',
      ...opts.headers,
    },
    payload: body.toString(),
  });
}

describe('sign-in attempts are limited', () => {
  test('after 10 wrong passwords for an account, further attempts (the right password too) are refused with a clear message', async () => {
    await t.user('limit_alice');
    for (let i = 0; i < 10; i++) {
      const r = await signIn('limit_alice', `wrong ${i}`, { address: `192.0.2.${10 + i}` });
      assert.equal(r.statusCode, 401, `attempt ${i + 1}`);
    }
    const blocked = await signIn('limit_alice', 'wrong again', { address: '192.0.2.50' });
    assert.equal(blocked.statusCode, 429);
    assert.match(blocked.body, /Too many failed sign-in attempts/);
    assert.match(blocked.body, /minutes/);
    const right = await signIn('limit_alice', 'correct horse battery', { address: '192.0.2.51' });
    assert.equal(right.statusCode, 429, 'the account stays locked for a while, whatever the address');
    assert.ok(Number(right.headers['retry-after']) > 0);
    const byEmail = await signIn('limit_alice@example.org', 'correct horse battery', { address: '192.0.2.53' });
    assert.equal(byEmail.statusCode, 429, 'the same account by its e-mail');
    // Another account is not affected.
    await t.user('limit_bob');
    assert.equal((await signIn('limit_bob', 'correct horse battery', { address: '192.0.2.52' })).statusCode, 303);
  });

  test('one address trying many accounts is refused after 30 failures; other addresses are not', async () => {
    for (let i = 0; i < 30; i++) {
      const r = await signIn(`nobody_${i}`, 'wrong', { address: '198.51.100.7' });
      assert.equal(r.statusCode, 401, `attempt ${i + 1}`);
    }
    const blocked = await signIn('nobody_x', 'wrong', { address: '198.51.100.7' });
    assert.equal(blocked.statusCode, 429);
    assert.match(blocked.body, /Too many failed sign-in attempts/);
    await t.user('limit_carol');
    assert.equal((await signIn('limit_carol', 'correct horse battery', { address: '198.51.100.8' })).statusCode, 303);
  });

  test('a successful sign-in clears the account\u2019s failures', async () => {
    await t.user('limit_dave');
    for (let i = 0; i < 9; i++) await signIn('limit_dave', 'wrong', { address: '203.0.113.1' });
    assert.equal((await signIn('limit_dave', 'correct horse battery', { address: '203.0.113.1' })).statusCode, 303);
    for (let i = 0; i < 9; i++) assert.equal((await signIn('limit_dave', 'wrong', { address: '203.0.113.1' })).statusCode, 401);
  });
});

describe('forms posted from another site are refused', () => {
  test('a valid CSRF token with a foreign Origin or Referer: 403, nothing changes', async () => {
    await t.user('origin_erin');
    const foreign = await signIn('origin_erin', 'correct horse battery', { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.statusCode, 403);
    assert.ok(!String(foreign.headers['set-cookie'] ?? '').includes('svc_session='), 'no session started');
    const nullOrigin = await signIn('origin_erin', 'correct horse battery', { headers: { origin: 'null' } });
    assert.equal(nullOrigin.statusCode, 403);
    const referer = await signIn('origin_erin', 'correct horse battery', { headers: { referer: 'https://evil.example/page' } });
    assert.equal(referer.statusCode, 403);
    for (const site of ['cross-site', 'same-site']) {
      const r = await signIn('origin_erin', 'correct horse battery', { headers: { 'sec-fetch-site': site, origin: 'http://test.local' } });
      assert.equal(r.statusCode, 403, `Sec-Fetch-Site: ${site}`);
    }
    // The site's own origin (site_url), or the host the request was sent to, is accepted.
    const ownSite: Record<string, string>[] = [
      { origin: 'http://test.local' },
      { referer: 'http://test.local/user/login' },
      { origin: 'http://catalog.example:8080', host: 'catalog.example:8080' },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
      {},
    ];
    for (const headers of ownSite) {
      const r = await signIn('origin_erin', 'correct horse battery', { headers });
      assert.equal(r.statusCode, 303, JSON.stringify(headers));
    }
  });
});

describe('the session cookie in API calls', () => {
  test('a signed-in API POST with a valid CSRF token from a foreign Origin is refused', async () => {
    const erin = await t.user('origin_api_erin');
    const web = new WebClient(t.app);
    await web.login('origin_api_erin');
    const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const token = await web.csrfToken('/');
    const post = (origin: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/3/action/user_patch',
        headers: { cookie, 'content-type': 'application/json', 'x-csrftoken': token, origin },
        payload: { id: erin.id, fullname: origin },
      });
    const foreign = await post('https://evil.example');
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().success, false);
    assert.notEqual((await t.ok('user_show', { id: erin.id }, { token: t.sysadminToken })).fullname, 'https://evil.example');
    const own = await post('http://test.local');
    assert.equal(own.json().success, true, own.body);
  });
});

describe('the session cookie', () => {
  test('is Secure when site_url is https, or behind a trusted proxy that says https; an untrusted X-Forwarded-Proto is ignored', async () => {
    await t.user('cookie_frank');
    const sessionCookie = (r: { headers: Record<string, unknown> }) =>
      ([] as string[]).concat(r.headers['set-cookie'] as string[]).find((c) => c.startsWith('svc_session='))!;
    const plain = await signIn('cookie_frank', 'correct horse battery', { headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(plain.statusCode, 303);
    assert.doesNotMatch(sessionCookie(plain), /Secure/i, 'X-Forwarded-Proto from an untrusted address is ignored');
    const proxied = await startApp({ plugins: [], config: { 'svc.trust_proxy': ['192.0.2.99'] } });
    try {
      await proxied.user('cookie_frank');
      const viaProxy = await signIn('cookie_frank', 'correct horse battery', {
        app: proxied,
        address: '192.0.2.99',
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' },
      });
      assert.equal(viaProxy.statusCode, 303);
      assert.match(sessionCookie(viaProxy), /; Secure/i);
      const direct = await signIn('cookie_frank', 'correct horse battery', {
        app: proxied,
        address: '192.0.2.100',
        headers: { 'x-forwarded-proto': 'https' },
      });
      assert.doesNotMatch(sessionCookie(direct), /Secure/i, 'only the trusted proxy is believed');
    } finally {
      await proxied.close();
    }
    const https = await startApp({ plugins: [], config: { 'svc.site_url': 'https://test.local' } });
    try {
      await https.user('cookie_frank');
      const r = await signIn('cookie_frank', 'correct horse battery', { app: https, headers: { origin: 'https://test.local' } });
      assert.equal(r.statusCode, 303);
      assert.match(sessionCookie(r), /; Secure/i);
    } finally {
      await https.close();
    }
  });
});

describe('odd query strings on pages', () => {
  test('__proto__ and constructor keys, and a sort by them, are no server error', async () => {
    await t.ok('organization_create', { name: 'odd-org' }, { token: t.sysadminToken });
    for (const path of ['/dataset', '/organization/odd-org', '/group', '/user/login']) {
      for (const qs of ['__proto__=x', '__proto__=x&__proto__=y', 'constructor=x&q=a', 'q=a&q=b', 'q[]=a']) {
        const r = await t.app.inject({ method: 'GET', url: `${path}?${qs}` });
        assert.equal(r.statusCode, 200, `${path}?${qs}`);
      }
    }
    for (const path of ['/dataset', '/organization/odd-org']) {
      const r = await t.app.inject({ method: 'GET', url: `${path}?sort=__proto__+desc` });
      assert.equal(r.statusCode, 400, `${path}: ${r.statusCode}`);
      assert.match(r.body, /sort/);
    }
  });
});

describe('repeated query parameters on pages are bounded', () => {
  test('1,500 tags on /dataset: a 400 page naming the parameter, answered at once', { timeout: 20_000 }, async () => {
    const qs = Array.from({ length: 1500 }, (_, i) => `tags=t${i}`).join('&');
    const started = Date.now();
    const r = await t.app.inject({ method: 'GET', url: `/dataset?${qs}` });
    const ms = Date.now() - started;
    assert.equal(r.statusCode, 400);
    assert.match(r.headers['content-type'] as string, /text\/html/);
    assert.match(r.body, /tags/);
    assert.match(r.body, /Too many values for the query parameter &quot;tags&quot;: at most 100\./);
    assert.ok(ms < 2000, `answered in ${ms} ms`);
    const fine = await t.app.inject({ method: 'GET', url: `/dataset?${Array.from({ length: 5 }, (_, i) => `tags=t${i}`).join('&')}` });
    assert.equal(fine.statusCode, 200);
  });
});
