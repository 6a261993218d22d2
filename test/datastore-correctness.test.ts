// The data store under real use: parallel upserts of overlapping keys, values the database refuses
// as data, _table_metadata for callers who may not read everything, slow queries (time limits, other
// requests answered meanwhile), dumps of invalid queries, update/upsert without a unique key.
// Runs on PGlite and (with SVC_TEST_DATABASE_URL) PostgreSQL.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let sys: string;
const SQL_TIMEOUT_MS = 1500;
const SLOW_SQL = `SELECT count(*) FROM generate_series(1,25000) g WHERE md5(repeat(g::text,100000))=''`;

before(async () => {
  t = await startApp({ config: { 'svc.datastore.sqlsearch.enabled': true, 'svc.datastore.sqlsearch.timeout': SQL_TIMEOUT_MS } });
  sys = t.sysadminToken;
  editor = await t.user('dc_editor');
  outsider = await t.user('dc_outsider');
  const org = randomUUID();
  await t.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'dc-org', 'DC', 'organization', true)",
    [org],
  );
  await t.services.db.query("INSERT INTO members (id, group_id, table_name, table_id, capacity) VALUES ($1, $2, 'user', $3, 'editor')", [
    randomUUID(),
    org,
    editor.id,
  ]);
  await t.ok('package_create', { name: 'dc-public', owner_org: 'dc-org' }, { token: editor.token });
  await t.ok('package_create', { name: 'dc-private', owner_org: 'dc-org', private: true }, { token: editor.token });
});
after(async () => {
  await t?.close();
});

async function newTable(body: Record<string, unknown>, pkg = 'dc-public'): Promise<string> {
  return (await t.ok('datastore_create', { resource: { package_id: pkg, name: 'table' }, ...body }, { token: editor.token })).resource_id;
}

const upsert = (body: Record<string, unknown>) => t.call('datastore_upsert', body, { token: editor.token });

function shuffled<T>(list: T[]): T[] {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

test('parallel upserts of overlapping keys all succeed and leave the right table', async () => {
  const id = await newTable({
    fields: [
      { id: 'k', type: 'int' },
      { id: 'who', type: 'int' },
      { id: 'pad', type: 'text' },
    ],
    primary_key: ['k'],
  });
  // 20 clients on PostgreSQL (8 on PGlite, where writes take turns anyway).
  const CLIENTS = onPostgres ? 20 : 8;
  // Client c writes keys [4c, 4c + 120) in its own random order: every key is written by many clients.
  const windows = Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: 120 }, (_, i) => 4 * c + i));
  for (let round = 0; round < 2; round++) {
    const results = await Promise.all(
      windows.map((keys, c) =>
        upsert({ resource_id: id, method: 'upsert', records: shuffled(keys).map((k) => ({ k, who: c, pad: `r${round}` })) }),
      ),
    );
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body.error));
  }
  // A second shape of batch (some records without pad) goes another way: also in parallel.
  const mixed = await Promise.all(
    windows
      .slice(0, 8)
      .map((keys, c) =>
        upsert({ resource_id: id, records: shuffled(keys).map((k, i) => (i % 3 ? { k, who: c, pad: 'm' } : { k, who: c })) }),
      ),
  );
  for (const r of mixed) assert.equal(r.status, 200, JSON.stringify(r.body.error));
  const all = await t.ok('datastore_search', { resource_id: id, limit: 1000, sort: 'k' }, { token: editor.token });
  const expected = [...new Set(windows.flat())].sort((a, b) => a - b);
  assert.equal(all.total, expected.length);
  assert.deepEqual(
    all.records.map((r: any) => r.k),
    expected,
  );
  for (const r of all.records) {
    assert.ok(windows[r.who].includes(r.k), `key ${r.k} written by client ${r.who}, which never wrote it`);
  }
  const info = await t.ok('datastore_info', { resource_id: id }, { token: editor.token });
  assert.equal(info.meta.count, expected.length);
});

test('parallel datastore_create of the same alias and the same new table: no 500', async () => {
  const ids = await Promise.all([1, 2, 3, 4].map(() => newTable({ fields: [{ id: 'v', type: 'int' }] })));
  const alias = `dc_alias_${randomUUID().slice(0, 8)}`;
  const rs = await Promise.all(
    ids.map((resource_id) => t.call('datastore_create', { resource_id, aliases: [alias] }, { token: editor.token })),
  );
  const won = rs.filter((r) => r.status === 200);
  assert.equal(won.length, 1, JSON.stringify(rs.map((r) => r.body.error)));
  for (const r of rs.filter((x) => x.status !== 200)) {
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error!.aliases, [`The alias "${alias}" already exists.`]);
  }
  // The same new resource's table, created by several calls at once.
  const res = await t.ok(
    'resource_create',
    { package_id: 'dc-public', url: '', url_type: 'datastore', name: 'race' },
    { token: editor.token },
  );
  const creates = await Promise.all(
    [1, 2, 3, 4].map((n) =>
      t.call('datastore_create', { resource_id: res.id, fields: [{ id: 'v', type: 'int' }], records: [{ v: n }] }, { token: editor.token }),
    ),
  );
  for (const r of creates) assert.equal(r.status, 200, JSON.stringify(r.body.error));
  const s = await t.ok('datastore_search', { resource_id: res.id, sort: 'v' }, { token: editor.token });
  assert.deepEqual(
    s.records.map((r: any) => r.v),
    [1, 2, 3, 4],
  );
});

test('values the database refuses as data are Validation Errors naming the field', async () => {
  const id = await newTable({
    fields: [
      { id: 'k', type: 'text' },
      { id: 'n', type: 'int' },
      { id: 'day', type: 'date' },
      { id: 's', type: 'text' },
      { id: 'x', type: 'numeric(4,1)' },
    ],
    primary_key: ['k'],
    records: [{ k: 'a', n: 1 }],
  });
  const bad: [string, Record<string, unknown>][] = [
    ['n', { k: 'a', n: 99999999999 }],
    ['n', { k: 'a', n: '12abc' }],
    ['day', { k: 'a', day: '2020-13-45' }],
    ['s', { k: 'a', s: 'nul \u0000 inside' }],
    ['x', { k: 'a', x: 123456 }],
  ];
  for (const method of ['insert', 'upsert', 'update']) {
    for (const [field, record] of bad) {
      const rec = method === 'insert' ? { ...record, k: `new-${method}` } : record;
      // Twice the same shape (the fast path), and alone with another shape before it (the grouped path).
      for (const records of [[rec], [{ k: 'a' }, rec]]) {
        const e = await upsert({ resource_id: id, method, records });
        assert.equal(e.status, 409, `${method} ${JSON.stringify(records)}: ${JSON.stringify(e.body)}`);
        assert.equal(e.body.error!.__type, 'Validation Error');
        assert.match(
          JSON.stringify(e.body.error),
          new RegExp(`\\\\"${field}\\\\"`),
          `${method} ${JSON.stringify(records)}: ${JSON.stringify(e.body.error)}`,
        );
      }
    }
  }
  for (const [field, record] of bad) {
    const e = await t.call('datastore_create', { resource_id: id, records: [{ ...record, k: 'c' }] }, { token: editor.token });
    assert.equal(e.status, 409, JSON.stringify(e.body));
    assert.match(JSON.stringify(e.body.error), new RegExp(`\\\\"${field}\\\\"`), JSON.stringify(e.body.error));
  }
  // Filters with such values: a Validation Error too.
  for (const filters of [{ n: 99999999999 }, { day: '2020-13-45' }, { s: 'a\u0000b' }]) {
    const d = await t.call('datastore_records_delete', { resource_id: id, filters: { k: 'a', ...filters } }, { token: editor.token });
    assert.equal(d.status, 409, JSON.stringify(d.body));
    assert.match(d.body.error!.filters[0], new RegExp(`"${Object.keys(filters)[0]}"`), JSON.stringify(d.body));
    const s = await t.call('datastore_search', { resource_id: id, filters }, { token: editor.token });
    assert.equal(s.status, 409, JSON.stringify(s.body));
  }
  const s = await t.ok('datastore_search', { resource_id: id }, { token: editor.token });
  assert.deepEqual(
    s.records.map((r: any) => [r.k, r.n]),
    [['a', 1]],
  );
});

test('a NUL in language, q or a dump id is a clean error', async () => {
  const id = await newTable({ fields: [{ id: 's', type: 'text' }], records: [{ s: 'hello world' }] });
  for (const body of [
    { q: 'hello', language: 'eng\u0000lish' },
    { q: 'hel\u0000lo' },
    { full_text: '\u0000' },
    { sort: 's\u0000' },
    { fields: 's\u0000' },
  ]) {
    for (const method of ['POST', 'GET'] as const) {
      const r = await t.call('datastore_search', { resource_id: id, ...body }, { token: editor.token, method });
      assert.ok(r.status === 409 || r.status === 400, `${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.success, false);
    }
  }
  // NUL in the names and texts datastore_create and datastore_function_create take.
  const writes: [string, Record<string, unknown>, string][] = [
    ['datastore_create', { resource_id: id, triggers: [{ function: 'f\u0000x' }] }, editor.token],
    ['datastore_create', { resource_id: id, primary_key: ['s\u0000'] }, editor.token],
    ['datastore_create', { resource_id: id, indexes: ['s\u0000'] }, editor.token],
    ['datastore_create', { resource_id: id, aliases: ['a\u0000'] }, editor.token],
    ['datastore_create', { resource_id: id, fields: [{ id: 't', type: 'te\u0000xt' }] }, editor.token],
    ['datastore_create', { resource_id: id, fields: [{ id: 's', info: { notes: 'n\u0000' } }] }, editor.token],
    ['datastore_upsert', { resource_id: id, method: 'insert', records: [{ 's\u0000': 1 }] }, editor.token],
    ['datastore_records_delete', { resource_id: id, filters: { 's\u0000': 1 } }, editor.token],
    ['datastore_function_create', { name: 'nul_fn', rettype: 'trigger', definition: 'BEGIN RETURN NEW; END;\u0000' }, sys],
    ['datastore_create', { resource_id: `${id}\u0000` }, editor.token],
  ];
  for (const [action, body, token] of writes) {
    const r = await t.call(action, body, { token });
    assert.ok(
      r.status === 200 || (r.status >= 400 && r.status < 500),
      `${action} ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`,
    );
  }
  for (const url of [
    `/datastore/dump/${id}%00`,
    `/datastore/dump/%00`,
    `/datastore/dump/${id}?q=a%00b`,
    `/datastore/dump/${id}?q=hello&language=x%00`,
    `/datastore/dump/${id}?filters=${encodeURIComponent('{"s":"a\u0000"}')}`,
    `/dataset/x%00/resource/${id}%00/download`,
  ]) {
    const r = await t.app.inject({ method: 'GET', url });
    assert.ok(r.statusCode >= 400 && r.statusCode < 500, `${url}: ${r.statusCode} ${r.body}`);
  }
});

test('_table_metadata lists only tables of resources the caller may read', async () => {
  const aliasPub = `dc_pub_${randomUUID().slice(0, 8)}`;
  const aliasPriv = `dc_priv_${randomUUID().slice(0, 8)}`;
  const pub = await newTable({ fields: [{ id: 'v', type: 'int' }], aliases: [aliasPub] });
  const priv = await newTable({ fields: [{ id: 'v', type: 'int' }], aliases: [aliasPriv] }, 'dc-private');
  const names = async (token: string | undefined, extra: Record<string, unknown> = {}) => {
    const r = await t.ok('datastore_search', { resource_id: '_table_metadata', limit: 32000, ...extra }, token ? { token } : {});
    return { names: r.records.map((x: any) => x.name) as string[], total: r.total as number };
  };
  for (const token of [undefined, outsider.token]) {
    const r = await names(token);
    assert.ok(r.names.includes(pub) && r.names.includes(aliasPub), 'public table and alias listed');
    assert.ok(!r.names.includes(priv) && !r.names.includes(aliasPriv), 'private table and alias not listed');
    assert.equal(r.total, r.names.length);
    const f = await names(token, { filters: { alias_of: priv } });
    assert.deepEqual(f.names, []);
    const dump = await t.app.inject({
      method: 'GET',
      url: '/datastore/dump/_table_metadata',
      headers: token ? { authorization: token } : {},
    });
    assert.ok(!dump.body.includes(priv) && !dump.body.includes(aliasPriv), dump.body);
  }
  for (const token of [editor.token, sys]) {
    const r = await names(token);
    assert.ok(r.names.includes(priv) && r.names.includes(aliasPriv));
  }
  // datastore_search_sql: the metadata view is not readable (nor the catalogs that would list the same).
  for (const token of [undefined, outsider.token]) {
    const r = await t.call('datastore_search_sql', { sql: 'SELECT name FROM _table_metadata' }, token ? { token } : {});
    assert.equal(r.status, 403, JSON.stringify(r.body));
    const a = await t.call('datastore_search_sql', { sql: `SELECT * FROM "${aliasPriv}"` }, token ? { token } : {});
    assert.equal(a.status, 403, JSON.stringify(a.body));
  }
});

test('a slow SQL search times out with the same error on both databases, and other requests are answered meanwhile', async () => {
  const id = await newTable({ fields: [{ id: 'v', type: 'int' }], records: [{ v: 1 }, { v: 2 }] });
  const started = Date.now();
  let slowDone = false;
  const slow = t.call('datastore_search_sql', { sql: SLOW_SQL }).finally(() => {
    slowDone = true;
  });
  // While it runs, the server answers other requests.
  await new Promise((r) => setTimeout(r, 300));
  const status = await t.call('status_show');
  assert.equal(status.status, 200);
  assert.equal(slowDone, false, `status_show was answered only after the slow query (${Date.now() - started} ms)`);
  const r = await slow;
  assert.equal(r.status, 409, JSON.stringify(r.body));
  assert.deepEqual(r.body.error!.query, ['Query took too long']);
  assert.ok(Date.now() - started < SQL_TIMEOUT_MS + 15000, `took ${Date.now() - started} ms`);
  // Nothing is broken: reads and writes work, committed rows are there.
  await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records: [{ v: 3 }] }, { token: editor.token });
  const s = await t.ok('datastore_search', { resource_id: id }, { token: editor.token });
  assert.deepEqual(
    s.records.map((x: any) => x.v),
    [1, 2, 3],
  );
  const q = await t.ok('datastore_search_sql', { sql: `SELECT sum(v)::int AS s FROM "${id}"` });
  assert.deepEqual(q.records, [{ s: 6 }]);
  const info = await t.ok('datastore_info', { resource_id: id }, { token: editor.token });
  assert.equal(info.meta.count, 3);
});

test('a dump of an invalid query answers an error before streaming', async () => {
  const id = await newTable({
    fields: [
      { id: 'n', type: 'int' },
      { id: 's', type: 'text' },
    ],
    records: [
      { n: 1, s: 'a' },
      { n: 2, s: 'b' },
    ],
  });
  const cases = [
    `filters=${encodeURIComponent('{"n":"abc"}')}`,
    `filters=${encodeURIComponent('{"nope":1}')}`,
    'filters=notjson',
    'fields=nope',
    'sort=nope',
    'sort=n%20sideways',
    'q=a&plain=false&language=nolang',
    `q=${encodeURIComponent('a & (')}&plain=false`,
    'limit=-1',
    'offset=x',
  ];
  for (const format of ['csv', 'tsv', 'json', 'xml']) {
    for (const qs of cases) {
      const r = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=${format}&${qs}` });
      assert.equal(r.statusCode, 400, `${format} ${qs}: ${r.statusCode} ${r.body}`);
      assert.ok(!r.body.startsWith('n,s') && !r.body.includes('"fields"'), r.body);
    }
  }
  const ok = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?filters=${encodeURIComponent('{"n":"2"}')}` });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.body, '_id,n,s\r\n2,2,b\n');
});

test('update and upsert need a unique key', async () => {
  const id = await newTable({ fields: [{ id: 'v', type: 'int' }], records: [{ v: 1 }, { v: 2 }] });
  for (const method of ['upsert', 'update']) {
    for (const records of [[{ v: 3 }], [{ _id: 1, v: 10 }], []]) {
      const e = await upsert({ resource_id: id, method, records });
      assert.equal(e.status, 409, `${method} ${JSON.stringify(records)}: ${JSON.stringify(e.body)}`);
      assert.deepEqual(e.body.error!.table, ['table does not have a unique key defined']);
    }
  }
  await t.ok('datastore_upsert', { resource_id: id, method: 'insert', records: [{ v: 3 }] }, { token: editor.token });
  const s = await t.ok('datastore_search', { resource_id: id }, { token: editor.token });
  assert.deepEqual(
    s.records.map((x: any) => x.v),
    [1, 2, 3],
  );
});
