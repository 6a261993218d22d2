// Full-text search over the stored, indexed vectors (src/datastore/fts.ts) gives what computing
// them at query time gives: every search form, on a randomized table, after every kind of write,
// while rows wait for the background filler and after it ran, and on a table made before stored
// vectors existed (migrated on first search).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';
import type { PostgresBackend } from '../src/datastore/postgres.ts';

let a: TestApp;
let sys: string;
let backend: PostgresBackend;
// Writes of more than 20 rows leave their vectors to the background filler.
const INLINE_MAX = 20;

before(async () => {
  a = await startApp({ config: { 'svc.datastore.fts_inline_max_rows': INLINE_MAX } });
  sys = a.sysadminToken;
  backend = a.services.plugins.datastore as PostgresBackend;
  await a.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'fts-org', 'F', 'organization', true)",
    [randomUUID()],
  );
  await a.ok('package_create', { name: 'fts-ds', owner_org: 'fts-org' }, { token: sys });
});
after(async () => {
  await a?.close();
});

// --- a seeded random table --------------------------------------------------------------------

let seed = 12345;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const WORDS = [
  'lagos',
  'abuja',
  'kano',
  'river',
  'rivers',
  'running',
  'ran',
  'blue',
  'green',
  'water',
  'the',
  'and',
  'data',
  'dataset',
  'zebra',
];
const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');

let nextKey = 1;
function record(): Record<string, unknown> {
  return {
    k: nextKey++,
    a: rand() < 0.1 ? null : sentence(1 + Math.floor(rand() * 4)),
    b: rand() < 0.2 ? null : pick(WORDS) + ' ' + pick(WORDS),
    n: Math.floor(rand() * 50),
    x: rand() < 0.3 ? null : Math.round(rand() * 1000) / 10,
    ts: `2021-0${1 + Math.floor(rand() * 9)}-1${Math.floor(rand() * 9)}T10:00:00`,
    ok: rand() < 0.5,
    tags: rand() < 0.5 ? null : [pick(WORDS), pick(WORDS)],
  };
}
const records = (n: number) => Array.from({ length: n }, record);

const FIELDS = [
  { id: 'k', type: 'int' },
  { id: 'a', type: 'text' },
  { id: 'b', type: 'text' },
  { id: 'n', type: 'int' },
  { id: 'x', type: 'numeric' },
  { id: 'ts', type: 'timestamp' },
  { id: 'ok', type: 'bool' },
  { id: 'tags', type: '_text' },
];

// --- the reference: vectors computed at query time ---------------------------------------------------

const qi = (s: string) => '"' + s.replace(/"/g, '""') + '"';

async function columnsOf(id: string): Promise<string[]> {
  return (await a.ok('datastore_search', { resource_id: id, limit: 0 })).fields.map((f: any) => f.id).filter((f: string) => f !== '_id');
}

interface Form {
  q?: string | Record<string, string>;
  full_text?: string;
  filters?: Record<string, unknown>;
  plain?: boolean;
  language?: string;
}

/** [_id, rank...] of every matching row, ranked as datastore_search ranks by default, computed per row. */
async function reference(id: string, form: Form): Promise<{ rows: unknown[][]; total: number }> {
  const cols = await columnsOf(id);
  const lang = form.language ?? 'english';
  const params: unknown[] = [lang];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const tsq = (text: string) => `${form.plain === false ? 'to_tsquery' : 'plainto_tsquery'}($1::regconfig, ${bind(text)})`;
  const rowVec = `to_tsvector($1::regconfig, concat_ws(' ', ${cols.map((c) => `${qi(c)}::text`).join(', ')}))`;
  const where: string[] = [];
  const ranks: string[] = [];
  if (typeof form.q === 'string') {
    where.push(`${rowVec} @@ ${tsq(form.q)}`);
    ranks.push(`ts_rank(${rowVec}, ${tsq(form.q)})`);
  } else if (form.q) {
    for (const [k, v] of Object.entries(form.q)) {
      const vec = `to_tsvector($1::regconfig, ${qi(k)}::text)`;
      where.push(`${vec} @@ ${tsq(v)}`);
      ranks.push(`ts_rank(${vec}, ${tsq(v)})`);
    }
  }
  if (form.full_text) {
    where.push(`${rowVec} @@ ${tsq(form.full_text)}`);
    ranks.push(`ts_rank(${rowVec}, ${tsq(form.full_text)})`);
  }
  for (const [k, v] of Object.entries(form.filters ?? {})) where.push(`${qi(k)}::text = ${bind(String(v))}`);
  const sql = `SELECT "_id", ${ranks.map((r, i) => `${r} AS r${i}`).join(', ')} FROM ${qi(id)} WHERE ${where.join(' AND ')} ORDER BY r0 DESC, "_id"`;
  const r = await backend.readQuery(sql, { params, rowLimit: 10000 });
  return { rows: r.records.map((x) => [x._id, ...ranks.map((_, i) => x[`r${i}`])]), total: r.records.length };
}

async function assertSameAsReference(id: string, form: Form, label: string): Promise<void> {
  const want = await reference(id, form);
  const got = await a.ok('datastore_search', { resource_id: id, ...form, limit: 10000 });
  const rankIds = got.fields.map((f: any) => f.id).filter((f: string) => f === 'rank' || f.startsWith('rank '));
  const rows = got.records.map((r: any) => [r._id, ...rankIds.map((k: string) => r[k])]);
  assert.deepEqual(rows, want.rows, `${label}: ${JSON.stringify(form)}`);
  assert.equal(got.total, want.total, `${label} total: ${JSON.stringify(form)}`);
  assert.equal(got.total_was_estimated, false);
}

const FORMS: Form[] = [
  { q: 'lagos' },
  { q: 'rivers running' },
  { q: 'zebra water' },
  { q: 'nothingmatches' },
  { q: 'lag:* | abu:*', plain: false },
  { q: 'river & !blue', plain: false },
  { q: { a: 'lagos' } },
  { q: { a: 'water', b: 'green' } },
  { q: { b: 'runs' } },
  { q: { tags: 'blue' } },
  { full_text: 'data' },
  { full_text: 'kano', filters: { ok: 'true' } },
  { q: { a: 'blue' }, full_text: 'river' },
  { q: 'the river', language: 'simple' },
  { q: 'triggered' },
  { q: '2021' },
];

async function checkAll(id: string, label: string): Promise<void> {
  const cols = new Set(await columnsOf(id));
  const usable = (f: Form) =>
    [...Object.keys(typeof f.q === 'object' ? f.q : {}), ...Object.keys(f.filters ?? {})].every((c) => cols.has(c));
  for (const f of FORMS.filter(usable)) await assertSameAsReference(id, f, label);
}

const pending = async (id: string) =>
  Number((await backend.readQuery(`SELECT count(*)::int AS n FROM ${qi(id)} WHERE "_full_text" IS NULL`, { rowLimit: 1 })).records[0].n);
const settle = () => (backend as any).sessions.filler.idle() as Promise<void>;

test('every search form matches the query-time computation after mixed writes, before and after the filler', async () => {
  const def = { name: 'fts_mark', rettype: 'trigger', definition: `BEGIN NEW.b := coalesce(NEW.b, '') || ' triggered'; RETURN NEW; END;` };
  await a.ok('datastore_function_create', { ...def, or_replace: true }, { token: sys });
  const id = (
    await a.ok(
      'datastore_create',
      { resource: { package_id: 'fts-ds' }, fields: FIELDS, primary_key: ['k'], records: records(60) },
      { token: sys },
    )
  ).resource_id;
  // 60 rows: left to the filler; searches meanwhile compute the vectors of the rows still without.
  assert.ok((await pending(id)) > 0);
  await checkAll(id, 'after create, rows pending');
  await settle();
  assert.equal(await pending(id), 0);
  await checkAll(id, 'after create, filled');

  // Small writes (filled before they commit) and larger ones (left to the filler), of every kind.
  await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(5) }, { token: sys });
  const upserts = [...records(10), ...Array.from({ length: 10 }, (_, i) => ({ k: 1 + i * 3, a: sentence(3), b: 'zebra ' + pick(WORDS) }))];
  await a.ok('datastore_upsert', { resource_id: id, method: 'upsert', records: upserts }, { token: sys });
  await a.ok(
    'datastore_upsert',
    {
      resource_id: id,
      method: 'update',
      records: [
        { k: 2, a: 'lagos lagos lagos' },
        { k: 4, b: null },
      ],
    },
    { token: sys },
  );
  await a.ok(
    'datastore_upsert',
    { resource_id: id, method: 'upsert', records: Array.from({ length: 30 }, (_, i) => ({ k: 10 + i, a: sentence(2) })) },
    { token: sys },
  );
  await a.ok('datastore_delete', { resource_id: id, filters: { n: 7 } }, { token: sys });
  await a.ok('datastore_records_delete', { resource_id: id, filters: { n: 8 } }, { token: sys });
  await checkAll(id, 'after mixed writes');
  // A trigger that changes rows; then a field added, with records; then the triggers run again.
  await a.ok('datastore_create', { resource_id: id, triggers: [{ function: 'fts_mark' }], records: records(3) }, { token: sys });
  await a.ok(
    'datastore_create',
    { resource_id: id, fields: [...FIELDS, { id: 'extra', type: 'text' }], records: [{ k: 9999, extra: 'zebra crossing' }] },
    { token: sys },
  );
  await a.ok('datastore_upsert', { resource_id: id, method: 'insert', records: records(40) }, { token: sys });
  await checkAll(id, 'after trigger and field writes, rows pending');
  await settle();
  await checkAll(id, 'after trigger and field writes, filled');
  // The filler's own update does not run the user's trigger again.
  const twice = await backend.readQuery(`SELECT count(*)::int AS n FROM ${qi(id)} WHERE b LIKE '%triggered triggered%'`, { rowLimit: 1 });
  assert.equal(twice.records[0].n, 0);
  assert.equal((await a.ok('datastore_run_triggers', { resource_id: id }, { token: sys })) > 0, true);
  await checkAll(id, 'after run_triggers');
  // A field dropped: every row's text changes.
  await a.ok(
    'datastore_create',
    { resource_id: id, fields: FIELDS.filter((f) => f.id !== 'b'), delete_fields: true, triggers: [] },
    { token: sys },
  );
  await checkAll(id, 'after a dropped field, rows pending');
  await settle();
  await checkAll(id, 'after a dropped field, filled');
  // The stored vector is not a field: neither shown nor writable.
  const r = await a.ok('datastore_search', { resource_id: id, limit: 1 });
  assert.ok(!r.fields.some((f: any) => f.id === '_full_text'));
  const e = await a.call('datastore_upsert', { resource_id: id, method: 'insert', records: [{ k: 1, _full_text: 'x' }] }, { token: sys });
  assert.equal(e.status, 409);
});

test('searches through an alias, sorting by rank, no total, estimation', async () => {
  const id = (
    await a.ok(
      'datastore_create',
      { resource: { package_id: 'fts-ds' }, fields: FIELDS, records: records(15), aliases: 'fts-alias' },
      { token: sys },
    )
  ).resource_id;
  await assertSameAsReference('fts-alias', { q: 'lagos' }, 'alias');
  const asc = await a.ok('datastore_search', { resource_id: id, q: 'river', sort: 'rank asc, _id desc', include_total: false });
  assert.equal(asc.total, undefined);
  const ranks = asc.records.map((x: any) => x.rank);
  assert.deepEqual(
    ranks,
    [...ranks].sort((p: number, q: number) => p - q),
  );
  const est = await a.ok('datastore_search', { resource_id: id, q: 'the', total_estimation_threshold: 0 });
  assert.equal(est.total_was_estimated, true);
  assert.equal(typeof est.total, 'number');
  // With filters the total is exact.
  const exact = await a.ok('datastore_search', { resource_id: id, q: 'the', filters: { ok: true }, total_estimation_threshold: 0 });
  assert.equal(exact.total_was_estimated, false);
  const bad = await a.call('datastore_search', { resource_id: id, q: 'x', language: 'klingon' });
  assert.equal(bad.status, 409);
});

test('a table made before stored vectors is migrated on its first search and answers the same meanwhile', async () => {
  const id = (await a.ok('datastore_create', { resource: { package_id: 'fts-ds' }, fields: FIELDS, records: records(30) }, { token: sys }))
    .resource_id;
  await settle();
  // Made as an older version made it: no vector column, no language, triggers without condition.
  const write = (backend as any).sessions.write;
  await write.exec(`ALTER TABLE ${qi(id)} DROP COLUMN "_full_text"; COMMENT ON TABLE ${qi(id)} IS '{}'`);
  (backend as any).sessions.tables.clear();
  await checkAll(id, 'legacy table');
  await settle();
  assert.equal(await pending(id), 0);
  await checkAll(id, 'migrated table');
});

test('svc db upgrade (upgradeFullText) migrates and fills every table, reporting progress', async () => {
  const id = (await a.ok('datastore_create', { resource: { package_id: 'fts-ds' }, fields: FIELDS, records: records(25) }, { token: sys }))
    .resource_id;
  await settle();
  const write = (backend as any).sessions.write;
  await write.exec(`ALTER TABLE ${qi(id)} DROP COLUMN "_full_text"; COMMENT ON TABLE ${qi(id)} IS '{}'`);
  (backend as any).sessions.tables.clear();
  const seen: [string, number, number][] = [];
  await backend.upgradeFullText((table, done, total) => seen.push([table, done, total]));
  assert.deepEqual(seen.filter((s) => s[0] === id).at(-1), [id, 25, 25]);
  assert.equal(await pending(id), 0);
  await checkAll(id, 'upgraded by the CLI');
});

test('a row whose text is too long for a vector does not fail its write nor stop the filler', async () => {
  const id = (
    await a.ok(
      'datastore_create',
      { resource: { package_id: 'fts-ds' }, fields: [{ id: 't', type: 'text' }], records: [{ t: 'small lagos' }] },
      { token: sys },
    )
  ).resource_id;
  // About 3 MB of distinct words: over tsvector's 1 MB.
  const huge = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`).join(' ');
  await a.ok(
    'datastore_upsert',
    { resource_id: id, method: 'insert', records: [{ t: huge }, ...Array.from({ length: 30 }, () => ({ t: 'more lagos' }))] },
    { token: sys },
  );
  await settle();
  // Only that row is left without a vector; searches fail on it as the query-time computation does.
  assert.equal(await pending(id), 1);
  const e = await a.call('datastore_search', { resource_id: id, q: 'lagos' });
  assert.equal(e.status, 409);
  assert.match(JSON.stringify(e.body.error), /too long for tsvector/);
  await a.ok('datastore_records_delete', { resource_id: id, filters: { _id: 2 } }, { token: sys });
  assert.equal((await a.ok('datastore_search', { resource_id: id, q: 'lagos' })).total, 31);
});
