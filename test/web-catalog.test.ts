// The public catalog pages through HTTP: dataset search (query language, facets, sort, paging,
// errors), dataset pages (JSON-LD, markdown, resources, activity), organization and group pages,
// follow/unfollow, and private datasets kept from those who may not see them.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
let admin: { id: string; name: string; token: string };
const BULK = 25;

before(async () => {
  t = await startApp({ plugins: ['activity', 'structured_data'] });
  admin = await t.user('cat_admin', { sysadmin: true });
  const as = { token: admin.token };
  await t.ok('organization_create', { name: 'alpha', title: 'Alpha Office', description: 'The **alpha** office.' }, as);
  await t.ok('organization_create', { name: 'beta', title: 'Beta Bureau' }, as);
  await t.ok('group_create', { name: 'env', title: 'Environment', description: 'Nature and *climate*.' }, as);
  const member = await t.user('cat_member');
  await t.user('cat_outsider');
  await t.user('cat_follower');
  await t.ok('organization_member_create', { id: 'alpha', username: member.name, role: 'editor' }, as);
  await t.ok(
    'package_create',
    {
      name: 'water-quality',
      title: 'Water Quality',
      owner_org: 'alpha',
      notes:
        'Samples of **river water**.\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1)) <img src=x onerror=alert(2)> [site](https://example.org/x)',
      license_id: 'cc-by',
      author: 'Ann Author',
      author_email: 'ann@example.org',
      version: '1.2',
      url: 'javascript:alert(3)',
      tags: [{ name: 'water' }, { name: 'env data' }],
      groups: [{ name: 'env' }],
      extras: [{ key: 'spatial_coverage', value: 'Lake <Geneva>' }],
      resources: [
        { name: 'Samples 2024', url: 'https://example.org/samples.csv', format: 'CSV', description: 'All the **samples**.' },
        { name: 'Bad link', url: 'javascript:alert(4)', format: 'HTML' },
      ],
    },
    as,
  );
  await t.ok(
    'package_create',
    {
      name: 'air-quality',
      title: 'Air Quality',
      owner_org: 'alpha',
      tags: [{ name: 'air' }],
      resources: [{ url: 'https://example.org/a.json', format: 'JSON' }],
    },
    as,
  );
  await t.ok(
    'package_create',
    {
      name: 'budget-2024',
      title: 'Budget 2024',
      owner_org: 'beta',
      tags: [{ name: 'finance' }, { name: 'water' }],
      resources: [{ url: 'https://example.org/b.csv', format: 'CSV' }],
    },
    as,
  );
  await t.ok(
    'package_create',
    {
      name: 'secret-plans',
      title: 'Secret Plans',
      owner_org: 'alpha',
      private: true,
      tags: [{ name: 'water' }, { name: 'secret-tag' }],
      resources: [{ url: 'https://example.org/s.xls', format: 'XLS' }],
    },
    as,
  );
  for (let i = 0; i < BULK; i++)
    await t.ok(
      'package_create',
      {
        name: `bulk-${String(i).padStart(2, '0')}`,
        title: `Bulk ${i}`,
        owner_org: 'beta',
        tags: [{ name: 'bulk' }, { name: `b-${String(i).padStart(2, '0')}` }],
      },
      as,
    );
});
after(async () => {
  await t?.close();
});

/** The names of the datasets a search page lists. */
function listed(body: string): string[] {
  return [...body.matchAll(/<li class="dataset-item">\s*<h3><a href="\/dataset\/([^"]+)">/g)].map((m) => m[1]);
}

/** Facet entries of a page: field -> value label -> count. */
function facetCounts(body: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const section of body.matchAll(/<section class="facet" aria-labelledby="facet-(\w+)">([\s\S]*?)<\/section>/g)) {
    const items: Record<string, number> = {};
    for (const m of section[2].matchAll(
      /<a href="[^"]*"[^>]*>\s*(?:<span class="visually-hidden">[^<]*<\/span>)?([^<]+)<\/a>\s*<span class="count">(\d+)<\/span>/g,
    ))
      items[m[1].trim()] = Number(m[2]);
    out[section[1]] = items;
  }
  return out;
}

test('search: q in the query language, result count, sort and paging', async () => {
  const web = new WebClient(t.app);
  const res = await web.get('/dataset?q=quality');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(listed(res.body).sort(), ['air-quality', 'water-quality']);
  assert.match(res.body, /2 datasets found for “quality”/);
  assert.match(res.body, /<input id="search-q" type="search" name="q" value="quality"/);

  const fielded = await web.get(`/dataset?q=${encodeURIComponent('tags:finance OR name:air-quality')}`);
  assert.deepEqual(listed(fielded.body).sort(), ['air-quality', 'budget-2024']);

  const sorted = await web.get(`/dataset?q=quality&sort=${encodeURIComponent('title_string desc')}`);
  assert.deepEqual(listed(sorted.body), ['water-quality', 'air-quality']);
  assert.match(sorted.body, /<option value="title_string desc" selected>/);

  const first = await web.get('/dataset?tags=bulk&sort=title_string+asc');
  assert.match(first.body, /25 datasets found/);
  assert.equal(listed(first.body).length, 20);
  assert.match(first.body, /href="\/dataset\?sort=title_string\+asc&amp;tags=bulk&amp;page=2" rel="next"/);
  const second = await web.get('/dataset?tags=bulk&sort=title_string+asc&page=2');
  assert.equal(listed(second.body).length, 5);
  assert.equal(new Set([...listed(first.body), ...listed(second.body)]).size, BULK);
  const beyond = await web.get('/dataset?tags=bulk&page=99');
  assert.equal(beyond.statusCode, 200);
  assert.equal(listed(beyond.body).length, 0);
  const junkPage = await web.get('/dataset?tags=bulk&page=-3x');
  assert.equal(listed(junkPage.body).length, 20);

  // a facet shows its 10 most frequent values, then all of them on request
  assert.equal(Object.keys(facetCounts(first.body).tags).length, 10);
  const more = /<a class="facet-more" href="([^"]+)">Show more Tags<\/a>/.exec(first.body);
  assert.ok(more, 'a link to the other tags');
  const expanded = await web.get(more[1].replace(/&amp;/g, '&'));
  assert.equal(Object.keys(facetCounts(expanded.body).tags).length, BULK + 1);
  assert.match(expanded.body, /Show only popular Tags/);
});

test('search: facets count what is found, links add and remove quoted filters', async () => {
  const web = new WebClient(t.app);
  const all = await web.get('/dataset');
  const facets = facetCounts(all.body);
  assert.equal(facets.organization['Alpha Office'], 2);
  assert.equal(facets.organization['Beta Bureau'], BULK + 1);
  assert.equal(facets.tags.water, 2);
  assert.equal(facets.groups.Environment, 1);
  assert.equal(facets.res_format.CSV, 2);
  assert.equal(facets.license_id['Creative Commons Attribution'], 1);
  assert.match((await web.get('/dataset?organization=alpha')).body, /href="\/dataset\?organization=alpha&amp;tags=env\+data">/);

  const water = await web.get('/dataset?tags=water');
  assert.deepEqual(listed(water.body).sort(), ['budget-2024', 'water-quality']);
  const wf = facetCounts(water.body);
  assert.deepEqual(wf.organization, { 'Alpha Office': 1, 'Beta Bureau': 1 });
  assert.match(water.body, /href="\/dataset\?organization=alpha&amp;tags=water">/);
  // the selected value is marked and its link removes it
  assert.match(water.body, /<a href="\/dataset" aria-current="true">/);
  assert.match(water.body, /class="tag selected-facet" href="\/dataset"><span class="facet-name">Tags:<\/span> water/);

  const both = await web.get('/dataset?tags=water&organization=alpha');
  assert.deepEqual(listed(both.body), ['water-quality']);
  assert.match(both.body, /href="\/dataset\?organization=alpha"><span class="facet-name">Tags:/);
  // a value with a space and quotes is one quoted term, not query syntax
  const spaced = await web.get('/dataset?tags=env+data');
  assert.deepEqual(listed(spaced.body), ['water-quality']);
  const hostile = await web.get(`/dataset?tags=${encodeURIComponent('x" OR tags:"water')}`);
  assert.equal(hostile.statusCode, 200);
  assert.deepEqual(listed(hostile.body), []);
});

test('search: a malformed query is a readable error with status 400', async () => {
  const web = new WebClient(t.app);
  const res = await web.get(`/dataset?q=${encodeURIComponent('title:(water')}`);
  assert.equal(res.statusCode, 400);
  assert.match(res.headers['content-type'] as string, /text\/html/);
  assert.match(res.body, /role="alert"/);
  assert.match(res.body, /Search Query is invalid/);
  assert.match(res.body, /value="title:\(water"/, 'the query stays in the box');
  const badSort = await web.get('/dataset?sort=nonsense');
  assert.equal(badSort.statusCode, 400);
  assert.match(badSort.body, /Invalid &quot;sort&quot; parameter/);
});

test('private datasets: absent for anonymous visitors and outsiders, visible to members', async () => {
  const anon = new WebClient(t.app);
  const outsider = new WebClient(t.app);
  await outsider.login('cat_outsider');
  for (const web of [anon, outsider]) {
    const search = await web.get('/dataset?q=secret');
    assert.deepEqual(listed(search.body), []);
    const all = await web.get('/dataset');
    assert.ok(!all.body.includes('secret-tag'), 'no facet value of the private dataset');
    assert.equal(facetCounts(all.body).tags.water, 2);
    assert.equal(facetCounts(all.body).res_format.XLS, undefined);
    const org = await web.get('/organization/alpha');
    assert.equal(org.statusCode, 200);
    assert.deepEqual(listed(org.body).sort(), ['air-quality', 'water-quality']);
    assert.ok(!org.body.includes('Secret Plans'));
    assert.match(org.body, /<p class="meta">2 datasets<\/p>/, 'the count leaves out the private dataset');
    for (const url of ['/dataset/secret-plans', '/dataset/groups/secret-plans', '/dataset/activity/secret-plans']) {
      const page = await web.get(url);
      assert.equal(page.statusCode, 404, url);
      assert.ok(!page.body.includes('Secret Plans'), url);
    }
  }
  const member = new WebClient(t.app);
  await member.login('cat_member');
  const search = await member.get('/dataset?q=secret');
  assert.deepEqual(listed(search.body), ['secret-plans']);
  assert.match(search.body, /badge-private/);
  assert.equal(facetCounts((await member.get('/dataset')).body).tags.water, 3);
  const page = await member.get('/dataset/secret-plans');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h1>Secret Plans/);
  assert.match(page.body, /href="\/dataset\/edit\/secret-plans"/, 'an editor of the organization may edit it');
  const org = await member.get('/organization/alpha');
  assert.deepEqual(listed(org.body).sort(), ['air-quality', 'secret-plans', 'water-quality']);
  assert.match(org.body, /<p class="meta">3 datasets<\/p>/);
});

test('dataset page: metadata, resources, tags, organization, licence, groups; buttons only for editors', async () => {
  const anon = new WebClient(t.app);
  const res = await anon.get('/dataset/water-quality');
  assert.equal(res.statusCode, 200);
  const body = res.body;
  assert.match(body, /<title>Water Quality/);
  assert.match(body, /<strong>river water<\/strong>/);
  assert.match(body, /<a href="\/dataset\/water-quality\/resource\/[0-9a-f-]{36}">Samples 2024<\/a>/);
  assert.match(body, /<span class="format-label">CSV<\/span>/);
  assert.match(body, /All the samples\./);
  assert.match(body, /<a href="https:\/\/example.org\/samples.csv" rel="nofollow">/);
  assert.match(body, /<a class="tag" href="\/dataset\?tags=env%20data">env data<\/a>/);
  assert.match(body, /<a href="\/organization\/alpha">Alpha Office<\/a>/);
  assert.match(body, /<a href="http:\/\/www.opendefinition.org\/licenses\/cc-by" rel="license">Creative Commons Attribution<\/a>/);
  assert.match(body, /<a href="\/group\/env">Environment<\/a>/);
  assert.match(body, /<a href="mailto:ann@example.org" rel="nofollow">Ann Author<\/a>/);
  assert.match(body, /<th scope="row">spatial_coverage<\/th><td>Lake &lt;Geneva&gt;<\/td>/);
  assert.match(body, /<td>1.2<\/td>/);
  assert.ok(!/href="\s*javascript:/i.test(body), 'no javascript: link from notes, source or resource URLs');
  assert.ok(!body.includes('href="/dataset/edit/water-quality"'));
  assert.ok(!body.includes('href="/dataset/delete/water-quality"'));
  assert.match(body, /href="\/dataset\/activity\/water-quality"/);

  const sysadmin = new WebClient(t.app);
  await sysadmin.login('cat_admin');
  const own = await sysadmin.get('/dataset/water-quality');
  assert.match(own.body, /href="\/dataset\/edit\/water-quality"/);
  assert.match(own.body, /href="\/dataset\/delete\/water-quality"/);
  const outsider = new WebClient(t.app);
  await outsider.login('cat_outsider');
  assert.ok(!(await outsider.get('/dataset/water-quality')).body.includes('/dataset/edit/'));

  const groups = await anon.get('/dataset/groups/water-quality');
  assert.equal(groups.statusCode, 200);
  assert.match(groups.body, /<a href="\/group\/env">Environment<\/a>/);
  assert.equal((await anon.get('/dataset/no-such-dataset')).statusCode, 404);
});

test('dataset groups page: an editor adds the dataset to a group and removes it; others get no form', async () => {
  const outsider = new WebClient(t.app);
  await outsider.login('cat_outsider');
  const plain = await outsider.get('/dataset/groups/air-quality');
  assert.equal(plain.statusCode, 200);
  assert.ok(!plain.body.includes('name="group_added"'));
  const refused = await outsider.post('/dataset/groups/air-quality', { group_added: 'env' }, { from: '/dataset' });
  assert.equal(refused.statusCode, 403);

  const admin = new WebClient(t.app);
  await admin.login('cat_admin');
  const page = await admin.get('/dataset/groups/air-quality');
  const env = /<option value="([0-9a-f-]{36})">Environment<\/option>/.exec(page.body);
  assert.ok(env, 'the group is offered');
  const added = await admin.post('/dataset/groups/air-quality', { group_added: env[1] });
  assert.equal(added.statusCode, 303);
  const withGroup = await admin.get('/dataset/groups/air-quality');
  assert.match(withGroup.body, /<a href="\/group\/env">Environment<\/a>/);
  assert.match(withGroup.body, /The dataset was added to the group\./);
  assert.ok(!withGroup.body.includes(`<option value="${env[1]}">`), 'no longer offered');
  assert.deepEqual(listed((await admin.get('/group/env')).body).sort(), ['air-quality', 'water-quality']);
  const removed = await admin.post('/dataset/groups/air-quality', { group_removed: env[1] });
  assert.equal(removed.statusCode, 303);
  assert.deepEqual(listed((await admin.get('/group/env')).body), ['water-quality']);
});

test('every message key the catalog pages build at run time exists', async () => {
  const { messageKeys } = await import('../src/web/i18n.ts');
  const known = new Set(messageKeys());
  const keys = [
    ...['active', 'draft', 'deleted'].map((s) => `catalog.dataset.state.${s}`),
    ...['new', 'changed', 'deleted'].flatMap((v) =>
      ['package', 'group', 'organization', 'user', 'resource_view'].map((o) => `catalog.activity.${v}_${o}`),
    ),
    ...['organization', 'group'].flatMap((k) =>
      ['list.title', 'list.search', 'list.count', 'list.none', 'add', 'edit', 'info', 'sections', 'search_datasets'].map(
        (x) => `catalog.${k}.${x}`,
      ),
    ),
    ...['organization', 'groups', 'tags', 'res_format', 'license_id'].map((f) => `catalog.search.facet.${f}`),
  ];
  assert.deepEqual(
    keys.filter((k) => !known.has(k)),
    [],
  );
});

test('notes markdown is sanitized: no script, event handler or javascript: link', async () => {
  const body = (await new WebClient(t.app).get('/dataset/water-quality')).body;
  const notes = /<section class="prose notes"[^>]*>([\s\S]*?)<\/section>/.exec(body)?.[1] ?? '';
  assert.match(notes, /<strong>river water<\/strong>/);
  assert.match(notes, /<a href="https:\/\/example.org\/x"[^>]*>site<\/a>/);
  assert.ok(!/<script/i.test(notes), notes);
  assert.ok(!/<img[^>]*onerror/i.test(notes), notes);
  assert.ok(!/href="javascript:/i.test(notes), notes);
});

test('JSON-LD: a schema.org Dataset that parses, and a title cannot close the script element', async () => {
  const web = new WebClient(t.app);
  const jsonLd = (body: string) => {
    const m = [...body.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)];
    assert.equal(m.length, 1);
    return JSON.parse(m[0][1]);
  };
  const ld = jsonLd((await web.get('/dataset/water-quality')).body);
  assert.equal(ld['@context']['@vocab'], 'https://schema.org/');
  assert.equal(ld['@type'], 'Dataset');
  assert.equal(ld.name, 'Water Quality');
  assert.equal(ld.url, 'http://test.local/dataset/water-quality');
  assert.match(ld.identifier, /^[0-9a-f-]{36}$/);
  assert.match(ld.description, /^Samples of river water\./);
  assert.deepEqual(ld.keywords.sort(), ['env data', 'water']);
  assert.equal(ld.license, 'http://www.opendefinition.org/licenses/cc-by');
  assert.deepEqual(
    [ld.publisher['@type'], ld.publisher.name, ld.publisher.url],
    ['Organization', 'Alpha Office', 'http://test.local/organization/alpha'],
  );
  assert.equal(ld.creator.name, 'Ann Author');
  assert.match(ld.dateCreated, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  assert.match(ld.dateModified, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  assert.deepEqual(
    ld.distribution.map((d: any) => [d['@type'], d.contentUrl, d.encodingFormat]),
    [['DataDownload', 'https://example.org/samples.csv', 'CSV']], // the javascript: link is no download
  );

  const title = 'Evil </script><script>alert(1)</script> & <!-- co';
  await t.ok('organization_create', { name: 'gamma' }, { token: admin.token });
  await t.ok('package_create', { name: 'evil-title', title, notes: '</SCRIPT>', owner_org: 'gamma' }, { token: admin.token });
  const body = (await web.get('/dataset/evil-title')).body;
  assert.ok(!body.includes('<script>alert(1)'), 'the title did not open a script element');
  const evil = jsonLd(body);
  assert.equal(evil.name, title);
  assert.equal(evil.description, '</SCRIPT>');
});

test('follow and unfollow: the follower count changes; the forms need the CSRF token', async () => {
  const web = new WebClient(t.app);
  const anonPage = await web.get('/dataset/air-quality');
  assert.match(anonPage.body, /<strong>0<\/strong> followers/);
  assert.match(anonPage.body, /href="\/user\/login\?came_from=%2Fdataset%2Fair-quality"/);
  const anonPost = await web.post('/dataset/follow/air-quality', {}, { from: '/user/login' });
  assert.equal(anonPost.statusCode, 303);
  assert.match(String(anonPost.headers.location), /^\/user\/login/);

  await web.login('cat_follower');
  const page = await web.get('/dataset/air-quality');
  assert.match(page.body, /<form method="post" action="\/dataset\/follow\/air-quality">/);
  const forged = await web.post('/dataset/follow/air-quality', {}, { csrf: null });
  assert.equal(forged.statusCode, 403);
  const wrong = await web.post('/dataset/follow/air-quality', {}, { csrf: 'not-the-token' });
  assert.equal(wrong.statusCode, 403);
  assert.match((await web.get('/dataset/air-quality')).body, /<strong>0<\/strong> followers/);

  const followed = await web.post('/dataset/follow/air-quality', {}, { from: '/dataset/air-quality' });
  assert.equal(followed.statusCode, 303);
  assert.equal(followed.headers.location, '/dataset/air-quality');
  const after1 = await web.get('/dataset/air-quality');
  assert.match(after1.body, /<strong>1<\/strong> follower</);
  assert.match(after1.body, /You are now following Air Quality\./);
  assert.match(after1.body, /action="\/dataset\/unfollow\/air-quality"/);
  assert.equal(await t.ok('dataset_follower_count', { id: 'air-quality' }), 1);

  const admin = new WebClient(t.app);
  await admin.login('cat_admin');
  const followers = await admin.get('/dataset/followers/air-quality');
  assert.equal(followers.statusCode, 200);
  assert.match(followers.body, /href="\/user\/cat_follower"/);
  const notAllowed = await web.get('/dataset/followers/air-quality');
  assert.equal(notAllowed.statusCode, 403);

  const unfollowed = await web.post('/dataset/unfollow/air-quality', {}, { from: '/dataset/air-quality' });
  assert.equal(unfollowed.statusCode, 303);
  assert.match((await web.get('/dataset/air-quality')).body, /<strong>0<\/strong> followers/);

  // organizations, groups and users the same way
  for (const [path, name] of [
    ['organization', 'alpha'],
    ['group', 'env'],
  ]) {
    const r = await web.post(`/${path}/follow/${name}`, {}, { from: `/${path}/${name}` });
    assert.equal(r.statusCode, 303);
    assert.equal(r.headers.location, `/${path}/${name}`);
    assert.match((await web.get(`/${path}/${name}`)).body, /<strong>1<\/strong> follower</);
    await web.post(`/${path}/unfollow/${name}`, {}, { from: `/${path}/${name}` });
    assert.match((await web.get(`/${path}/${name}`)).body, /<strong>0<\/strong> followers/);
  }
  const token = await web.csrfToken('/dataset');
  const user = await web.post('/user/follow/cat_member', {}, { csrf: token });
  assert.equal(user.statusCode, 303);
  assert.equal(user.headers.location, '/user/cat_member');
  assert.equal(await t.ok('user_follower_count', { id: 'cat_member' }), 1);
  const self = await web.post('/user/follow/cat_follower', {}, { csrf: token });
  assert.equal(self.statusCode, 303);
  // following a private dataset one may not see: as if it did not exist
  assert.equal((await web.post('/dataset/follow/secret-plans', {}, { csrf: token })).statusCode, 404);
});

test('activity stream of a dataset and an organization', async () => {
  const web = new WebClient(t.app);
  const res = await web.get('/dataset/activity/water-quality');
  assert.equal(res.statusCode, 200);
  assert.match(
    res.body,
    /<a href="\/user\/cat_admin">cat_admin<\/a>\s*created the dataset\s*<a href="\/dataset\/water-quality">Water Quality<\/a>/,
  );
  assert.match(res.body, /<time datetime="\d{4}-[^"]+Z">/);
  const org = await web.get('/organization/activity/alpha');
  assert.equal(org.statusCode, 200);
  assert.match(org.body, /created the organization\s*<a href="\/organization\/alpha">Alpha Office<\/a>/);
  assert.match(org.body, /created the dataset\s*<a href="\/dataset\/air-quality">/);
  assert.ok(!org.body.includes('Secret Plans'), 'no activity of the private dataset for anonymous visitors');
  const beta = await web.get('/organization/activity/beta');
  assert.match(beta.body, /rel="next">Older activities/);
  const older = await web.get('/organization/activity/beta?page=2');
  assert.match(older.body, /rel="prev">Newer activities/);
});

test('organization and group lists and pages', async () => {
  const web = new WebClient(t.app);
  const list = await web.get('/organization');
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /\d organizations found/);
  assert.match(list.body, /<a href="\/organization\/alpha">Alpha Office<\/a>/);
  assert.match(list.body, /2 datasets/, 'the public dataset count of alpha');
  const found = await web.get('/organization?q=beta');
  assert.match(found.body, /1 organization found/);
  assert.ok(!found.body.includes('/organization/alpha"'));

  const org = await web.get('/organization/alpha');
  assert.match(org.body, /<h1>Alpha Office<\/h1>/);
  assert.match(org.body, /2 datasets found/);
  assert.ok(!org.body.includes('facet-organization'), 'no organization facet on its own page');
  assert.match(org.body, /href="\/organization\/alpha\?tags=water">/);
  assert.ok(!org.body.includes('/organization/edit/alpha'));
  const filtered = await web.get('/organization/alpha?tags=air');
  assert.deepEqual(listed(filtered.body), ['air-quality']);
  const paged = await web.get('/organization/beta?page=2');
  assert.equal(listed(paged.body).length, BULK + 1 - 20);

  const about = await web.get('/organization/about/alpha');
  assert.match(about.body, /The <strong>alpha<\/strong> office\./);
  assert.equal((await web.get('/organization/no-such-org')).statusCode, 404);
  assert.equal((await web.get('/organization/env')).statusCode, 404, 'a group is not an organization');

  const admin = new WebClient(t.app);
  await admin.login('cat_admin');
  const managed = await admin.get('/organization/alpha');
  assert.match(managed.body, /href="\/organization\/edit\/alpha"/);
  assert.match(managed.body, /href="\/organization\/members\/alpha"/);
  assert.match((await admin.get('/organization')).body, /href="\/organization\/new"/);
  assert.match((await admin.get('/dataset')).body, /href="\/dataset\/new"/);
  assert.ok(!(await web.get('/dataset')).body.includes('href="/dataset/new"'));
  assert.equal((await admin.get('/organization/followers/alpha')).statusCode, 200);
  assert.equal((await admin.get('/group/followers/env')).statusCode, 200);

  const groups = await web.get('/group');
  assert.match(groups.body, /<a href="\/group\/env">Environment<\/a>/);
  const group = await web.get('/group/env');
  assert.equal(group.statusCode, 200);
  assert.deepEqual(listed(group.body), ['water-quality']);
  assert.match(group.body, /facet-organization/);
  assert.match((await web.get('/group/about/env')).body, /Nature and <em>climate<\/em>\./);
  assert.equal((await web.get('/group/activity/env')).statusCode, 200);
});

test('without the activity plugin there is no activity tab and its pages answer 404', async () => {
  const plain = await startApp({ plugins: [] });
  try {
    await plain.ok('organization_create', { name: 'quiet' }, { token: plain.sysadminToken });
    await plain.ok('package_create', { name: 'quiet-data', owner_org: 'quiet' }, { token: plain.sysadminToken });
    const web = new WebClient(plain.app);
    const page = await web.get('/dataset/quiet-data');
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes('/dataset/activity/'));
    assert.equal((await web.get('/dataset/activity/quiet-data')).statusCode, 404);
    assert.equal((await web.get('/organization/activity/quiet')).statusCode, 404);
  } finally {
    await plain.close();
  }
});
