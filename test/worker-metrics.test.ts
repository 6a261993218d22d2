// The metrics a job worker process serves (`svc jobs worker --metrics-port`): job queue depth and
// age per queue, the loader's throughput (rows, bytes, seconds of loads), behind svc.metrics.token.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';
import { waitForLoad } from './helpers/fixtures.ts';
import { serveWorkerMetrics, type MetricsListener } from '../src/http/worker-metrics.ts';
import { sample } from './helpers/metrics.ts';

let t: TestApp;
let listener: MetricsListener;
const TOKEN = 'worker-metrics-secret';

const scrape = async () => {
  const res = await fetch(`http://127.0.0.1:${listener.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  return res.text();
};

before(async () => {
  t = await startApp({
    plugins: ['datastore', 'loader'],
    config: { 'svc.jobs.poll_interval': 50, 'svc.metrics.token': TOKEN, 'svc.jobs.queues': ['default', 'harvest'] },
  });
  listener = await serveWorkerMetrics(t.services, 0, '127.0.0.1');
});
after(async () => {
  await listener?.close();
  await t?.close();
});

test('a worker serves /healthz, and /metrics only with the token', async () => {
  const health = await fetch(`http://127.0.0.1:${listener.port}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const refused = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
  assert.equal(refused.status, 401);
  const other = await fetch(`http://127.0.0.1:${listener.port}/api/3/action/package_list`);
  assert.equal(other.status, 404);
  const text = await scrape();
  assert.equal(sample(text, 'svc_jobs_queued', { queue: 'harvest' }), 0);
  assert.equal(sample(text, 'svc_jobs_oldest_queued_seconds', { queue: 'default' }), 0);
});

test("a load's rows and bytes are counted in the loader's throughput", async () => {
  const before = await scrape();
  const rows0 = sample(before, 'svc_loader_rows_total') ?? 0;
  const bytes0 = sample(before, 'svc_loader_bytes_total') ?? 0;
  const loads0 = sample(before, 'svc_loader_loads_total') ?? 0;
  await t.ok('organization_create', { name: 'metrics-org' }, { token: t.sysadminToken });
  const pkg = await t.ok('package_create', { name: 'metrics-ds', owner_org: 'metrics-org' }, { token: t.sysadminToken });
  const csv = 'id,name\n1,Ann\n2,Bob\n3,Cy\n4,Dee\n';
  const boundary = `----svctest${randomUUID()}`;
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\n${pkg.id}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="m.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`,
  );
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/resource_create',
    payload: body,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: t.sysadminToken },
  });
  assert.equal(created.statusCode, 200, created.body);
  const status = await waitForLoad(t, created.json().result.id, { ms: 60_000 });
  assert.equal(status.status, 'complete', JSON.stringify(status));
  const text = await scrape();
  assert.equal(sample(text, 'svc_loader_loads_total'), loads0 + 1);
  assert.equal(sample(text, 'svc_loader_rows_total'), rows0 + 4);
  assert.equal(sample(text, 'svc_loader_bytes_total'), bytes0 + Buffer.byteLength(csv));
  assert.ok((sample(text, 'svc_loader_seconds_total') ?? 0) > 0);
});
