import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let member: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };

/** An organization made by a sysadmin, with these users (by name) as members. */
async function makeOrg(name: string, members: [string, string][] = []): Promise<string> {
  const users = members.map(([userName, capacity]) => ({ name: userName, capacity }));
  return (await t.ok('organization_create', { name, users }, { token: t.sysadminToken })).id;
}

/** POSTs a multipart form (fields + one file in field `upload`). */
async function multipart(
  action: string,
  fields: Record<string, string>,
  file: { name: string; content: Buffer | string; type?: string; field?: string } | undefined,
  token?: string,
) {
  const boundary = '----svctest' + randomUUID();
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'upload'}"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
    );
    parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/3/action/${action}`,
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...(token ? { authorization: token } : {}) },
  });
  return { status: res.statusCode, body: res.json() };
}

const filePath = (id: string) => path.join(t.storagePath, 'resources', id.slice(0, 3), id.slice(3, 6), id.slice(6));
/** The checksum kept beside a stored file, once it has been computed (it may trail the upload). */
async function recordedChecksum(id: string): Promise<string> {
  const file = `${filePath(id)}.sha256`;
  for (let i = 0; i < 100 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 20));
  return fs.readFileSync(file, 'utf8').split(' ').at(-1)!;
}
/** Whether anything of the resource's upload is left in storage: the file or the checksum kept beside it. */
const storedAny = (id: string) => fs.existsSync(filePath(id)) || fs.existsSync(`${filePath(id)}.sha256`);
const get = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: url.replace('http://test.local', ''), headers });

before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.max_resource_size': 1 } });
  editor = await t.user('up_editor');
  member = await t.user('up_member');
  outsider = await t.user('up_outsider');
  await makeOrg('up-org', [
    [editor.name, 'editor'],
    [member.name, 'member'],
  ]);
});
after(async () => {
  await t?.close();
});

const CSV = 'a,b\n1,2\n3,4\n';

test('upload a file with resource_create and download it', async () => {
  const pkg = await t.ok('package_create', { name: 'up-ds', owner_org: 'up-org' }, { token: editor.token });
  const r = await multipart(
    'resource_create',
    { package_id: 'up-ds', name: 'My data' },
    { name: 'my data.csv', content: CSV, type: 'text/csv' },
    editor.token,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const res = r.body.result;
  assert.equal(res.url_type, 'upload');
  assert.equal(res.url, `http://test.local/dataset/${pkg.id}/resource/${res.id}/download/my-data.csv`);
  assert.equal(res.size, CSV.length);
  assert.equal(res.mimetype, 'text/csv');
  assert.equal(res.format, 'CSV');
  assert.equal(fs.readFileSync(filePath(res.id), 'utf8'), CSV);
  // no temporary files are left behind
  assert.deepEqual(
    fs.readdirSync(path.dirname(filePath(res.id))).filter((f) => f.includes('.part-')),
    [],
  );

  let d = await get(res.url);
  assert.equal(d.statusCode, 200);
  assert.equal(d.body, CSV);
  assert.match(String(d.headers['content-type']), /^text\/csv/);
  assert.equal(d.headers['accept-ranges'], 'bytes');
  d = await get(`/dataset/up-ds/resource/${res.id}/download`);
  assert.equal(d.statusCode, 200);
  assert.equal(d.body, CSV);
  d = await get(res.url, { range: 'bytes=0-2' });
  assert.equal(d.statusCode, 206);
  assert.equal(d.body, 'a,b');
  assert.equal(d.headers['content-range'], `bytes 0-2/${CSV.length}`);
  d = await get(res.url, { range: 'bytes=-4' });
  assert.equal(d.statusCode, 206);
  assert.equal(d.body, '3,4\n');
  d = await get(res.url, { range: 'bytes=4-' });
  assert.equal(d.body, CSV.slice(4));
  d = await get(res.url, { range: 'bytes=100-' });
  assert.equal(d.statusCode, 416);
  assert.equal(d.headers['content-range'], `bytes */${CSV.length}`);
  d = await get(`/dataset/other/resource/${res.id}/download/my-data.csv`);
  assert.equal(d.statusCode, 404);
  d = await get(`/dataset/up-ds/resource/${randomUUID()}/download/x.csv`);
  assert.equal(d.statusCode, 404);

  // binary content survives
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const bin = await multipart('resource_create', { package_id: pkg.id }, { name: 'blob.bin', content: bytes }, editor.token);
  assert.equal(bin.status, 200);
  d = await get(bin.body.result.url);
  assert.ok(Buffer.from(d.rawPayload).equals(bytes));
  assert.equal(d.headers['content-type'], 'application/octet-stream');
});

test('an upload sent without a name is named after its file (CKAN)', async () => {
  await t.ok('package_create', { name: 'up-named', owner_org: 'up-org' }, { token: editor.token });
  const r = await multipart('resource_create', { package_id: 'up-named' }, { name: 'Population 2024.csv', content: CSV }, editor.token);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.result.name, 'Population 2024.csv');
  // a name sent is kept, and a link without a name stays unnamed
  const named = await multipart('resource_create', { package_id: 'up-named', name: 'Mine' }, { name: 'b.csv', content: CSV }, editor.token);
  assert.equal(named.body.result.name, 'Mine');
  const link = await t.ok('resource_create', { package_id: 'up-named', url: 'http://example.org/c.csv' }, { token: editor.token });
  assert.equal(link.name, null);
});

test('downloads honour dataset privacy', async () => {
  await t.ok('package_create', { name: 'up-private', owner_org: 'up-org', private: true }, { token: editor.token });
  const r = await multipart('resource_create', { package_id: 'up-private' }, { name: 'secret.txt', content: 'hush' }, editor.token);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const url = r.body.result.url;
  assert.equal((await get(url)).statusCode, 403);
  assert.equal((await get(url, { authorization: outsider.token })).statusCode, 403);
  const ok = await get(url, { authorization: member.token });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.body, 'hush');
  assert.match(String(ok.headers['content-type']), /^text\/plain/);
});

test('the checksum kept with an upload is the SHA-256 of its bytes (a file of many chunks)', async () => {
  await t.ok('package_create', { name: 'up-sum', owner_org: 'up-org' }, { token: editor.token });
  const content = randomBytes(700 * 1024);
  const r = await multipart('resource_create', { package_id: 'up-sum' }, { name: 'blob.bin', content }, editor.token);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(await recordedChecksum(r.body.result.id), createHash('sha256').update(content).digest('hex'));
  assert.ok(fs.readFileSync(filePath(r.body.result.id)).equals(content));
});

test('replace, unlink and delete uploads remove old files', async () => {
  const pkg = await t.ok('package_create', { name: 'up-replace', owner_org: 'up-org' }, { token: editor.token });
  const first = (await multipart('resource_create', { package_id: pkg.id }, { name: 'v1.csv', content: 'one\n' }, editor.token)).body
    .result;
  const patched = await multipart('resource_patch', { id: first.id }, { name: 'v2.json', content: '{"v":2}' }, editor.token);
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.result.url, `http://test.local/dataset/${pkg.id}/resource/${first.id}/download/v2.json`);
  assert.equal(patched.body.result.size, 7);
  assert.equal((await get(patched.body.result.url)).body, '{"v":2}');
  // a patch without a file keeps it; package_update with the shown dict keeps it too
  const kept = await t.ok('resource_patch', { id: first.id, description: 'still here' }, { token: editor.token });
  assert.equal(kept.url, patched.body.result.url);
  const shown = await t.ok('package_show', { id: pkg.id });
  const again = await t.ok('package_update', shown, { token: editor.token });
  assert.equal(again.resources[0].url, patched.body.result.url);
  assert.ok(fs.existsSync(filePath(first.id)));
  assert.match(await recordedChecksum(first.id), /^[0-9a-f]{64}$/, 'its checksum is kept beside it');
  // becoming a link removes the file (and its checksum)
  const link = await t.ok('resource_patch', { id: first.id, url: 'http://elsewhere.org/x.csv', url_type: '' }, { token: editor.token });
  assert.equal(link.url, 'http://elsewhere.org/x.csv');
  assert.ok(!storedAny(first.id));
  // resource_delete removes its file
  const second = (await multipart('resource_create', { package_id: pkg.id }, { name: 'v3.csv', content: 'three\n' }, editor.token)).body
    .result;
  assert.ok(fs.existsSync(filePath(second.id)));
  await t.ok('resource_delete', { id: second.id }, { token: editor.token });
  assert.ok(!storedAny(second.id));
  // package_update without the resource removes its file
  const third = (await multipart('resource_create', { package_id: pkg.id }, { name: 'v4.csv', content: 'four\n' }, editor.token)).body
    .result;
  await t.ok('package_update', { id: pkg.id, resources: [] }, { token: editor.token });
  assert.ok(!storedAny(third.id));
  // dataset_purge removes files
  const fourth = (await multipart('resource_create', { package_id: pkg.id }, { name: 'v5.csv', content: 'five\n' }, editor.token)).body
    .result;
  await t.ok('dataset_purge', { id: pkg.id }, { token: t.sysadminToken });
  assert.ok(!storedAny(fourth.id));
  assert.equal((await get(fourth.url)).statusCode, 404);
});

test('failed uploads store nothing', async () => {
  await t.ok('package_create', { name: 'up-fail', owner_org: 'up-org' }, { token: editor.token });
  const before = await t.services.db.query('SELECT count(*)::int AS n FROM resources');
  const bad = await multipart('resource_create', { package_id: 'up-fail', size: 'huge' }, { name: 'f.csv', content: 'x\n' }, editor.token);
  assert.equal(bad.status, 409);
  assert.deepEqual(bad.body.error.size, ['Invalid integer']);
  const denied = await multipart('resource_create', { package_id: 'up-fail' }, { name: 'f.csv', content: 'x\n' }, outsider.token);
  assert.equal(denied.status, 403);
  const big = await multipart(
    'resource_create',
    { package_id: 'up-fail' },
    { name: 'big.bin', content: Buffer.alloc(1024 * 1024 + 10) },
    editor.token,
  );
  assert.equal(big.status, 409);
  assert.ok(big.body.error.upload);
  const after = await t.services.db.query('SELECT count(*)::int AS n FROM resources');
  assert.equal(after.rows[0].n, before.rows[0].n);
  const dir = path.join(t.storagePath, 'resources');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String) : [];
  const tracked = (await t.services.db.query("SELECT id FROM resources WHERE url_type = 'upload' AND state = 'active'")).rows.map(
    (r: any) => r.id.slice(6),
  );
  for (const f of files.filter((x) => fs.statSync(path.join(dir, x)).isFile()))
    assert.ok(tracked.includes(path.basename(f).replace(/\.sha256$/, '')), `stray file ${f}`);
});

test('package_revise attaches a file to a new resource', async () => {
  const pkg = await t.ok('package_create', { name: 'up-revise', owner_org: 'up-org' }, { token: editor.token });
  const r = await multipart(
    'package_revise',
    { match__name: 'up-revise', update__resources__extend: JSON.stringify([{ name: 'attached' }]) },
    { name: 'rev.csv', content: 'r,e\nv,1\n', field: 'update__resources__-1__upload' },
    editor.token,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const res = r.body.result.package.resources[0];
  assert.equal(res.name, 'attached');
  assert.equal(res.url_type, 'upload');
  assert.equal(res.url, `http://test.local/dataset/${pkg.id}/resource/${res.id}/download/rev.csv`);
  assert.equal((await get(res.url)).body, 'r,e\nv,1\n');
});

test('an interrupted multipart upload leaves no temp file behind', async () => {
  await t.ok('package_create', { name: 'up-cut', owner_org: 'up-org' }, { token: editor.token });
  const tmp = path.join(t.storagePath, 'tmp');
  const leftovers = () => (fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((f) => f.startsWith('upload-')) : []);
  const before = leftovers();
  const boundary = '----svctest' + randomUUID();
  // The body ends in the middle of the file part: no closing boundary.
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\nup-cut\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="cut.csv"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.alloc(64 * 1024, 'a'),
  ]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/resource_create',
    payload,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: editor.token },
  });
  assert.notEqual(res.statusCode, 200);
  assert.deepEqual(leftovers(), before);
});

test('every upload temp file a stopped process left is swept at startup, however recent', async () => {
  const storage = fs.mkdtempSync(path.join(t.storagePath, 'sweep-'));
  const tmp = path.join(storage, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  // A pid that is surely not running (beyond pid_max), a running one (our parent), an old-style name.
  const stale = path.join(tmp, `upload-999999999-${randomUUID()}`);
  const fresh = path.join(tmp, 'upload-fresh');
  const mine = path.join(tmp, `upload-${process.pid}-${randomUUID()}`);
  const running = path.join(tmp, `upload-${process.ppid}-${randomUUID()}`);
  const other = path.join(tmp, 'not-an-upload');
  for (const f of [stale, fresh, mine, running, other]) fs.writeFileSync(f, 'x');
  const t2 = await startApp({ plugins: [], config: { 'svc.storage_path': storage } });
  try {
    assert.equal(fs.existsSync(stale), false, 'upload of a stopped process removed');
    assert.equal(fs.existsSync(fresh), false, 'recent upload without owner removed');
    assert.equal(fs.existsSync(mine), false, 'a file of this pid is from an earlier life');
    assert.equal(fs.existsSync(running), true, 'upload in flight in another running process kept');
    assert.equal(fs.existsSync(other), true, 'other files kept');
  } finally {
    await t2.close();
  }
});

test('a client that goes away mid-upload leaves no temp file behind', async () => {
  await t.ok('package_create', { name: 'up-abort', owner_org: 'up-org' }, { token: editor.token });
  const tmp = path.join(t.storagePath, 'tmp');
  const leftovers = () => (fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((f) => f.startsWith('upload-')) : []);
  const before = leftovers();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = new URL(address);
  const boundary = '----svcabort' + randomUUID();
  const head = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\nup-abort\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.alloc(256 * 1024, 'a'),
  ]);
  const net = await import('node:net');
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // Announces 900 KB, sends 256 KB, waits until the server has started the temp file, then vanishes.
  socket.write(
    `POST /api/3/action/resource_create HTTP/1.1\r\nHost: x\r\nAuthorization: ${editor.token}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${900 * 1024}\r\n\r\n`,
  );
  socket.write(head);
  const deadline = Date.now() + 5000;
  while (leftovers().length === before.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(leftovers().length > before.length, 'the upload was being received');
  socket.destroy();
  const gone = Date.now() + 5000;
  while (leftovers().length !== before.length && Date.now() < gone) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(leftovers(), before);
  // The server still answers.
  assert.equal((await t.call('status_show')).status, 200);
});

test('a request that fails after the handler leaves the stored file and the old one as they were', async () => {
  await t.ok('package_create', { name: 'up-late', owner_org: 'up-org' }, { token: editor.token });
  const first = await multipart('resource_create', { package_id: 'up-late' }, { name: 'a.csv', content: 'old,bytes\n' }, editor.token);
  const id = first.body.result.id;
  // A plugin wrapping resource_update fails after the core handler ran (and queued its file work).
  const { ValidationError } = await import('../src/errors.ts');
  t.services.registry.chainAction('resource_update', (next) => async (ctx, p) => {
    await next(ctx, p);
    if (p.name === 'fail late') throw new ValidationError({ name: ['refused by a plugin'] });
    return undefined;
  });
  const r = await multipart('resource_update', { id, name: 'fail late' }, { name: 'b.csv', content: 'new,bytes\n' }, editor.token);
  assert.equal(r.status, 409);
  assert.equal(fs.readFileSync(filePath(id), 'utf8'), 'old,bytes\n');
  const res = await t.ok('resource_show', { id }, { token: editor.token });
  assert.match(res.url, /\/download\/a\.csv$/);
  assert.deepEqual(
    fs.readdirSync(path.join(t.storagePath, 'tmp')).filter((f) => f.startsWith('upload-')),
    [],
  );
  // the same update without the failure goes through, file and all
  await multipart('resource_update', { id, name: 'fine' }, { name: 'b.csv', content: 'new,bytes\n' }, editor.token);
  assert.equal(fs.readFileSync(filePath(id), 'utf8'), 'new,bytes\n');
});
