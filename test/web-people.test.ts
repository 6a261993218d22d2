// People pages: profiles, editing a profile, the dashboard and API tokens.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
let ann: { id: string; name: string; token: string };
before(async () => {
  t = await startApp();
  ann = await t.user('ann');
  await t.user('ben');
  await t.ok('organization_create', { name: 'ann-org', title: 'Ann Org' }, { token: ann.token });
  await t.ok('package_create', { name: 'ann-public', title: 'Ann Public', owner_org: 'ann-org' }, { token: ann.token });
  await t.ok('package_create', { name: 'ann-secret', title: 'Ann Secret', owner_org: 'ann-org', private: true }, { token: ann.token });
  await t.ok('user_patch', { id: ann.id, about: '**Hello** <script>alert(1)</script>' }, { token: ann.token });
});
after(async () => {
  await t?.close();
});

test('a profile shows public information, datasets the visitor may see, and no e-mail to others', async () => {
  const anon = await new WebClient(t.app).get('/user/ann');
  assert.equal(anon.statusCode, 200);
  assert.match(anon.body, /<strong>Hello<\/strong>/);
  assert.ok(!anon.body.includes('<script>alert(1)'));
  assert.match(anon.body, /Ann Public/);
  assert.doesNotMatch(anon.body, /Ann Secret/);
  assert.doesNotMatch(anon.body, /ann@example\.org/);
  const own = new WebClient(t.app);
  await own.login('ann');
  const mine = await own.get('/user/ann');
  assert.match(mine.body, /Ann Secret/);
  assert.match(mine.body, /ann@example\.org/);
  assert.equal((await new WebClient(t.app).get('/user/nobody-here')).statusCode, 404);
  const list = await new WebClient(t.app).get('/user?q=ann');
  assert.match(list.body, /href="\/user\/ann"/);
  assert.doesNotMatch(list.body, /href="\/user\/ben"/);
});

test('editing one’s own profile; another user’s edit page is refused; a wrong current password changes nothing', async () => {
  const web = new WebClient(t.app);
  await web.login('ben');
  assert.equal((await web.get('/user/edit/ann')).statusCode, 403);
  assert.equal(
    (await web.post('/user/edit/ann', { email: 'x@example.org', fullname: 'Hacked' }, { from: '/user/edit/ben' })).statusCode,
    403,
  );
  assert.equal((await t.ok('user_show', { id: 'ann' })).fullname, null);
  const saved = await web.post('/user/edit/ben', { fullname: 'Ben B', email: 'ben@example.org', about: '' });
  assert.equal(saved.statusCode, 303);
  assert.equal((await t.ok('user_show', { id: 'ben' })).fullname, 'Ben B');
  const wrong = await web.post('/user/edit/ben', {
    fullname: 'Ben B',
    email: 'ben@example.org',
    old_password: 'nope',
    password1: 'a new long password',
    password2: 'a new long password',
  });
  assert.equal(wrong.statusCode, 400);
  assert.match(wrong.body, /incorrect password/);
  const other = new WebClient(t.app);
  await other.login('ben'); // a second session of ben's
  const changed = await web.post('/user/edit/ben', {
    fullname: 'Ben B',
    email: 'ben@example.org',
    old_password: 'correct horse battery',
    password1: 'a new long password',
    password2: 'a new long password',
  });
  assert.equal(changed.statusCode, 303);
  assert.match((await web.get('/dashboard')).body, /News feed/, 'the one who changed it stays signed in');
  assert.equal((await other.get('/dashboard')).statusCode, 303, 'the other session ended');
  await new WebClient(t.app).login('ben', 'a new long password');
});

test('the dashboard needs a login and shows the news of what the user follows', async () => {
  const anon = await new WebClient(t.app).get('/dashboard');
  assert.equal(anon.statusCode, 303);
  assert.match(String(anon.headers.location), /^\/user\/login\?came_from=%2Fdashboard/);
  const carl = await t.user('carl');
  await t.ok('follow_dataset', { id: 'ann-public' }, { token: carl.token });
  await t.ok('package_patch', { id: 'ann-public', notes: 'changed by ann' }, { token: ann.token });
  const web = new WebClient(t.app);
  await web.login('carl');
  const feed = await web.get('/dashboard');
  assert.equal(feed.statusCode, 200);
  assert.match(feed.body, /href="\/dataset\/ann-public">Ann Public<\/a>/);
  assert.match(feed.body, /href="\/user\/ann">ann<\/a>/);
  assert.doesNotMatch(feed.body, /Ann Secret/);
  const followed = await web.get('/dashboard/followed');
  assert.match(followed.body, /href="\/dataset\/ann-public"/);
  const annWeb = new WebClient(t.app);
  await annWeb.login('ann');
  assert.match((await annWeb.get('/dashboard/datasets')).body, /Ann Secret/);
  assert.match((await annWeb.get('/dashboard/organizations')).body, /href="\/organization\/ann-org"/);
});

test('an API token is shown once, works on the API, and stops working when revoked', async () => {
  const web = new WebClient(t.app);
  await web.login('ann');
  const created = await web.post('/user/ann/api-tokens', { name: 'my script' });
  assert.equal(created.statusCode, 200);
  const token = /<pre id="new-token" class="token-value">([^<]+)<\/pre>/.exec(created.body)?.[1];
  assert.ok(token, 'the new token is on the page');
  const me = await t.call('user_show', { id: 'ann' }, { token });
  assert.equal(me.body.result.email, 'ann@example.org');
  const list = await web.get('/user/ann/api-tokens');
  assert.match(list.body, /my script/);
  assert.ok(!list.body.includes(token), 'never shown again');
  const jti = /<td>my script<\/td>[\s\S]*?name="jti" value="([^"]+)"/.exec(list.body)?.[1];
  assert.ok(jti);
  const outsider = new WebClient(t.app);
  await outsider.login('ben', 'a new long password');
  assert.equal((await outsider.get('/user/ann/api-tokens')).statusCode, 403);
  assert.equal((await web.post('/user/ann/api-tokens/revoke', { jti }, { csrf: 'forged' })).statusCode, 403);
  assert.equal((await t.call('user_show', { id: 'ann' }, { token })).status, 200, 'a forged form revokes nothing');
  const revoked = await web.post('/user/ann/api-tokens/revoke', { jti }, { from: '/user/ann/api-tokens' });
  assert.equal(revoked.statusCode, 303);
  assert.equal((await t.call('user_show', { id: 'ann' }, { token })).status, 403);
});
