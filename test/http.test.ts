// The Action API route: envelope, methods, body formats, errors, JSONP, help_show, status_show.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await startApp({ plugins: [] });
});
after(async () => {
  await t?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const inject = (opts: any) => t.app.inject(opts);

describe('envelope and routes', () => {
  test('success envelope with help URL on both paths', async () => {
    for (const url of ['/api/3/action/site_read', '/api/action/site_read']) {
      const r = await inject({ method: 'GET', url });
      assert.equal(r.statusCode, 200);
      assert.match(r.headers['content-type'] as string, /^application\/json/);
      assert.deepEqual(r.json(), { help: 'http://test.local/api/3/action/help_show?name=site_read', success: true, result: true });
    }
  });

  test('unknown action is a 400 envelope, not a bare string', async () => {
    const r = await inject({ method: 'POST', url: '/api/3/action/no_such_action', payload: {} });
    assert.equal(r.statusCode, 400);
    const body = r.json();
    assert.equal(body.success, false);
    assert.equal(body.error.message, 'Bad request - Action name not known: no_such_action');
    assert.ok(body.error.__type);
  });

  test('GET on a POST-only action is refused', async () => {
    const r = await inject({ method: 'GET', url: '/api/3/action/user_create?name=x' });
    assert.equal(r.statusCode, 400);
    assert.match(r.json().error.message, /Please use POST method/);
  });

  test('malformed bodies: not JSON, not an object, invalid UTF-8, oversized', async () => {
    const notJson = await inject({
      method: 'POST',
      url: '/api/3/action/site_read',
      headers: { 'content-type': 'application/json' },
      payload: '{nope',
    });
    assert.equal(notJson.statusCode, 400);
    assert.match(notJson.json().error.message, /Error decoding JSON data/);
    const list = await inject({
      method: 'POST',
      url: '/api/3/action/site_read',
      headers: { 'content-type': 'application/json' },
      payload: '[1,2]',
    });
    assert.equal(list.statusCode, 400);
    assert.match(list.json().error.message, /needs to be a dictionary/);
    const badUtf8 = await inject({
      method: 'POST',
      url: '/api/3/action/site_read',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    });
    assert.equal(badUtf8.statusCode, 400);
    assert.match(badUtf8.json().error.message, /UTF-8/);
    const big = await inject({
      method: 'POST',
      url: '/api/3/action/site_read',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ x: 'a'.repeat(51 * 1024 * 1024) }),
    });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().success, false);
    assert.match(big.json().error.message, /larger than the limit/);
  });

  test('a JSON body is read whatever its content type; an empty body is {}', async () => {
    const r = await inject({
      method: 'POST',
      url: '/api/3/action/help_show',
      headers: { 'content-type': 'text/plain' },
      payload: '{"name":"site_read"}',
    });
    assert.equal(r.json().success, true);
    const empty = await inject({ method: 'POST', url: '/api/3/action/site_read' });
    assert.equal(empty.json().result, true);
  });

  test('form bodies: urlencoded with repeated keys, curl -d JSON, multipart fields', async () => {
    const form = await inject({
      method: 'POST',
      url: '/api/3/action/help_show',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=site_read',
    });
    assert.equal(form.json().success, true);
    const curlJson = await inject({
      method: 'POST',
      url: '/api/3/action/help_show',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '{"name":"status_show"}',
    });
    assert.match(curlJson.json().result, /site_title/);
    const boundary = '----svcboundary';
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nhelp_show\r\n--${boundary}--\r\n`;
    const multi = await inject({
      method: 'POST',
      url: '/api/3/action/help_show',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    assert.match(multi.json().result, /help string/);
  });

  test('GET query parameters; repeated parameter becomes a list', async () => {
    const r = await t.call('user_list', { order_by: 'name', all_fields: 'false' }, { method: 'GET' });
    assert.equal(r.status, 200);
    assert.ok(Array.isArray(r.body.result));
    const twice = await inject({ method: 'GET', url: '/api/3/action/help_show?name=a&name=b' });
    assert.equal(twice.statusCode, 409);
    assert.deepEqual(twice.json().error.name, ['Must be a string']);
  });

  test('JSONP for GET only, as anonymous, with a JavaScript content type', async () => {
    const r = await inject({ method: 'GET', url: '/api/3/action/site_read?callback=myFn' });
    assert.equal(r.statusCode, 200);
    assert.match(r.headers['content-type'] as string, /^application\/javascript/);
    assert.equal(r.body, 'myFn({"help":"http://test.local/api/3/action/help_show?name=site_read","success":true,"result":true});');
    const nasty = await inject({ method: 'GET', url: '/api/3/action/site_read?callback=' + encodeURIComponent('alert(1);//<script>') });
    assert.ok(nasty.body.startsWith('alert1script('));
    const asAnon = await inject({
      method: 'GET',
      url: '/api/3/action/config_option_list?callback=f',
      headers: { authorization: t.sysadminToken },
    });
    assert.equal(asAnon.statusCode, 403);
    assert.equal(asAnon.json().error.__type, 'Authorization Error');
  });

  test('GET /api and /api/3 report the version', async () => {
    assert.deepEqual((await inject({ method: 'GET', url: '/api/3' })).json(), { version: 3 });
    // CKAN answers the unversioned address with version 1 (its default API version).
    assert.deepEqual((await inject({ method: 'GET', url: '/api' })).json(), { version: 1 });
  });
});

describe('site actions', () => {
  test('help_show returns the help text of every registered action, Not Found for others', async () => {
    const names = t.services.registry.names();
    assert.ok(names.length > 15);
    for (const name of names) {
      const r = await t.call('help_show', { name });
      assert.equal(r.body.success, true, name);
      assert.equal(typeof r.body.result, 'string', name);
    }
    const missing = await t.call('help_show', { name: 'nope' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error!.__type, 'Not Found Error');
    const noName = await t.call('help_show', {});
    assert.equal(noName.status, 409);
    assert.deepEqual(noName.body.error!.name, ['Missing value']);
  });

  test('status_show reports the site and a CKAN version; hide_version hides it from non-sysadmins', async () => {
    const s = await t.ok('status_show');
    assert.equal(s.site_url, 'http://test.local');
    assert.match(s.ckan_version, /^2\.1[01]/);
    t.services.config.set('svc.hide_version', true);
    try {
      assert.equal((await t.ok('status_show')).ckan_version, undefined);
      assert.match((await t.ok('status_show', {}, { token: t.sysadminToken })).ckan_version, /^2\.11/);
    } finally {
      t.services.config.set('svc.hide_version', false);
    }
  });

  test('get_site_user is sysadmin only', async () => {
    const anon = await t.call('get_site_user');
    assert.equal(anon.status, 403);
    const site = await t.ok('get_site_user', {}, { token: t.sysadminToken });
    assert.equal(site.name, 'default');
    assert.equal(site.sysadmin, true);
  });
});
