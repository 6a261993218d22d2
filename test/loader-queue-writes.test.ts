// The loads a dataset write queues (issue #32: creates by the hundred thousand): a new resource
// has no load waiting, so nothing is looked for or deleted in the job queue; a changed URL still
// replaces the load that waits for a worker, so one load per resource stays queued.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import type { Database } from '../src/db/database.ts';
import { noteTransactionStatements } from './helpers/statements.ts';

let t: TestApp;
const statements: string[] = [];
const admin = () => ({ token: t.sysadminToken });

before(async () => {
  // no worker: the queued loads stay queued
  t = await startApp({ plugins: ['datastore', 'loader'], config: { 'svc.jobs.in_process_worker': false } });
  const db = t.services.db as Database;
  noteTransactionStatements(db, statements);
  await t.ok('organization_create', { name: 'lq-org' }, admin());
});
after(async () => {
  await t?.close();
});

const queuedLoads = async (resourceId: string) =>
  (
    await t.services.db.query<{ id: string }>(
      `SELECT id FROM jobs WHERE status = 'queued' AND type = 'xloader' AND data->>'resource_id' = $1`,
      [resourceId],
    )
  ).rows.map((r) => r.id);

test('package_create queues one load per loadable resource without searching the queue; a new URL replaces the waiting load', async () => {
  statements.length = 0;
  const created = await t.ok(
    'package_create',
    {
      name: 'lq-ds',
      owner_org: 'lq-org',
      resources: [
        { url: 'http://example.org/a.csv', format: 'CSV' },
        { url: 'http://example.org/b.pdf', format: 'PDF' },
        { url: 'http://example.org/c.xlsx' },
      ],
    },
    admin(),
  );
  const sql = statements.splice(0);
  assert.equal(sql.filter((s) => /DELETE FROM jobs\b/.test(s)).length, 0, 'no waiting load is looked for');
  assert.equal(sql.filter((s) => /FROM task_status WHERE entity_id/.test(s)).length, 0, 'the task status is read with the resources');
  const [csv, pdf, xlsx] = created.resources;
  for (const r of [csv, xlsx]) {
    const jobs = await queuedLoads(r.id);
    assert.equal(jobs.length, 1);
    const status = await t.ok('xloader_status', { resource_id: r.id }, admin());
    assert.equal(status.status, 'pending');
    assert.equal(status.job_id, jobs[0]);
  }
  assert.deepEqual(await queuedLoads(pdf.id), []);

  // a new URL: the waiting load is replaced by the new one
  const updated = await t.ok('resource_patch', { id: csv.id, url: 'http://example.org/a2.csv' }, admin());
  const jobs = await queuedLoads(updated.id);
  assert.equal(jobs.length, 1);
  assert.equal((await t.ok('xloader_status', { resource_id: csv.id }, admin())).job_id, jobs[0]);
  // the same URL again: nothing new is queued
  await t.ok('package_patch', { id: 'lq-ds', title: 'Renamed' }, admin());
  assert.deepEqual(await queuedLoads(csv.id), jobs);
  assert.equal((await queuedLoads(xlsx.id)).length, 1);
});
