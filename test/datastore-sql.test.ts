// datastore_search_sql over HTTP: result shape, joins and aliases, row limit, access per table,
// and attacks (escapes, smuggled statements, catalogs, forbidden functions, writes) with the data
// checked afterwards. Runs on PGlite and (with SVC_TEST_DATABASE_URL) PostgreSQL; the runaway
// query tests differ: PostgreSQL stops them by statement timeout, the embedded database refuses
// them before they run.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let pub: string; // public resource, 60 rows, columns name/n/Label/day
let other: string; // public resource joined with pub
let priv: string; // resource of a private dataset of ds-org
let big: string; // 1000 rows, for runaway cross joins
const ROWS_MAX = 50;

before(async () => {
  t = await startApp({
    config: { 'svc.datastore.sqlsearch.enabled': true, 'svc.datastore.search.rows_max': ROWS_MAX, 'svc.datastore.sqlsearch.timeout': 1500 },
  });
  editor = await t.user('sql_editor');
  outsider = await t.user('sql_outsider');
  const org = randomUUID();
  await t.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'sql-org', 'SQL', 'organization', true)",
    [org],
  );
  await t.services.db.query("INSERT INTO members (id, group_id, table_name, table_id, capacity) VALUES ($1, $2, 'user', $3, 'editor')", [
    randomUUID(),
    org,
    editor.id,
  ]);
  await t.ok('package_create', { name: 'sql-public', owner_org: 'sql-org' }, { token: editor.token });
  await t.ok('package_create', { name: 'sql-private', owner_org: 'sql-org', private: true }, { token: editor.token });
  const create = async (pkg: string, body: Record<string, unknown>) =>
    (await t.ok('datastore_create', { resource: { package_id: pkg, name: 't' }, ...body }, { token: editor.token })).resource_id as string;
  pub = await create('sql-public', {
    fields: [
      { id: 'name', type: 'text' },
      { id: 'n', type: 'int' },
      { id: 'Label', type: 'text' },
      { id: 'day', type: 'date' },
    ],
    records: Array.from({ length: 60 }, (_, i) => ({ name: `row${i}`, n: i, Label: i % 2 ? 'odd' : 'even', day: '2024-01-02' })),
    aliases: ['sql_pub_alias'],
  });
  other = await create('sql-public', {
    fields: [
      { id: 'n', type: 'int' },
      { id: 'sq', type: 'int8' },
    ],
    records: [
      { n: 2, sq: 4 },
      { n: 3, sq: 9 },
    ],
  });
  priv = await create('sql-private', { fields: [{ id: 'secret', type: 'text' }], records: [{ secret: 'hidden' }] });
  big = await create('sql-public', { fields: [{ id: 'x', type: 'int' }], records: Array.from({ length: 1000 }, (_, i) => ({ x: i })) });
});
after(async () => {
  await t?.close();
});

/** Calls datastore_search_sql as the editor, another user, or anonymously (token null). */
const sql = (q: string, token: string | null = editor.token) => t.call('datastore_search_sql', { sql: q }, { token: token ?? undefined });
const q = (s: string) => `"${s}"`;

async function assertDataIntact() {
  const r = await t.ok('datastore_search', { resource_id: pub, limit: 1 }, { token: editor.token });
  assert.equal(r.total, 60);
  const s = await t.ok('datastore_search', { resource_id: priv }, { token: editor.token });
  assert.deepEqual(
    s.records.map((x: any) => x.secret),
    ['hidden'],
  );
}

test('not available unless svc.datastore.sqlsearch.enabled', async () => {
  const plain = await startApp();
  try {
    const r = await plain.call('datastore_search_sql', { sql: 'SELECT 1' });
    assert.equal(r.status, 400);
    assert.match(r.body.error!.message, /Action name not known: datastore_search_sql/);
  } finally {
    await plain.close();
  }
});

test('a SELECT returns {sql, records, fields}; GET works too', async () => {
  const text = `SELECT name, n, "Label", day FROM ${q(pub)} WHERE n < 3 ORDER BY n`;
  const r = await sql(text);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.result, {
    sql: text,
    records: [
      { name: 'row0', n: 0, Label: 'even', day: '2024-01-02' },
      { name: 'row1', n: 1, Label: 'odd', day: '2024-01-02' },
      { name: 'row2', n: 2, Label: 'even', day: '2024-01-02' },
    ],
    fields: [
      { id: 'name', type: 'text' },
      { id: 'n', type: 'int4' },
      { id: 'Label', type: 'text' },
      { id: 'day', type: 'date' },
    ],
  });
  const g = await t.call('datastore_search_sql', { sql: `SELECT count(*) AS c FROM ${q(pub)}` }, { method: 'GET' });
  assert.deepEqual(g.body.result.records, [{ c: 60 }]);
  // A trailing semicolon and comments are fine: PostgreSQL's parser delimits the statement.
  const s = await sql(`SELECT 1 AS one; -- done`);
  assert.deepEqual(s.body.result.records, [{ one: 1 }]);
});

test('joins across resources, aliases, CTEs, window functions', async () => {
  const r = await sql(`WITH o AS (SELECT n, sq FROM ${q(other)})
    SELECT p.name, o.sq, rank() OVER (ORDER BY o.sq DESC) AS r FROM sql_pub_alias p JOIN o USING (n) ORDER BY p.n`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.result.records, [
    { name: 'row2', sq: 4, r: 2 },
    { name: 'row3', sq: 9, r: 1 },
  ]);
  assert.deepEqual(
    r.body.result.fields.map((f: any) => f.type),
    ['text', 'int8', 'int8'],
  );
});

test('at most rows_max rows, records_truncated only when cut', async () => {
  const cut = await sql(`SELECT n FROM ${q(pub)} ORDER BY n`);
  assert.equal(cut.body.result.records.length, ROWS_MAX);
  assert.equal(cut.body.result.records_truncated, true);
  const whole = await sql(`SELECT n FROM ${q(pub)} ORDER BY n LIMIT ${ROWS_MAX}`);
  assert.equal(whole.body.result.records.length, ROWS_MAX);
  assert.equal('records_truncated' in whole.body.result, false);
});

test('upper-case column names: unquoted fold and fail naming the column, quoted work', async () => {
  const bad = await sql(`SELECT Label FROM ${q(pub)}`);
  assert.equal(bad.status, 409);
  assert.equal(bad.body.error!.__type, 'Validation Error');
  assert.match(bad.body.error!.query[0], /column "label" does not exist/);
  const good = await sql(`SELECT "Label" FROM ${q(pub)} LIMIT 1`);
  assert.deepEqual(good.body.result.records, [{ Label: 'even' }]);
});

test('database errors are 409 {"query": [message]}', async () => {
  const r = await sql(`SELECT 1 / (n - n) FROM ${q(pub)}`);
  assert.equal(r.status, 409);
  assert.match(r.body.error!.query[0], /division by zero/);
  const missing = await sql('SELECT * FROM no_such_table');
  assert.equal(missing.status, 409);
  assert.match(missing.body.error!.query[0], /relation "no_such_table" does not exist/);
  const syntax = await sql('SELEC 1');
  assert.equal(syntax.status, 409);
  assert.match(syntax.body.error!.query[0], /syntax error/);
  const none = await t.call('datastore_search_sql', {});
  assert.equal(none.status, 409);
  assert.deepEqual(none.body.error!.sql, ['Missing value']);
});

test('access is checked for every table read: private resource of another organization', async () => {
  for (const text of [
    `SELECT * FROM ${q(priv)}`,
    `SELECT p.name FROM ${q(pub)} p WHERE EXISTS (SELECT 1 FROM ${q(priv)})`,
    `SELECT * FROM ${q(pub)} UNION ALL SELECT secret, 0, '', null FROM ${q(priv)}`,
    `WITH x AS (SELECT * FROM public.${q(priv)}) SELECT * FROM x`,
    // a CTE named like the private table in one scope does not hide the table in another
    `SELECT * FROM (WITH ${q(priv)} AS (SELECT 1) SELECT * FROM ${q(priv)}) a, ${q(priv)}`,
  ]) {
    for (const token of [outsider.token, null]) {
      const r = await sql(text, token);
      assert.equal(r.status, 403, `${text}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error!.message, 'Access denied: Not authorized to read resource.');
    }
  }
  const ok = await sql(`SELECT secret FROM ${q(priv)}`, editor.token);
  assert.deepEqual(ok.body.result.records, [{ secret: 'hidden' }]);
  const pubOk = await sql(`SELECT count(*) AS c FROM ${q(pub)}`, outsider.token);
  assert.deepEqual(pubOk.body.result.records, [{ c: 60 }]);
});

test('system catalogs and internal relations are 403', async () => {
  for (const text of [
    'SELECT * FROM pg_class',
    'SELECT * FROM pg_catalog.pg_authid',
    'SELECT * FROM information_schema.tables',
    `SELECT * FROM ${q(pub)} WHERE n IN (SELECT oid::int FROM pg_roles)`,
    'SELECT * FROM _table_metadata',
    'SELECT * FROM "_svc_counts"',
  ]) {
    const r = await sql(text);
    assert.equal(r.status, 403, `${text}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error!.message, 'Access denied: Not authorized to access system tables', text);
  }
  // Quoted upper case is another name: no such relation (PostgreSQL would say the same).
  const upper = await sql('SELECT * FROM "PG_CLASS"');
  assert.equal(upper.status, 409);
  assert.match(upper.body.error!.query[0], /relation "PG_CLASS" does not exist/);
});

test('injection and escape attempts are refused and change nothing', async () => {
  const cases: [string, number, RegExp][] = [
    [`SELECT 'x\\'; DELETE FROM ${q(pub)}; --'`, 409, /Query is not a single statement\./],
    [`SELECT * FROM ${q(pub)}; DELETE FROM ${q(pub)}`, 409, /Query is not a single statement\./],
    [`SELECT 1;;DROP TABLE ${q(pub)}`, 409, /Query is not a single statement\./],
    [`DELETE FROM ${q(pub)}`, 409, /Only a SELECT statement/],
    [`COPY ${q(pub)} TO STDOUT`, 409, /Only a SELECT statement/],
    [`COPY (SELECT 1) TO PROGRAM 'touch /tmp/svc_pwned'`, 409, /Only a SELECT statement/],
    [`SELECT * INTO sql_copy FROM ${q(pub)}`, 409, /SELECT \.\.\. INTO/],
    [`SELECT * FROM ${q(pub)} FOR UPDATE`, 409, /Locking clauses/],
    [`WITH d AS (DELETE FROM ${q(pub)} RETURNING *) SELECT count(*) FROM d`, 409, /Data-modifying/],
    [`SELECT pg_catalog.pg_read_file('/etc/passwd')`, 403, /Not authorized to call function pg_read_file/],
    [
      `SELECT * FROM ${q(pub)} WHERE n = (SELECT length(set_config('default_transaction_read_only', 'off', false)))`,
      403,
      /call function set_config/,
    ],
    [`SELECT query_to_xml('DELETE FROM ${q(pub)}', true, true, '')`, 403, /call function query_to_xml/],
    [`SELECT 1 OPERATOR(public.=) 1`, 403, /operator public\.=/],
    [`SELECT 'pg_authid'::regclass`, 403, /type regclass/],
    [`SELECT pg_sleep(10)`, 403, /call function pg_sleep/],
  ];
  for (const [text, status, message] of cases) {
    const r = await sql(text);
    assert.equal(r.status, status, `${text}: ${JSON.stringify(r.body)}`);
    const msg = r.body.error!.query?.[0] ?? r.body.error!.message;
    assert.match(msg, message, text);
  }
  // E'' escapes, dollar quoting and comments keep their contents inside one harmless statement.
  for (const [text, value] of [
    [`SELECT E'x\\'; DELETE FROM ${q(pub)}; --' AS v`, `x'; DELETE FROM ${q(pub)}; --`],
    [`SELECT $$; DELETE FROM ${q(pub)}; $$ AS v`, `; DELETE FROM ${q(pub)}; `],
    [`SELECT $t$'$$; DROP TABLE x; $t$ AS v`, `'$$; DROP TABLE x; `],
    [`SELECT 'a\\' AS v /* ; DELETE FROM ${q(pub)}; */`, 'a\\'],
  ]) {
    const r = await sql(text);
    assert.equal(r.status, 200, `${text}: ${JSON.stringify(r.body)}`);
    assert.deepEqual(r.body.result.records, [{ v: value }], text);
  }
  await assertDataIntact();
  const made = await sql('SELECT * FROM sql_copy');
  assert.match(made.body.error!.query[0], /relation "sql_copy" does not exist/);
});

test('runaway queries do not hang the server', async () => {
  const cases = [
    'SELECT count(*) FROM generate_series(1, 1e9)',
    `SELECT count(*) FROM ${q(big)} a, ${q(big)} b, ${q(big)} c`,
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
    `SELECT count(*) FROM ${q(big)}, generate_series(1, (SELECT 100000000))`,
    // LIMIT scales the estimated cost down by the rows it expects to need; a filter that never matches defeats that
    `SELECT a.x FROM ${q(big)} a, ${q(big)} b, ${q(big)} c WHERE a.x + b.x + c.x = -1 LIMIT 1`,
    // set-returning functions over built arrays: the planner guesses 100 rows each
    'SELECT count(*) FROM unnest(array_fill(1, ARRAY[1000000])) a, unnest(array_fill(1, ARRAY[1000000])) b',
  ];
  for (const text of cases) {
    const started = Date.now();
    const r = await sql(text);
    const ms = Date.now() - started;
    assert.equal(r.status, 409, `${text}: ${JSON.stringify(r.body)}`);
    if (onPostgres) {
      // Stopped by the statement timeout (1500 ms in this app).
      assert.deepEqual(r.body.error!.query, ['Query took too long'], text);
    } else {
      // Refused before running: PGlite cannot stop a running query.
      assert.match(
        r.body.error!.query[0],
        /too expensive for the embedded database|WITH RECURSIVE is not available|must be called with plain arguments/,
        text,
      );
      assert.ok(ms < 1500, `${text} took ${ms} ms`);
    }
  }
  // The server still answers, and a modest query still runs.
  const r = await sql(`SELECT count(*) AS c FROM ${q(big)} a, ${q(big)} b WHERE a.x = b.x`);
  assert.deepEqual(r.body.result.records, [{ c: 1000 }]);
  await assertDataIntact();
});
