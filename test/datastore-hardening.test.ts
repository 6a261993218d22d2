// The data store against hostile input and races: lists checked before any write (never retried),
// parallel key changes, and 403 messages that name only what the caller sent.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };

before(async () => {
  t = await startApp();
  editor = await t.user('dsh_editor');
  outsider = await t.user('dsh_outsider');
  const org = randomUUID();
  await t.services.db.query(
    "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'dsh-org', 'DSH', 'organization', true)",
    [org],
  );
  await t.services.db.query("INSERT INTO members (id, group_id, table_name, table_id, capacity) VALUES ($1, $2, 'user', $3, 'editor')", [
    randomUUID(),
    org,
    editor.id,
  ]);
  await t.ok('package_create', { name: 'dsh-public', owner_org: 'dsh-org' }, { token: editor.token });
  await t.ok('package_create', { name: 'dsh-private', owner_org: 'dsh-org', private: true }, { token: editor.token });
});
after(async () => {
  await t?.close();
});

async function newTable(body: Record<string, unknown>, dataset = 'dsh-public'): Promise<string> {
  const r = await t.ok('datastore_create', { resource: { package_id: dataset, name: 'table' }, ...body }, { token: editor.token });
  return r.resource_id;
}

test('100,000 duplicate aliases: a Validation Error naming aliases at once, nothing written', async () => {
  const id = await newTable({ fields: [{ id: 'a', type: 'text' }], records: [{ a: 'x' }] });
  const started = Date.now();
  const r = await t.call(
    'datastore_create',
    { resource_id: id, aliases: Array(100000).fill('dup-alias'), records: [{ a: 'y' }] },
    { token: editor.token },
  );
  const took = Date.now() - started;
  assert.equal(r.status, 409);
  assert.equal(r.body.error?.__type, 'Validation Error');
  assert.ok(r.body.error?.aliases, JSON.stringify(r.body.error).slice(0, 300));
  assert.doesNotMatch(JSON.stringify(r.body.error), /concurrent writes/);
  assert.ok(took < 10000, `took ${took} ms`);
  const s = await t.ok('datastore_search', { resource_id: id }, { token: editor.token });
  assert.equal(s.total, 1);
  assert.equal((await t.call('datastore_search', { resource_id: 'dup-alias' }, { token: editor.token })).status, 404);
});

test('two equal aliases, fields, keys: Validation Errors naming the list', async () => {
  const id = await newTable({ fields: [{ id: 'a', type: 'text' }] });
  const cases: [Record<string, unknown>, string][] = [
    [{ aliases: ['same-one', 'same-one'] }, 'aliases'],
    [{ primary_key: ['a', 'a'] }, 'primary_key'],
    [{ primary_key: Array.from({ length: 40 }, (_, i) => `f${i}`) }, 'primary_key'],
    [{ aliases: Array.from({ length: 2000 }, (_, i) => `many-${i}`) }, 'aliases'],
    [{ indexes: Array.from({ length: 2000 }, () => 'a') }, 'indexes'],
    [{ triggers: Array.from({ length: 2000 }, () => ({ function: 'f' })) }, 'triggers'],
  ];
  for (const [body, field] of cases) {
    const r = await t.call('datastore_create', { resource_id: id, ...body }, { token: editor.token });
    assert.equal(r.status, 409, `${field}: ${JSON.stringify(r.body.error).slice(0, 200)}`);
    assert.ok(r.body.error?.[field], `${field}: ${JSON.stringify(r.body.error).slice(0, 200)}`);
  }
  const info = await t.ok('datastore_info', { id }, { token: editor.token });
  assert.deepEqual(info.meta.aliases ?? [], []);
});

test('parallel datastore_create changing the primary key: every call answers, none a 500', async () => {
  const id = await newTable({
    fields: [
      { id: 'id', type: 'int' },
      { id: 'v', type: 'text' },
    ],
    records: [{ id: 1, v: 'a' }],
  });
  const calls = Array.from({ length: 40 }, (_, i) =>
    t.call('datastore_create', { resource_id: id, primary_key: i % 2 ? ['id'] : [] }, { token: editor.token }),
  );
  const answers = await Promise.all(calls);
  const statuses = answers.map((a) => a.status);
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
    JSON.stringify(answers.find((a) => a.status !== 200)?.body.error),
  );
  // The table still works and has the key of one of the calls.
  const r = await t.call('datastore_upsert', { resource_id: id, method: 'insert', records: [{ id: 2, v: 'b' }] }, { token: editor.token });
  assert.equal(r.status, 200);
});

test('403 of an alias of a private resource names the alias, not the resource behind it', async () => {
  const id = await newTable({ fields: [{ id: 'a', type: 'text' }], aliases: ['secret-alias-h4'] }, 'dsh-private');
  for (const action of ['datastore_search', 'datastore_info']) {
    const r = await t.call(action, { resource_id: 'secret-alias-h4' }, { token: outsider.token });
    assert.equal(r.status, 403, action);
    assert.doesNotMatch(JSON.stringify(r.body), new RegExp(id), action);
    assert.match(r.body.error?.message ?? '', /secret-alias-h4/, action);
  }
  const anon = await t.call('datastore_search', { resource_id: 'secret-alias-h4' });
  assert.equal(anon.status, 403);
  assert.doesNotMatch(JSON.stringify(anon.body), new RegExp(id));
});

test('a superuser as the data store read user is warned of at start; the read-only user is not', {
  skip: !onPostgres && 'PostgreSQL mode only',
}, async () => {
  const started = async (config: Record<string, unknown>) => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const app = await startApp({ config, logger });
    await app.close();
    return lines.filter((l) => l.includes('svc.datastore.read_url'));
  };
  const admin = new pg.Client({ connectionString: process.env.SVC_TEST_DATABASE_URL });
  await admin.connect();
  await admin
    .query(`DO $$ BEGIN CREATE ROLE svc_test_superuser LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
    .finally(() => admin.end());
  const url = new URL(process.env.SVC_TEST_DATABASE_URL!);
  url.username = 'svc_test_superuser';
  const superuser = await started({ 'svc.datastore.read_url': url.toString() });
  assert.equal(superuser.length, 1);
  assert.match(JSON.parse(superuser[0]).msg, /is a superuser, so data store reads are not read-only/);
  assert.deepEqual(await started({}), []);
});

test("an operator's allowed-functions file replaces the built-in list of datastore_search_sql", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-allowed-'));
  const file = path.join(dir, 'allowed_functions.txt');
  fs.writeFileSync(file, '# only these\ncount\nLOWER  # case does not matter\n');
  const app = await startApp({
    config: { 'svc.datastore.sqlsearch.enabled': true, 'svc.datastore.sqlsearch.allowed_functions_file': file },
  });
  try {
    await app.services.db.query(
      "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'allowed-org', 'A', 'organization', true)",
      [randomUUID()],
    );
    await app.ok('package_create', { name: 'allowed-fn', owner_org: 'allowed-org' }, { token: app.sysadminToken });
    const id = (
      await app.ok(
        'datastore_create',
        { resource: { package_id: 'allowed-fn' }, fields: [{ id: 'a', type: 'text' }], records: [{ a: 'X' }] },
        { token: app.sysadminToken },
      )
    ).resource_id;
    const run = (sql: string) => app.call('datastore_search_sql', { sql }, { token: app.sysadminToken });
    const lower = await run(`SELECT lower(a) AS l, count(*) AS n FROM "${id}" GROUP BY 1`);
    assert.equal(lower.status, 200, JSON.stringify(lower.body.error));
    assert.deepEqual(lower.body.result.records, [{ l: 'x', n: 1 }]);
    const upper = await run(`SELECT upper(a) FROM "${id}"`);
    assert.equal(upper.status, 403);
    assert.match(upper.body.error?.message, /Not authorized to call function upper/);
  } finally {
    await app.close();
  }
  fs.writeFileSync(file, 'count\nnot a name\n');
  await assert.rejects(
    startApp({ config: { 'svc.datastore.sqlsearch.enabled': true, 'svc.datastore.sqlsearch.allowed_functions_file': file } }),
    /allowed_functions_file: .*line 2: "not a name" is not a function name/,
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

// Seconds of work on both databases, and cheap in the embedded database's cost estimate.
const SLOW_SQL = `SELECT count(*) FROM generate_series(1,25000) g WHERE md5(repeat(g::text,100000))=''`;

test('SQL searches: a shorter timeout for anonymous callers, one at a time per caller, datastore_search never waits behind them', async () => {
  const app = await startApp({
    config: {
      'svc.datastore.sqlsearch.enabled': true,
      'svc.datastore.sqlsearch.timeout': 3000,
      'svc.datastore.sqlsearch.anonymous_timeout': 1000,
      // Embedded database: the running SQL search is stopped this soon once datastore_search waits
      // (the rest of the wait is reopening the database, seconds on a loaded machine).
      'svc.datastore.sqlsearch.embedded_yield_after': 500,
    },
  });
  try {
    await app.services.db.query(
      "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'gate-org', 'G', 'organization', true)",
      [randomUUID()],
    );
    await app.ok('package_create', { name: 'gate-data', owner_org: 'gate-org' }, { token: app.sysadminToken });
    const id = (
      await app.ok(
        'datastore_create',
        { resource: { package_id: 'gate-data' }, fields: [{ id: 'v', type: 'int' }], records: [{ v: 1 }] },
        { token: app.sysadminToken },
      )
    ).resource_id;
    const users = [await app.user('gate_a'), await app.user('gate_b')];
    const timed = (p: Promise<any>) => {
      const started = Date.now();
      return p.then((answer) => ({ answer, ms: Date.now() - started }));
    };
    const anonymous = Array.from({ length: 8 }, () => timed(app.call('datastore_search_sql', { sql: SLOW_SQL })));
    const signedIn = users.map((u) => timed(app.call('datastore_search_sql', { sql: SLOW_SQL }, { token: u.token })));
    await new Promise((r) => setTimeout(r, 300));
    const search = await timed(app.call('datastore_search', { resource_id: id }));
    const answers = await Promise.all(anonymous);
    const userAnswers = await Promise.all(signedIn);
    assert.equal(search.answer.status, 200);
    // PostgreSQL: SQL searches have connections of their own. The embedded database has one
    // connection: a search waits for at most the SQL search running on it (others wait apart).
    assert.ok(search.ms < (onPostgres ? 1000 : 3000 + 1000 + 4000), `datastore_search waited ${search.ms} ms behind SQL searches`);
    // One anonymous query ran, stopped at the anonymous timeout; the others were refused at once.
    // Stopped at its timeout, or (embedded database) after svc.datastore.sqlsearch.embedded_yield_after
    // because datastore_search was waiting: both messages begin the same way.
    const tooLong = (m: unknown) => typeof m === 'string' && m.startsWith('Query took too long');
    const messages = answers.map((a) => a.answer.body.error?.query?.[0]);
    assert.equal(messages.filter(tooLong).length, 1, JSON.stringify(messages));
    assert.equal(messages.filter((m) => /Too many SQL searches at once/.test(m ?? '')).length, 7, JSON.stringify(messages));
    for (const a of answers) if (!tooLong(a.answer.body.error?.query?.[0])) assert.ok(a.ms < 1000, `refused after ${a.ms} ms`);
    for (const a of userAnswers) {
      assert.equal(a.answer.body.error?.query?.length, 1);
      assert.ok(tooLong(a.answer.body.error?.query?.[0]), JSON.stringify(a.answer.body.error));
    }
    // The anonymous query was stopped sooner than the signed-in ones' timeout allows.
    const ranAnonymous = answers.find((a) => tooLong(a.answer.body.error?.query?.[0]))!;
    if (onPostgres) assert.ok(ranAnonymous.ms < 2500, `the anonymous query ran ${ranAnonymous.ms} ms`);
  } finally {
    await app.close();
  }
});
