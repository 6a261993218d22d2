// The resource page through HTTP: metadata, the data explorer over a data store table (paging, sort,
// filters, full-text search, dictionary, dumps), privacy, views, and the loader's re-submit button.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
let editor: { id: string; name: string; token: string };
let member: { id: string; name: string; token: string };
let outsider: { id: string; name: string; token: string };
let tableId: string;
let privateTableId: string;
const ROWS = 120;

const pad = (i: number) => String(i).padStart(3, '0');

before(async () => {
  t = await startApp({ config: { 'svc.jobs.in_process_worker': false } });
  editor = await t.user('wr_editor');
  member = await t.user('wr_member');
  outsider = await t.user('wr_outsider');
  await t.ok(
    'organization_create',
    {
      name: 'wr-org',
      title: 'Resource Org',
      users: [
        { name: editor.name, capacity: 'editor' },
        { name: member.name, capacity: 'member' },
      ],
    },
    { token: t.sysadminToken },
  );
  await t.ok('package_create', { name: 'wr-public', title: 'Public Cities', owner_org: 'wr-org' }, { token: editor.token });
  await t.ok('package_create', { name: 'wr-private', title: 'Secret Cities', owner_org: 'wr-org', private: true }, { token: editor.token });
  const records = Array.from({ length: ROWS }, (_, i) => ({
    name: i === 77 ? 'Zanzibar' : `City ${pad(i)}`,
    population: i * 10,
    note: i % 10 === 3 ? null : i === 5 ? '<script>alert("cell")</script>' : i === 6 ? 'long '.repeat(60) : `note ${i}`,
  }));
  const fields = [
    { id: 'name', type: 'text', info: { label: 'City name', notes: 'The **official** name' } },
    { id: 'population', type: 'int', info: { label: 'Inhabitants' } },
    { id: 'note', type: 'text' },
  ];
  tableId = (
    await t.ok(
      'datastore_create',
      { resource: { package_id: 'wr-public', name: 'Cities table', description: 'All *cities*' }, fields, records },
      { token: editor.token },
    )
  ).resource_id;
  privateTableId = (
    await t.ok(
      'datastore_create',
      { resource: { package_id: 'wr-private', name: 'Secret table' }, fields, records: records.slice(0, 3) },
      { token: editor.token },
    )
  ).resource_id;
});
after(async () => {
  await t?.close();
});

const page = (query = '') => new WebClient(t.app).get(`/dataset/wr-public/resource/${tableId}${query}`);

/** The text of the data rows' first cells (after the _id column). */
function firstColumn(html: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr>\s*<td[^>]*>[^<]*<\/td><td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
}

test('the page shows the metadata, breadcrumb, the first page of rows, the total and the dictionary', async () => {
  const res = await page();
  assert.equal(res.statusCode, 200);
  const html = res.body;
  assert.match(html, /<h1>Cities table/);
  assert.match(html, /<em>cities<\/em>/, 'description as markdown');
  assert.match(
    html,
    /<nav class="breadcrumb"[\s\S]*href="\/dataset\/wr-public">Public Cities<\/a>[\s\S]*aria-current="page">Cities table</,
  );
  assert.match(html, /href="\/organization\/wr-org">Resource Org</);
  assert.match(html, /Rows 1–50 of 120 rows/);
  const names = firstColumn(html);
  assert.equal(names.length, 50);
  assert.equal(names[0], 'City 000');
  // Labels head the columns; the dictionary lists ids, types, labels and notes (markdown).
  assert.match(html, /class="sort-link">City name/);
  assert.match(html, /<section id="dictionary"[\s\S]*<code>population<\/code><\/th><td>int4?<\/td><td>Inhabitants<\/td>/);
  assert.match(html, /<strong>official<\/strong> name/);
  // Numbers right-aligned, nulls marked.
  assert.match(html, /<td class="cell-num">30<\/td>/);
  assert.match(html, /<span class="null-mark">null<\/span>/);
  // Dumps in every format.
  for (const format of ['csv', 'tsv', 'json', 'xml'])
    assert.ok(html.includes(`href="/datastore/dump/${tableId}?format=${format}"`), format);
  // No edit button or loader status for a visitor.
  assert.ok(!html.includes('/edit"'));
  assert.ok(!html.includes('loader-heading'));
});

test('HTML in cell values is escaped; long text is cut', async () => {
  const html = (await page()).body;
  assert.ok(!html.includes('<script>alert("cell")'));
  assert.ok(html.includes('&lt;script&gt;alert(&quot;cell&quot;)&lt;/script&gt;'));
  assert.match(html, /class="cell-cut" title="(long ){60}">(long ){20}…<\/td>/);
});

test('paging: page 2 and 3 show the next rows; links keep the state', async () => {
  const second = await page('?page=2');
  assert.match(second.body, /Rows 51–100 of 120 rows/);
  assert.equal(firstColumn(second.body)[0], 'City 050');
  assert.match(second.body, /href="\/dataset\/wr-public\/resource\/[^"?]+\?page=3#explorer" rel="next"/);
  const third = await page('?page=3');
  assert.equal(firstColumn(third.body).length, 20);
  const sortedSecond = await page('?sort=population&order=desc&page=2');
  assert.match(sortedSecond.body, /\?sort=population&amp;order=desc&amp;page=3#explorer/);
});

test('sorting by a column, ascending and descending', async () => {
  const desc = await page('?sort=population&order=desc');
  assert.equal(firstColumn(desc.body)[0], 'City 119');
  assert.match(desc.body, /aria-sort="descending"/);
  // The sorted column's link turns the order around.
  assert.match(desc.body, /href="[^"]*\?sort=population&amp;order=asc#explorer" class="sort-link">Inhabitants/);
  const asc = await page('?sort=name&order=asc');
  assert.equal(firstColumn(asc.body)[0], 'City 000');
  assert.equal(firstColumn((await page('?sort=name&order=desc')).body)[0], 'Zanzibar');
});

test('a column filter narrows the rows; q searches the full text', async () => {
  const filtered = await page(`?${new URLSearchParams({ 'filter.name': 'City 007' })}`);
  assert.deepEqual(firstColumn(filtered.body), ['City 007']);
  assert.match(filtered.body, /Rows 1–1 of 1 row\s*</);
  assert.match(filtered.body, /name="filter.name" value="City 007"/);
  assert.match(filtered.body, /class="chip-column">name</);
  // The small form's column + value pair works the same.
  const paired = await page(`?${new URLSearchParams({ filter_column: 'population', filter_value: '120' })}`);
  assert.deepEqual(firstColumn(paired.body), ['City 012']);
  // A filter matching many rows is not counted until asked: the page knows only that more follow.
  const many = await page(`?${new URLSearchParams({ 'filter.note': 'long '.repeat(60) })}`);
  assert.deepEqual(firstColumn(many.body), ['City 006']);
  const wide = await page('?filter.population=10&filter.population=20&filter.population=30');
  assert.deepEqual(firstColumn(wide.body), ['City 001', 'City 002', 'City 003']);
  assert.match(wide.body, /Rows 1–3 of 3 rows/);
  assert.match(wide.body, /<input type="hidden" name="filter.population" value="20">/);
  const names = Array.from({ length: 60 }, (_, i) => `filter.name=City+${pad(i)}`).join('&');
  const uncounted = await page(`?${names}`);
  assert.equal(firstColumn(uncounted.body).length, 50);
  assert.match(uncounted.body, /Rows 1–50; more rows match/);
  const countLink = /href="([^"]+count=1[^"]*)">Count the matching rows/.exec(uncounted.body)![1].replace(/&amp;/g, '&');
  const counted = await new WebClient(t.app).get(countLink);
  assert.match(counted.body, /Rows 1–50 of 60 rows/);
  assert.match((await page(`?${names}&page=2`)).body, /Rows 51–60 of 60 rows/);
  const searched = await page('?q=Zanzibar');
  assert.deepEqual(firstColumn(searched.body), ['Zanzibar']);
  assert.match(searched.body, /value="Zanzibar"/);
  // The dump links carry the search and the filters; the dump holds the matching rows only.
  const link = /href="(\/datastore\/dump\/[^"]+format=csv[^"]*)"/.exec(filtered.body)![1].replace(/&amp;/g, '&');
  assert.match(link, /filters=/);
  const dump = await new WebClient(t.app).get(link);
  assert.equal(dump.statusCode, 200);
  assert.deepEqual(dump.body.trim().split(/\r?\n/), ['_id,name,population,note', '8,City 007,70,note 7']);
  const none = await page('?q=nothingatallhere');
  assert.match(none.body, /No rows match/);
  const bad = await page(`?${new URLSearchParams({ 'filter.nosuchcolumn': 'x' })}`);
  assert.equal(bad.statusCode, 200);
  assert.match(bad.body, /class="flash flash-error explorer-error"/);
});

test("a private dataset's resource and its dump: refused to visitors and outsiders, shown to a member", async () => {
  const url = `/dataset/wr-private/resource/${privateTableId}`;
  assert.equal((await new WebClient(t.app).get(url)).statusCode, 404);
  const anonDump = await new WebClient(t.app).get(`/datastore/dump/${privateTableId}`);
  assert.ok([403, 404].includes(anonDump.statusCode), String(anonDump.statusCode));
  const out = new WebClient(t.app);
  await out.login(outsider.name);
  assert.equal((await out.get(url)).statusCode, 404);
  assert.ok([403, 404].includes((await out.get(`/datastore/dump/${privateTableId}`)).statusCode));
  const web = new WebClient(t.app);
  await web.login(member.name);
  const res = await web.get(url);
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /Secret table/);
  assert.match(res.body, /Rows 1–3 of 3 rows/);
  assert.match(res.body, /badge-private/);
  const dump = await web.get(`/datastore/dump/${privateTableId}?format=json`);
  assert.equal(dump.statusCode, 200);
  assert.match(dump.body, /City 002/);
});

test('a resource of another dataset, or none, is not found', async () => {
  assert.equal((await new WebClient(t.app).get(`/dataset/wr-private/resource/${tableId}`)).statusCode, 404);
  assert.equal((await new WebClient(t.app).get('/dataset/wr-public/resource/no-such-id')).statusCode, 404);
  assert.equal((await new WebClient(t.app).get(`/dataset/no-such-dataset/resource/${tableId}`)).statusCode, 404);
});

test('loader status and re-submit: editors only, with a CSRF token', async () => {
  const res = await t.ok(
    'resource_create',
    { package_id: 'wr-public', name: 'Remote CSV', url: 'http://example.invalid/cities.csv', format: 'CSV' },
    { token: editor.token },
  );
  const url = `/dataset/wr-public/resource/${res.id}`;
  const anonymous = await new WebClient(t.app).get(url);
  assert.equal(anonymous.statusCode, 200);
  assert.ok(!anonymous.body.includes('/submit"'));
  // No token, then an outsider's token.
  const out = new WebClient(t.app);
  await out.login(outsider.name);
  assert.equal((await out.post(`${url}/submit`, {}, { csrf: null })).statusCode, 403);
  const refused = await out.post(`${url}/submit`, {}, { from: url });
  assert.equal(refused.statusCode, 403);
  const web = new WebClient(t.app);
  await web.login(editor.name);
  const before = await web.get(url);
  assert.match(before.body, /loader-heading/);
  // A new resource with a URL is submitted on creation: its load waits (no worker runs in this test).
  assert.match(before.body, /class="load-state load-pending">Waiting to load/);
  assert.match(before.body, /INFO<\/span> load submitted/);
  assert.match(before.body, /<form method="post" action="[^"]+\/submit"/);
  assert.match(before.body, /href="[^"]+\/edit">Edit resource/);
  assert.equal((await web.post(`${url}/submit`, {}, { csrf: null })).statusCode, 403);
  const sent = await web.post(`${url}/submit`, {}, { from: url });
  assert.equal(sent.statusCode, 303);
  assert.equal(sent.headers.location, url);
  const after = await web.get(url);
  assert.match(after.body, /queued to be loaded/);
  assert.match(after.body, /class="load-state load-pending">Waiting to load/);
  assert.ok(!(await web.get(url)).body.includes('queued to be loaded'), 'the flash shows once');
});

test('image and web page views render their elements; ?view_id= selects a view; unsafe URLs are not used', async () => {
  const res = await t.ok(
    'resource_create',
    { package_id: 'wr-public', name: 'Map picture', url: 'http://example.org/map.png', format: 'PNG' },
    { token: editor.token },
  );
  const url = `/dataset/wr-public/resource/${res.id}`;
  const views = await t.ok('resource_view_list', { id: res.id });
  assert.equal(views[0].view_type, 'image_view');
  const web = await t.ok(
    'resource_view_create',
    { resource_id: res.id, view_type: 'webpage_view', title: 'Homepage', page_url: 'https://example.org/about' },
    { token: editor.token },
  );
  const bad = await t.ok(
    'resource_view_create',
    { resource_id: res.id, view_type: 'image_view', title: 'Bad', image_url: 'javascript:alert(1)' },
    { token: editor.token },
  );
  const first = await new WebClient(t.app).get(url);
  assert.match(first.body, /<img src="http:\/\/example.org\/map.png" alt="Map picture"/);
  assert.match(first.body, new RegExp(`href="${url}\\?view_id=${web.id}#view">Homepage<`));
  const page = await new WebClient(t.app).get(`${url}?view_id=${web.id}`);
  assert.match(
    page.body,
    /<iframe class="view-frame" src="https:\/\/example.org\/about" sandbox="allow-scripts allow-popups" title="Homepage"/,
  );
  assert.ok(!page.body.includes('<img src="http://example.org/map.png"'));
  const unsafe = await new WebClient(t.app).get(`${url}?view_id=${bad.id}`);
  assert.ok(!unsafe.body.includes('javascript:alert'));
  assert.match(unsafe.body, /nothing to preview/);
});

test('a text view shows a small uploaded file in the page, escaped', async () => {
  const boundary = '----wrtest';
  const parts = [
    `--${boundary}\r\nContent-Disposition: form-data; name="package_id"\r\n\r\nwr-public\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nReadme\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\nTXT\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="readme.txt"\r\nContent-Type: text/plain\r\n\r\nHello <b>world</b>\r\n`,
    `--${boundary}--\r\n`,
  ];
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/3/action/resource_create',
    headers: { authorization: editor.token, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: parts.join(''),
  });
  assert.equal(created.statusCode, 200, created.body);
  const res = created.json().result;
  await t.ok('resource_view_create', { resource_id: res.id, view_type: 'text_view', title: 'Text' }, { token: editor.token });
  const html = (await new WebClient(t.app).get(`/dataset/wr-public/resource/${res.id}`)).body;
  assert.match(html, /<pre class="view-text"[^>]*>Hello &lt;b&gt;world&lt;\/b&gt;<\/pre>/);
  assert.match(html, new RegExp(`href="/dataset/wr-public/resource/${res.id}/download/readme.txt">Download<`));
});

test('video and audio views use the media elements with controls', async () => {
  const res = await t.ok(
    'resource_create',
    { package_id: 'wr-public', name: 'Clip', url: 'https://example.org/clip.mp4', format: 'MP4' },
    { token: editor.token },
  );
  const video = await t.ok(
    'resource_view_create',
    { resource_id: res.id, view_type: 'video_view', title: 'Video', poster_url: 'javascript:alert(1)' },
    { token: editor.token },
  );
  const audio = await t.ok(
    'resource_view_create',
    { resource_id: res.id, view_type: 'audio_view', title: 'Sound' },
    { token: editor.token },
  );
  const url = `/dataset/wr-public/resource/${res.id}`;
  const v = await new WebClient(t.app).get(`${url}?view_id=${video.id}`);
  assert.match(v.body, /<video class="view-media" controls preload="metadata" src="https:\/\/example.org\/clip.mp4">/);
  assert.ok(!v.body.includes('javascript:'));
  const a = await new WebClient(t.app).get(`${url}?view_id=${audio.id}`);
  assert.match(a.body, /<audio class="view-media" controls preload="metadata" src="https:\/\/example.org\/clip.mp4">/);
});

test('with another view selected, the table is not searched for rows but the dictionary stays', async () => {
  const other = await t.ok(
    'resource_view_create',
    { resource_id: tableId, view_type: 'webpage_view', title: 'About the data', page_url: 'https://example.org/cities' },
    { token: editor.token },
  );
  try {
    const html = (await page(`?view_id=${other.id}`)).body;
    assert.match(html, /<iframe class="view-frame" src="https:\/\/example.org\/cities"/);
    assert.ok(!html.includes('id="explorer"'));
    assert.match(html, /<section id="dictionary"[\s\S]*Inhabitants/);
    // Without a table view of its own, the explorer comes first in the list of views.
    const views = await t.ok('resource_view_list', { id: tableId });
    assert.ok(!views.some((v: { view_type: string }) => v.view_type === 'datatables_view'));
    assert.match(html, new RegExp(`<li><a href="/dataset/wr-public/resource/${tableId}#view">Data explorer</a></li>`));
  } finally {
    await t.ok('resource_view_delete', { id: other.id }, { token: editor.token });
  }
});
