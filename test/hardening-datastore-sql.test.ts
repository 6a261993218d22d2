// datastore_search never waits long behind a slow datastore_search_sql (issue 25, finding 11).
// PostgreSQL: SQL searches run on connections of their own. The embedded database runs one query
// at a time: a SQL search that has run svc.datastore.sqlsearch.embedded_yield_after is stopped
// when other data store requests wait, with a message saying why, and the data store answers them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

const ROWS = 2000;
// Four million md5s: many seconds on PGlite, a few on PostgreSQL.
const SLOW_SQL = (id: string) => `SELECT count(*) AS n FROM "${id}" a, "${id}" b WHERE md5(a.name || b.name) < '0'`;
let app: TestApp;
let big: string;
let small: string;

before(async () => {
  app = await startApp({
    config: {
      'svc.datastore.sqlsearch.enabled': true,
      'svc.datastore.sqlsearch.embedded_max_cost': 1e12,
      'svc.datastore.sqlsearch.embedded_yield_after': 300,
    },
  });
  await app.ok('organization_create', { name: 'hardening-ds-org' }, { token: app.sysadminToken });
  await app.ok('package_create', { name: 'hardening-ds', owner_org: 'hardening-ds-org' }, { token: app.sysadminToken });
  const create = async (name: string, n: number) =>
    (
      await app.ok(
        'datastore_create',
        {
          resource: { package_id: 'hardening-ds', name },
          fields: [
            { id: 'name', type: 'text' },
            { id: 'n', type: 'int' },
          ],
          records: Array.from({ length: n }, (_, i) => ({ name: `row ${i}`, n: i })),
        },
        { token: app.sysadminToken },
      )
    ).resource_id as string;
  big = await create('big', ROWS);
  small = await create('small', 10);
});
after(async () => {
  await app?.close();
});

test('datastore_search answers while a slow datastore_search_sql runs', { timeout: 180_000 }, async () => {
  let sqlDone = false;
  const started = Date.now();
  const sql = app.call('datastore_search_sql', { sql: SLOW_SQL(big) }, { token: app.sysadminToken }).finally(() => {
    sqlDone = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const asked = Date.now();
  const search = await app.call('datastore_search', { resource_id: small, limit: 3 });
  const waited = Date.now() - asked;
  const searchBeforeSql = !sqlDone;
  const status = await app.call('status_show', {});
  const sqlRes = await sql;
  const sqlTook = Date.now() - started;

  assert.equal(search.status, 200, JSON.stringify(search.body).slice(0, 300));
  assert.deepEqual(
    search.body.result.records.map((r: { n: number }) => r.n),
    [0, 1, 2],
  );
  assert.equal(status.status, 200);
  assert.ok(waited < 8000, `datastore_search waited ${waited} ms (the SQL search took ${sqlTook} ms)`);
  if (onPostgres) {
    assert.ok(searchBeforeSql, `datastore_search waited for the SQL search (${waited} ms)`);
    assert.equal(sqlRes.status, 200, JSON.stringify(sqlRes.body).slice(0, 300));
  } else {
    // Stopped to let the search go ahead, with a message that says so.
    assert.equal(sqlRes.status, 409, JSON.stringify(sqlRes.body).slice(0, 300));
    assert.match(sqlRes.body.error?.query[0], /stopped after 300 ms because other data store requests were waiting/);
  }
});

test('a SQL search alone is not stopped by the yield rule, and the data store works after a stop', { timeout: 180_000 }, async () => {
  // Nothing waits for the database: a query longer than embedded_yield_after runs to its end.
  const alone = await app.call(
    'datastore_search_sql',
    { sql: `SELECT count(*) AS n FROM "${big}" a, "${big}" b WHERE a.n < 400 AND md5(a.name || b.name) < '0'` },
    { token: app.sysadminToken },
  );
  assert.equal(alone.status, 200, JSON.stringify(alone.body).slice(0, 300));
  assert.equal(alone.body.result.records[0].n, 0);
  const info = await app.ok('datastore_search', { resource_id: big, limit: 1, sort: 'n desc' });
  assert.equal(info.total, ROWS);
  assert.equal(info.records[0].n, ROWS - 1);
});
