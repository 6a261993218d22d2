// `svc search-index rebuild | check | clear`, run in-process through runCli on the test app's services.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { runCliIn } from './helpers/cli.ts';

let t: TestApp;
const sys = () => ({ token: t.sysadminToken });

before(async () => {
  t = await startApp({ plugins: [] });
  await t.ok('organization_create', { name: 'org1' }, sys());
  for (let i = 0; i < 7; i++) await t.ok('package_create', { name: `ds-${i}`, owner_org: 'org1', tags: [{ name: 'cli' }] }, sys());
});
after(async () => {
  await t.close();
});

const cli = (...argv: string[]) => runCliIn(t, argv);

const found = async () => (await t.ok('package_search', { q: 'tags:cli', rows: 100 })).count;

test('search-index check names the datasets missing from the index or indexed in an older version', async () => {
  let r = await cli('search-index', 'check');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'the search index is up to date\n');
  await t.services.db.query("DELETE FROM package_search_index WHERE name IN ('ds-1', 'ds-4')");
  await t.services.db.query(
    "UPDATE package_search_index SET metadata_modified = metadata_modified - interval '1 hour' WHERE name = 'ds-6'",
  );
  r = await cli('search-index', 'check');
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    'missing\tds-1\nmissing\tds-4\nstale\tds-6\n2 missing, 1 stale, 0 of purged datasets: run svc search-index rebuild\n',
  );
});

test('search-index rebuild restores missing rows, with a throughput line', async () => {
  let r = await cli('search-index', 'rebuild', '--only-missing');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /indexed 2 datasets in [\d.]+ s \(\d+ datasets\/s\)/);
  assert.equal(await found(), 7);
  r = await cli('search-index', 'rebuild', '--batch-size', '3');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /indexed 7 datasets/);
  assert.equal((await cli('search-index', 'check')).out, 'the search index is up to date\n');
});

test('search-index clear empties the index until a rebuild', async () => {
  let r = await cli('search-index', 'clear');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /cleared the search index \(7 datasets\)/);
  assert.equal(await found(), 0);
  assert.match((await cli('search-index', 'check')).out, /^7 missing, 0 stale/m);
  r = await cli('search-index', 'rebuild');
  assert.equal(r.code, 0, r.err);
  assert.equal(await found(), 7);
});
