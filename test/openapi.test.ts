// The OpenAPI 3.1 document, the docs page and help_show all come from the action declarations.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startApp, type TestApp } from './helpers/app.ts';

async function documentOf(t: TestApp) {
  const r = await t.app.inject({ method: 'GET', url: '/api/3/openapi.json' });
  assert.equal(r.statusCode, 200);
  assert.match(r.headers['content-type'] as string, /^application\/json/);
  return r.json();
}

for (const plugins of [[], ['datastore', 'expire_api_token']]) {
  describe(`OpenAPI document with plugins [${plugins.join(', ')}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ plugins });
    });
    after(async () => {
      await t?.close();
    });

    test('is a valid OpenAPI 3.1 document', async () => {
      const doc = await documentOf(t);
      assert.equal(doc.openapi, '3.1.0');
      const result = await new Validator().validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    });

    test('has every registered action: POST always, GET for side-effect-free ones', async () => {
      const doc = await documentOf(t);
      const names = t.services.registry.names();
      assert.ok(names.length > 50);
      for (const name of names) {
        const item = doc.paths[`/api/3/action/${name}`];
        assert.ok(item?.post, `${name} has no POST operation`);
        assert.equal(!!item.get, t.services.registry.get(name).sideEffectFree, `${name}: GET iff side-effect-free`);
        assert.ok(item.post.tags?.length, `${name} has a tag`);
        assert.ok(item.post.responses['409'], `${name} documents the error envelope`);
      }
      assert.equal(Object.keys(doc.paths).length, names.length);
      const datastore = Object.keys(doc.paths).some((p) => p.endsWith('/datastore_search'));
      assert.equal(datastore, plugins.includes('datastore'));
    });

    test('declares the token schemes and the result shapes', async () => {
      const doc = await documentOf(t);
      const schemes = doc.components.securitySchemes;
      assert.equal(schemes.authorizationHeader.name, 'Authorization');
      assert.equal(schemes.bearerToken.scheme, 'bearer');
      assert.equal(schemes.apiKeyHeader.name, 'X-SVC-API-Key');
      for (const name of ['Dataset', 'Resource', 'Group', 'User', 'ApiToken', 'ErrorEnvelope'])
        assert.ok(doc.components.schemas[name], name);
      const helpShow = doc.paths['/api/3/action/help_show'];
      assert.deepEqual(helpShow.post.requestBody.content['application/json'].schema.required, ['name']);
      assert.equal(helpShow.get.parameters[0].name, 'name');
      assert.equal(helpShow.get.parameters[0].required, true);
    });

    test('help_show answers for every action, itself included, in the docstring shape', async () => {
      for (const name of t.services.registry.names()) {
        const r = await t.call('help_show', { name }, { method: 'GET' });
        assert.equal(r.status, 200, name);
        assert.equal(typeof r.body.result, 'string', name);
        assert.ok(r.body.result.length > 10, `${name} has a help text`);
      }
      const own = (await t.call('help_show', { name: 'help_show' })).body.result as string;
      assert.match(own, /^Return the help string/);
      assert.match(own, /:param name: action function name .*\n:type name: string/);
      assert.match(own, /:rtype: string/);
      const missing = await t.call('help_show', { name: 'no_such_action' });
      assert.equal(missing.status, 404);
    });
  });
}

describe('API docs page', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ plugins: [] });
  });
  after(async () => {
    await t?.close();
  });

  test('renders the document with assets served locally', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/api/3/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.match(page.body, /src="\/api\/3\/docs\/swagger-ui-bundle\.js"/);
    assert.doesNotMatch(page.body, /https?:\/\//, 'no CDN');
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'init.js']) {
      const r = await t.app.inject({ method: 'GET', url: `/api/3/docs/${asset}` });
      assert.equal(r.statusCode, 200, asset);
      assert.ok(r.body.length > 20, asset);
    }
    const init = await t.app.inject({ method: 'GET', url: '/api/3/docs/init.js' });
    assert.match(init.body, /\/api\/3\/openapi\.json/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/3/docs/..%2Fpackage.json' })).statusCode, 404);
  });

  test('the document is compressed when the client accepts it (under 100 KB), with an ETag; its server URL is relative', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/api/3/openapi.json' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    const doc = plain.json();
    // "Try it out" calls the origin the page was opened on, whatever the host name.
    assert.deepEqual(doc.servers, [{ url: '/' }]);
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br', 'br', zlib.brotliDecompressSync],
      ['gzip', 'gzip', zlib.gunzipSync],
    ] as const) {
      const r = await t.app.inject({ method: 'GET', url: '/api/3/openapi.json', headers: { 'accept-encoding': accept } });
      assert.equal(r.headers['content-encoding'], encoding);
      assert.ok(r.rawPayload.length < 100 * 1024, `${encoding}: ${r.rawPayload.length} bytes on the wire`);
      assert.deepEqual(JSON.parse(decode(r.rawPayload).toString()), doc);
      assert.match(String(r.headers.vary), /accept-encoding/i);
    }
    const etag = plain.headers.etag as string;
    assert.ok(etag);
    const again = await t.app.inject({ method: 'GET', url: '/api/3/openapi.json', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const bundle = await t.app.inject({ method: 'GET', url: '/api/3/docs/swagger-ui-bundle.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(bundle.headers['content-encoding'], 'gzip');
    assert.ok(bundle.rawPayload.length < 700 * 1024);
  });

  test('pages and API answers are compressed when the client accepts it', async () => {
    const api = await t.app.inject({
      method: 'GET',
      url: '/api/3/action/help_show?name=package_search',
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(api.headers['content-encoding'], 'gzip');
    assert.equal(JSON.parse(zlib.gunzipSync(api.rawPayload).toString()).success, true);
    const identity = await t.app.inject({ method: 'GET', url: '/api/3/action/help_show?name=package_search' });
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.equal(identity.json().success, true);
  });
});
