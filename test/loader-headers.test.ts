// Loads of cross-tabs (a blank header cell above the row labels, the common shape of official
// statistics) and of headers repeated after flattening: the columns get made-up names, the load's
// log and each such column's data dictionary entry say so, and a label given there survives reloads.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { waitForLoad } from './helpers/fixtures.ts';

let t: TestApp;
let server: http.Server;
let base: string;
const served = new Map<string, Buffer | string>();
const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'loader', name));

let n = 0;
async function load(file: string, body: Buffer | string): Promise<{ id: string; status: any }> {
  served.set(`/${file}`, body);
  const pkg = await t.ok('package_create', { name: `headers-${++n}`, owner_org: 'headers-org' }, { token: t.sysadminToken });
  const res = await t.ok('resource_create', { package_id: pkg.id, url: `${base}/${file}`, format: 'CSV' }, { token: t.sysadminToken });
  return { id: res.id, status: await waitLoad(res.id) };
}
const logText = (st: any) => st.task_info.logs.map((l: any) => l.message).join('\n');

const waitLoad = (resourceId: string) => waitForLoad(t, resourceId);

before(async () => {
  t = await startApp({
    plugins: ['datastore', 'loader'],
    config: { 'svc.jobs.poll_interval': 50, 'svc.loader.allow_private_urls': true },
  });
  await t.ok('organization_create', { name: 'headers-org' }, { token: t.sysadminToken });
  server = http.createServer((req, res) => {
    const body = served.get(req.url ?? '');
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/csv' });
    res.end(body ?? 'no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await t?.close();
  server?.close();
});

describe('loader: blank and repeated headers', () => {
  test('a latin-1 cross-tab with title lines, ";", a blank first header cell and repeated headers loads with made-up names', async () => {
    const { id, status } = await load('aerzte.csv', fixture('german-physicians-by-state-crosstab-latin1.csv'));
    assert.equal(status.status, 'complete', JSON.stringify(status));
    const found = await t.ok('datastore_search', { resource_id: id, limit: 100, sort: '_id' }, { token: t.sysadminToken });
    assert.deepEqual(
      found.fields.map((f: any) => f.id),
      ['_id', 'column_1', 'Insgesamt', 'männlich', 'weiblich', 'Insgesamt_2', 'männlich_2', 'weiblich_2'],
    );
    assert.equal(found.total, 20);
    assert.match(found.records[0].column_1, /^\s*Baden-Württemberg\s*$/);
    assert.ok(found.records.some((r: any) => /Thüringen/.test(r.column_1)));
    const log = logText(status);
    assert.match(log, /header cell of column 1 of the file is blank: "column_1" is a made-up name/);
    assert.match(log, /header "Insgesamt" in columns 2 and 5: this one is named "Insgesamt_2"/);
    assert.ok(status.task_info.logs.some((l: any) => l.level === 'WARNING' && /made-up name/.test(l.message)));
    const info = await t.ok('datastore_info', { id }, { token: t.sysadminToken });
    const field = (fid: string) => info.fields.find((f: any) => f.id === fid);
    assert.match(field('column_1').info.notes, /blank: "column_1" is a made-up name; a label can be given in the data dictionary/);
    assert.match(field('weiblich_2').info.notes, /"weiblich" in columns 4 and 7/);
    assert.equal(field('Insgesamt').info, undefined);
  });

  test("the user's label for a made-up name survives a reload; the note is not written over it", async () => {
    const { id, status } = await load('crosstab.csv', 'Table 1: beds\n\n;2022;2023\nNorth;10;12\nSouth;7;9\n');
    assert.equal(status.status, 'complete', JSON.stringify(status));
    await t.ok(
      'datastore_create',
      { resource_id: id, force: true, fields: [{ id: 'column_1', info: { label: 'Region', notes: 'the region' } }] },
      { token: t.sysadminToken },
    );
    await t.ok('xloader_submit', { resource_id: id, ignore_hash: true }, { token: t.sysadminToken });
    assert.equal((await waitLoad(id)).status, 'complete');
    const info = await t.ok('datastore_info', { id }, { token: t.sysadminToken });
    assert.deepEqual(info.fields.find((f: any) => f.id === 'column_1').info, { label: 'Region', notes: 'the region' });
    const found = await t.ok('datastore_search', { resource_id: id, sort: '_id' }, { token: t.sysadminToken });
    assert.deepEqual(
      found.records.map((r: any) => [r.column_1, r['2023']]),
      [
        ['North', 12],
        ['South', 9],
      ],
    );
  });

  test('made-up names never take a name the file has; an empty column without a header is still dropped', async () => {
    const { id, status } = await load('clash.csv', 'a,column_2,,a,a_2,,\n1,2,3,4,5,6,\n');
    assert.equal(status.status, 'complete', JSON.stringify(status));
    const found = await t.ok('datastore_search', { resource_id: id }, { token: t.sysadminToken });
    assert.deepEqual(
      found.fields.map((f: any) => f.id),
      ['_id', 'a', 'column_2', 'column_3', 'a_3', 'a_2', 'column_6'],
    );
    assert.deepEqual(found.records[0], { _id: 1, a: 1, column_2: 2, column_3: 3, a_3: 4, a_2: 5, column_6: 6 });
    assert.match(logText(status), /1 empty column\(s\) without a header dropped \(column 7\)/);
  });
});
