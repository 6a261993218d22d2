// Catalog hardening (issue #25): private task statuses, relationships and views stay private;
// oversized input is a Validation Error naming the field; unknown runtime options are refused early.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let member: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let org: any;
let privateDs: any;
let publicDs: any;
const sys = () => ({ token: t.sysadminToken });
const MB = 'x'.repeat(1 << 20);

before(async () => {
  t = await startApp({ plugins: ['webpage_view'] });
  member = await t.user('ch_member');
  outsider = await t.user('ch_outsider');
  org = await t.ok('organization_create', { name: 'ch-org', users: [{ name: member.name, capacity: 'member' }] }, sys());
  privateDs = await t.ok(
    'package_create',
    { name: 'ch-secret-ds', owner_org: org.id, private: true, resources: [{ url: 'http://example.org/secret.csv', name: 'secret' }] },
    sys(),
  );
  publicDs = await t.ok(
    'package_create',
    { name: 'ch-public-ds', owner_org: org.id, resources: [{ url: 'http://example.org/open.csv', name: 'open' }] },
    sys(),
  );
});
after(async () => {
  await t?.close();
});

const taskKey = (entity_id: string) => ({ entity_id, task_type: 'xloader', key: 'xloader' });

test('the task status of a private resource or dataset is shown only to those who may read it', async () => {
  const secretRes = privateDs.resources[0].id;
  const saved = await t.ok(
    'task_status_update',
    { ...taskKey(secretRes), entity_type: 'resource', value: '{"columns": ["secret_column"]}', state: 'complete' },
    sys(),
  );
  const onDataset = await t.ok('task_status_update', { ...taskKey(privateDs.id), entity_type: 'package', value: 'secret log' }, sys());
  for (const who of [{}, { token: outsider.token }]) {
    for (const params of [taskKey(secretRes), { id: saved.id }, taskKey(privateDs.id), { id: onDataset.id }]) {
      const r = await t.call('task_status_show', params, who);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error!.__type, 'Authorization Error');
      assert.doesNotMatch(JSON.stringify(r.body), /secret|ch-secret-ds/);
    }
  }
  assert.equal((await t.ok('task_status_show', taskKey(secretRes), { token: member.token })).value, '{"columns": ["secret_column"]}');
  assert.equal((await t.ok('task_status_show', { id: onDataset.id }, { token: member.token })).value, 'secret log');
  // a public resource's task status stays readable by anyone (CKAN)
  const open = publicDs.resources[0].id;
  await t.ok('task_status_update', { ...taskKey(open), entity_type: 'resource', value: 'open log' }, sys());
  assert.equal((await t.ok('task_status_show', taskKey(open))).value, 'open log');
});

test('config_option_update refuses 20,000 unknown keys quickly with a short message', async () => {
  const input: Record<string, string> = { 'svc.site_title': 'Never set' };
  for (let i = 0; i < 20000; i++) input[`unknown.option.number_${i}`] = 'v'.repeat(50);
  const started = Date.now();
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/config_option_update',
    headers: { 'content-type': 'application/json', authorization: t.sysadminToken },
    payload: JSON.stringify(input),
  });
  assert.equal(res.statusCode, 409, res.body.slice(0, 300));
  assert.ok(res.body.length < 10_000, `answer of ${res.body.length} bytes`);
  const body = res.json();
  assert.equal(body.error.__type, 'Validation Error');
  assert.match(body.error.message, /20000 keys|can not be updated/);
  assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  assert.notEqual(await t.ok('config_option_show', { key: 'svc.site_title' }, sys()), 'Never set');
});

/** A 1 MB value of each field is a Validation Error naming that field, and nothing is written. */
const oversized: [string, () => Record<string, unknown>, string][] = [
  ['package_create', () => ({ name: 'ch-long-license', owner_org: org.id, license_id: MB }), 'license_id'],
  ['resource_create', () => ({ package_id: publicDs.id, url: 'http://example.org/x', format: MB }), 'format'],
  ['resource_create', () => ({ package_id: publicDs.id, url: 'http://example.org/x', resource_type: MB }), 'resource_type'],
  ['resource_create', () => ({ package_id: publicDs.id, url: 'http://example.org/x', id: MB }), 'id'],
  [
    'package_create',
    () => ({ name: 'ch-long-res-id', owner_org: org.id, resources: [{ id: MB, url: 'http://example.org/x' }] }),
    'resources',
  ],
  ['task_status_update', () => ({ entity_id: MB, entity_type: 'resource', task_type: 't', key: 'k' }), 'entity_id'],
  ['task_status_update', () => ({ entity_id: 'e', entity_type: 'resource', task_type: MB, key: 'k' }), 'task_type'],
  ['task_status_update', () => ({ entity_id: 'e', entity_type: 'resource', task_type: 't', key: MB }), 'key'],
  ['term_translation_update', () => ({ term: MB, term_translation: 'x', lang_code: 'de' }), 'term'],
  ['package_create', () => ({ name: 'ch-long-tag', owner_org: org.id, tags: [{ name: 'ok' }], url: MB }), 'url'],
];

for (const [action, input, field] of oversized) {
  test(`${action}: a 1 MB ${field} is a Validation Error naming it`, async () => {
    const before = (await t.ok('package_show', { id: publicDs.id })).resources.length;
    const r = await t.call(action, input(), sys());
    assert.equal(r.status, 409, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.ok(r.body.error![field], `names ${field}: ${JSON.stringify(r.body.error).slice(0, 300)}`);
    assert.ok(JSON.stringify(r.body).length < 5000, 'the answer does not repeat the value');
    assert.equal((await t.ok('package_show', { id: publicDs.id })).resources.length, before);
  });
}

test('notes of a few hundred KB are still accepted', async () => {
  const notes = 'word '.repeat(60_000);
  const ds = await t.ok('package_create', { name: 'ch-long-notes', owner_org: org.id, notes }, sys());
  assert.equal(ds.notes, notes);
});

test("a public dataset's dict leaves out its relationships to datasets the caller may not read", async () => {
  const pub = await t.ok('package_create', { name: 'ch-rel-public', owner_org: org.id }, sys());
  const priv = await t.ok('package_create', { name: 'ch-rel-private', owner_org: org.id, private: true }, sys());
  await t.ok('package_relationship_create', { subject: pub.id, object: priv.id, type: 'links_to', comment: 'hidden comment' }, sys());
  await t.ok('package_relationship_create', { subject: priv.id, object: pub.id, type: 'child_of', comment: 'hidden too' }, sys());
  const leaks = (x: unknown) => {
    const text = JSON.stringify(x);
    return text.includes(priv.id) || text.includes('hidden comment') || text.includes('hidden too');
  };
  for (const who of [{}, { token: outsider.token }]) {
    const shown = await t.ok('package_show', { id: pub.id }, who);
    assert.deepEqual([shown.relationships_as_subject, shown.relationships_as_object], [[], []]);
    const found = await t.ok('package_search', { fq: 'name:ch-rel-public' }, who);
    assert.equal(found.count, 1);
    assert.ok(!leaks(found.results), JSON.stringify(found.results[0].relationships_as_subject));
    const orgShown = await t.ok('organization_show', { id: org.id, include_datasets: true }, who);
    assert.ok(!leaks(orgShown), 'organization_show include_datasets');
    assert.deepEqual(await t.ok('package_relationships_list', { id: pub.id }, who), []);
  }
  const creator = await t.ok('user_show', { id: 'test_sysadmin', include_datasets: true }, { token: outsider.token });
  assert.ok(!leaks(creator), 'user_show include_datasets');
  // members of the organization see both
  const seen = await t.ok('package_show', { id: pub.id }, { token: member.token });
  assert.equal(seen.relationships_as_subject.length, 1);
  assert.equal(seen.relationships_as_object.length, 1);
  assert.equal(seen.relationships_as_subject[0].comment, 'hidden comment');
});

test("a refused view of a private dataset's resource does not name the dataset", async () => {
  const res = privateDs.resources[0];
  const view = await t.ok(
    'resource_view_create',
    { resource_id: res.id, view_type: 'webpage_view', title: 'w', page_url: 'http://example.org' },
    sys(),
  );
  for (const [action, params] of [
    ['resource_view_show', { id: view.id }],
    ['resource_view_list', { id: res.id }],
    ['resource_view_update', { id: view.id, title: 'x' }],
    ['resource_view_delete', { id: view.id }],
  ] as const) {
    for (const who of [{}, { token: outsider.token }]) {
      const r = await t.call(action, params, who);
      assert.equal(r.status, 403, `${action}: ${JSON.stringify(r.body)}`);
      const text = JSON.stringify(r.body.error);
      assert.ok(!text.includes(privateDs.id) && !text.includes(privateDs.name), `${action} names the dataset: ${text}`);
    }
  }
});

test("a value the database refuses is told in our words, naming the field (not PostgreSQL's text)", async () => {
  // Year 0 passes the date check but is no PostgreSQL timestamp.
  const r = await t.call('resource_create', { package_id: publicDs.id, url: 'http://example.org/y0', last_modified: '0000-01-01' }, sys());
  assert.equal(r.status, 409, JSON.stringify(r.body));
  assert.deepEqual(r.body.error!.last_modified, ['Invalid value: the date or time is out of range']);
  assert.doesNotMatch(JSON.stringify(r.body), /field value out of range|invalid input syntax/);
});

test('bounds come from the kind of parameter, in every action: a 1 MB extra key of an organization, a 1 MB list item', async () => {
  let r = await t.call('organization_create', { name: 'ch-org-extras', extras: [{ key: MB, value: 'v' }] }, sys());
  assert.equal(r.status, 409, JSON.stringify(r.body).slice(0, 300));
  assert.deepEqual(r.body.error!.extras, [{ key: ['Must be a maximum of 200 characters long'] }]);
  assert.equal((await t.call('organization_show', { id: 'ch-org-extras' })).status, 404);
  r = await t.call('term_translation_show', { terms: Array.from({ length: 1001 }, (_, i) => `t${i}`) }, sys());
  assert.equal(r.status, 409, JSON.stringify(r.body).slice(0, 300));
  assert.deepEqual(r.body.error!.terms, ['Must have at most 1000 items']);
});

test('an error about a huge value stays short: a list where a string belongs is "Must be a string", and a quoted value is cut', async () => {
  const big = Array.from({ length: 100_000 }, (_, i) => i);
  for (const [action, data, field] of [
    ['tag_create', { name: big }, 'name'],
    ['package_relationships_list', { id: 'x', rel: big }, 'rel'],
    ['package_relationships_list', { id: 'x', rel: 'x'.repeat(100_000) }, 'rel'],
  ] as const) {
    const r = await t.call(action, data, sys());
    assert.equal(r.status, 409, action);
    assert.ok(r.body.error![field], `${action} names ${field}`);
    assert.ok(JSON.stringify(r.body.error).length < 2_000, `${action}: ${JSON.stringify(r.body.error).length} characters`);
  }
});
