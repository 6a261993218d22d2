// A small catalog for the browser tests and the README's screenshots, made through the Action API:
// an organization with a public dataset whose CSV upload is loaded into the data store, a second
// public dataset, a group, a private dataset, and a user who follows the first dataset.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestApp } from './app.ts';

export const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'web');
export const RAINFALL_CSV = path.join(FIXTURES, 'rainfall-stations.csv');

/** resource_create with a file upload (multipart over HTTP), as `token`. */
export async function uploadResource(
  t: TestApp,
  token: string,
  fields: Record<string, string>,
  file: { name: string; content: Buffer | string },
): Promise<any> {
  const boundary = `----svcweb${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${file.name}"\r\nContent-Type: text/csv\r\n\r\n`,
    ),
    Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/resource_create',
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: token },
  });
  const body = res.json();
  if (!body.success) throw new Error(`resource_create failed (${res.statusCode}): ${JSON.stringify(body.error)}`);
  return body.result;
}

/** Waits until the loader has finished with a resource (complete or error); returns its status. */
export async function waitForLoad(t: TestApp, resourceId: string, ms = 90_000): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await t.call('xloader_status', { resource_id: resourceId }, { token: t.sysadminToken });
    if (r.body.success && ['complete', 'error'].includes(r.body.result.status)) return r.body.result;
    if (Date.now() > until) throw new Error(`the loader did not finish ${resourceId}: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

export interface SeededCatalog {
  org: { name: string; title: string };
  group: { name: string; title: string };
  dataset: { id: string; name: string; title: string };
  resource: { id: string; name: string };
  other: { name: string; title: string };
  secret: { id: string; name: string; title: string; resourceId: string };
  /** A registered user (password 'correct horse battery') who follows `dataset`. */
  reader: { name: string; token: string };
}

export async function seedCatalog(t: TestApp): Promise<SeededCatalog> {
  const admin = t.sysadminToken;
  const org = { name: 'rainfall-office', title: 'Rainfall Office' };
  const group = { name: 'climate', title: 'Climate' };
  await t.ok('organization_create', { ...org, description: 'Measures **rainfall** at stations across the region.' }, { token: admin });
  await t.ok('group_create', { ...group, description: 'Weather and climate data.' }, { token: admin });
  const dataset = await t.ok(
    'package_create',
    {
      name: 'rainfall-stations-2024',
      title: 'Rainfall at stations, 2024',
      owner_org: org.name,
      license_id: 'cc-by',
      notes: 'Monthly rainfall in millimetres measured at **ten stations**.\n\n- source: station network\n- unit: mm',
      tags: [{ name: 'rainfall' }, { name: 'weather' }],
      groups: [{ name: group.name }],
      author: 'Station network',
    },
    { token: admin },
  );
  const resource = await uploadResource(
    t,
    admin,
    { package_id: dataset.id, name: 'Rainfall by station', format: 'CSV', description: 'One row per station and month.' },
    { name: 'rainfall-stations.csv', content: fs.readFileSync(RAINFALL_CSV) },
  );
  const other = await t.ok(
    'package_create',
    {
      name: 'river-levels',
      title: 'River levels',
      owner_org: org.name,
      license_id: 'odc-odbl',
      notes: 'Daily river levels.',
      tags: [{ name: 'water' }],
      resources: [{ url: 'http://example.org/river-levels.json', name: 'River levels API', format: 'JSON' }],
    },
    { token: admin },
  );
  const secret = await t.ok(
    'package_create',
    { name: 'secret-gauges', title: 'Secret gauges', owner_org: org.name, private: true, notes: 'Not for the public.' },
    { token: admin },
  );
  const secretResource = await uploadResource(
    t,
    admin,
    { package_id: secret.id, name: 'Gauge readings', format: 'CSV' },
    { name: 'gauges.csv', content: 'gauge,level\nsecret-gauge-a,1.5\nsecret-gauge-b,2.5\n' },
  );
  const reader = await t.user('rita_reader', { email: 'rita@example.org' });
  await t.ok('follow_dataset', { id: dataset.id }, { token: reader.token });
  await waitForLoad(t, resource.id);
  await waitForLoad(t, secretResource.id);
  return {
    org,
    group,
    dataset: { id: dataset.id, name: dataset.name, title: dataset.title },
    resource: { id: resource.id, name: resource.name },
    other: { name: other.name, title: other.title },
    secret: { id: secret.id, name: secret.name, title: secret.title, resourceId: secretResource.id },
    reader: { name: reader.name, token: reader.token },
  };
}
