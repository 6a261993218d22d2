// Background jobs: the queue, the in-process worker, job_* actions, leases, task status actions,
// and (PostgreSQL) two worker processes that never run a job twice.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startApp, onPostgres, type TestApp } from './helpers/app.ts';
import { enqueueJob } from '../src/jobs/queue.ts';

let t: TestApp;
let userToken: string;

async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, what: string, ms = 20000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

const jobEnded = (id: string) =>
  waitFor(async () => {
    const j = await t.ok('job_show', { id }, { token: t.sysadminToken });
    return ['finished', 'failed'].includes(j.status) ? j : null;
  }, `job ${id}`);

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.jobs.poll_interval': 30, 'svc.jobs.lease': 1 } });
  userToken = (await t.user('job_user')).token;
  t.services.jobs.registerJobType('echo', ({ job }) => ({ echoed: job.data }));
  t.services.jobs.registerJobType('boom', () => {
    throw new Error('kaput: the job broke');
  });
  t.services.jobs.registerJobType('slow', async ({ signal }) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, 20000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  });
});
after(() => t.close());

describe('background jobs', () => {
  test('job actions are sysadmin-only', async () => {
    for (const [action, data] of [
      ['job_list', {}],
      ['job_show', { id: 'x' }],
      ['job_clear', {}],
      ['job_cancel', { id: 'x' }],
    ] as const) {
      const r = await t.call(action, data, { token: userToken });
      assert.equal(r.status, 403, action);
      assert.equal(r.body.error?.__type, 'Authorization Error');
    }
  });

  test('a job runs in the in-process worker; job_show has its result', async () => {
    const job = await t.services.jobs.enqueue(t.services.db, { type: 'echo', data: { n: 1 }, title: 'echo one' });
    const done = await jobEnded(job.id);
    assert.equal(done.status, 'finished');
    assert.deepEqual(done.result, { echoed: { n: 1 } });
    assert.equal(done.title, 'echo one');
    assert.equal(done.queue, 'default');
    assert.match(done.created, /^\d{4}-\d\d-\d\dT/);
  });

  test('a job that throws is failed with its error', async () => {
    const job = await t.services.jobs.enqueue(t.services.db, { type: 'boom' });
    const done = await jobEnded(job.id);
    assert.equal(done.status, 'failed');
    assert.match(done.error, /kaput: the job broke/);
  });

  test('a job of an unknown type fails with a message', async () => {
    const job = await t.services.jobs.enqueue(t.services.db, { type: 'no_such_type' });
    const done = await jobEnded(job.id);
    assert.equal(done.status, 'failed');
    assert.match(done.error, /no handler for job type "no_such_type"/);
  });

  test('job_list by queue, job_clear, job_cancel', async () => {
    // Jobs on a queue no worker takes stay queued.
    const a = await enqueueJob(t.services.db, { type: 'echo', queue: 'q_other' });
    const b = await enqueueJob(t.services.db, { type: 'echo', queue: 'q_third' });
    const listed = await t.ok('job_list', { queues: ['q_other'] }, { token: t.sysadminToken });
    assert.deepEqual(
      listed.map((j: any) => j.id),
      [a.id],
    );
    assert.equal(listed[0].status, 'queued');
    const all = await t.ok('job_list', {}, { token: t.sysadminToken });
    assert.ok(all.some((j: any) => j.id === b.id));
    assert.equal((await t.call('job_cancel', { id: b.id }, { token: t.sysadminToken })).status, 200);
    assert.equal((await t.call('job_show', { id: b.id }, { token: t.sysadminToken })).status, 404);
    assert.equal((await t.call('job_cancel', { id: b.id }, { token: t.sysadminToken })).status, 404);
    assert.deepEqual(await t.ok('job_clear', { queues: ['q_other', 'q_none'] }, { token: t.sysadminToken }), ['q_other']);
    assert.equal((await t.ok('job_list', { queues: 'q_other' }, { token: t.sysadminToken })).length, 0);
    const bad = await t.call('job_show', {}, { token: t.sysadminToken });
    assert.equal(bad.status, 409);
    assert.deepEqual(bad.body.error?.id, ['Missing value']);
  });

  test('canceling a running job stops it', async () => {
    const job = await t.services.jobs.enqueue(t.services.db, { type: 'slow' });
    await waitFor(async () => (await t.ok('job_show', { id: job.id }, { token: t.sysadminToken })).status === 'running', 'running');
    await t.ok('job_cancel', { id: job.id }, { token: t.sysadminToken });
    const j = await t.ok('job_show', { id: job.id }, { token: t.sysadminToken });
    assert.equal(j.status, 'canceled');
    // The worker notices at its next lease renewal and goes on with other jobs.
    const next = await t.services.jobs.enqueue(t.services.db, { type: 'echo' });
    assert.equal((await jobEnded(next.id)).status, 'finished');
    assert.equal((await t.ok('job_show', { id: job.id }, { token: t.sysadminToken })).status, 'canceled');
  });

  test('a job whose worker died is run again; after max_attempts it is failed', async () => {
    const db = t.services.db;
    const retried = await enqueueJob(db, { type: 'echo', queue: 'q_dead', maxAttempts: 3 });
    const given = await enqueueJob(db, { type: 'echo', queue: 'q_dead', maxAttempts: 1 });
    // As a worker that took them and died: running, lease in the past.
    await db.query(
      `UPDATE jobs SET status = 'running', attempts = 1, worker = 'dead', queue = 'default',
      lease_until = (now() at time zone 'utc') - interval '1 minute' WHERE id = ANY($1)`,
      [[retried.id, given.id]],
    );
    const again = await jobEnded(retried.id);
    assert.equal(again.status, 'finished');
    assert.equal(again.attempts, 2);
    const failed = await jobEnded(given.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /worker running this job stopped \(lease expired\) after 1 attempt/);
  });

  test('two worker processes on PostgreSQL never run a job twice', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
    const db = t.services.db;
    await db.query('CREATE TABLE job_runs (job_id text NOT NULL, pid int NOT NULL)');
    await db.query('CREATE TABLE job_workers_ready (pid int NOT NULL)');
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await enqueueJob(db, { type: 'count', queue: 'q_pair' })).id);
    await db.query(`UPDATE jobs SET queue = 'default' WHERE queue = 'q_pair'`);
    // The in-process worker does not know 'count': stop it so only the two processes take jobs.
    await t.services.jobs.stop();
    const url = t.services.config.str('svc.database_url');
    const run = () =>
      new Promise<number>((resolve, reject) => {
        const p = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/helpers/job-worker.ts'), url], {
          stdio: ['ignore', 'inherit', 'inherit'],
        });
        p.on('error', reject);
        p.on('exit', (code) => resolve(code ?? -1));
      });
    const codes = await Promise.all([run(), run()]);
    assert.deepEqual(codes, [0, 0]);
    const runs = await db.query<{ job_id: string; n: number }>('SELECT job_id, count(*)::int AS n FROM job_runs GROUP BY job_id');
    assert.equal(runs.rows.length, ids.length, 'every job ran');
    assert.ok(
      runs.rows.every((r) => r.n === 1),
      'no job ran twice',
    );
    const pids = await db.query('SELECT DISTINCT pid FROM job_runs');
    assert.equal(pids.rows.length, 2, 'both workers took jobs');
    const states = await db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM jobs WHERE id = ANY($1) GROUP BY status`,
      [ids],
    );
    assert.deepEqual(states.rows, [{ status: 'finished', n: ids.length }]);
  });
});

describe('task status', () => {
  const base = { entity_id: 'ent-1', entity_type: 'resource', task_type: 'xloader', key: 'xloader' };

  test('update creates, then updates the same (entity_id, task_type, key); show by both keys', async () => {
    const a = await t.ok('task_status_update', { ...base, value: '{"job_id": "1"}', state: 'pending' }, { token: t.sysadminToken });
    assert.deepEqual(Object.keys(a).sort(), [
      'entity_id',
      'entity_type',
      'error',
      'id',
      'key',
      'last_updated',
      'state',
      'task_type',
      'value',
    ]);
    const b = await t.ok('task_status_update', { ...base, state: 'complete', value: { job_id: '2' } }, { token: t.sysadminToken });
    assert.equal(b.id, a.id);
    assert.equal(b.value, '{"job_id":"2"}');
    const shown = await t.ok('task_status_show', { entity_id: 'ent-1', task_type: 'xloader', key: 'xloader' });
    assert.equal(shown.state, 'complete');
    assert.equal((await t.ok('task_status_show', { id: a.id })).id, a.id);
    const byId = await t.ok('task_status_update', { ...base, id: a.id, state: 'error', error: 'bad' }, { token: t.sysadminToken });
    assert.equal(byId.error, 'bad');
  });

  test('errors: missing fields, unknown ids, sysadmin-only writes', async () => {
    const r = await t.call('task_status_update', { entity_id: 'x' }, { token: t.sysadminToken });
    assert.equal(r.status, 409);
    assert.deepEqual(r.body.error?.entity_type, ['Missing value']);
    assert.deepEqual(r.body.error?.key, ['Missing value']);
    assert.equal((await t.call('task_status_update', base, { token: userToken })).status, 403);
    assert.equal((await t.call('task_status_show', { id: 'nope' })).status, 404);
    const partial = await t.call('task_status_show', { entity_id: 'x' });
    assert.equal(partial.status, 409);
    assert.deepEqual(partial.body.error?.task_type, ['Missing value']);
    assert.equal((await t.call('task_status_delete', { id: 'nope' }, { token: t.sysadminToken })).status, 404);
    assert.equal((await t.call('task_status_update', { ...base, id: 'nope' }, { token: t.sysadminToken })).status, 404);
  });

  test('update_many writes all or nothing; delete', async () => {
    const many = await t.ok(
      'task_status_update_many',
      {
        data: [
          { ...base, entity_id: 'm1' },
          { ...base, entity_id: 'm2' },
        ],
      },
      { token: t.sysadminToken },
    );
    assert.equal(many.results.length, 2);
    const bad = await t.call(
      'task_status_update_many',
      { data: [{ ...base, entity_id: 'm3' }, { entity_id: 'm4' }] },
      { token: t.sysadminToken },
    );
    assert.equal(bad.status, 409);
    assert.equal((await t.call('task_status_show', { entity_id: 'm3', task_type: 'xloader', key: 'xloader' })).status, 404);
    await t.ok('task_status_delete', { id: many.results[0].id }, { token: t.sysadminToken });
    assert.equal((await t.call('task_status_show', { id: many.results[0].id })).status, 404);
  });
});
