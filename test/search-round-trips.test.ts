// package_search is bounded by svc.search.timeout without a transaction per statement on
// PostgreSQL: its statements run on connections whose sessions carry the timeout, one round trip
// each (before: BEGIN with SET LOCAL, the statement, COMMIT). The timeout itself is tested in
// hardening-catalog-timeout.test.ts.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
const admin = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.search.timeout': 7321 } });
  await t.ok('organization_create', { name: 'rt-org' }, admin());
  for (const name of ['rt-water', 'rt-rain', 'rt-land'])
    await t.ok('package_create', { name, owner_org: 'rt-org', notes: `${name.slice(3)} station data`, tags: [{ name: 'rt' }] }, admin());
});
after(async () => {
  await t?.close();
});

/** The text of every statement sent to PostgreSQL while fn runs, and the session settings of its connections. */
async function sentWhile(fn: () => Promise<unknown>): Promise<{ sql: string[]; timeouts: Set<string> }> {
  const sql: string[] = [];
  const timeouts = new Set<string>();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client & { connectionParameters?: { statement_timeout?: unknown } }, ...args: any[]) {
    const q = args[0];
    sql.push(typeof q === 'string' ? q : String(q?.text ?? q?.name));
    timeouts.add(String(this.connectionParameters?.statement_timeout ?? 'none'));
    return (query as any).apply(this, args);
  } as typeof query;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = query;
  }
  return { sql, timeouts };
}

test('package_search on PostgreSQL: its statements bounded by the session, none in a transaction of its own', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  const search = { q: 'station', 'facet.field': JSON.stringify(['tags']), sort: 'score desc, name asc' };
  // the connections opened (each new one runs a statement of its own first), and the result cached
  await t.ok('package_search', search);
  await t.ok('package_create', { name: 'rt-more', owner_org: 'rt-org', notes: 'more station data' }, admin());
  const { sql, timeouts } = await sentWhile(async () => {
    const r = await t.ok('package_search', search);
    assert.equal(r.count, 4);
    assert.deepEqual(r.facets.tags, { rt: 3 });
  });
  assert.equal(sql.filter((s) => /^\s*(BEGIN|COMMIT|SET LOCAL statement_timeout)/i.test(s)).length, 0, sql.join('\n---\n'));
  assert.ok(timeouts.has('7321'), `a connection with the search's statement_timeout: ${[...timeouts]}`);
  assert.ok(sql.length <= 4, `${sql.length} statements:\n${sql.join('\n---\n')}`);
});
