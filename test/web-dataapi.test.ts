// The "Data API" page of data store resources through HTTP: the button on the resource page, the
// examples with the real resource id and a real column, each example answering when called, code
// in curl, Python and JavaScript, private datasets kept from outsiders, 404 for other resources.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';

let t: TestApp;
let tableId: string;
let privateId: string;
let fileId: string;
const BASE = 'http://test.local';

const get = (url: string, token?: string) => t.app.inject({ method: 'GET', url, headers: token ? { authorization: token } : {} });
const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

before(async () => {
  t = await startApp({ config: { 'svc.datastore.sqlsearch.enabled': true } });
  const as = asSysadmin(t);
  await t.ok('organization_create', { name: 'api-org' }, as);
  await t.ok(
    'package_create',
    { name: 'towns', owner_org: 'api-org', resources: [{ url: 'https://example.org/a.csv', name: 'File' }] },
    as,
  );
  await t.ok('package_create', { name: 'towns-private', owner_org: 'api-org', private: true }, as);
  const fields = [
    { id: 'count', type: 'int' },
    { id: 'town', type: 'text' },
  ];
  const records = [
    { count: 3, town: "O'Brien Falls" },
    { count: 7, town: 'Springfield' },
  ];
  tableId = (await t.ok('datastore_create', { resource: { package_id: 'towns', name: 'Towns' }, fields, records }, as)).resource_id;
  privateId = (await t.ok('datastore_create', { resource: { package_id: 'towns-private', name: 'Hidden' }, fields, records }, as))
    .resource_id;
  fileId = (await t.ok('package_show', { id: 'towns' })).resources[0].id;
});
after(() => t?.close());

test('the resource page of a data store table has the Data API button; a plain file has none', async () => {
  const table = await get(`/dataset/towns/resource/${tableId}`);
  assert.match(table.body, new RegExp(`href="/dataset/towns/resource/${tableId}/data-api"`));
  const file = await get(`/dataset/towns/resource/${fileId}`);
  assert.equal(file.statusCode, 200);
  assert.doesNotMatch(file.body, /data-api/);
});

test('every example names the resource and a real column, and answers with its rows when called', async () => {
  const res = await get(`/dataset/towns/resource/${tableId}/data-api`);
  assert.equal(res.statusCode, 200);
  const urls = [...res.body.matchAll(/<a class="api-example" href="([^"]+)"/g)].map((m) => unescapeHtml(m[1]!));
  assert.equal(urls.length, 4, 'first rows, a word, a filter, SQL');
  for (const url of urls) {
    assert.ok(url.startsWith(`${BASE}/api/3/action/datastore_search`), url);
    assert.ok(url.includes(tableId), url);
    const answer = await get(url.slice(BASE.length));
    assert.equal(answer.statusCode, 200, `${url}: ${answer.body}`);
    const records = answer.json().result.records;
    assert.ok(records.length >= 1, url);
    if (!url.includes('limit=5&') && !url.endsWith('limit=5')) assert.equal(records[0].town, "O'Brien Falls", url);
  }
  // The sample column is the text column, its value with its quote escaped in SQL.
  assert.ok(urls.some((u) => new URL(u).searchParams.get('filters') === JSON.stringify({ town: "O'Brien Falls" })));
  assert.ok(urls.some((u) => new URL(u).searchParams.get('sql') === `SELECT * FROM "${tableId}" WHERE "town" = 'O''Brien Falls' LIMIT 5`));
  const body = unescapeHtml(res.body);
  assert.match(body, /curl 'http:\/\/test\.local\/api\/3\/action\/datastore_search\?resource_id=/);
  assert.match(body, /from ckanapi import RemoteCKAN/);
  assert.match(body, new RegExp(`site\\.action\\.datastore_search\\(resource_id="${tableId}", q="Brien"\\)`));
  assert.match(body, /import requests/);
  assert.match(body, /await fetch\("http:\/\/test\.local\/api\/3\/action\/datastore_search"/);
  assert.match(body, /href="http:\/\/test\.local\/api\/3\/docs"/);
});

test('an empty table: the first rows and an SQL query without a value to look for, both answering', async () => {
  const emptyId = (
    await t.ok(
      'datastore_create',
      { resource: { package_id: 'towns', name: 'Empty' }, fields: [{ id: 'town', type: 'text' }] },
      asSysadmin(t),
    )
  ).resource_id;
  const res = await get(`/dataset/towns/resource/${emptyId}/data-api`);
  assert.equal(res.statusCode, 200);
  const urls = [...res.body.matchAll(/<a class="api-example" href="([^"]+)"/g)].map((m) => unescapeHtml(m[1]!));
  assert.equal(urls.length, 2);
  assert.equal(new URL(urls[1]!).searchParams.get('sql'), `SELECT * FROM "${emptyId}" LIMIT 5`);
  for (const url of urls) assert.equal((await get(url.slice(BASE.length))).statusCode, 200, url);
});

test('a private table: its members see the page with the token in the code, others a 404', async () => {
  const url = `/dataset/towns-private/resource/${privateId}/data-api`;
  const admin = await get(url, t.sysadminToken);
  assert.equal(admin.statusCode, 200);
  assert.match(unescapeHtml(admin.body), /Authorization: \$API_TOKEN/);
  assert.equal((await get(url)).statusCode, 404);
});

test("no Data API page for a file without a table, another dataset's resource or an unknown one", async () => {
  assert.equal((await get(`/dataset/towns/resource/${fileId}/data-api`)).statusCode, 404);
  assert.equal((await get(`/dataset/towns/resource/${privateId}/data-api`, t.sysadminToken)).statusCode, 404);
  assert.equal((await get('/dataset/towns/resource/nope/data-api')).statusCode, 404);
});
