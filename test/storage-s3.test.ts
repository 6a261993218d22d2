// Uploaded files in an S3-compatible object store (svc.storage.backend = s3), against a real S3
// protocol server started here (s3rver) on a random port: uploads through resource_create, downloads
// with ranges and presigned redirects, removal after commit, the loader reading an upload from the
// store, the start-up check, and a store that is down (503 envelope, nothing changed, recovery).
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin, waitForLoad } from './helpers/fixtures.ts';
import { loadConfig } from '../src/config/load.ts';
import { openFileStore, closeFileStore } from '../src/files/store.ts';

const BUCKET = 'svc-files';
let s3dir: string;
let s3: S3rver;
let port: number;
let client: S3Client;
let t: TestApp;

async function startS3(at = 0): Promise<number> {
  s3 = new S3rver({ address: '127.0.0.1', port: at, directory: s3dir, silent: true, configureBuckets: [{ name: BUCKET, configs: [] }] });
  return ((await s3.run()) as AddressInfo).port;
}

const s3Config = (extra: Record<string, unknown> = {}) => ({
  'svc.storage.backend': 's3',
  'svc.storage.s3.endpoint': `http://127.0.0.1:${port}`,
  'svc.storage.s3.bucket': BUCKET,
  'svc.storage.s3.access_key_id': 'S3RVER',
  'svc.storage.s3.secret_access_key': 'S3RVER',
  'svc.storage.s3.force_path_style': true,
  'svc.storage.s3.prefix': 'portal/',
  ...extra,
});

/** The keys in the bucket under a prefix. */
async function keys(prefix: string): Promise<string[]> {
  const r = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

async function multipart(app: TestApp, action: string, fields: Record<string, string>, file?: { name: string; content: Buffer | string }) {
  const boundary = `----svctest${randomUUID()}`;
  const parts: Buffer[] = Object.entries(fields).map(([k, v]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`),
  );
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${file.name}"\r\nContent-Type: text/csv\r\n\r\n`,
      ),
      Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await app.app.inject({
    method: 'POST',
    url: `/api/3/action/${action}`,
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: app.sysadminToken },
  });
  return { status: res.statusCode, body: res.json() };
}

const download = (app: TestApp, url: string, headers: Record<string, string> = {}) =>
  app.app.inject({ method: 'GET', url: url.replace('http://test.local', ''), headers });

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

before(async () => {
  s3dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-s3-'));
  port = await startS3();
  client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  t = await startApp({ plugins: ['datastore', 'loader'], config: { ...s3Config(), 'svc.jobs.poll_interval': 50 } });
  await t.ok('organization_create', { name: 'ops-org' }, asSysadmin(t));
  await t.ok('package_create', { name: 'ops-files', owner_org: 'ops-org' }, asSysadmin(t));
});

after(async () => {
  await t?.close();
  client?.destroy();
  await s3?.close();
  fs.rmSync(s3dir, { recursive: true, force: true });
});

describe('uploads in the object store', () => {
  let resourceId: string;
  const content = Buffer.concat([Buffer.from('id,name\n'), randomBytes(300_000)]);

  test('resource_create with a file stores it in the bucket, not on local disk', async () => {
    const r = await multipart(t, 'resource_create', { package_id: 'ops-files', name: 'blob' }, { name: 'blob.bin', content });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    resourceId = r.body.result.id;
    assert.deepEqual(await keys('portal/resources/'), [`portal/resources/${resourceId}`]);
    assert.deepEqual(await keys('portal/staging/'), [], 'the staged copy is gone once the file is in place');
    const stored = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `portal/resources/${resourceId}` }));
    assert.equal(stored.Metadata?.sha256, sha256(content), 'the checksum travels with the object');
    assert.equal(fs.existsSync(path.join(t.storagePath, 'resources')), false);
  });

  test('the download gives the same bytes, and single ranges', async () => {
    const { url } = await t.ok('resource_show', { id: resourceId }, asSysadmin(t));
    const whole = await download(t, url);
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.equal(sha256(whole.rawPayload), sha256(content));
    const part = await download(t, url, { range: 'bytes=8-107' });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 8-107/${content.length}`);
    assert.deepEqual(part.rawPayload, content.subarray(8, 108));
    const tail = await download(t, url, { range: 'bytes=-10' });
    assert.deepEqual(tail.rawPayload, content.subarray(content.length - 10));
    assert.equal((await download(t, url, { range: `bytes=${content.length}-` })).statusCode, 416);
  });

  test('replacing the file keeps one object with the new bytes', async () => {
    const r = await multipart(t, 'resource_patch', { id: resourceId }, { name: 'blob.bin', content: 'id,name\n1,new\n' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const whole = await download(t, r.body.result.url);
    assert.equal(whole.body, 'id,name\n1,new\n');
    assert.deepEqual(await keys('portal/'), [`portal/resources/${resourceId}`]);
  });

  test('a failed write leaves the stored file as it was', async () => {
    const r = await multipart(t, 'resource_patch', { id: resourceId, last_modified: 'not a date' }, { name: 'x.csv', content: 'changed' });
    assert.equal(r.status, 409, JSON.stringify(r.body));
    const { url } = await t.ok('resource_show', { id: resourceId }, asSysadmin(t));
    assert.equal((await download(t, url)).body, 'id,name\n1,new\n');
    assert.deepEqual(await keys('portal/staging/'), [], 'the bytes sent for the failed write are not kept');
  });

  test('resource_delete removes the object after the commit', async () => {
    await t.ok('resource_delete', { id: resourceId }, asSysadmin(t));
    assert.deepEqual(await keys('portal/resources/'), []);
  });
});

test('the loader loads an uploaded CSV from the object store into the data store', async () => {
  const csv = 'city,people\nLyon,522000\nGenève,203000\nBasel,173000\n';
  const r = await multipart(
    t,
    'resource_create',
    { package_id: 'ops-files', name: 'cities', format: 'CSV' },
    { name: 'cities.csv', content: csv },
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const st = await waitForLoad(t, r.body.result.id);
  assert.equal(st.status, 'complete', JSON.stringify(st.task_info?.logs));
  const rows = await t.ok('datastore_search', { resource_id: r.body.result.id, sort: 'people desc' }, asSysadmin(t));
  assert.deepEqual(
    rows.records.map((x: any) => [x.city, x.people]),
    [
      ['Lyon', 522000],
      ['Genève', 203000],
      ['Basel', 173000],
    ],
  );
});

test('with presigned downloads the download answers 302 to the object store, which serves the bytes', async () => {
  const other = await startApp({
    plugins: [],
    config: s3Config({ 'svc.storage.s3.presigned_downloads': true, 'svc.storage.s3.presigned_expiry': 60 }),
  });
  try {
    await other.ok('organization_create', { name: 'ops-org2' }, asSysadmin(other));
    await other.ok('package_create', { name: 'ops-presigned', owner_org: 'ops-org2' }, asSysadmin(other));
    const r = await multipart(
      other,
      'resource_create',
      { package_id: 'ops-presigned', name: 'p' },
      { name: 'p.csv', content: 'a,b\n1,2\n' },
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const res = await download(other, r.body.result.url);
    assert.equal(res.statusCode, 302);
    const location = String(res.headers.location);
    assert.match(
      location,
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/${BUCKET}/portal/resources/${r.body.result.id}\\?.*X-Amz-Expires=60`),
    );
    const fetched = await fetch(location);
    assert.equal(fetched.status, 200);
    assert.equal(await fetched.text(), 'a,b\n1,2\n');
  } finally {
    await other.close();
  }
});

test('the start-up check names a bucket that does not exist', async () => {
  const config = loadConfig({
    env: {},
    overrides: { 'svc.storage_path': s3dir, ...s3Config({ 'svc.storage.s3.bucket': 'no-such-bucket' }) },
  });
  try {
    await assert.rejects(
      (await openFileStore(config)).check(),
      /bucket "no-such-bucket" at http:\/\/127\.0\.0\.1:\d+ cannot be used: it does not exist/,
    );
  } finally {
    closeFileStore(config);
  }
  const missing = loadConfig({ env: {}, overrides: { 'svc.storage.backend': 's3' } });
  await assert.rejects(openFileStore(missing), /svc\.storage\.s3\.bucket is not set/);
});

test('a store that is down: uploads and downloads answer 503, nothing is changed, and it recovers', async () => {
  const first = await multipart(
    t,
    'resource_create',
    { package_id: 'ops-files', name: 'kept' },
    { name: 'kept.txt', content: 'kept bytes' },
  );
  assert.equal(first.status, 200);
  const before = (await t.ok('package_show', { id: 'ops-files' }, asSysadmin(t))).resources.length;
  await s3.close();
  try {
    const r = await multipart(t, 'resource_create', { package_id: 'ops-files', name: 'lost?' }, { name: 'new.txt', content: 'new bytes' });
    assert.equal(r.status, 503);
    assert.equal(r.body.success, false);
    assert.equal(r.body.error.__type, 'Service Unavailable');
    assert.match(r.body.error.message, /file storage is not available/);
    assert.equal((await t.ok('package_show', { id: 'ops-files' }, asSysadmin(t))).resources.length, before, 'no resource without its file');
    const down = await download(t, first.body.result.url);
    assert.equal(down.statusCode, 503);
    assert.match(down.body, /file storage is not available/);
  } finally {
    await startS3(port);
  }
  const again = await multipart(
    t,
    'resource_create',
    { package_id: 'ops-files', name: 'later' },
    { name: 'later.txt', content: 'later bytes' },
  );
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal((await download(t, again.body.result.url)).body, 'later bytes');
  assert.equal((await download(t, first.body.result.url)).body, 'kept bytes');
});
