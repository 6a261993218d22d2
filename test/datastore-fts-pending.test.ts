// Searches of rows whose full-text vector is not computed yet (a load's end, src/datastore/fts.ts)
// find what they find once the vectors are there; terms with digits take a cheaper path for those
// rows (a filter on the row's text before its vector is computed), which must not lose a match.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import type { PostgresBackend } from '../src/datastore/postgres.ts';
import type { Database } from '../src/db/database.ts';

let a: TestApp;
let sys: string;
let id: string;

const rows = [
  { k: 1, a: 'Order ABC-123 shipped', n: 7, d: '2020-01-05', f: 3.14 },
  { k: 2, a: 'Visit HTTP://Example.COM/Path9 or mail User1@Example.com', n: 123, d: '2021-12-31', f: 1e5 },
  { k: 3, a: 'release v1.2.3 of /tmp/a_1.txt, 50% off foo%1', n: null, d: null, f: null },
  { k: 4, a: 'X12 rivers and 42 lakes', n: 42, d: '1999-02-03', f: -0.5 },
  { k: 5, a: 'Ünïcödé Straße 9B, 1,000 people', n: 1000, d: '2020-01-05', f: 2.5 },
  { k: 6, a: 'happy running rivers', n: 0, d: '2000-10-10', f: 0 },
];
const queries = [
  '123',
  'abc-123',
  'ABC-123 shipped',
  'x12',
  'X12 river',
  '42 rivers',
  '2020-01-05',
  '2021-12-31',
  '2020',
  '3.14',
  '1e5',
  '100000',
  'v1.2.3',
  '1.2.3',
  'a_1',
  '/tmp/a_1.txt',
  'foo%1',
  '50%',
  'user1@example.com',
  'example.com',
  'HTTP://Example.COM/Path9',
  '9b',
  'straße 9B',
  '1,000',
  '000',
  '-0.5',
  '0',
  'happy',
  'river',
];

before(async () => {
  a = await startApp({ config: { 'svc.auth.create_unowned_dataset': true } });
  sys = a.sysadminToken;
  await a.ok('package_create', { name: 'fts-pending' }, { token: sys });
  const fields = [
    { id: 'k', type: 'int' },
    { id: 'a', type: 'text' },
    { id: 'n', type: 'int' },
    { id: 'd', type: 'date' },
    { id: 'f', type: 'float8' },
  ];
  id = (await a.ok('datastore_create', { resource: { package_id: 'fts-pending' }, fields, records: rows }, { token: sys })).resource_id;
});
after(async () => {
  await a?.close();
});

const writeDb = () => (a.services.plugins.datastore as PostgresBackend as any).sessions.write as Database;

async function search(body: Record<string, unknown>): Promise<{ keys: number[]; total: number; ranks: number[] }> {
  const r = await a.ok('datastore_search', { resource_id: id, fields: ['k'], ...body }, { token: sys });
  return { keys: r.records.map((x: { k: number }) => x.k), total: r.total, ranks: r.records.map((x: Record<string, number>) => x.rank) };
}

/** What a user sees of each query: q (ranked), full_text (by k), to_tsquery syntax, and with a filter or per-column q beside it. */
async function answers(): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const q of queries) out.push({ q, ...(await search({ q })), ft: (await search({ full_text: q, sort: 'k' })).keys });
  // to_tsquery syntax (plain: false) is not filtered: an OR of a number and a word, a negation.
  for (const q of ['123 | happi', '!123', '42 & !x12', '-123'])
    out.push({ q, plain: false, ...(await search({ q, plain: false, sort: 'k' })) });
  out.push({ filters: (await search({ q: '42', filters: { n: 42 } })).keys });
  out.push({ dict: (await search({ q: { a: 'x12' }, full_text: '42' })).keys });
  return out;
}

test('rows whose vectors are not computed yet are found as once they are, for terms with and without digits', async () => {
  const filled = await answers();
  assert.ok(filled.filter((x) => (x.keys as number[] | undefined)?.length).length >= 15, JSON.stringify(filled));
  // Every vector NULL again, as right after a load (nothing tells the filler: they stay NULL).
  await writeDb().query(`UPDATE "${id}" SET "_full_text" = NULL`);
  assert.equal((await writeDb().query(`SELECT count(*)::int AS n FROM "${id}" WHERE "_full_text" IS NULL`)).rows[0].n, rows.length);
  assert.deepEqual(await answers(), filled);
});
