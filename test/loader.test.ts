// The loader over HTTP: uploads and links loaded into typed data store tables by background jobs,
// xloader_* actions and their permissions, type overrides and dictionary info across reloads, a
// failed load keeping the old table, and readers seeing the old or the new table, never half.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { waitForLoad } from './helpers/fixtures.ts';
import { LoadTable } from '../src/loader/load.ts';
import type { PreparedColumn } from '../src/loader/prepare.ts';
import { quoteIdent } from '../src/db/sql.ts';
import { resourceFilePath } from '../src/files/storage.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let server: http.Server;
let base: string;
/** Files the local HTTP server serves, by path. */
const served = new Map<string, { body: Buffer | string; type?: string; status?: number; location?: string }>();

async function multipart(action: string, fields: Record<string, string>, file: { name: string; content: Buffer | string }, token: string) {
  const boundary = '----svctest' + randomUUID();
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
  );
  parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/3/action/${action}`,
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: token },
  });
  return { status: res.statusCode, body: res.json() };
}

const search = (id: string, extra: Record<string, unknown> = {}) =>
  t.ok('datastore_search', { resource_id: id, ...extra }, { token: t.sysadminToken });
const fieldTypes = (r: any) => Object.fromEntries(r.fields.filter((f: any) => f.id !== '_id').map((f: any) => [f.id, f.type]));
let pkgCount = 0;
async function dataset(): Promise<string> {
  return (await t.ok('package_create', { name: `loader-ds-${++pkgCount}`, owner_org: 'loader-org' }, { token: editor.token })).id;
}

const waitLoad = (resourceId: string, ms = 60_000) => waitForLoad(t, resourceId, { ms });

before(async () => {
  t = await startApp({
    plugins: ['datastore', 'loader'],
    config: { 'svc.jobs.poll_interval': 50, 'svc.loader.allow_private_urls': true, 'svc.loader.timeout': 10 },
  });
  editor = await t.user('ld_editor');
  outsider = await t.user('ld_outsider');
  await t.ok('organization_create', { name: 'loader-org', users: [{ name: editor.name, capacity: 'editor' }] }, { token: t.sysadminToken });
  server = http.createServer((req, res) => {
    const f = served.get(req.url ?? '');
    if (!f) {
      res.writeHead(404);
      res.end('no');
      return;
    }
    if (f.location) {
      res.writeHead(f.status ?? 302, { location: f.location });
      res.end();
      return;
    }
    res.writeHead(f.status ?? 200, { 'content-type': f.type ?? 'text/csv' });
    res.end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await t?.close();
  server?.close();
});

describe('loader', () => {
  test('an uploaded CSV is loaded with guessed types; status in xloader_status, task_status_show and job_show', async () => {
    const pkg = await dataset();
    const csv = 'id,name,amount,when,zip\n1,Ann,"1,234.50",23/03/2023,0123\n2,Bob,12.5,01/04/2023,0456\n3,Cy,7,15/04/2023,9999\n';
    const r = await multipart('resource_create', { package_id: pkg, name: 'spend' }, { name: 'spend.csv', content: csv }, editor.token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = r.body.result.id;
    const st = await waitLoad(id);
    assert.equal(st.status, 'complete', JSON.stringify(st));
    assert.ok(st.task_info.logs.some((l: any) => /3 row\(s\) loaded/.test(l.message)));
    const found = await search(id, { sort: '_id' });
    assert.deepEqual(fieldTypes(found), { id: 'int4', name: 'text', amount: 'numeric', when: 'date', zip: 'text' });
    assert.equal(found.total, 3);
    assert.deepEqual(found.records[0], { _id: 1, id: 1, name: 'Ann', amount: 1234.5, when: '2023-03-23', zip: '0123' });
    assert.equal((await search(id, { q: 'Bob' })).total, 1);
    // The indexes come after the load, in the background: the `_id` key, the vector's, the pending
    // rows', one per text column (name, zip).
    const backend = t.services.plugins.datastore as any;
    const indexes = async () =>
      (
        await backend.readQuery(`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = $1 AND indexname LIKE 'ds\\_%'`, {
          rowLimit: 1,
          params: [id],
        })
      ).records[0].n;
    for (let i = 0; i < 200 && (await indexes()) < 5; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await indexes(), 5);
    const primary = await backend.readQuery(
      `SELECT count(*)::int AS n FROM pg_index WHERE indrelid = quote_ident($1)::regclass AND indisprimary AND indkey = '1'::int2vector`,
      { rowLimit: 1, params: [id] },
    );
    assert.equal(primary.records[0].n, 1);
    await backend.sessions.filler.idle();
    assert.equal((await search(id, { q: 'Bob' })).total, 1);
    const res = await t.ok('resource_show', { id });
    assert.equal(res.datastore_active, true);
    const task = await t.ok('task_status_show', { entity_id: id, task_type: 'xloader', key: 'xloader' });
    assert.equal(task.state, 'complete');
    assert.equal(task.entity_type, 'resource');
    const job = await t.ok('job_show', { id: st.job_id }, { token: t.sysadminToken });
    assert.equal(job.status, 'finished');
    assert.equal(job.result.rows, 3);
    // datapusher_status is the same answer.
    assert.equal((await t.ok('datapusher_status', { resource_id: id }, { token: editor.token })).status, 'complete');
    // The same file again is not loaded again, unless ignore_hash says so.
    await t.ok('xloader_submit', { resource_id: id }, { token: editor.token });
    const again = await waitLoad(id);
    assert.ok(
      again.task_info.logs.some((l: any) => /has not changed since the last load/.test(l.message)),
      JSON.stringify(again.task_info.logs),
    );
    await t.ok('xloader_submit', { resource_id: id, ignore_hash: true }, { token: editor.token });
    const forced = await waitLoad(id);
    assert.ok(forced.task_info.logs.some((l: any) => /3 row\(s\) loaded/.test(l.message)));
    assert.ok(!forced.task_info.logs.some((l: any) => /has not changed/.test(l.message)));
    assert.equal((await search(id)).total, 3);
    // The checksum recorded with the upload belongs to that file only: the file changed in storage
    // by other means (restored from a backup, say), the same bytes but a row more, is loaded again.
    fs.appendFileSync(resourceFilePath(t.services.config, id), '4,Di,8,16/04/2023,0001\n');
    await t.ok('xloader_submit', { resource_id: id }, { token: editor.token });
    const changed = await waitLoad(id);
    assert.ok(
      changed.task_info.logs.some((l: any) => /4 row\(s\) loaded/.test(l.message)),
      JSON.stringify(changed.task_info.logs),
    );
    assert.equal((await search(id)).total, 4);
  });

  test('a linked file is fetched and loaded; a format outside svc.loader.formats is not', async () => {
    const pkg = await dataset();
    served.set('/data.tsv', { body: 'a\tb\n1\tx\n2\ty\n', type: 'text/tab-separated-values' });
    const res = await t.ok('resource_create', { package_id: pkg, url: `${base}/data.tsv` }, { token: editor.token });
    assert.equal((await waitLoad(res.id)).status, 'complete');
    assert.deepEqual(fieldTypes(await search(res.id)), { a: 'int4', b: 'text' });
    const pdf = await t.ok('resource_create', { package_id: pkg, url: `${base}/doc.pdf` }, { token: editor.token });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await t.call('xloader_status', { resource_id: pdf.id }, { token: editor.token })).status, 404);
    // Editing another field does not load again; a new URL does.
    const before = (await t.ok('xloader_status', { resource_id: res.id }, { token: editor.token })).job_id;
    await t.ok('resource_patch', { id: res.id, description: 'changed' }, { token: editor.token });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await t.ok('xloader_status', { resource_id: res.id }, { token: editor.token })).job_id, before);
    served.set('/data2.tsv', { body: 'a\tb\tc\n1\tx\t2020-01-01\n', type: 'text/plain' });
    await t.ok('resource_patch', { id: res.id, url: `${base}/data2.tsv`, format: 'TSV' }, { token: editor.token });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await waitLoad(res.id)).status, 'complete');
    assert.deepEqual(fieldTypes(await search(res.id)), { a: 'int4', b: 'text', c: 'date' });
  });

  test('fetch errors say what happened (HTTP status)', async () => {
    const pkg = await dataset();
    const res = await t.ok('resource_create', { package_id: pkg, url: `${base}/missing.csv` }, { token: editor.token });
    const st = await waitLoad(res.id);
    assert.equal(st.status, 'error');
    assert.match(st.error.message, /HTTP 404/);
    assert.equal((await t.ok('resource_show', { id: res.id })).datastore_active, false);
  });

  test('xloader_submit: only who may edit the dataset; validation', async () => {
    const pkg = await dataset();
    const res = await t.ok('resource_create', { package_id: pkg, url: `${base}/missing2.csv` }, { token: editor.token });
    await waitLoad(res.id);
    assert.equal((await t.call('xloader_submit', { resource_id: res.id }, { token: outsider.token })).status, 403);
    assert.equal((await t.call('xloader_submit', { resource_id: res.id })).status, 403);
    assert.equal((await t.call('xloader_status', { resource_id: res.id }, { token: outsider.token })).status, 403);
    const missing = await t.call('xloader_submit', {}, { token: editor.token });
    assert.equal(missing.status, 409);
    assert.deepEqual(missing.body.error?.resource_id, ['Missing value']);
    assert.equal((await t.call('xloader_submit', { resource_id: 'nope' }, { token: t.sysadminToken })).status, 404);
    served.set('/missing2.csv', { body: 'x\n1\n' });
    assert.equal(await t.ok('xloader_submit', { resource_id: res.id }, { token: editor.token }), true);
    assert.equal((await waitLoad(res.id)).status, 'complete');
  });

  test('type overrides win on the next load; labels survive; a value that does not fit fails with its row', async () => {
    const pkg = await dataset();
    served.set('/ov.csv', { body: 'code,n\n1,10\n2,20\n' });
    const res = await t.ok('resource_create', { package_id: pkg, url: `${base}/ov.csv` }, { token: editor.token });
    assert.equal((await waitLoad(res.id)).status, 'complete');
    await t.ok(
      'datastore_create',
      {
        resource_id: res.id,
        force: true,
        fields: [
          { id: 'code', info: { type_override: 'text', label: 'The code' } },
          { id: 'n', info: { notes: 'a number' } },
        ],
      },
      { token: t.sysadminToken },
    );
    await t.ok('xloader_submit', { resource_id: res.id, ignore_hash: true }, { token: editor.token });
    assert.equal((await waitLoad(res.id)).status, 'complete');
    const info = await t.ok('datastore_info', { id: res.id }, { token: t.sysadminToken });
    const code = info.fields.find((f: any) => f.id === 'code');
    assert.equal(code.type, 'text');
    assert.equal(code.info.label, 'The code');
    assert.equal(info.fields.find((f: any) => f.id === 'n').info.notes, 'a number');
    // An override the data contradicts fails the load with the row; the table stays.
    await t.ok(
      'datastore_create',
      { resource_id: res.id, force: true, fields: [{ id: 'n', info: { type_override: 'numeric' } }] },
      { token: t.sysadminToken },
    );
    served.set('/ov.csv', { body: 'code,n\n1,10\n2,lots\n' });
    await t.ok('xloader_submit', { resource_id: res.id }, { token: editor.token });
    const st = await waitLoad(res.id);
    assert.equal(st.status, 'error');
    assert.match(st.error.message, /row 3: "lots" in column "n" is not a valid numeric/);
    assert.equal((await search(res.id)).total, 2);
  });

  test('a failed load leaves the previous table as it was', async () => {
    const pkg = await dataset();
    const r = await multipart('resource_create', { package_id: pkg }, { name: 'ok.csv', content: 'a,b\n1,2\n3,4\n' }, editor.token);
    const id = r.body.result.id;
    assert.equal((await waitLoad(id)).status, 'complete');
    const bad = await multipart('resource_update', { id, package_id: pkg }, { name: 'bad.csv', content: 'a,b\n1,2,3\n' }, editor.token);
    assert.equal(bad.status, 200, JSON.stringify(bad.body));
    await new Promise((res) => setTimeout(res, 100));
    const st = await waitLoad(id);
    assert.equal(st.status, 'error');
    assert.match(st.error.message, /row 2 has 3 values but the header has 2 columns/);
    const found = await search(id, { sort: '_id' });
    assert.equal(found.total, 2);
    assert.deepEqual(
      found.records.map((x: any) => x.a),
      [1, 3],
    );
  });

  test('several COPY connections (PostgreSQL): the new table is readable by nobody until the swap; a failed load leaves none behind', {
    skip: !onPostgres && 'PGlite has one connection: its loads copy in their own transaction',
  }, async () => {
    const backend = t.services.plugins.datastore as any;
    const tables = async (name: string) =>
      (await backend.readQuery('SELECT count(*)::int AS n FROM pg_class WHERE relname = $1', { rowLimit: 1, params: [name] })).records[0].n;
    // A staged table is committed before the swap (other connections copy into it), without its grants.
    const name = `_load_${randomUUID()}`;
    await backend.bulkWrite(async (s: any) => {
      const table = new LoadTable(s, name, 2);
      await table.create([{ id: 'a', type: 'text' } as PreparedColumn]);
      assert.ok(table.stage);
      assert.equal(await tables(name), 1);
      await assert.rejects(backend.readQuery(`SELECT * FROM ${quoteIdent(name)}`, { rowLimit: 1 }), /permission denied/);
      await table.release();
    });
    assert.equal((await backend.readQuery(`SELECT * FROM ${quoteIdent(name)}`, { rowLimit: 1 })).records.length, 0);
    await backend.bulkWrite((s: any) => s.exec(`DROP TABLE ${quoteIdent(name)}`));
    // A load that fails after its rows went in (an alias view holds the resource's name): no table left.
    const pkg = await dataset();
    const res = await t.ok(
      'resource_create',
      { package_id: pkg, name: 'later', url: 'http://example.org/later.json', format: 'JSON' },
      { token: editor.token },
    );
    const other = await t.ok(
      'resource_create',
      { package_id: pkg, url: 'http://example.org/other.json', format: 'JSON' },
      { token: editor.token },
    );
    await t.ok(
      'datastore_create',
      { resource_id: other.id, fields: [{ id: 'x', type: 'text' }], aliases: [res.id], force: true },
      { token: t.sysadminToken },
    );
    const up = await multipart(
      'resource_update',
      { id: res.id, package_id: pkg, format: 'CSV' },
      { name: 'later.csv', content: 'a,b\n1,x\n2,y\n' },
      editor.token,
    );
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const st = await waitLoad(res.id);
    assert.equal(st.status, 'error', JSON.stringify(st));
    assert.match(st.error.message, /is an alias of another table/);
    assert.equal(await tables(`_load_${res.id}`), 0);
  });

  test('readers see the old table or the new one while a load replaces it', async () => {
    const pkg = await dataset();
    const rows = (v: string, n: number) => 'version,n\n' + Array.from({ length: n }, (_, i) => `${v},${i}\n`).join('');
    const r = await multipart('resource_create', { package_id: pkg }, { name: 'v.csv', content: rows('one', 3000) }, editor.token);
    const id = r.body.result.id;
    assert.equal((await waitLoad(id)).status, 'complete');
    let stop = false;
    const seen = new Set<string>();
    const reader = (async () => {
      while (!stop) {
        const res = await t.call('datastore_search', { resource_id: id, limit: 5, sort: 'n desc' }, { token: t.sysadminToken });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const { total, records } = res.body.result;
        const versions = new Set(records.map((x: any) => x.version));
        assert.equal(versions.size, 1, 'one version per answer');
        const v = [...versions][0] as string;
        assert.equal(total, v === 'one' ? 3000 : 5000, `total ${total} for version ${v}`);
        seen.add(v);
      }
    })();
    await multipart('resource_update', { id, package_id: pkg }, { name: 'v.csv', content: rows('two', 5000) }, editor.token);
    await new Promise((res) => setTimeout(res, 100));
    assert.equal((await waitLoad(id)).status, 'complete');
    // The reader goes on until it has read the new table (each read may take a while on a busy machine).
    for (let waited = 0; !seen.has('two') && waited < 10_000; waited += 50) await new Promise((res) => setTimeout(res, 50));
    stop = true;
    await reader;
    assert.ok(seen.has('two'), 'the new table was seen');
  });

  test('spreadsheets load from their first sheet', async () => {
    const pkg = await dataset();
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('First');
    ws.addRow(['city', 'population', 'founded']);
    ws.addRow(['Bern', 134000, new Date(Date.UTC(1191, 0, 1))]);
    ws.addRow(['Basel', 173000, new Date(Date.UTC(1200, 5, 1))]);
    wb.addWorksheet('Second').addRow(['nope']);
    const buf = Buffer.from(await wb.xlsx.writeBuffer());
    const r = await multipart('resource_create', { package_id: pkg }, { name: 'cities.xlsx', content: buf }, editor.token);
    assert.equal((await waitLoad(r.body.result.id)).status, 'complete');
    const found = await search(r.body.result.id, { sort: '_id' });
    assert.deepEqual(fieldTypes(found), { city: 'text', population: 'int4', founded: 'date' });
    assert.equal(found.records[1].founded, '1200-06-01');
    // .xls and .ods (written with SheetJS; the .ods has formulas with their values).
    for (const ext of ['xls', 'ods']) {
      const content = fs.readFileSync(path.resolve(`test/fixtures/loader/book.${ext}`));
      const res = await multipart('resource_create', { package_id: pkg }, { name: `book.${ext}`, content }, editor.token);
      const st = await waitLoad(res.body.result.id);
      assert.equal(st.status, 'complete', JSON.stringify(st));
      const rows = await search(res.body.result.id, { sort: '_id' });
      assert.deepEqual(fieldTypes(rows), {
        id: 'int4',
        name: 'text',
        amount: 'numeric',
        total: 'numeric',
        day: 'date',
        at: 'timestamp',
        flag: 'text',
      });
      assert.deepEqual(
        rows.records.map((x: any) => [x.total, x.day, x.at]),
        [
          [3.5, '2023-03-23', '2023-03-23T10:30:00'],
          [12, '2024-02-29', '2024-02-29T23:59:59'],
          [-4.25, '1999-12-31', '2000-01-01T00:00:01'],
        ],
      );
    }
  });

  test('refused: a link to a private address when allow_private_urls is off', async () => {
    const t2 = await startApp({ plugins: ['datastore', 'loader'], config: { 'svc.jobs.poll_interval': 50 } });
    try {
      const org = await t2.ok('organization_create', { name: 'o2' }, { token: t2.sysadminToken });
      const pkg = await t2.ok('package_create', { name: 'p2', owner_org: org.id }, { token: t2.sysadminToken });
      served.set('/private.csv', { body: 'a\n1\n' });
      for (const url of [`${base}/private.csv`, `http://localhost:${(server.address() as AddressInfo).port}/private.csv`]) {
        const res = await t2.ok('resource_create', { package_id: pkg.id, url }, { token: t2.sysadminToken });
        let st: any;
        for (let i = 0; i < 600; i++) {
          const r = await t2.call('xloader_status', { resource_id: res.id }, { token: t2.sysadminToken });
          st = r.body.result;
          if (st && ['complete', 'error'].includes(st.status)) break;
          await new Promise((x) => setTimeout(x, 50));
        }
        assert.equal(st.status, 'error', url);
        assert.match(st.error.message, /refused to connect to (127\.0\.0\.1|localhost)/);
      }
    } finally {
      await t2.close();
    }
  });

  test('svc.loader.auto off: no automatic loads', async () => {
    const t3 = await startApp({ plugins: ['datastore', 'loader'], config: { 'svc.loader.auto': false } });
    try {
      const org = await t3.ok('organization_create', { name: 'o3' }, { token: t3.sysadminToken });
      const pkg = await t3.ok('package_create', { name: 'p3', owner_org: org.id }, { token: t3.sysadminToken });
      const res = await t3.ok('resource_create', { package_id: pkg.id, url: `${base}/x.csv` }, { token: t3.sysadminToken });
      assert.equal((await t3.call('xloader_status', { resource_id: res.id }, { token: t3.sysadminToken })).status, 404);
      assert.equal((await t3.ok('job_list', {}, { token: t3.sysadminToken })).length, 0);
    } finally {
      await t3.close();
    }
  });
});
