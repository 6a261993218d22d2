// The rank window (svc.datastore.fts_rank_window, src/datastore/select.ts): a full-text search in
// the default order ranks only the first matches in table order when the page lies within the
// window. Compared on a randomized table with the slow reference (vectors computed per row): the
// same rows, ranks and order as ranking exactly those matches; every match ranked (the exact
// CKAN order) past the window, with a sort, or when the window holds every match.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';
import type { PostgresBackend } from '../src/datastore/postgres.ts';

let a: TestApp;
let sys: string;
let backend: PostgresBackend;
const WINDOW = 25;

before(async () => {
  a = await startApp({ config: { 'svc.datastore.fts_rank_window': WINDOW, 'svc.datastore.fts_inline_max_rows': 20 } });
  sys = a.sysadminToken;
  backend = a.services.plugins.datastore as PostgresBackend;
  await a.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'ftsw-org', 'F', 'organization', true)",
    [randomUUID()],
  );
  await a.ok('package_create', { name: 'ftsw-ds', owner_org: 'ftsw-org' }, { token: sys });
});
after(async () => {
  await a?.close();
});

let seed = 4242;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
// Frequent and rare words, repeated within a row, so ranks differ and ties happen.
const WORDS = ['lagos', 'lagos', 'lagos', 'abuja', 'kano', 'river', 'rivers', 'running', 'blue', 'water', 'zebra'];
const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
let nextKey = 1;
const records = (n: number) =>
  Array.from({ length: n }, () => ({
    k: nextKey++,
    a: rand() < 0.1 ? null : sentence(1 + Math.floor(rand() * 6)),
    b: rand() < 0.2 ? null : sentence(2),
    n: Math.floor(rand() * 50),
  }));
const FIELDS = [
  { id: 'k', type: 'int' },
  { id: 'a', type: 'text' },
  { id: 'b', type: 'text' },
  { id: 'n', type: 'int' },
];

const qi = (s: string) => '"' + s.replace(/"/g, '""') + '"';

interface Form {
  q?: string | Record<string, string>;
  full_text?: string;
  filters?: Record<string, unknown>;
  plain?: boolean;
}

/**
 * [_id, rank...] of the matching rows ranked as the default order ranks them, computed per row;
 * with `window`, only the first `window` matches in table order (ctid) are ranked.
 */
async function reference(id: string, form: Form, window?: number): Promise<unknown[][]> {
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const tsq = (text: string) => `${form.plain === false ? 'to_tsquery' : 'plainto_tsquery'}('english', ${bind(text)})`;
  const rowVec = `to_tsvector('english', concat_ws(' ', ${FIELDS.map((f) => `${qi(f.id)}::text`).join(', ')}))`;
  const where: string[] = [];
  const ranks: string[] = [];
  const add = (vec: string, text: string) => {
    const query = tsq(text);
    where.push(`${vec} @@ ${query}`);
    ranks.push(`ts_rank(${vec}, ${query})`);
  };
  if (typeof form.q === 'string') add(rowVec, form.q);
  else if (form.q) for (const [k, v] of Object.entries(form.q)) add(`to_tsvector('english', ${qi(k)}::text)`, v);
  if (form.full_text) add(rowVec, form.full_text);
  for (const [k, v] of Object.entries(form.filters ?? {})) where.push(`${qi(k)}::text = ${bind(String(v))}`);
  const matches = `SELECT * FROM ${qi(id)} WHERE ${where.join(' AND ')}${window ? ` ORDER BY ctid LIMIT ${window}` : ''}`;
  const sql = `SELECT "_id", ${ranks.map((r, i) => `${r} AS r${i}`).join(', ')} FROM (${matches}) AS m ORDER BY r0 DESC, "_id"`;
  const r = await backend.readQuery(sql, { params, rowLimit: 100000 });
  return r.records.map((x) => [x._id, ...ranks.map((_, i) => x[`r${i}`])]);
}

async function page(id: string, form: Form, extra: Record<string, unknown>): Promise<{ rows: unknown[][]; total?: number }> {
  const got = await a.ok('datastore_search', { resource_id: id, ...form, ...extra });
  const rankIds = got.fields.map((f: any) => f.id).filter((f: string) => f === 'rank' || f.startsWith('rank '));
  return { rows: got.records.map((r: any) => [r._id, ...rankIds.map((k: string) => r[k])]), total: got.total };
}

const FORMS: Form[] = [
  { q: 'lagos' },
  { q: 'lagos river' },
  { q: 'water' },
  { q: 'zebra' },
  { q: 'lag:* | riv:*', plain: false },
  { q: { a: 'lagos' } },
  { q: { a: 'lagos', b: 'blue' } },
  { full_text: 'lagos', filters: { n: 3 } },
  { full_text: 'abuja' },
];

async function checkForms(id: string, label: string): Promise<void> {
  for (const form of FORMS) {
    const all = await reference(id, form);
    const windowed = await reference(id, form, WINDOW);
    const what = `${label}: ${JSON.stringify(form)}`;
    // Pages within the window: the window's matches ranked, with or without the total.
    const first = await page(id, form, { limit: 10, include_total: false });
    assert.deepEqual(first.rows, windowed.slice(0, 10), `${what} first page`);
    const next = await page(id, form, { offset: 10, limit: WINDOW - 10 });
    assert.deepEqual(next.rows, windowed.slice(10, WINDOW), `${what} last page of the window, with total`);
    assert.equal(next.total, all.length, `${what} total`);
    // A page past the window ranks every match.
    const deep = await page(id, form, { offset: 20, limit: 10, include_total: false });
    assert.deepEqual(deep.rows, all.slice(20, 30), `${what} past the window`);
    // When every match fits in the window, the window changes nothing.
    if (all.length <= WINDOW) assert.deepEqual(windowed, all, `${what} small`);
    // An explicit sort by rank ranks every match.
    const sorted = await page(id, form, {
      sort: `${typeof form.q === 'object' ? `"rank ${Object.keys(form.q)[0]}"` : 'rank'} desc, _id`,
      limit: 10,
    });
    assert.deepEqual(sorted.rows, all.slice(0, 10), `${what} sorted`);
  }
}

const pending = async (id: string) =>
  Number((await backend.readQuery(`SELECT count(*)::int AS n FROM ${qi(id)} WHERE "_full_text" IS NULL`, { rowLimit: 1 })).records[0].n);
const settle = () => (backend as any).sessions.filler.idle() as Promise<void>;

test('the rank window ranks the first matches in table order, exactly as the reference ranking them', async () => {
  const id = (
    await a.ok(
      'datastore_create',
      { resource: { package_id: 'ftsw-ds' }, fields: FIELDS, primary_key: ['k'], records: records(300) },
      { token: sys },
    )
  ).resource_id;
  // Rows still without stored vectors (left to the filler), then filled, then after updates that move rows.
  // The filler is held off meanwhile (as a write in progress holds it): a batch filled during the
  // checks would move rows, and the window is the first matches in table order.
  const holdFiller = (backend as any).sessions.filler.writeStarted() as () => void;
  try {
    assert.ok((await pending(id)) > 0);
    await checkForms(id, 'pending');
  } finally {
    holdFiller();
  }
  await settle();
  assert.equal(await pending(id), 0);
  await checkForms(id, 'filled');
  await a.ok(
    'datastore_upsert',
    { resource_id: id, method: 'upsert', records: Array.from({ length: 15 }, (_, i) => ({ k: 1 + i * 7, a: sentence(4) })) },
    { token: sys },
  );
  await a.ok('datastore_records_delete', { resource_id: id, filters: { n: 5 } }, { token: sys });
  await checkForms(id, 'after updates');
});

test('a rank window of 0 ranks every match', async () => {
  const b = await startApp({ config: { 'svc.datastore.fts_rank_window': 0 } });
  try {
    await b.services.db.query(
      "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'ftsw0-org', 'F', 'organization', true)",
      [randomUUID()],
    );
    await b.ok('package_create', { name: 'ftsw0-ds', owner_org: 'ftsw0-org' }, { token: b.sysadminToken });
    const id = (
      await b.ok(
        'datastore_create',
        { resource: { package_id: 'ftsw0-ds' }, fields: FIELDS, records: records(200) },
        { token: b.sysadminToken },
      )
    ).resource_id;
    const got = await b.ok('datastore_search', { resource_id: id, q: 'lagos', limit: 5, include_total: false });
    const be = b.services.plugins.datastore as PostgresBackend;
    const want = await be.readQuery(
      `SELECT "_id" FROM ${qi(id)} WHERE to_tsvector('english', concat_ws(' ', k::text, a, b, n::text)) @@ plainto_tsquery('english', 'lagos')
       ORDER BY ts_rank(to_tsvector('english', concat_ws(' ', k::text, a, b, n::text)), plainto_tsquery('english', 'lagos')) DESC, "_id" LIMIT 5`,
      { rowLimit: 5 },
    );
    assert.deepEqual(
      got.records.map((r: any) => r._id),
      want.records.map((r) => r._id),
    );
  } finally {
    await b.close();
  }
});
