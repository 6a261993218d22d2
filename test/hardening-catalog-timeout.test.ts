// package_search is bounded by svc.search.timeout on both databases (issue 25, finding 2): a
// runaway search answers a Search Query Error naming the timeout, never a 500 and never a frozen
// server. The PGlite pass starts the embedded catalog as the server does (a data dir in its worker
// thread), so the server's thread answers other requests while the search runs, the statement is
// stopped at the timeout and the catalog opens again with everything committed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

// Ten 32-word phrases and a word found nowhere, with facets, over these notes: a statement of
// seconds on PGlite, and more than a millisecond on PostgreSQL.
const DATASETS = 30;
const WORDS = 5000;
const TIMEOUT_MS = onPostgres ? 1 : 250;

let app: TestApp;
const vocabulary = Array.from({ length: 3000 }, (_, i) => `w${((i * 7919) % 100000).toString(36)}x`);
let seed = 7;
const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
const text = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
const runaway = () => ({
  q: `${Array.from({ length: 10 }, () => `"${text(32)}"`).join(' OR ')} OR hardeningnowhere`,
  'facet.field': JSON.stringify(['tags', 'groups', 'organization', 'license_id', 'res_format']),
  rows: 1000,
});

before(async () => {
  app = await startApp({ embeddedDataDirs: true, plugins: [], config: { 'svc.search.timeout': TIMEOUT_MS } });
  const org = await app.ok('organization_create', { name: 'hardening-org' }, { token: app.sysadminToken });
  for (let i = 0; i < DATASETS; i++)
    await app.ok('package_create', { name: `hardening-${i}`, owner_org: org.id, notes: text(WORDS) }, { token: app.sysadminToken });
});
after(async () => {
  await app?.close();
});

test('a runaway package_search stops at svc.search.timeout with a Search Query Error; the server answers meanwhile', {
  timeout: 120_000,
}, async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  let searchDone = false;
  const started = Date.now();
  const search = app.call('package_search', runaway()).finally(() => {
    searchDone = true;
  });
  // Asked once the search's statement runs (a held thread would run this timer only after it).
  await new Promise((resolve) => setTimeout(resolve, 20));
  const status = await app.call('status_show', {});
  const statusBeforeSearch = !searchDone;
  const res = await search;
  const took = Date.now() - started;
  clearInterval(timer);

  assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
  assert.equal(res.body.error?.__type, 'Search Query Error');
  assert.match(res.body.error?.message, new RegExp(`svc\\.search\\.timeout \\(${TIMEOUT_MS} ms\\)`));
  assert.equal(status.status, 200);
  if (!onPostgres) {
    // The statement ran in the catalog's worker thread: status_show (no database) did not wait for it.
    assert.ok(statusBeforeSearch, 'status_show waited for the search');
    assert.ok(ticks >= 3, `the server's thread was held (${ticks} ticks in ${took} ms)`);
  }
  assert.ok(took < 30_000, `the search took ${took} ms`);
});

test('after a stopped search the catalog serves reads and writes, with everything committed before', { timeout: 120_000 }, async () => {
  assert.equal((await app.call('package_search', runaway())).status, 400);
  const list = await app.ok('package_list', {});
  assert.equal(list.length, DATASETS);
  const shown = await app.ok('package_show', { id: 'hardening-3' });
  assert.equal(shown.notes.split(' ').length, WORDS);
  await app.ok('package_create', { name: 'hardening-after', owner_org: shown.owner_org }, { token: app.sysadminToken });
  assert.equal((await app.ok('package_list', {})).length, DATASETS + 1);
  assert.equal((await app.call('site_read', {})).status, 200);
});
