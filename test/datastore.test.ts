// The data store over HTTP: create/upsert/delete/search/info, aliases, triggers, dumps, auth,
// failed writes and injection attempts. Runs on PGlite and (with SVC_TEST_DATABASE_URL) PostgreSQL.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let sys: string;

before(async () => {
  t = await startApp();
  sys = t.sysadminToken;
  editor = await t.user('ds_editor');
  outsider = await t.user('ds_outsider');
  const org = randomUUID();
  await t.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'ds-org', 'DS', 'organization', true)",
    [org],
  );
  await t.services.db.query("INSERT INTO members (id, group_id, table_name, table_id, capacity) VALUES ($1, $2, 'user', $3, 'editor')", [
    randomUUID(),
    org,
    editor.id,
  ]);
  await t.ok('package_create', { name: 'ds-public', owner_org: 'ds-org' }, { token: editor.token });
  await t.ok('package_create', { name: 'ds-private', owner_org: 'ds-org', private: true }, { token: editor.token });
});
after(async () => {
  await t?.close();
});

/** A new data store resource in ds-public (created through datastore_create with resource). */
async function newTable(body: Record<string, unknown>, token = editor.token): Promise<string> {
  const r = await t.ok('datastore_create', { resource: { package_id: 'ds-public', name: 'table' }, ...body }, { token });
  return r.resource_id;
}

const search = (data: Record<string, unknown>, opts: Record<string, unknown> = {}) =>
  t.ok('datastore_search', data, { token: editor.token, ...opts });

test('_table_metadata is searchable on a fresh install', async () => {
  const r = await t.ok('datastore_search', { resource_id: '_table_metadata' });
  assert.ok(Array.isArray(r.records));
  assert.deepEqual(
    r.fields.map((f: any) => f.id),
    ['_id', 'name', 'oid', 'alias_of'],
  );
});

test('create from a package id, search result shape, datastore_active, types', async () => {
  const id = await newTable({
    fields: [
      { id: 'name', type: 'text', info: { label: 'Name', notes: 'who' } },
      { id: 'n', type: 'int' },
      { id: 'amount', type: 'numeric' },
      { id: 'when', type: 'timestamp' },
      { id: 'tags', type: 'text[]' },
      { id: 'doc', type: 'json' },
      { id: 'ok', type: 'bool' },
      { id: 'day', type: 'date' },
    ],
    records: [
      {
        name: 'alpha',
        n: 1,
        amount: '1.50',
        when: '2020-01-02T03:04:05.678',
        tags: ['a', 'b'],
        doc: { x: [1, 2] },
        ok: true,
        day: '2020-01-02',
      },
      { name: 'beta', n: 2, amount: 2, when: '2021-06-07 08:09:10', tags: [], doc: [1], ok: false, day: '' },
      { name: 'gamma', n: null, amount: '', when: null, tags: null, doc: null, ok: null },
    ],
  });
  const res = await t.ok('resource_show', { id });
  assert.equal(res.datastore_active, true);
  assert.equal(res.url_type, 'datastore');
  const r = await search({ resource_id: id });
  assert.deepEqual(r.fields, [
    { id: '_id', type: 'int' },
    { id: 'name', type: 'text', info: { label: 'Name', notes: 'who' } },
    { id: 'n', type: 'int4' },
    { id: 'amount', type: 'numeric' },
    { id: 'when', type: 'timestamp' },
    { id: 'tags', type: '_text' },
    { id: 'doc', type: 'json' },
    { id: 'ok', type: 'bool' },
    { id: 'day', type: 'date' },
  ]);
  assert.deepEqual(r.records[0], {
    _id: 1,
    name: 'alpha',
    n: 1,
    amount: 1.5,
    when: '2020-01-02T03:04:05',
    tags: ['a', 'b'],
    doc: { x: [1, 2] },
    ok: true,
    day: '2020-01-02',
  });
  assert.deepEqual(r.records[1], {
    _id: 2,
    name: 'beta',
    n: 2,
    amount: 2,
    when: '2021-06-07T08:09:10',
    tags: [],
    doc: [1],
    ok: false,
    day: null,
  });
  assert.deepEqual(r.records[2], { _id: 3, name: 'gamma', n: null, amount: null, when: null, tags: null, doc: null, ok: null, day: null });
  assert.equal(r.total, 3);
  assert.equal(r.total_was_estimated, false);
  assert.equal(r.limit, 100);
  assert.equal(r.records_format, 'objects');
  assert.equal(r.resource_id, id);
  assert.deepEqual(r._links, { start: '/api/3/action/datastore_search', next: '/api/3/action/datastore_search?offset=100' });
  assert.equal('offset' in r, false);
});

test('type guessing from the first record; bad types and names', async () => {
  const r = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'ds-public' },
      records: [{ i: 1, f: 1.5, o: { a: 1 }, l: [1], si: '12', sf: '1.5', sd: '2020-01-01', st: 'x' }],
    },
    { token: editor.token },
  );
  const types = Object.fromEntries(r.fields.map((f: any) => [f.id, f.type]));
  assert.deepEqual(types, { i: 'int', f: 'float', o: 'json', l: 'json', si: 'integer', sf: 'numeric', sd: 'timestamp', st: 'text' });
  assert.equal(r.method, 'insert');
  assert.equal('records' in r, false);
  const s = await search({ resource_id: r.resource_id });
  assert.deepEqual(s.records[0], { _id: 1, i: 1, f: 1.5, o: { a: 1 }, l: [1], si: 12, sf: 1.5, sd: '2020-01-01T00:00:00', st: 'x' });

  let e = await t.call(
    'datastore_create',
    { resource: { package_id: 'ds-public' }, fields: [{ id: 'a', type: 'nosuchtype' }] },
    { token: editor.token },
  );
  assert.equal(e.status, 409);
  assert.deepEqual(e.body.error!.fields, ['"nosuchtype" is not a valid field type']);
  e = await t.call(
    'datastore_create',
    { resource: { package_id: 'ds-public' }, fields: [{ id: 'a', type: 'int); DROP TABLE x; --' }] },
    { token: editor.token },
  );
  assert.equal(e.status, 409);
  e = await t.call(
    'datastore_create',
    { resource: { package_id: 'ds-public' }, fields: [{ id: '_a', type: 'int' }] },
    { token: editor.token },
  );
  assert.deepEqual(e.body.error!.fields, ['"_a" is not a valid field name']);
  e = await t.call(
    'datastore_create',
    { resource: { package_id: 'ds-public' }, fields: [{ id: 'a' }, { id: 'a' }] },
    { token: editor.token },
  );
  assert.deepEqual(e.body.error!.field, ['Duplicate column names are not supported']);
  e = await t.call('datastore_create', { resource: { package_id: 'ds-public' }, fields: [{ id: 'a' }] }, { token: editor.token });
  assert.deepEqual(e.body.error!.fields, ['"a" type not guessable']);
  e = await t.call('datastore_create', { fields: [] }, { token: editor.token });
  assert.deepEqual(e.body.error!.resource_id, ['resource_id or resource required']);
  e = await t.call(
    'datastore_create',
    { resource_id: r.resource_id, fields: [{ id: 'x', type: 'int' }], records: [{ x: 1, y: 2 }] },
    { token: editor.token },
  );
  assert.deepEqual(e.body.error!.records, ['row "1" has extra keys "y"']);
  // arrays of all spellings
  const a = await newTable({
    fields: [
      { id: 'a', type: '_int4' },
      { id: 'b', type: 'int[]' },
      { id: 'c', type: 'float[2]' },
    ],
    records: [{ a: [1], b: [2, 3], c: [1.5, 2] }],
  });
  const sa = await search({ resource_id: a });
  assert.deepEqual(
    sa.fields.map((f: any) => f.type),
    ['int', '_int4', '_int4', '_float8'],
  );
  assert.deepEqual(sa.records[0], { _id: 1, a: [1], b: [2, 3], c: [1.5, 2] });
});

async function people(): Promise<string> {
  return newTable({
    fields: [
      { id: 'name', type: 'text' },
      { id: 'age', type: 'int' },
      { id: 'city', type: 'text' },
      { id: 'bio', type: 'text' },
    ],
    records: [
      { name: 'Ann', age: 30, city: 'Paris', bio: 'likes running in the parks' },
      { name: 'Bob', age: 25, city: 'Berlin', bio: 'a runner and a cook' },
      { name: 'Cid', age: 35, city: 'Paris', bio: 'cooks pasta' },
      { name: 'Dee', age: 25, city: 'Rome', bio: null },
    ],
  });
}

test('filters, q, full_text, sort, fields, distinct, limit, offset, formats', async () => {
  const id = await people();
  let r = await search({ resource_id: id, filters: { city: 'Paris' } });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Ann', 'Cid'],
  );
  assert.equal(r.total, 2);
  assert.deepEqual(r.filters, { city: 'Paris' });
  r = await search({ resource_id: id, filters: { city: ['Rome', 'Berlin'], age: 25 } });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Bob', 'Dee'],
  );
  r = await search({ resource_id: id, filters: { _id: 3 } });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Cid'],
  );
  r = await search({ resource_id: id, q: 'running' });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Ann'],
  ); // 'runner' is another word
  assert.equal(r.fields.at(-1).id, 'rank');
  assert.equal(typeof r.records[0].rank, 'number');
  r = await search({ resource_id: id, q: 'run' }); // no prefix matching in plain mode
  assert.ok(r.records.every((x: any) => x.name !== 'Bob') || r.records.length >= 1);
  r = await search({ resource_id: id, q: 'pari:*', plain: false });
  assert.deepEqual(r.records.map((x: any) => x.name).sort(), ['Ann', 'Cid']);
  r = await search({ resource_id: id, q: { city: 'rome' } });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Dee'],
  );
  assert.ok(r.fields.some((f: any) => f.id === 'rank city'));
  r = await search({ resource_id: id, full_text: 'pasta' });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Cid'],
  );
  r = await search({ resource_id: id, sort: 'age desc, name', fields: 'name,age' });
  assert.deepEqual(r.records, [
    { name: 'Cid', age: 35 },
    { name: 'Ann', age: 30 },
    { name: 'Bob', age: 25 },
    { name: 'Dee', age: 25 },
  ]);
  assert.deepEqual(r.fields, [
    { id: 'name', type: 'text' },
    { id: 'age', type: 'int4' },
  ]);
  r = await search({ resource_id: id, sort: ['"age" asc nulls last', 'name desc'], fields: ['name'] });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Dee', 'Bob', 'Ann', 'Cid'],
  );
  r = await search({ resource_id: id, fields: ['city'], distinct: true, sort: 'city' });
  assert.deepEqual(r.records, [{ city: 'Berlin' }, { city: 'Paris' }, { city: 'Rome' }]);
  assert.equal(r.total, 3);
  r = await search({ resource_id: id, limit: 1, offset: 2 });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Cid'],
  );
  assert.equal(r.total, 4);
  assert.deepEqual(r._links, {
    start: '/api/3/action/datastore_search',
    next: '/api/3/action/datastore_search?offset=3',
    prev: '/api/3/action/datastore_search?offset=1',
  });
  r = await search({ resource_id: id, limit: 100000 });
  assert.equal(r.limit, 32000);
  r = await search({ resource_id: id, limit: 0 });
  assert.deepEqual(r.records, []);
  assert.equal(r.total, 4);
  r = await search({ resource_id: id, include_total: false, limit: 1 });
  assert.equal('total' in r, false);
  assert.equal('total_was_estimated' in r, false);
  r = await search({ resource_id: id, records_format: 'lists', fields: 'name,age', limit: 2 });
  assert.deepEqual(r.records, [
    ['Ann', 30],
    ['Bob', 25],
  ]);
  r = await search({ resource_id: id, records_format: 'csv', fields: 'name,bio', limit: 2 });
  assert.equal(r.records, 'Ann,likes running in the parks\nBob,a runner and a cook\n');
  r = await search({ resource_id: id, records_format: 'tsv', fields: 'name,bio', filters: { name: 'Dee' } });
  assert.equal(r.records, 'Dee\t\n');
  // GET, with _links built from the query string
  const g = await t.call(
    'datastore_search',
    { resource_id: id, limit: '2', filters: JSON.stringify({ city: 'Paris' }), q: '{"bio": "pasta"}' },
    { method: 'GET' },
  );
  assert.equal(g.status, 200);
  assert.deepEqual(
    g.body.result.records.map((x: any) => x.name),
    ['Cid'],
  );
  assert.match(g.body.result._links.next, /^\/api\/3\/action\/datastore_search\?resource_id=.*&limit=2&.*offset=2$/);
});

test('unknown fields, sort columns, filter keys and parameters are 409 invalid value', async () => {
  const id = await people();
  const bad = async (data: Record<string, unknown>, key: string, value: string) => {
    const r = await t.call('datastore_search', { resource_id: id, ...data }, { token: editor.token });
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.error!.__type, 'Validation Error');
    assert.deepEqual(r.body.error![key], [`invalid value "${value}"`]);
  };
  await bad({ sort: 'x' }, 'sort', 'x');
  await bad({ sort: 'name, nope desc' }, 'sort', 'nope');
  await bad({ fields: ['name', 'zzz'] }, 'fields', 'zzz');
  await bad({ filters: { zzz: 1 } }, 'filters', 'zzz');
  await bad({ q: { zzz: 'a' } }, 'q', 'zzz');
  await bad({ offset: -1 }, 'offset', '-1');
  await bad({ language: 'klingon', q: 'x' }, 'language', 'klingon');
  await bad({ foo: 1 }, '__extras', 'foo');
  const r = await t.call('datastore_search', { resource_id: 'no-such-table' });
  assert.equal(r.status, 404);
});

test('upsert: insert, update, upsert by primary key and by _id, dry_run, errors', async () => {
  const id = await newTable({
    fields: [
      { id: 'code', type: 'text' },
      { id: 'v', type: 'int' },
    ],
    primary_key: 'code',
    records: [
      { code: 'a', v: 1 },
      { code: 'b', v: 2 },
    ],
  });
  await t.ok(
    'datastore_upsert',
    {
      resource_id: id,
      records: [
        { code: 'a', v: 10 },
        { code: 'c', v: 3 },
        { code: 'c', v: 30 },
      ],
    },
    { token: editor.token },
  );
  let r = await search({ resource_id: id, sort: 'code' });
  assert.deepEqual(
    r.records.map((x: any) => [x.code, x.v]),
    [
      ['a', 10],
      ['b', 2],
      ['c', 30],
    ],
  );
  assert.equal(r.total, 3);
  await t.ok('datastore_upsert', { resource_id: id, method: 'update', records: [{ code: 'b', v: 20 }] }, { token: editor.token });
  let e = await t.call('datastore_upsert', { resource_id: id, method: 'update', records: [{ code: 'zz', v: 1 }] }, { token: editor.token });
  assert.equal(e.status, 409);
  assert.deepEqual(e.body.error!.key, ['key "["zz"]" not found']);
  e = await t.call('datastore_upsert', { resource_id: id, method: 'insert', records: [{ code: 'a', v: 1 }] }, { token: editor.token });
  assert.equal(e.status, 409);
  assert.deepEqual(e.body.error!.constraints, ['Cannot insert records or create indexbecause of uniqueness constraint']);
  e = await t.call('datastore_upsert', { resource_id: id, records: [{ v: 1 }] }, { token: editor.token });
  assert.deepEqual(e.body.error!.key, ['fields "code" are missing but needed as key']);
  e = await t.call('datastore_upsert', { resource_id: id, records: [{ code: 'q', nope: 1 }] }, { token: editor.token });
  assert.deepEqual(e.body.error!.fields, ['fields "nope" do not exist']);
  const dry = await t.ok('datastore_upsert', { resource_id: id, records: [{ code: 'dry', v: 1 }], dry_run: true }, { token: editor.token });
  assert.equal(dry.dry_run, true);
  r = await search({ resource_id: id, sort: 'code' });
  assert.deepEqual(
    r.records.map((x: any) => [x.code, x.v]),
    [
      ['a', 10],
      ['b', 20],
      ['c', 30],
    ],
  );
  assert.equal(r.total, 3);
  e = await t.call(
    'datastore_upsert',
    { resource_id: id, records: [{ code: 'x', v: 'notanint' }], dry_run: true },
    { token: editor.token },
  );
  assert.equal(e.status, 409);
  // no primary key: update and upsert are refused (test/datastore-correctness.test.ts)
  const id2 = await newTable({ fields: [{ id: 'v', type: 'int' }], records: [{ v: 1 }, { v: 2 }] });
  e = await t.call('datastore_upsert', { resource_id: id2, records: [{ _id: 2, v: 22 }, { v: 3 }] }, { token: editor.token });
  assert.deepEqual(e.body.error!.table, ['table does not have a unique key defined']);
  r = await search({ resource_id: id2 });
  assert.deepEqual(r.records, [
    { _id: 1, v: 1 },
    { _id: 2, v: 2 },
  ]);
  e = await t.call('datastore_upsert', { resource_id: randomUUID(), records: [] }, { token: sys });
  assert.equal(e.status, 404);
});

test('a failed write rolls back whole and names the row and field', async () => {
  const id = await newTable({
    fields: [
      { id: 'n', type: 'int' },
      { id: 's', type: 'text' },
    ],
  });
  const records = Array.from({ length: 10000 }, (_, i) => ({ n: i, s: `row ${i}` }));
  (records[9000] as any).n = 'abc';
  for (const method of ['insert', 'upsert']) {
    const e = await t.call('datastore_upsert', { resource_id: id, method, records }, { token: editor.token });
    assert.equal(e.status, 409);
    assert.equal(e.body.error!.__type, 'Validation Error');
    if (method === 'insert') {
      assert.equal(e.body.error!.records_row, 9000);
      assert.match(e.body.error!.records[0], /integer/);
      assert.match(e.body.error!.records[0], /"n"/);
    }
  }
  const e = await t.call('datastore_create', { resource_id: id, records }, { token: editor.token });
  assert.equal(e.body.error!.records_row, 9000);
  const r = await search({ resource_id: id });
  assert.equal(r.total, 0);
  assert.deepEqual(r.records, []);
  // a value that does not fit is a Validation Error too
  const e2 = await t.call('datastore_upsert', { resource_id: id, method: 'insert', records: [{ n: 2 ** 40 }] }, { token: editor.token });
  assert.equal(e2.status, 409);
  assert.equal(e2.body.error!.records_row, 0);
  // and good data goes in
  records[9000].n = 9000;
  await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records }, { token: editor.token });
  assert.equal((await search({ resource_id: id, limit: 0 })).total, 10000);
});

test('delete with filters, records_delete, drop clears datastore_active', async () => {
  const id = await people();
  let d = await t.ok('datastore_delete', { resource_id: id, filters: { city: 'Paris' } }, { token: editor.token });
  assert.deepEqual(d, { resource_id: id, filters: { city: 'Paris' } });
  assert.equal((await search({ resource_id: id })).total, 2);
  let e = await t.call('datastore_records_delete', { resource_id: id }, { token: editor.token });
  assert.equal(e.status, 409);
  e = await t.call('datastore_delete', { resource_id: id, filters: 'x' }, { token: editor.token });
  assert.deepEqual(e.body.error!.filters, ['filters must be either a dict or null.']);
  d = await t.ok('datastore_records_delete', { resource_id: id, filters: {} }, { token: editor.token });
  assert.equal((await search({ resource_id: id })).total, 0);
  await t.ok('datastore_create', { resource_id: id, aliases: 'people-alias' }, { token: editor.token });
  d = await t.ok('datastore_delete', { resource_id: id }, { token: editor.token });
  assert.deepEqual(d, { resource_id: id });
  assert.equal((await t.ok('resource_show', { id })).datastore_active, false);
  assert.equal((await t.call('datastore_search', { resource_id: id })).status, 404);
  assert.equal((await t.call('datastore_search', { resource_id: 'people-alias' })).status, 404);
});

test('aliases, datastore_info, calculate_record_count, estimation', async () => {
  const id = await people();
  await t.ok(
    'datastore_create',
    { resource_id: id, aliases: ['people', 'folk'], indexes: 'city', calculate_record_count: true },
    { token: editor.token },
  );
  let r = await search({ resource_id: 'people', filters: { city: 'Rome' } });
  assert.equal(r.resource_id, id);
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['Dee'],
  );
  const meta = await t.ok('datastore_search', { resource_id: '_table_metadata', filters: { alias_of: id } });
  assert.deepEqual(meta.records.map((x: any) => x.name).sort(), ['folk', 'people']);
  let info = await t.ok('datastore_info', { id: 'folk' }, { method: 'GET' });
  assert.equal(info.meta.id, id);
  assert.equal(info.meta.count, 4);
  assert.equal(info.meta.table_type, 'BASE TABLE');
  assert.deepEqual(info.meta.aliases, ['folk', 'people']);
  assert.ok(info.meta.size > 0 && info.meta.db_size > 0 && info.meta.idx_size > 0);
  assert.deepEqual(
    info.fields.map((f: any) => f.id),
    ['name', 'age', 'city', 'bio'],
  );
  const city = info.fields.find((f: any) => f.id === 'city');
  assert.equal(city.schema.is_index, true);
  assert.equal(city.schema.native_type, 'text');
  // replace aliases; an alias name in use elsewhere is refused
  await t.ok('datastore_create', { resource_id: id, aliases: 'folk2' }, { token: editor.token });
  info = await t.ok('datastore_info', { resource_id: id });
  assert.deepEqual(info.meta.aliases, ['folk2']);
  const other = await people();
  const e = await t.call('datastore_create', { resource_id: other, aliases: 'folk2' }, { token: editor.token });
  assert.deepEqual(e.body.error!.aliases, ['The alias "folk2" already exists.']);
  const e2 = await t.call('datastore_create', { resource_id: other, aliases: 'bad"alias' }, { token: editor.token });
  assert.deepEqual(e2.body.error!.aliases, ['"bad"alias" is not a valid alias name']);
  // adding fields keeps aliases working
  await t.ok(
    'datastore_create',
    { resource_id: id, fields: [{ id: 'extra', type: 'text' }], records: [{ name: 'Eve', extra: 'x' }] },
    { token: editor.token },
  );
  r = await search({ resource_id: 'folk2', filters: { name: 'Eve' } });
  assert.equal(r.records[0].extra, 'x');
  // estimation from planner statistics
  r = await search({ resource_id: id, total_estimation_threshold: 2 });
  assert.equal(r.total_was_estimated, true);
  assert.equal(typeof r.total, 'number');
  r = await search({ resource_id: id, total_estimation_threshold: 1000 });
  assert.equal(r.total_was_estimated, false);
  assert.equal(r.total, 5);
  r = await search({ resource_id: id, total_estimation_threshold: 2, filters: { city: 'Paris' } });
  assert.equal(r.total_was_estimated, false);
  assert.equal(r.total, 2);
  // delete_fields drops unlisted columns
  await t.ok(
    'datastore_create',
    { resource_id: id, fields: [{ id: 'name' }, { id: 'age' }], delete_fields: true },
    { token: editor.token },
  );
  r = await search({ resource_id: 'folk2', limit: 1 });
  assert.deepEqual(
    r.fields.map((f: any) => f.id),
    ['_id', 'name', 'age'],
  );
});

test('trigger functions: sysadmin only, applied on write and by run_triggers', async () => {
  const def = { name: 'ds_upper_name', rettype: 'trigger', definition: 'BEGIN NEW.name := upper(NEW.name); RETURN NEW; END;' };
  let e = await t.call('datastore_function_create', def, { token: editor.token });
  assert.equal(e.status, 403);
  e = await t.call('datastore_function_create', { ...def, rettype: 'void' }, { token: sys });
  assert.equal(e.status, 409);
  assert.equal(await t.ok('datastore_function_create', def, { token: sys }), null);
  e = await t.call('datastore_function_create', def, { token: sys });
  assert.equal(e.status, 409);
  await t.ok('datastore_function_create', { ...def, or_replace: true }, { token: sys });
  const id = await newTable({ fields: [{ id: 'name', type: 'text' }], records: [{ name: 'before' }] });
  await t.ok(
    'datastore_create',
    { resource_id: id, triggers: [{ function: 'ds_upper_name' }], records: [{ name: 'after' }] },
    { token: editor.token },
  );
  let r = await search({ resource_id: id });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['before', 'AFTER'],
  );
  assert.equal(await t.ok('datastore_run_triggers', { resource_id: id }, { token: sys }), 2);
  r = await search({ resource_id: id });
  assert.deepEqual(
    r.records.map((x: any) => x.name),
    ['BEFORE', 'AFTER'],
  );
  e = await t.call('datastore_create', { resource_id: id, triggers: [{ function: 'no_such_fn' }] }, { token: editor.token });
  assert.equal(e.status, 409);
  await t.ok('datastore_create', { resource_id: id, triggers: [] }, { token: editor.token });
  assert.equal(await t.ok('datastore_function_delete', { name: 'ds_upper_name' }, { token: sys }), null);
  e = await t.call('datastore_function_delete', { name: 'ds_upper_name' }, { token: sys });
  assert.equal(e.status, 404);
});

test('read-only resources need force; auth on writes and private reads', async () => {
  const pkg = await t.ok('package_show', { id: 'ds-public' });
  const res = await t.ok(
    'resource_create',
    { package_id: pkg.id, url: 'http://example.org/data.csv', name: 'file' },
    { token: editor.token },
  );
  let e = await t.call('datastore_create', { resource_id: res.id, fields: [{ id: 'a', type: 'int' }] }, { token: editor.token });
  assert.equal(e.status, 409);
  assert.deepEqual(e.body.error!['read-only'], [
    'Cannot edit read-only resource because changes made may be lost. Use a resource created for editing e.g. with datastore_create or use "force=True" to ignore this warning.',
  ]);
  await t.ok(
    'datastore_create',
    { resource_id: res.id, force: true, fields: [{ id: 'a', type: 'int' }], records: [{ a: 1 }] },
    { token: editor.token },
  );
  e = await t.call('datastore_upsert', { resource_id: res.id, method: 'insert', records: [{ a: 2 }] }, { token: editor.token });
  assert.deepEqual(Object.keys(e.body.error!).includes('read-only'), true);
  e = await t.call('datastore_delete', { resource_id: res.id }, { token: editor.token });
  assert.equal(e.status, 409);
  assert.equal((await t.ok('resource_show', { id: res.id })).datastore_active, true);
  // outsiders may not write
  const id = await people();
  e = await t.call('datastore_upsert', { resource_id: id, method: 'insert', records: [{ name: 'X' }] }, { token: outsider.token });
  assert.equal(e.status, 403);
  e = await t.call('datastore_create', { resource: { package_id: 'ds-public' } }, { token: outsider.token });
  assert.equal(e.status, 403);
  e = await t.call('datastore_delete', { resource_id: id });
  assert.equal(e.status, 403);
  // private dataset: only readers of the dataset see the data
  const priv = await t.ok(
    'datastore_create',
    { resource: { package_id: 'ds-private' }, records: [{ secret: 's3cr3t' }] },
    { token: editor.token },
  );
  assert.equal((await t.call('datastore_search', { resource_id: priv.resource_id })).status, 403);
  assert.equal((await t.call('datastore_search', { resource_id: priv.resource_id }, { token: outsider.token })).status, 403);
  assert.equal((await t.call('datastore_info', { resource_id: priv.resource_id }, { token: outsider.token })).status, 403);
  assert.equal((await search({ resource_id: priv.resource_id })).records[0].secret, 's3cr3t');
  assert.equal((await t.call('datastore_search', { resource_id: priv.resource_id }, { token: sys })).status, 200);
  const dump = await t.app.inject({ method: 'GET', url: `/datastore/dump/${priv.resource_id}` });
  assert.equal(dump.statusCode, 404);
  assert.equal(dump.body, 'DataStore resource not found');
  const dump2 = await t.app.inject({ method: 'GET', url: `/datastore/dump/${priv.resource_id}`, headers: { authorization: editor.token } });
  assert.equal(dump2.statusCode, 200);
});

test('dumps: csv, tsv, json, xml, bom, search params', async () => {
  const id = await newTable({
    fields: [
      { id: 'name', type: 'text' },
      { id: 'n', type: 'numeric' },
      { id: 'tags', type: 'text[]' },
      { id: 'ok', type: 'bool' },
      { id: 'at', type: 'timestamp' },
    ],
    records: [
      { name: 'a,b', n: 1.5, tags: ['x', 'y'], ok: true, at: '2020-01-01 10:00:00' },
      { name: 'plain', n: null, tags: null, ok: false, at: null },
    ],
  });
  let r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}` });
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers['content-type'], 'text/csv; charset=utf-8');
  assert.equal(r.headers['content-disposition'], `attachment; filename="${id}.csv"`);
  assert.equal(r.body, '_id,name,n,tags,ok,at\r\n1,"a,b",1.5,"{x,y}",t,2020-01-01T10:00:00\n2,plain,,,f,\n');
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=tsv&bom=true&fields=name,n` });
  assert.equal(r.headers['content-type'], 'text/tab-separated-values; charset=utf-8');
  assert.equal(r.rawPayload.subarray(0, 3).toString('hex'), 'efbbbf');
  assert.equal(r.body.replace(/^\uFEFF/, ''), 'name\tn\r\na,b\t1.5\nplain\t\n');
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=json` });
  assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(
    r.body,
    '{\n  "fields": [{"id":"_id","type":"int"},{"id":"name","type":"text"},{"id":"n","type":"numeric"},{"id":"tags","type":"_text"},{"id":"ok","type":"bool"},{"id":"at","type":"timestamp"}],\n  "records": [\n    [1,"a,b",1.5,["x","y"],true,"2020-01-01T10:00:00"],\n    [2,"plain",null,null,false,null]\n]}\n',
  );
  assert.deepEqual(JSON.parse(r.body).records.length, 2);
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=xml&filters=${encodeURIComponent('{"name":"plain"}')}` });
  assert.equal(r.headers['content-type'], 'text/xml; charset=utf-8');
  assert.equal(
    r.body,
    '<data xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n<row _id="2"><name>plain</name><n xsi:nil="true" /><tags xsi:nil="true" /><ok>False</ok><at xsi:nil="true" /></row>\n</data>\n',
  );
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=xml&limit=1` });
  assert.match(r.body, /<tags><value key="0">x<\/value><value key="1">y<\/value><\/tags>/);
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?sort=nope` });
  assert.equal(r.statusCode, 400);
  assert.equal(r.body, 'sort: invalid value "nope"');
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?offset=1&limit=5` });
  assert.equal(r.body, '_id,name,n,tags,ok,at\r\n2,plain,,,f,\n');
  r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?q=plain` });
  assert.equal(r.body.split('\n')[1].split(',')[1], 'plain');
  r = await t.app.inject({ method: 'GET', url: '/datastore/dump/nope' });
  assert.equal(r.statusCode, 404);
});

test('large dump streams every row in order', async () => {
  const id = await newTable({ fields: [{ id: 'n', type: 'int' }] });
  const records = Array.from({ length: 25000 }, (_, i) => ({ n: i }));
  await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records }, { token: editor.token });
  const r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}` });
  const lines = r.body.split('\n').filter(Boolean);
  assert.equal(lines.length, 25001);
  assert.equal(lines[25000], '25000,24999');
  const j = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=json&sort=n desc&limit=12000` });
  const parsed = JSON.parse(j.body);
  assert.equal(parsed.records.length, 12000);
  assert.deepEqual(parsed.records[0], [25000, 24999]);
});

test('injection attempts reach SQL only as bound values or quoted identifiers', async () => {
  const evil = `x"; DROP TABLE "_svc_counts"; --`;
  const id = await newTable({
    fields: [
      { id: 'name', type: 'text' },
      { id: `we'ird; name`, type: 'text' },
    ],
    records: [{ name: 'safe', [`we'ird; name`]: `'; DROP TABLE x; --` }],
  });
  const probes: Record<string, unknown>[] = [
    { resource_id: evil },
    { resource_id: `${id}"; DELETE FROM "${id}"; --` },
    { resource_id: id, filters: { [evil]: 1 } },
    { resource_id: id, filters: { name: `' OR 1=1; --` } },
    { resource_id: id, filters: { name: [`') OR 1=1; --`, 'x'] } },
    { resource_id: id, sort: `name; DELETE FROM "${id}"` },
    { resource_id: id, sort: `"name"; DELETE FROM "${id}"; --"` },
    { resource_id: id, sort: `(SELECT 1)` },
    { resource_id: id, fields: [`name"; DELETE FROM "${id}"; --`] },
    { resource_id: id, q: { [`name"::text) OR true; --`]: 'x' } },
    { resource_id: id, q: `'); DELETE FROM "${id}"; --` },
    { resource_id: id, q: 'x', language: `english'::regconfig); DELETE FROM "${id}"; --` },
    { resource_id: id, q: `a & | !`, plain: false },
    { resource_id: id, distinct: true, fields: `name,${evil}` },
  ];
  for (const p of probes) {
    const r = await t.call('datastore_search', p, { token: editor.token });
    assert.ok(r.status === 200 || r.status === 404 || r.status === 409, `${JSON.stringify(p)} -> ${r.status} ${JSON.stringify(r.body)}`);
    if (p.filters && (p.filters as any).name) assert.equal(r.body.result.records.length, 0);
  }
  const w = await t.call('datastore_create', { resource_id: id, aliases: [evil] }, { token: editor.token });
  assert.equal(w.status, 409);
  const w2 = await t.call('datastore_create', { resource_id: id, fields: [{ id: evil, type: 'text' }] }, { token: editor.token });
  assert.equal(w2.status, 409); // field names cannot hold double quotes
  const odd = `x'); DELETE FROM t; --`;
  await t.ok(
    'datastore_create',
    { resource_id: id, fields: [{ id: odd, type: 'text', info: { notes: `'; DROP TABLE x; --` } }] },
    { token: editor.token },
  );
  await t.call(
    'datastore_upsert',
    { resource_id: id, method: 'insert', records: [{ [odd]: 'v', name: 'second' }] },
    { token: editor.token },
  );
  await t.ok('datastore_records_delete', { resource_id: id, filters: { [odd]: 'v' } }, { token: editor.token });
  await t.call(
    'datastore_create',
    { resource_id: id, primary_key: [evil], indexes: [`name); DROP TABLE "${id}"; --`] },
    { token: editor.token },
  );
  await t.call('datastore_delete', { resource_id: id, filters: { name: `' OR '1'='1` } }, { token: editor.token });
  await t.call(
    'datastore_function_create',
    { name: `f(); DROP TABLE "${id}"; --`, rettype: 'trigger', definition: 'BEGIN RETURN NEW; END;' },
    { token: sys },
  );
  await t.call('datastore_create', { resource_id: id, triggers: [{ function: `f(); DROP TABLE "${id}"; --` }] }, { token: editor.token });
  const r = await search({ resource_id: id });
  assert.equal(r.total, 1);
  assert.deepEqual(r.records[0].name, 'safe');
  assert.equal(r.records[0][`we'ird; name`], `'; DROP TABLE x; --`);
  const meta = await t.ok('datastore_search', { resource_id: '_table_metadata', limit: 1000 });
  assert.ok(meta.records.some((x: any) => x.name === id));
  // the read-only role cannot write, even through a search
  const ro = await t.call('datastore_search', { resource_id: id, q: 'x', language: 'english' }, { token: editor.token });
  assert.equal(ro.status, 200);
});

test('a table goes with its resource: resource_delete, package_delete, dataset_purge', async () => {
  const fields = [{ id: 'v', type: 'int' }];
  const gone = async (id: string) => {
    const r = await t.call('datastore_search', { resource_id: id }, { token: sys });
    assert.equal(r.status, 404, JSON.stringify(r.body));
    assert.equal(r.body.error?.__type, 'Not Found Error');
  };
  // resource_delete
  const a = await newTable({ fields, records: [{ v: 1 }] });
  await t.ok('resource_delete', { id: a }, { token: editor.token });
  await gone(a);
  // package_update leaving a resource out deletes it, and its table
  await t.ok('package_create', { name: 'ds-doomed', owner_org: 'ds-org' }, { token: editor.token });
  const mk = async () =>
    (await t.ok('datastore_create', { resource: { package_id: 'ds-doomed' }, fields, records: [{ v: 2 }] }, { token: editor.token }))
      .resource_id;
  const kept = await mk();
  const dropped = await mk();
  const pkg = await t.ok('package_show', { id: 'ds-doomed' }, { token: editor.token });
  await t.ok('package_update', { ...pkg, resources: pkg.resources.filter((r: any) => r.id === kept) }, { token: editor.token });
  await gone(dropped);
  assert.equal((await t.ok('datastore_search', { resource_id: kept }, { token: sys })).total, 1);
  // package_delete
  await t.ok('package_delete', { id: 'ds-doomed' }, { token: editor.token });
  await gone(kept);
  // dataset_purge
  await t.ok('package_create', { name: 'ds-purged', owner_org: 'ds-org' }, { token: editor.token });
  const p = (
    await t.ok('datastore_create', { resource: { package_id: 'ds-purged' }, fields, records: [{ v: 3 }] }, { token: editor.token })
  ).resource_id;
  await t.ok('dataset_purge', { id: 'ds-purged' }, { token: sys });
  await gone(p);
  const ids = (await t.ok('datastore_search', { resource_id: '_table_metadata', limit: 1000 }, { token: sys })).records.map(
    (r: any) => r.name,
  );
  for (const id of [a, dropped, kept, p]) assert.ok(!ids.includes(id), `${id} still listed`);
});

test('csv and tsv dumps quote like CSV and take filter values literally', async () => {
  const hostile = ["it's", "back\\'slash", '$1', 'line\nbreak', 'quote"d', '', '\\.', 'tab\there'];
  const id = await newTable({
    fields: [
      { id: 'v', type: 'text' },
      { id: 'c$1 odd', type: 'text' },
    ],
    records: [...hostile.map((v) => ({ v, 'c$1 odd': v })), { v: null, 'c$1 odd': null }],
  });
  const dump = async (qs: string) => (await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?${qs}` })).body;
  const csv = await dump('fields=v');
  assert.equal(csv, 'v\r\n"it\'s"\nback\\\'slash\n$1\n"line\nbreak"\n"quote""d"\n""\n"\\."\ntab\there\n\n'.replace('"it\'s"', "it's"));
  assert.equal(await dump('format=tsv&fields=v&limit=1&offset=7'), 'v\r\n"tab\there"\n');
  for (const v of hostile) {
    const filters = encodeURIComponent(JSON.stringify({ v, 'c$1 odd': [v, 'x'] }));
    const body = await dump(`fields=${encodeURIComponent('c$1 odd')}&filters=${filters}`);
    const rows = (await search({ resource_id: id, fields: 'c$1 odd', filters: { v, 'c$1 odd': [v, 'x'] }, records_format: 'csv' })).records;
    assert.equal(body, 'c$1 odd\r\n' + rows, `filter value ${JSON.stringify(v)}`);
    assert.notEqual(rows, '');
  }
  assert.equal((await search({ resource_id: id })).total, hostile.length + 1);
});

test('filtered totals: with the page, past the last page, with distinct and without total', async () => {
  const id = await newTable({
    fields: [
      { id: 'k', type: 'text' },
      { id: 'n', type: 'int' },
    ],
    records: Array.from({ length: 30 }, (_, i) => ({ k: i % 3 ? 'a' : 'b', n: i % 5 })),
  });
  const r1 = await search({ resource_id: id, filters: { k: 'a' }, limit: 5, sort: 'n desc' });
  assert.equal(r1.total, 20);
  assert.equal(r1.records.length, 5);
  assert.equal(r1.records[0].n, 4);
  assert.equal((await search({ resource_id: id, filters: { k: 'a' }, limit: 5, offset: 100 })).total, 20);
  assert.equal((await search({ resource_id: id, filters: { k: 'zz' } })).total, 0);
  assert.equal((await search({ resource_id: id, filters: { k: 'b' }, fields: 'k', distinct: true, limit: 1 })).total, 1);
  const r2 = await search({ resource_id: id, filters: { k: 'a' }, include_total: false, limit: 2 });
  assert.equal(r2.total, undefined);
  assert.deepEqual(Object.keys(r2.records[0]).sort(), ['_id', 'k', 'n']);
});

test('upsert by primary key: later records win, a bad value names its row, nothing is written', async () => {
  const id = await newTable({
    fields: [
      { id: 'code', type: 'text' },
      { id: 'n', type: 'int' },
    ],
    primary_key: 'code',
    records: [{ code: 'keep', n: 0 }],
  });
  const records: Record<string, unknown>[] = Array.from({ length: 3000 }, (_, i) => ({ code: `c${i % 2000}`, n: i }));
  records[2500] = { code: 'c2500', n: 'not a number' };
  const e = await t.call('datastore_upsert', { resource_id: id, records }, { token: editor.token });
  assert.equal(e.status, 409);
  assert.equal(e.body.error!.records_row, 2500);
  assert.match(e.body.error!.records[0], /integer/);
  assert.equal((await search({ resource_id: id })).total, 1);
  records[2500] = { code: 'c500', n: 2500 };
  await t.ok('datastore_upsert', { resource_id: id, records: [...records, { code: 'keep', n: 7 }] }, { token: editor.token });
  const r = await search({ resource_id: id, filters: { code: ['c500', 'c1999', 'keep'] }, sort: 'code' });
  assert.deepEqual(
    r.records.map((x: any) => [x.code, x.n]),
    [
      ['c1999', 1999],
      ['c500', 2500],
      ['keep', 7],
    ],
  );
  assert.equal(r.total, 3);
  assert.equal((await search({ resource_id: id, limit: 0 })).total, 2001);
});

test('a delete that fails after its handler keeps the table', async () => {
  const id = await newTable({ fields: [{ id: 'v', type: 'int' }], records: [{ v: 1 }] });
  const { ValidationError } = await import('../src/errors.ts');
  t.services.registry.chainAction('resource_delete', (next) => async (ctx, p) => {
    await next(ctx, p);
    if (p.id === id) throw new ValidationError({ id: ['refused by a plugin'] });
    return null;
  });
  assert.equal((await t.call('resource_delete', { id }, { token: editor.token })).status, 409);
  assert.equal((await search({ resource_id: id })).total, 1);
  assert.equal((await t.ok('resource_show', { id }, { token: editor.token })).datastore_active, true);
});
