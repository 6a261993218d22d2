// sql-guard.ts on its own: PostgreSQL's parser decides what the text is; the allow-list walk
// refuses whatever is not a plain read-only SELECT over data store tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardSql } from '../src/datastore/sql-guard.ts';
import { AuthorizationError, ValidationError } from '../src/errors.ts';

async function refused(sql: string, kind: 'validation' | 'auth', message: RegExp) {
  await assert.rejects(guardSql(sql), (e: unknown) => {
    if (kind === 'validation') {
      assert.ok(e instanceof ValidationError, `${sql}: expected a Validation Error, got ${e}`);
      assert.match(String((e.errors.query as string[])[0]), message, sql);
    } else {
      assert.ok(e instanceof AuthorizationError, `${sql}: expected an Authorization Error, got ${e}`);
      assert.match(e.message, message, sql);
    }
    return true;
  });
}

test('a plain SELECT passes and names the tables it reads', async () => {
  const r = await guardSql('SELECT a, count(*) FROM "6f1b" t JOIN public.other o USING (a) GROUP BY a ORDER BY 2 DESC LIMIT 5;');
  assert.deepEqual(r.tables.sort(), ['6f1b', 'other']);
  assert.equal(r.statement, 'SELECT a, count(*) FROM "6f1b" t JOIN public.other o USING (a) GROUP BY a ORDER BY 2 DESC LIMIT 5');
  assert.deepEqual(r.functions, ['count']);
});

test('several statements are refused, however they are smuggled', async () => {
  for (const sql of [
    'SELECT 1; SELECT 2',
    'SELECT 1; DELETE FROM t',
    // with standard_conforming_strings (PostgreSQL's default, forced by search-sql) \ is an ordinary character
    "SELECT 'a\\'; DELETE FROM t; --'",
    'SELECT 1;;SELECT 2',
  ])
    await refused(sql, 'validation', /^Query is not a single statement\.$/);
});

test('escapes, dollar quoting and comments stay inside the one statement', async () => {
  for (const sql of [
    "SELECT E'a\\'; DELETE FROM t; --'",
    'SELECT $$; DELETE FROM t; $$',
    'SELECT $q$ $$; DELETE FROM t; $q$',
    'SELECT 1 /* ; DELETE FROM t; /* nested */ still comment */',
    'SELECT 1 -- ; DELETE FROM t',
    "SELECT U&'\\0041'",
  ]) {
    const r = await guardSql(sql);
    assert.deepEqual(r.tables, [], sql);
  }
});

test('only SELECT: COPY, DML, DDL, EXPLAIN, SET, utility statements are refused', async () => {
  for (const sql of [
    'COPY t TO STDOUT',
    'DELETE FROM t',
    'INSERT INTO t VALUES (1)',
    'UPDATE t SET a = 1',
    'DROP TABLE t',
    'EXPLAIN SELECT 1',
    'SET ROLE postgres',
    'CREATE TABLE x (a int)',
    'VACUUM t',
    'DO $$BEGIN END$$',
    'CALL p()',
    "COPY (SELECT 1) TO PROGRAM 'id'",
    'BEGIN',
    'LISTEN x',
    'MERGE INTO t USING u ON true WHEN MATCHED THEN DELETE',
  ]) {
    await refused(sql, 'validation', /^Only a SELECT statement is allowed/);
  }
});

test('SELECT INTO, locking clauses and data-modifying CTEs are refused', async () => {
  await refused('SELECT * INTO newtable FROM t', 'validation', /SELECT \.\.\. INTO/);
  await refused('SELECT * FROM t FOR UPDATE', 'validation', /Locking clauses/);
  await refused('SELECT * FROM t FOR SHARE SKIP LOCKED', 'validation', /Locking clauses/);
  await refused('SELECT * FROM (SELECT * FROM t FOR KEY SHARE) x', 'validation', /Locking clauses/);
  await refused('WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', 'validation', /Data-modifying/);
  await refused('WITH d AS (UPDATE t SET a = 1 RETURNING *) SELECT 1', 'validation', /Data-modifying/);
  await refused('SELECT * FROM (WITH i AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM i) x', 'validation', /Data-modifying/);
});

test('system catalogs, other schemas and catalog-qualified names are refused', async () => {
  for (const sql of [
    'SELECT * FROM pg_class',
    'SELECT * FROM pg_catalog.pg_authid',
    'SELECT * FROM information_schema.tables',
    'SELECT * FROM PG_CATALOG.PG_CLASS',
    'SELECT (SELECT count(*) FROM pg_stat_activity)',
    'SELECT * FROM pg_toast.pg_toast_1',
    'SELECT * FROM x.pg_catalog.pg_class',
    'WITH c AS (SELECT * FROM pg_roles) SELECT * FROM c',
  ]) {
    await refused(sql, 'auth', /Not authorized to access system tables/);
  }
  await refused('SELECT * FROM secret.t', 'auth', /Not authorized to read resource\./);
  // A quoted upper-case name is another (ordinary) relation name: passed on to resource resolution.
  assert.deepEqual((await guardSql('SELECT * FROM "PG_CLASS"')).tables, ['PG_CLASS']);
});

test('functions outside the allow-list are refused, also qualified, nested or in FROM', async () => {
  for (const [sql, fn] of [
    ["SELECT pg_read_file('/etc/passwd')", 'pg_read_file'],
    ["SELECT pg_catalog.pg_read_file('/etc/passwd')", 'pg_read_file'],
    ["SELECT * FROM t WHERE a = (SELECT set_config('role', 'postgres', false))", 'set_config'],
    ["SELECT current_setting('data_directory')", 'current_setting'],
    ["SELECT query_to_xml('DELETE FROM t', true, true, '')", 'query_to_xml'],
    ["SELECT ts_rewrite('a'::tsquery, 'SELECT 1')", 'ts_rewrite'],
    ["SELECT xpath('/a', '<a/>')", 'xpath'],
    ['SELECT pg_sleep(100)', 'pg_sleep'],
    ['SELECT lo_import($$/etc/passwd$$)', 'lo_import'],
    ["SELECT * FROM dblink('host=x', 'select 1') AS x(a int)", 'dblink'],
    ['SELECT txid_current()', 'txid_current'],
    ['SELECT pg_terminate_backend(1)', 'pg_terminate_backend'],
    ["SELECT * FROM pg_ls_dir('.')", 'pg_ls_dir'],
    ["SELECT nextval('s')", 'nextval'],
    ['SELECT public.lower(a) FROM t', 'public.lower'],
    ['SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM t', 'pg_sleep'],
    ['SELECT sum(a) OVER (ORDER BY pg_backend_pid()) FROM t', 'pg_backend_pid'],
  ])
    await refused(sql, 'auth', new RegExp(`^Access denied: Not authorized to call function ${fn.replace('.', '\\.')}$`));
});

test('operators and casts stay built in: no other schema, no catalog types', async () => {
  await refused('SELECT 1 OPERATOR(public.+) 1', 'auth', /operator public\.\+/);
  await refused("SELECT 'pg_authid'::regclass", 'auth', /type regclass/);
  await refused("SELECT 'now'::pg_lsn", 'auth', /type pg_lsn/);
  await refused('SELECT 1::public.mytype', 'auth', /type public\.mytype/);
  const ok = await guardSql(
    "SELECT a OPERATOR(pg_catalog.+) 1, 'x' || 'y', '1'::int, date '2020-01-01', b::text[], interval '1' day FROM t",
  );
  assert.deepEqual(ok.tables, ['t']);
});

test('syntax outside the allow-list is refused without being named in advance', async () => {
  await refused('SELECT current_user', 'validation', /SVFOP_CURRENT_USER/);
  await refused('SELECT $1', 'validation', /parameters/);
  await refused("SELECT xmlelement(name a, 'x')", 'validation', /XML/);
  await refused('SELECT * FROM t TABLESAMPLE SYSTEM (10)', 'validation', /TABLESAMPLE/);
  await refused("SELECT json_object('a': 1)", 'validation', /JsonObjectConstructor/);
  await refused('SELECT FROM', 'validation', /syntax error|Not allowed/);
});

test('CTE names are not tables, but only where PostgreSQL says they are in scope', async () => {
  assert.deepEqual((await guardSql('WITH x AS (SELECT 1) SELECT * FROM x')).tables, []);
  // The CTE of a subquery does not hide the table of the same name outside it.
  assert.deepEqual((await guardSql('SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x) s, x')).tables, ['x']);
  // Non-recursive WITH: a CTE sees only earlier ones; a later name is a table.
  assert.deepEqual((await guardSql('WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a')).tables, ['b']);
  // Schema-qualified: always a table.
  assert.deepEqual((await guardSql('WITH x AS (SELECT 1) SELECT * FROM public.x')).tables, ['x']);
  const r = await guardSql('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r');
  assert.deepEqual(r.tables, []);
  assert.equal(r.recursive, true);
});

test('size generators with non-constant or huge arguments are reported (embedded gate)', async () => {
  assert.deepEqual((await guardSql('SELECT count(*) FROM generate_series(1, 1000)')).unboundedCalls, []);
  assert.deepEqual((await guardSql('SELECT count(*) FROM generate_series(1, (SELECT 10))')).unboundedCalls, ['generate_series']);
  assert.deepEqual((await guardSql("SELECT repeat('x', a) FROM t")).unboundedCalls, ['repeat']);
  assert.deepEqual((await guardSql("SELECT repeat('x', 100000000) FROM t")).unboundedCalls, ['repeat']);
  assert.deepEqual((await guardSql("SELECT lpad(a, 10, '0') FROM t")).unboundedCalls, []);
  assert.deepEqual((await guardSql("SELECT format('%*s', 1000000000, 'x')")).unboundedCalls, ['format']);
  // set-returning functions over values built by other calls: the planner's row guess is wrong
  assert.deepEqual(
    (await guardSql('SELECT count(*) FROM unnest(array_fill(1, ARRAY[1000000])) a, unnest(array_fill(1, ARRAY[1000000])) b'))
      .unboundedCalls,
    ['unnest'],
  );
  assert.deepEqual((await guardSql("SELECT regexp_split_to_table(repeat('a,', 1000), ',')")).unboundedCalls, ['regexp_split_to_table']);
  assert.deepEqual(
    (await guardSql("SELECT unnest(tags), jsonb_array_elements(doc::jsonb), unnest('{1,2}'::int[]) FROM t")).unboundedCalls,
    [],
  );
});

test('numbers the server might read differently (PostgreSQL < 16) are refused', async () => {
  for (const sql of ['SELECT 0x1F', 'SELECT 1_000', 'SELECT 0o17', 'SELECT 0b101', 'SELECT 1_000.5']) {
    await refused(sql, 'validation', /Numeric literal .* is not accepted/);
  }
  assert.deepEqual((await guardSql('SELECT 1000, 1.5e3, 2.5')).tables, []);
});
