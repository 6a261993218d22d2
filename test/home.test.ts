// GET /: the small HTML home page.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await startApp({ plugins: [] });
});
after(async () => {
  await t?.close();
});

test('GET / answers an HTML page with the site title, description, API base URL and links', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(res.body, /^<!doctype html>/);
  assert.match(res.body, /<title>svc<\/title>/);
  assert.match(res.body, /<code>http:\/\/test\.local\/api\/3\/action\/<\/code>/);
  for (const href of ['/api/3/docs', '/api/3/openapi.json', '/api/3/action/status_show'])
    assert.ok(res.body.includes(`href="${href}"`), href);
});

test('title and description come from the configuration, HTML-escaped', async () => {
  const sys = { token: t.sysadminToken };
  await t.ok(
    'config_option_update',
    { 'svc.site_title': 'Open <Data> & "More"', 'svc.site_description': "<script>alert('x')</script> portal" },
    sys,
  );
  const res = await t.app.inject({ method: 'GET', url: '/' });
  assert.match(res.body, /<title>Open &lt;Data&gt; &amp; &quot;More&quot;<\/title>/);
  assert.match(res.body, /<h1>Open &lt;Data&gt; &amp; &quot;More&quot;<\/h1>/);
  assert.ok(res.body.includes('<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; portal</p>'));
  assert.ok(!res.body.includes('<script>'));
  assert.ok(!res.body.includes('<Data>'));
});

test('HEAD / and other methods', async () => {
  const head = await t.app.inject({ method: 'HEAD', url: '/' });
  assert.equal(head.statusCode, 200);
  const post = await t.app.inject({ method: 'POST', url: '/' });
  assert.equal(post.statusCode, 404);
});
