// The dataset changes pages through HTTP: "Changes" links in activity streams, what one version
// changed (title, tags, extras, resources added and changed), a range of versions, and a private
// dataset's changes kept from those who may not see them.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { asSysadmin } from './helpers/fixtures.ts';

let t: TestApp;
let outsider: { token: string };
let updates: { id: string; activity_type: string }[];

const page = (url: string, token?: string) => t.app.inject({ method: 'GET', url, headers: token ? { authorization: token } : {} });
/** The page's text without markup (what a reader sees), spaces squeezed. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');

before(async () => {
  t = await startApp({ plugins: ['activity', 'image_view'] });
  const as = asSysadmin(t);
  outsider = await t.user('changes_outsider');
  await t.ok('organization_create', { name: 'chg-org', title: 'Changes Office' }, as);
  const pkg = await t.ok(
    'package_create',
    { name: 'rivers', title: 'Rivers', owner_org: 'chg-org', tags: [{ name: 'water' }], extras: [{ key: 'region', value: 'North' }] },
    as,
  );
  await t.ok('package_patch', { id: pkg.id, title: 'Rivers and Lakes', tags: [{ name: 'lakes' }] }, as);
  const res = await t.ok(
    'resource_create',
    { package_id: pkg.id, name: 'Levels', url: 'https://example.org/levels.csv', format: 'CSV' },
    as,
  );
  await t.ok('resource_patch', { id: res.id, format: 'TSV' }, as);
  await t.ok('package_patch', { id: pkg.id, extras: [{ key: 'region', value: 'South' }] }, as);
  // A view is an activity of the dataset that has no version of it.
  const image = await t.ok('resource_create', { package_id: pkg.id, name: 'Map', url: 'https://example.org/map.png', format: 'PNG' }, as);
  await t.ok('resource_view_create', { resource_id: image.id, view_type: 'image_view', title: 'Picture' }, as);
  await t.ok('package_patch', { id: pkg.id, version: '2' }, as);
  await t.ok('package_create', { name: 'hidden', owner_org: 'chg-org', private: true }, as);
  await t.ok('package_patch', { id: 'hidden', title: 'Hidden v2' }, as);
  updates = (await t.ok('package_activity_list', { id: pkg.id }, as)).filter((a: any) => a.activity_type === 'changed package');
  assert.equal(updates.length, 6);
  const types = (await t.ok('package_activity_list', { id: pkg.id }, as)).map((a: any) => a.activity_type);
  assert.equal(types[1], 'new resource view', types.join());
});
after(() => t?.close());

test('the activity stream links each "updated the dataset" entry to its changes', async () => {
  const res = await page('/dataset/activity/rivers', t.sysadminToken);
  assert.equal(res.statusCode, 200);
  const links = [...res.body.matchAll(/href="\/dataset\/changes\/([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(
    links,
    updates.map((a) => a.id),
  );
  // The organization's stream (the same macro as the dashboard's and users') links them too.
  const org = await page('/organization/activity/chg-org', t.sysadminToken);
  for (const a of updates) assert.ok(org.body.includes(`href="/dataset/changes/${a.id}"`), a.id);
});

test('one version: the title and tags it changed, and the metadata diff', async () => {
  const oldest = updates.at(-1)!;
  const res = await page(`/dataset/changes/${oldest.id}`, t.sysadminToken);
  assert.equal(res.statusCode, 200);
  const words = text(res.body);
  // The range form offers the dataset's versions (not its views), never its creation as the newest.
  const newest = /<select id="changes-new" name="new_id">([\s\S]*?)<\/select>/.exec(res.body)![1]!;
  assert.equal([...newest.matchAll(/<option /g)].length, 6);
  assert.match(words, /Changed the title from Rivers to Rivers and Lakes/);
  assert.match(words, /Added the tags lakes/);
  assert.match(words, /Removed the tags water/);
  assert.doesNotMatch(words, /region/, 'extras unchanged in this version');
  assert.match(res.body, /<details class="metadata-diff">/);
});

test('resources added and changed, extras changed', async () => {
  const [version, , extras, format, added] = updates;
  const add = text((await page(`/dataset/changes/${added!.id}`, t.sysadminToken)).body);
  assert.match(add, /Added the resource Levels/);
  const fmt = text((await page(`/dataset/changes/${format!.id}`, t.sysadminToken)).body);
  assert.match(fmt, /In the resource Levels : Changed the format from CSV to TSV/);
  const ext = text((await page(`/dataset/changes/${extras!.id}`, t.sysadminToken)).body);
  assert.match(ext, /Changed the region from North to South/);
  // The version before this one is two activities back, past the image's view.
  const ver = text((await page(`/dataset/changes/${version!.id}`, t.sysadminToken)).body);
  assert.match(ver, /Set the version to 2/);
  assert.doesNotMatch(ver.split('Metadata diff')[0], /Map/, 'the summary names no resource (the diff below shows them as context)');
  assert.match(ver, /Metadata diff/);
});

test('a range of versions lists each one; bad ranges are refused', async () => {
  const all = await t.ok('package_activity_list', { id: 'rivers' }, asSysadmin(t));
  const created = all.find((a: any) => a.activity_type === 'new package');
  const res = await page(`/dataset/changes_multiple?new_id=${updates[0]!.id}&old_id=${created.id}`, t.sysadminToken);
  assert.equal(res.statusCode, 200);
  const words = text(res.body);
  for (const change of [
    /Rivers and Lakes/,
    /Added the resource Levels/,
    /from CSV to TSV/,
    /from North to South/,
    /Added the resource Map/,
    /version to 2/,
  ])
    assert.match(words, change);
  assert.equal([...res.body.matchAll(/class="change-step"/g)].length, 6);
  const missing = await page(`/dataset/changes_multiple?new_id=${updates[0]!.id}`, t.sysadminToken);
  assert.equal(missing.statusCode, 400);
  assert.match(missing.body, /old_id/);
  const hidden = await t.ok('package_activity_list', { id: 'hidden' }, asSysadmin(t));
  const other = await page(`/dataset/changes_multiple?new_id=${updates[0]!.id}&old_id=${hidden.at(-1).id}`, t.sysadminToken);
  assert.equal(other.statusCode, 400);
});

test('changes are for those who may see the detail: anonymous visitors sign in, outsiders are refused, unknown ids are 404', async () => {
  const anonymous = await page(`/dataset/changes/${updates[0]!.id}`);
  assert.equal(anonymous.statusCode, 303);
  assert.match(String(anonymous.headers.location), /^\/user\/login/);
  const hidden = (await t.ok('package_activity_list', { id: 'hidden' }, asSysadmin(t))).find(
    (a: any) => a.activity_type === 'changed package',
  );
  const refused = await page(`/dataset/changes/${hidden.id}`, outsider.token);
  assert.equal(refused.statusCode, 403);
  assert.doesNotMatch(refused.body, /Hidden v2/);
  assert.equal((await page('/dataset/changes/00000000-0000-0000-0000-000000000000', t.sysadminToken)).statusCode, 404);
});
