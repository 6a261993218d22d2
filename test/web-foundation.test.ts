// The web interface's frame: layout, error pages, security headers, assets, sessions and CSRF.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.auth.create_user_via_web': true } });
});
after(async () => {
  await t?.close();
});

test('the home page shows the site title, search box, counts and recent datasets', async () => {
  const admin = await t.user('home_admin', { sysadmin: true });
  await t.ok('organization_create', { name: 'home-org', title: 'Home Org' }, { token: admin.token });
  await t.ok('package_create', { name: 'home-ds', title: 'Home Dataset', owner_org: 'home-org' }, { token: admin.token });
  const res = await new WebClient(t.app).get('/');
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(res.body, /^<!doctype html>/);
  assert.match(res.body, /<title>svc<\/title>/);
  assert.match(res.body, /<form method="get" action="\/dataset" class="search-form" role="search">/);
  assert.match(res.body, /href="\/dataset\/home-ds">Home Dataset<\/a>/);
  assert.match(res.body, /href="\/organization\/home-org">Home Org<\/a>/);
  assert.match(res.body, /<strong>1<\/strong> dataset</);
  for (const landmark of ['<header', '<main id="content"', '<footer', 'class="skip-link"'])
    assert.ok(res.body.includes(landmark), landmark);
});

test('site title, description and about come from the runtime configuration, escaped; markdown is sanitized', async () => {
  await t.ok(
    'config_option_update',
    {
      'svc.site_title': 'Open <Data> & "More"',
      'svc.site_description': "<script>alert('x')</script> portal",
      'svc.site_about': '# About us\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1)) <img src=x onerror=alert(1)> **bold**',
    },
    { token: t.sysadminToken },
  );
  try {
    const web = new WebClient(t.app);
    const home = await web.get('/');
    assert.match(home.body, /<title>Open &lt;Data&gt; &amp; &quot;More&quot;<\/title>/);
    assert.ok(home.body.includes('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; portal'));
    assert.ok(!home.body.includes("<script>alert('x')"));
    const about = await web.get('/about');
    assert.equal(about.statusCode, 200);
    assert.match(about.body, /<h1>About us<\/h1>/);
    assert.match(about.body, /<strong>bold<\/strong>/);
    assert.ok(!/<script>alert/.test(about.body), 'no script element from markdown');
    assert.ok(!/href="\s*javascript:/i.test(about.body), 'no javascript: link');
    assert.ok(!/onerror=/i.test(about.body.replace(/&lt;img[\s\S]*?&gt;/g, '')), 'no event handler attribute');
  } finally {
    await t.ok(
      'config_option_update',
      { 'svc.site_title': 'svc', 'svc.site_description': '', 'svc.site_about': '' },
      { token: t.sysadminToken },
    );
  }
});

test('security headers: a CSP without inline scripts, nosniff, frame-ancestors', async () => {
  const res = await new WebClient(t.app).get('/');
  const csp = String(res.headers['content-security-policy']);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.ok(!csp.includes("'unsafe-inline'"), csp);
  assert.match(csp, /frame-ancestors 'self'/);
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.ok(
    !/<script>(?!\s*<\/script>)/.test(res.body.replace(/<script type="application\/ld\+json">[\s\S]*?<\/script>/g, '')),
    'no inline script',
  );
});

test('unknown pages answer a 404 page in the layout; unknown API routes keep a JSON answer', async () => {
  const page = await new WebClient(t.app).get('/no/such/page');
  assert.equal(page.statusCode, 404);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  assert.match(page.body, /<h1>Not found<\/h1>/);
  assert.ok(page.body.includes('<header'));
  const api = await t.app.inject({ method: 'GET', url: '/api/3/nothing' });
  assert.equal(api.statusCode, 404);
  assert.match(api.headers['content-type'] as string, /application\/json/);
  const post = await t.app.inject({ method: 'POST', url: '/' });
  assert.equal(post.statusCode, 404);
});

test('a request a page cannot read gets an error page, not the API envelope', async () => {
  const unreadable = await t.app.inject({ method: 'POST', url: '/user/login', headers: { 'content-type': 'text' }, payload: 'x' });
  assert.equal(unreadable.statusCode, 415);
  assert.match(unreadable.headers['content-type'] as string, /text\/html/);
  assert.ok(unreadable.body.includes('<header'), 'in the layout');
  const badAddress = await t.app.inject({ method: 'GET', url: '/dataset/%E0%A4%A' });
  assert.equal(badAddress.statusCode, 400);
  assert.doesNotMatch(badAddress.headers['content-type'] as string, /json/);
});

test('static assets are fingerprinted and cached for a year', async () => {
  const home = await new WebClient(t.app).get('/');
  const href = /href="(\/static\/[0-9a-f]{12}\/app\.css)"/.exec(home.body)?.[1];
  assert.ok(href, 'fingerprinted stylesheet link');
  const css = await t.app.inject({ method: 'GET', url: href });
  assert.equal(css.statusCode, 200);
  assert.match(css.headers['content-type'] as string, /text\/css/);
  assert.match(css.headers['cache-control'] as string, /max-age=31536000, immutable/);
  const stale = await t.app.inject({ method: 'GET', url: '/static/000000000000/app.css' });
  assert.equal(stale.statusCode, 200);
  assert.match(stale.headers['cache-control'] as string, /max-age=300/);
  assert.equal((await t.app.inject({ method: 'GET', url: '/static/000000000000/nothing.css' })).statusCode, 404);
});

test('log in and out with a cookie session (HttpOnly, SameSite); a wrong password is refused', async () => {
  await t.user('web_alice');
  const web = new WebClient(t.app);
  const bad = await web.post('/user/login', { login: 'web_alice', password: 'wrong' });
  assert.equal(bad.statusCode, 401);
  assert.match(bad.body, /Login failed/);
  assert.ok(!web.cookies.has('svc_session'));
  const ok = await web.post('/user/login', { login: 'web_alice', password: 'correct horse battery', came_from: '/about' });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/about');
  const cookie = ([] as string[]).concat(ok.headers['set-cookie'] as string[]).find((c) => c.startsWith('svc_session='))!;
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Lax/);
  const home = await web.get('/');
  assert.match(home.body, /href="\/user\/web_alice"/);
  assert.match(home.body, /action="\/user\/logout"/);
  const out = await web.post('/user/logout', {}, { from: '/' });
  assert.equal(out.statusCode, 303);
  assert.ok(!web.cookies.has('svc_session'));
  assert.doesNotMatch((await web.get('/')).body, /action="\/user\/logout"/);
});

test('a came_from outside the site is ignored (no open redirect)', async () => {
  await t.user('web_carol');
  const web = new WebClient(t.app);
  const res = await web.post('/user/login', { login: 'web_carol', password: 'correct horse battery', came_from: '//evil.example/x' });
  assert.equal(res.headers.location, '/dashboard');
});

test('forms without a valid CSRF token are refused and change nothing', async () => {
  await t.user('web_bob');
  const web = new WebClient(t.app);
  const missing = await web.post('/user/login', { login: 'web_bob', password: 'correct horse battery' }, { csrf: null });
  assert.equal(missing.statusCode, 403);
  assert.ok(!web.cookies.has('svc_session'));
  await web.login('web_bob');
  const forged = await web.post('/user/logout', {}, { csrf: 'forged' });
  assert.equal(forged.statusCode, 403);
  assert.ok(web.cookies.has('svc_session'), 'still signed in');
  // A token from before sign-in is not valid in the session.
  const other = new WebClient(t.app);
  const anonymousToken = await other.csrfToken('/user/login');
  const stale = await web.post('/user/logout', {}, { csrf: anonymousToken });
  assert.equal(stale.statusCode, 403);
});

test('the session cookie authenticates API calls; a POST needs the CSRF token; svc.auth.enable_cookie_auth_in_api', async () => {
  const alice = await t.user('web_dave');
  const web = new WebClient(t.app);
  await web.login('web_dave');
  const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const show = await t.app.inject({ method: 'GET', url: '/api/3/action/user_show?id=web_dave', headers: { cookie } });
  assert.equal(show.json().result.email, 'web_dave@example.org', 'own e-mail visible: signed in');
  const noToken = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/user_patch',
    headers: { cookie, 'content-type': 'application/json' },
    payload: { id: alice.id, fullname: 'X' },
  });
  assert.equal(noToken.statusCode, 403);
  assert.equal(noToken.json().success, false);
  const token = await web.csrfToken('/');
  const withToken = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/user_patch',
    headers: { cookie, 'content-type': 'application/json', 'x-csrftoken': token },
    payload: { id: alice.id, fullname: 'Dave D' },
  });
  assert.equal(withToken.json().success, true, withToken.body);
  await t.ok('config_option_update', { 'svc.auth.enable_cookie_auth_in_api': false }, { token: t.sysadminToken }).catch(() => undefined);
});

test('registration follows svc.auth.create_user_via_web and signs the new user in', async () => {
  const web = new WebClient(t.app);
  const form = await web.get('/user/register');
  assert.equal(form.statusCode, 200);
  const mismatch = await web.post('/user/register', {
    name: 'newbie',
    email: 'newbie@example.org',
    password1: 'long enough pw',
    password2: 'different',
  });
  assert.equal(mismatch.statusCode, 400);
  assert.match(mismatch.body, /do not match/);
  const taken = await web.post('/user/register', {
    name: 'web_alice',
    email: 'x@example.org',
    password1: 'long enough pw',
    password2: 'long enough pw',
  });
  assert.equal(taken.statusCode, 400);
  assert.match(taken.body, /That login name is not available/);
  const res = await web.post('/user/register', {
    name: 'newbie',
    fullname: 'New <b>Bie</b>',
    email: 'newbie@example.org',
    password1: 'long enough pw',
    password2: 'long enough pw',
  });
  assert.equal(res.statusCode, 303, res.body);
  assert.ok(web.cookies.has('svc_session'));
  const home = await web.get('/');
  assert.ok(home.body.includes('New &lt;b&gt;Bie&lt;/b&gt;'));
});

test('registration is closed when svc.auth.create_user_via_web is off (the API setting does not open it)', async () => {
  const closed = await startApp({ plugins: [], config: { 'svc.auth.create_user_via_web': false, 'svc.auth.create_user_via_api': true } });
  try {
    const web = new WebClient(closed.app);
    assert.equal((await web.get('/user/register')).statusCode, 403);
    const res = await web.post(
      '/user/register',
      { name: 'sneaky', email: 's@example.org', password1: 'long enough pw', password2: 'long enough pw' },
      { from: '/user/login' },
    );
    assert.equal(res.statusCode, 403);
    assert.equal((await closed.call('user_show', { id: 'sneaky' }, { token: closed.sysadminToken })).status, 404);
  } finally {
    await closed.close();
  }
});

test('every message a template or page names is in the English catalogue', async () => {
  const { messageKeys } = await import('../src/web/i18n.ts');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const known = new Set(messageKeys());
  const missing: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) walk(file);
      else if (/\.(njk|ts)$/.test(e.name)) {
        for (const m of fs.readFileSync(file, 'utf8').matchAll(/\bt\('([\w.|-]+)'\s*[,)]/g))
          if (!known.has(m[1])) missing.push(`${file}: ${m[1]}`);
      }
    }
  };
  walk(path.join(process.cwd(), 'src/web'));
  assert.deepEqual(missing, []);
});
