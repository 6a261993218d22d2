// package_create with default views on (svc.views.default_views): a dataset none of whose
// resources a default view type can show is written without reading any views (a round trip of
// every create of a harvest, issue #29/#32); a resource one can show still gets its view, on
// create and when an update adds it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import type { Database } from '../src/db/database.ts';
import { countedStatements, noteTransactionStatements } from './helpers/statements.ts';

let t: TestApp;
const statements: string[] = [];
const admin = () => ({ token: t.sysadminToken });
const VIEW_READS = /\bFROM resource_views\b/;

before(async () => {
  t = await startApp({ plugins: ['image_view', 'text_view'], config: { 'svc.views.default_views': ['image_view', 'text_view'] } });
  noteTransactionStatements(t.services.db as Database, statements);
  await t.ok('organization_create', { name: 'cv-org' }, admin());
});
after(async () => {
  await t?.close();
});

const counted = <T>(fn: () => Promise<T>) => countedStatements(statements, fn);

const viewTypes = async (resourceId: string) =>
  (await t.ok('resource_view_list', { id: resourceId }, admin())).map((v: { view_type: string }) => v.view_type);

test('package_create: no view is read when no default view can show a resource; those that can get theirs', async () => {
  const plain = {
    name: 'cv-plain',
    owner_org: 'cv-org',
    resources: [
      { url: 'http://example.org/a.csv', format: 'CSV' },
      { url: 'http://example.org/b.pdf', format: 'PDF' },
    ],
  };
  const { result: created, sql } = await counted(() => t.ok('package_create', plain, admin()));
  assert.equal(sql.filter((s) => VIEW_READS.test(s)).length, 0, 'no view of a resource without a default view is read');
  for (const r of created.resources) assert.deepEqual(await viewTypes(r.id), []);

  const shown = await counted(() =>
    t.ok(
      'package_create',
      {
        name: 'cv-shown',
        owner_org: 'cv-org',
        resources: [
          { url: 'http://example.org/c.png', format: 'PNG' },
          { url: 'http://example.org/d.csv', format: 'CSV' },
          { url: 'http://example.org/e.json', format: 'JSON' },
        ],
      },
      admin(),
    ),
  );
  assert.ok(shown.sql.some((s) => VIEW_READS.test(s)));
  const [png, csv, json] = shown.result.resources;
  assert.deepEqual(await viewTypes(png.id), ['image_view']);
  assert.deepEqual(await viewTypes(csv.id), []);
  assert.deepEqual(await viewTypes(json.id), ['text_view']);

  // an update that adds a resource a view can show gives it its view, and no other twice
  const updated = await t.ok(
    'package_update',
    { ...shown.result, resources: [...shown.result.resources, { url: 'http://example.org/f.gif', format: 'GIF' }] },
    admin(),
  );
  assert.deepEqual(await viewTypes(updated.resources[3].id), ['image_view']);
  assert.deepEqual(await viewTypes(png.id), ['image_view']);
  assert.deepEqual(await viewTypes(json.id), ['text_view']);
});
