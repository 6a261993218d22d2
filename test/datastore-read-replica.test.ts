// The data store's read URL as a streaming replica of its primary (svc.datastore.read_url): reads go
// there, and a caller who just wrote to the data store reads their write (the replica must have
// replayed the write's WAL position within svc.database_replica_wait, else the primary answers, as
// the read-only user); a read URL that does not answer costs no request. A streaming replica is too
// heavy here: the "replica" is another database of the test server holding a copy of the data store
// that the test "replays" itself, whose pg_is_in_recovery() and pg_last_wal_replay_lsn() are
// functions of a schema put before pg_catalog in its search_path, answering what the test sets.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { freshPostgresDatabase, ensureReadRole, onPostgres, READ_ROLE, startApp, type TestApp } from './helpers/app.ts';
import { formatLsn, parseLsn } from '../src/db/replicas.ts';
import { PostgresDatabase } from '../src/db/database.ts';
import { PostgresBackend } from '../src/datastore/postgres.ts';
import { setPermissionsSql } from '../src/plugins/datastore/permissions.ts';
import { primaryReadUrl } from '../src/plugins/datastore/replica.ts';
import { sample } from './helpers/metrics.ts';

const WAIT_MS = 400;
const HEADER = 'x-svc-datastore-read-after';

function withUser(url: string, user: string, database?: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = '';
  if (database) u.pathname = `/${database}`;
  return u.toString();
}

/** Runs SQL as the superuser in a database; the shared reader role may be updated by another test file at the same time. */
async function runAsSuperuser(url: string, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
      return;
    } catch (e) {
      if (attempt >= 5 || !/concurrently/.test(String(e))) throw e;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    } finally {
      await client.end();
    }
  }
}

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, stream), lines };
}

test('the read-only user on the primary: read_url user and password, write_url server and database', () => {
  assert.equal(
    primaryReadUrl('postgresql://reader:s%40cret@replica.example:5433/ds?sslmode=require', 'postgresql://owner:pw@primary.example/ds_main'),
    'postgresql://reader:s%40cret@primary.example/ds_main',
  );
});

describe('a data store read URL that is a streaming replica', {
  skip: !onPostgres && 'PostgreSQL only: the embedded data store has no replicas',
}, () => {
  let replica: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let replay: PostgresBackend;
  let replayWrite: PostgresDatabase;
  let t: TestApp;
  let token: string;

  const setReplica = (lsn: string) => runAsSuperuser(replica.url, `UPDATE sim.state SET lsn = '${lsn}'`);
  const metrics = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const afterWrite = async (outcome: string) => sample(await metrics(), 'svc_datastore_reads_after_write_total', { outcome }) ?? 0;
  const search = (id: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: `/api/3/action/datastore_search?resource_id=${id}&sort=n`, headers });
  const labels = (res: { json(): any }) => res.json().result.records.map((r: { label: string }) => r.label);

  before(async () => {
    await ensureReadRole();
    replica = await freshPostgresDatabase('_rep');
    // the replica's data store: what svc datastore set-permissions gives it, and the recovery functions
    await runAsSuperuser(replica.url, setPermissionsSql(replica.url, withUser(replica.url, READ_ROLE)));
    await runAsSuperuser(
      replica.url,
      `CREATE SCHEMA sim;
       CREATE TABLE sim.state (lsn pg_lsn NOT NULL);
       INSERT INTO sim.state VALUES ('0/0');
       CREATE FUNCTION sim.pg_is_in_recovery() RETURNS boolean LANGUAGE sql STABLE AS 'SELECT true';
       CREATE FUNCTION sim.pg_last_wal_replay_lsn() RETURNS pg_lsn LANGUAGE sql STABLE AS 'SELECT lsn FROM sim.state';
       GRANT USAGE ON SCHEMA sim TO PUBLIC;
       GRANT SELECT ON sim.state TO PUBLIC;
       ALTER DATABASE ${replica.name} SET search_path = public, sim, pg_catalog;`,
    );
    // the test's own "replay": svc's data store code writing to the replica's database
    replayWrite = PostgresDatabase.open(replica.url, { max: 2 });
    replay = new PostgresBackend({ write: replayWrite, owned: [replayWrite] });
    await replay.init();
    t = await startApp({
      config: {
        'svc.datastore.read_url': withUser(replica.url, READ_ROLE),
        'svc.database_replica_wait': WAIT_MS,
        'svc.database_replica_max_lag': 3600,
      },
    });
    token = t.sysadminToken;
    await t.services.db.query(
      "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'rep-org', 'R', 'organization', true)",
      [randomUUID()],
    );
    await t.ok('package_create', { name: 'rep-ds', owner_org: 'rep-org' }, { token });
  });
  after(async () => {
    await t?.close();
    await replay?.close();
    await replica?.drop();
  });

  let id: string;
  let created: string;

  test('a caller who wrote reads the write: the replica has not replayed it in time, so the primary answers', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/3/action/datastore_create',
      headers: { authorization: token, 'content-type': 'application/json' },
      payload: JSON.stringify({
        resource: { package_id: 'rep-ds' },
        fields: [
          { id: 'n', type: 'int' },
          { id: 'label', type: 'text' },
        ],
        records: [
          { n: 1, label: 'one' },
          { n: 2, label: 'two' },
        ],
      }),
    });
    assert.equal(res.statusCode, 200, res.body);
    id = res.json().result.resource_id;
    created = res.headers[HEADER] as string;

    // the same credential, remembered by the process: waits for the replica, then reads on the primary
    const primaryBefore = await afterWrite('primary');
    const started = Date.now();
    const own = await search(id, { authorization: token });
    const waited = Date.now() - started;
    assert.equal(own.statusCode, 200, own.body);
    assert.deepEqual(labels(own), ['one', 'two']);
    assert.ok(waited >= WAIT_MS - 20 && waited < WAIT_MS + 3000, `waited ${waited} ms`);
    assert.equal(await afterWrite('primary'), primaryBefore + 1);
    assert.ok(parseLsn(created), 'the write answer carries the data store WAL position');
    assert.equal(res.headers['x-svc-read-after'], undefined, 'no catalog replicas: no catalog position');

    // a caller who wrote nothing reads the replica, which has not got the table yet
    assert.equal((await search(id)).statusCode, 404);
    // the position sent back as the header, or as the browser's cookie
    const viaHeader = await search(id, { [HEADER]: created });
    assert.equal(viaHeader.statusCode, 200, viaHeader.body);
    assert.deepEqual(labels(viaHeader), ['one', 'two']);
    const viaCookie = await search(id, { cookie: `svc_ds_read_after=${encodeURIComponent(created)}` });
    assert.deepEqual(labels(viaCookie), ['one', 'two']);
    // the catalog's position says nothing about the data store
    assert.equal((await search(id, { 'x-svc-read-after': created })).statusCode, 404);
    // a dump is a data store read too
    const dump = await t.app.inject({ method: 'GET', url: `/datastore/dump/${id}?format=csv`, headers: { [HEADER]: created } });
    assert.equal(dump.statusCode, 200, dump.body);
    assert.match(dump.body, /one[\s\S]*two/);
  });

  test('a replica that replays the write within the wait answers it', async () => {
    // the replica catches up with the table's creation; nobody who has not written waits
    await replay.create({
      resource_id: id,
      fields: [
        { id: 'n', type: 'int' },
        { id: 'label', type: 'text' },
      ],
      records: [
        { n: 1, label: 'one' },
        { n: 2, label: 'two' },
      ],
    });
    await setReplica(created);
    const onReplicaBefore = sample(await metrics(), 'svc_datastore_reads_total', { target: 'replica1' }) ?? 0;
    const anonymous = await search(id);
    assert.equal(anonymous.statusCode, 200, anonymous.body);
    assert.deepEqual(labels(anonymous), ['one', 'two']);
    assert.ok((sample(await metrics(), 'svc_datastore_reads_total', { target: 'replica1' }) ?? 0) > onReplicaBefore);

    const upsert = await t.app.inject({
      method: 'POST',
      url: '/api/3/action/datastore_upsert',
      headers: { authorization: token, 'content-type': 'application/json' },
      payload: JSON.stringify({ resource_id: id, method: 'insert', records: [{ n: 3, label: 'three' }] }),
    });
    assert.equal(upsert.statusCode, 200, upsert.body);
    const wrote = upsert.headers[HEADER] as string;
    assert.ok(parseLsn(wrote)! > parseLsn(created)!);

    const waitedBefore = await afterWrite('waited');
    const started = Date.now();
    const reading = search(id, { authorization: token });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await replay.upsert({ resource_id: id, method: 'insert', records: [{ n: 3, label: 'three' }] });
    await setReplica(wrote);
    const own = await reading;
    assert.deepEqual(labels(own), ['one', 'two', 'three']);
    assert.ok(Date.now() - started < WAIT_MS + 200, 'answered once the replica had replayed the write');
    assert.equal(await afterWrite('waited'), waitedBefore + 1);
  });

  test('status_show (sysadmins) and /metrics show the read URL as a replica with its lag', async () => {
    // the replica falls behind again
    await setReplica(formatLsn(parseLsn(created)! - 1n));
    await t.services.datastoreReads!.check();
    const shown = (await t.call('status_show', {}, { token })).body.result;
    const replicaStatus = shown.datastore_read_replica;
    assert.equal(replicaStatus.in_recovery, true);
    assert.equal(replicaStatus.serving, true);
    assert.ok(replicaStatus.lag_seconds > 0, JSON.stringify(replicaStatus));
    assert.ok(replicaStatus.lag_bytes > 0, JSON.stringify(replicaStatus));
    assert.doesNotMatch(JSON.stringify(shown), new RegExp(`${READ_ROLE}@`), 'no URL with its user in the answer');
    assert.equal((await t.call('status_show')).body.result.datastore_read_replica, undefined);
    const text = await metrics();
    assert.ok((sample(text, 'svc_datastore_replica_lag_seconds', { replica: 'replica1' }) ?? 0) > 0);
    assert.equal(sample(text, 'svc_datastore_replica_up', { replica: 'replica1' }), 1);
    // a lagging data store replica is reported by /readyz, and does not make the node unready
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.match(ready.json().checks.datastore_read_replica, /^ok \(.*s behind\)$/);
  });
});

test('a server that ends a connection lent out (between two statements) does not end the process', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  // every pool svc opens (catalog, data store, replicas) goes through absorbConnectionLoss
  const pool = PostgresDatabase.open(process.env.SVC_TEST_DATABASE_URL!, { max: 1 }).raw;
  const client = await pool.connect();
  try {
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // what a stopping replica does to each of its connections (without the listener: an uncaught 'error')
    await runAsSuperuser(process.env.SVC_TEST_DATABASE_URL!, `SELECT pg_terminate_backend(${pid})`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await assert.rejects(client.query('SELECT 1'));
  } finally {
    client.release();
  }
  // the pool drops the dead connection and opens a new one
  assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
  await pool.end();
});

describe('a data store read URL that is not a replica, or does not answer', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  test('the primary as read URL: no positions, nothing waits', async () => {
    const t = await startApp();
    try {
      const token = t.sysadminToken;
      await t.services.db.query(
        "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'plain-org', 'P', 'organization', true)",
        [randomUUID()],
      );
      await t.ok('package_create', { name: 'plain-ds', owner_org: 'plain-org' }, { token });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/3/action/datastore_create',
        headers: { authorization: token, 'content-type': 'application/json' },
        payload: JSON.stringify({ resource: { package_id: 'plain-ds' }, records: [{ a: 1 }] }),
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers[HEADER], undefined);
      const shown = (await t.call('status_show', {}, { token })).body.result.datastore_read_replica;
      assert.equal(shown.in_recovery, false);
      assert.equal(shown.serving, true);
    } finally {
      await t.close();
    }
  });

  test('a wrong read URL: a clear warning at start, reads on the primary as the read-only user, no error', async () => {
    const { logger, lines } = capturingLogger();
    const t = await startApp({ config: { 'svc.datastore.read_url': `postgresql://${READ_ROLE}@127.0.0.1:1/nowhere` }, logger });
    try {
      const warning = lines.find((l) => /svc\.datastore\.read_url/.test(l));
      assert.ok(warning, lines.join(''));
      assert.match(warning, /not usable at start; its reads go to the primary/);
      assert.match(warning, /127\.0\.0\.1:1\/nowhere/);
      assert.doesNotMatch(warning, new RegExp(`${READ_ROLE}@`));

      const token = t.sysadminToken;
      await t.services.db.query(
        "INSERT INTO groups (id, name, title, type, is_organization) VALUES ($1, 'down-org', 'D', 'organization', true)",
        [randomUUID()],
      );
      await t.ok('package_create', { name: 'down-ds', owner_org: 'down-org' }, { token });
      const { resource_id } = await t.ok('datastore_create', { resource: { package_id: 'down-ds' }, records: [{ a: 1 }] }, { token });
      const res = await t.app.inject({ method: 'GET', url: `/api/3/action/datastore_search?resource_id=${resource_id}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json().result.records.map((r: { a: number }) => r.a),
        [1],
      );
      // the fallback reads as the read-only user, not as the owner of the tables
      assert.equal(await (t.services.plugins.datastore as PostgresBackend).readUserProblem(), undefined);
      const shown = (await t.call('status_show', {}, { token })).body.result.datastore_read_replica;
      assert.equal(shown.serving, false);
      assert.match(shown.problem, /^down: /);
    } finally {
      await t.close();
    }
  });
});
