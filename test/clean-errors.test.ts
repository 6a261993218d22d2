// Every error is a clean error, and nothing private leaks through tag and format lists
// ("Correctness under real use"). Runs on PGlite and PostgreSQL.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp, type ApiResponse } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
const admin = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: [] });
  editor = await t.user('ce_editor');
  outsider = await t.user('ce_outsider');
  await t.ok('organization_create', { name: 'ce-org', users: [{ name: editor.name, capacity: 'editor' }] }, admin());
  await t.ok('group_create', { name: 'ce-group' }, admin());
});
after(async () => {
  await t?.close();
});

function validationError(r: ApiResponse, field: string, message?: string | RegExp) {
  assert.equal(r.status, 409, JSON.stringify(r.body));
  assert.equal(r.body.success, false);
  assert.equal(r.body.error!.__type, 'Validation Error');
  assert.ok(Array.isArray(r.body.error![field]), `error names ${field}: ${JSON.stringify(r.body.error)}`);
  if (typeof message === 'string') assert.deepEqual(r.body.error![field], [message]);
  else if (message) assert.match(r.body.error![field][0], message);
}

const deep = (n: number): unknown => {
  let v: unknown = 'x';
  for (let i = 0; i < n; i++) v = [v];
  return v;
};

test('a NUL character anywhere is a Validation Error naming the field, and saves nothing', async () => {
  validationError(
    await t.call('package_create', { name: 'ce-nul', owner_org: 'ce-org', notes: 'a\u0000b' }, admin()),
    'notes',
    'Null characters are not allowed',
  );
  assert.equal((await t.call('package_show', { id: 'ce-nul' }, admin())).status, 404);
  validationError(
    await t.call('package_create', { name: 'ce-nul', owner_org: 'ce-org', extras: [{ key: 'k', value: 'v\u0000' }] }, admin()),
    'extras',
  );
  // in an id, by GET and by POST
  const get = await t.app.inject({ method: 'GET', url: '/api/3/action/package_show?id=a%00b' });
  assert.equal(get.statusCode, 409, get.body);
  assert.equal(get.json().error.__type, 'Validation Error');
  validationError(await t.call('resource_show', { id: 'a\u0000b' }), 'id');
  // the download route
  const dl = await t.app.inject({ method: 'GET', url: '/dataset/a%00b/resource/c%00d/download' });
  assert.equal(dl.statusCode, 404);
  const dl2 = await t.app.inject({ method: 'GET', url: '/dataset/ce-x/resource/c%00d/download/file.csv' });
  assert.equal(dl2.statusCode, 404);
});

test('values the database refuses are Validation Errors naming the field (the safety net)', async () => {
  await t.ok('package_create', { name: 'ce-dates', owner_org: 'ce-org' }, admin());
  // Year 0 passes the date check but is no PostgreSQL timestamp (SQLSTATE 22008).
  const r = await t.call('resource_create', { package_id: 'ce-dates', url: 'http://example.org/x', last_modified: '0000-01-01' }, admin());
  validationError(r, 'last_modified', 'Invalid value: the date or time is out of range');
  assert.deepEqual((await t.ok('package_show', { id: 'ce-dates' }, admin())).resources, []);
  // Integers beyond 2^53 are refused before they reach the database.
  validationError(
    await t.call('resource_create', { package_id: 'ce-dates', url: 'http://example.org/x', size: '1180591620717411303424' }, admin()),
    'size',
    'Invalid integer',
  );
});

test('JSON nested 10,000 deep where an id is expected is a Validation Error, not a stack overflow', async () => {
  const body = `{"id": ${'['.repeat(10000)}${']'.repeat(10000)}}`;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/package_show',
    headers: { 'content-type': 'application/json' },
    payload: body,
  });
  assert.equal(res.statusCode, 409, res.body);
  assert.match(res.json().error.id[0], /Nested too deeply/);
  validationError(
    await t.call('package_create', { name: 'ce-deep', owner_org: 'ce-org', extras: [{ key: 'k', value: deep(150) }] }, admin()),
    'extras',
  );
  // The whole body nested deep: a clean Bad Request.
  const whole = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/status_show',
    headers: { 'content-type': 'application/json' },
    payload: '['.repeat(10000) + ']'.repeat(10000),
  });
  assert.equal(whole.statusCode, 400);
});

test('a malformed multipart body is a Bad Request for any action', async () => {
  for (const action of ['status_show', 'package_create', 'resource_create']) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/3/action/${action}`,
      headers: { 'content-type': 'multipart/form-data; boundary=zz' },
      payload: '--zz\r\nContent-Disposition: form-data; name="id"\r\n\r\nabc',
    });
    assert.equal(res.statusCode, 400, `${action}: ${res.body}`);
    assert.equal(res.json().error.__type, 'Bad Request');
  }
});

test('limit and offset of 2^64 are Validation Errors on every list', async () => {
  const huge = '18446744073709551616';
  for (const action of ['package_list', 'user_list', 'group_list', 'organization_list', 'current_package_list_with_resources']) {
    for (const key of ['limit', 'offset']) {
      validationError(await t.call(action, { [key]: huge }, admin()), key, 'Invalid integer');
      const raw = await t.app.inject({
        method: 'POST',
        url: `/api/3/action/${action}`,
        headers: { 'content-type': 'application/json', authorization: t.sysadminToken },
        payload: `{"${key}": ${huge}}`,
      });
      assert.equal(raw.statusCode, 409, `${action} ${key}: ${raw.body}`);
    }
  }
});

test('a list or object as email or as a resource format is a Validation Error', async () => {
  const u = await t.user('ce_mail');
  validationError(await t.call('user_update', { id: u.id, email: ['a@example.org'] }, { token: u.token }), 'email', 'Must be a string');
  validationError(await t.call('user_update', { id: u.id, email: { a: 1 } }, admin()), 'email', 'Must be a string');
  validationError(await t.call('user_create', { name: 'ce-new', email: { a: 1 }, password: 'long enough pass' }, admin()), 'email');
  await t.ok('package_create', { name: 'ce-format', owner_org: 'ce-org' }, admin());
  validationError(
    await t.call('resource_create', { package_id: 'ce-format', url: 'http://x.org/a', format: ['csv'] }, admin()),
    'format',
    'Must be a string',
  );
  validationError(
    await t.call(
      'package_create',
      { name: 'ce-format2', owner_org: 'ce-org', resources: [{ url: 'http://x.org/a', format: { a: 1 } }] },
      admin(),
    ),
    'resources',
  );
});

test('config_option_update checks every option by its declared type', async () => {
  validationError(await t.call('config_option_update', { 'svc.site_url': 123 }, admin()), 'svc.site_url', 'Must be a string');
  validationError(await t.call('config_option_update', { 'svc.site_url': 'not a url' }, admin()), 'svc.site_url', /http/);
  validationError(await t.call('config_option_update', { 'svc.site_title': ['a'] }, admin()), 'svc.site_title', 'Must be a string');
  validationError(await t.call('config_option_update', { 'svc.homepage_style': 7 }, admin()), 'svc.homepage_style');
  // nothing was changed: help URLs still use the configured site URL
  const r = await t.call('status_show');
  assert.match(r.body.help, /^http:\/\/test\.local\/api\/3\/action\/help_show/);
  const ok = await t.ok('config_option_update', { 'svc.site_url': 'https://data.example.org' }, admin());
  assert.equal(ok['svc.site_url'], 'https://data.example.org');
  assert.match((await t.call('status_show')).body.help, /^https:\/\/data\.example\.org\//);
  await t.ok('config_option_update', { 'svc.site_url': 'http://test.local' }, admin());
});

test('lookups of things that do not exist are Not Found, for sysadmins too', async () => {
  for (const [action, data] of [
    ['member_list', { id: 'no-such-group' }],
    ['member_create', { id: 'no-such-group', object: editor.name, object_type: 'user', capacity: 'member' }],
    ['member_delete', { id: 'no-such-group', object: editor.name, object_type: 'user' }],
    ['group_member_create', { id: 'no-such-group', username: editor.name, role: 'member' }],
    ['organization_member_delete', { id: 'no-such-org', username: editor.name }],
    ['package_relationships_list', { id: 'no-such-dataset' }],
    ['package_relationships_list', { id: 'ce-format', id2: 'no-such-dataset' }],
    ['package_show', { id: '../../etc/passwd' }],
    ['resource_show', { id: '00000000-0000-0000-0000-000000000000' }],
  ] as [string, Record<string, unknown>][]) {
    const r = await t.call(action, data, admin());
    assert.equal(r.status, 404, `${action} ${JSON.stringify(data)}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error!.__type, 'Not Found Error');
  }
});

test('resource_create without package_id is a Validation Error before any lookup', async () => {
  validationError(await t.call('resource_create', { url: 'http://example.org/a' }, admin()), 'package_id', 'Missing value');
  validationError(await t.call('resource_create', { url: 'http://example.org/a' }, { token: editor.token }), 'package_id', 'Missing value');
  validationError(await t.call('resource_create', { url: 'http://example.org/a' }), 'package_id', 'Missing value');
});

test('groups naming a group that does not exist fail with a Validation Error and save nothing', async () => {
  for (const [token, groups] of [
    [t.sysadminToken, [{ name: 'ce-group' }, { name: 'no-such-group' }]],
    [editor.token, [{ name: 'no-such-group' }]],
  ] as const) {
    const r = await t.call('package_create', { name: 'ce-grouped', owner_org: 'ce-org', groups }, { token });
    validationError(r, 'groups', 'Group no-such-group was not found.');
    assert.equal((await t.call('package_show', { id: 'ce-grouped' }, admin())).status, 404);
  }
  await t.ok('package_create', { name: 'ce-grouped', owner_org: 'ce-org', notes: 'before' }, admin());
  const r = await t.call('package_update', { id: 'ce-grouped', notes: 'after', groups: [{ id: 'no-such-group' }] }, admin());
  validationError(r, 'groups');
  const shown = await t.ok('package_show', { id: 'ce-grouped' }, admin());
  assert.equal(shown.notes, 'before');
  assert.deepEqual(shown.groups, []);
});

test('autocomplete actions require q and take limit as a natural number', async () => {
  for (const action of [
    'package_autocomplete',
    'user_autocomplete',
    'format_autocomplete',
    'group_autocomplete',
    'organization_autocomplete',
  ]) {
    if (!t.services.registry.has(action)) continue;
    validationError(await t.call(action, {}, admin()), 'q', 'Missing value');
    validationError(await t.call(action, { q: 'a', limit: -1 }, admin()), 'limit', 'Must be a natural number');
    validationError(await t.call(action, { q: 'a', limit: 'ten' }, admin()), 'limit');
    validationError(await t.call(action, { q: 'a', limit: '18446744073709551616' }, admin()), 'limit');
    assert.equal((await t.call(action, { q: 'a', limit: 3 }, admin())).status, 200);
  }
});

test('tag_list and format_autocomplete show only what the caller may read', async () => {
  await t.ok(
    'package_create',
    {
      name: 'ce-secret',
      owner_org: 'ce-org',
      private: true,
      tags: [{ name: 'secret-tag' }],
      resources: [{ url: 'http://example.org/s', format: 'SecretFormat' }],
    },
    { token: editor.token },
  );
  await t.ok(
    'package_create',
    {
      name: 'ce-public',
      owner_org: 'ce-org',
      tags: [{ name: 'public-tag' }],
      resources: [{ url: 'http://example.org/p', format: 'PublicFormat' }],
    },
    { token: editor.token },
  );
  for (const token of [undefined, outsider.token]) {
    const tags = await t.ok('tag_list', {}, { token });
    assert.ok(tags.includes('public-tag'));
    assert.ok(!tags.includes('secret-tag'), "a private dataset's tag is not listed");
    assert.deepEqual(await t.ok('tag_list', { query: 'secret' }, { token }), []);
    assert.deepEqual(await t.ok('format_autocomplete', { q: 'secretformat' }, { token }), []);
    assert.deepEqual(await t.ok('format_autocomplete', { q: 'publicformat' }, { token }), ['publicformat']);
  }
  for (const token of [editor.token, t.sysadminToken]) {
    assert.ok((await t.ok('tag_list', {}, { token })).includes('secret-tag'));
    assert.deepEqual(await t.ok('format_autocomplete', { q: 'secretformat' }, { token }), ['secretformat']);
  }
});
