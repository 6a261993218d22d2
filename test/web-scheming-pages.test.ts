// A custom schema whose form has pages (start_form_page, test/fixtures/scheming-web-formpages.yaml):
// the new form is real steps — page 1 creates a draft, each next page is saved to it with
// package_patch, the last one publishes it — with titles, descriptions, back links and a list of
// steps; editing goes a page at a time. Fluent fields show a tab-like list of their languages.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

const SCHEMA = path.join(import.meta.dirname, 'fixtures', 'scheming-web-formpages.yaml');

let t: TestApp;
let orgId: string;
before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [SCHEMA],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
    },
  });
  const owner = await t.user('fp_owner');
  await t.user('fp_editor');
  await t.user('fp_stranger');
  const org = await t.ok('organization_create', { name: 'fp-org', title: 'Polar Club' }, { token: owner.token });
  orgId = org.id;
  await t.ok('organization_member_create', { id: 'fp-org', username: 'fp_editor', role: 'editor' }, { token: owner.token });
});
after(async () => {
  await t?.close();
});

async function signedIn(name = 'fp_editor'): Promise<WebClient> {
  const web = new WebClient(t.app);
  await web.login(name);
  return web;
}

const show = (id: string) => t.ok('package_show', { id }, { token: t.sysadminToken });

test('the new form shows only its first page, with the list of steps and the page title', async () => {
  const web = await signedIn();
  const res = await web.get('/expedition/new');
  assert.equal(res.statusCode, 200, res.body);
  const html = res.body;
  assert.match(html, /<ol class="form-steps">/);
  assert.match(html, /<li aria-current="step">Basic info<\/li>/);
  // later steps are not links until the ones before them are saved
  assert.match(html, /<li>Details<\/li>/);
  assert.match(html, /<li>Languages<\/li>/);
  assert.match(html, /<h2 class="form-page-title">Basic info<\/h2>/);
  assert.match(html, /The name and the publisher/);
  assert.match(html, /Step 1 of 3/);
  assert.match(html, /name="title"/);
  assert.doesNotMatch(html, /name="region"/, 'a later page has its own step');
  assert.doesNotMatch(html, /name="motto-en"/);
  assert.match(html, /<button type="submit" class="button primary">Save and continue<\/button>/);
});

test('each step is saved to a draft; the last one publishes it; back links keep the values', async () => {
  const web = await signedIn();
  const first = await web.post('/expedition/new', { title: 'Ice walk', name: 'fp-ice', owner_org: orgId, private: 'False' });
  assert.equal(first.statusCode, 303, first.body);
  assert.equal(first.headers.location, '/expedition/new/fp-ice/2');
  let pkg = await show('fp-ice');
  assert.equal(pkg.state, 'draft', 'a draft until the last step');
  assert.equal(pkg.title, 'Ice walk');
  assert.equal(pkg.type, 'expedition');

  const second = await web.get('/expedition/new/fp-ice/2');
  assert.equal(second.statusCode, 200, second.body);
  assert.match(second.body, /<h2 class="form-page-title">Details<\/h2>/);
  assert.match(second.body, /name="region"/);
  assert.match(second.body, /name="crew-0-name"/, 'a new step has its empty group of subfields, as page 1 would');
  assert.doesNotMatch(second.body, /name="title"/);
  assert.match(second.body, /<a class="button" href="\/expedition\/new\/fp-ice\/1">Back<\/a>/);
  assert.match(second.body, /<li><a href="\/expedition\/new\/fp-ice\/1">Basic info<\/a><\/li>/);

  // a required field may wait while the dataset is a draft (draft_fields_required: false) ...
  const waiting = await web.post('/expedition/new/fp-ice/2', { region: '' });
  assert.equal(waiting.statusCode, 303, waiting.body);
  assert.equal(waiting.headers.location, '/expedition/new/fp-ice/3');
  // ... but the last step, which publishes it, names it and publishes nothing
  const early = await web.post('/expedition/new/fp-ice/3', { 'motto-en': 'Onwards', 'motto-de': '', 'motto-fr': '' });
  assert.equal(early.statusCode, 400, early.body);
  assert.match(early.body, /Region: Missing value|region: Missing value/i);
  assert.equal((await show('fp-ice')).state, 'draft');

  // "add another" member stays on the page with the values
  const added = await web.post('/expedition/new/fp-ice/2', { region: 'arctic', 'crew-0-name': 'Ann', _scheming_add: 'crew' });
  assert.equal(added.statusCode, 200);
  assert.match(added.body, /name="crew-1-name"/);
  assert.match(added.body, /<option value="arctic" selected>/);

  const saved = await web.post('/expedition/new/fp-ice/2', { region: 'arctic', 'crew-0-name': 'Ann', 'crew-1-name': 'Bo' });
  assert.equal(saved.statusCode, 303, saved.body);
  assert.equal(saved.headers.location, '/expedition/new/fp-ice/3');
  pkg = await show('fp-ice');
  assert.equal(pkg.state, 'draft');
  assert.equal(pkg.region, 'arctic');
  assert.deepEqual(pkg.crew, [{ name: 'Ann' }, { name: 'Bo' }]);
  assert.equal(pkg.title, 'Ice walk', 'fields of other pages stay');

  // back to page 1: its values are there, and saving it goes on to page 2 again
  const back = await web.get('/expedition/new/fp-ice/1');
  assert.match(back.body, /name="title"[^>]*value="Ice walk"|value="Ice walk"[^>]*name="title"/);
  const again = await web.post('/expedition/new/fp-ice/1', { title: 'Ice walk 2', name: 'fp-ice', owner_org: orgId, private: 'False' });
  assert.equal(again.headers.location, '/expedition/new/fp-ice/2');

  const third = await web.get('/expedition/new/fp-ice/3');
  assert.match(third.body, /<button type="submit" class="button primary">Finish<\/button>/);
  const done = await web.post('/expedition/new/fp-ice/3', { 'motto-en': 'Onwards', 'motto-de': 'Weiter', 'motto-fr': '' });
  assert.equal(done.statusCode, 303, done.body);
  assert.equal(done.headers.location, '/expedition/fp-ice');
  pkg = await show('fp-ice');
  assert.equal(pkg.state, 'active');
  assert.equal(pkg.title, 'Ice walk 2');
  assert.equal(pkg.motto.en, 'Onwards');
  assert.equal(pkg.motto.de, 'Weiter');

  // a published dataset's "new" steps are its edit pages
  const late = await web.get('/expedition/new/fp-ice/2');
  assert.equal(late.statusCode, 303);
  assert.equal(late.headers.location, '/expedition/edit/fp-ice/2');
});

test('a page the schema does not have is not found; a stranger may not open the steps', async () => {
  const web = await signedIn();
  await web.post('/expedition/new', { title: 'Glacier', name: 'fp-glacier', owner_org: orgId, private: 'False' });
  for (const page of ['0', '4', 'x']) assert.equal((await web.get(`/expedition/new/fp-glacier/${page}`)).statusCode, 404, page);
  const stranger = await signedIn('fp_stranger');
  assert.equal((await stranger.get('/expedition/new/fp-glacier/2')).statusCode, 403);
  const refused = await stranger.post('/expedition/new/fp-glacier/2', { region: 'alps' });
  assert.equal(refused.statusCode, 403);
  assert.equal((await show('fp-glacier')).region, undefined);
});

test('editing goes a page at a time: each page saves its own fields and keeps the others', async () => {
  const web = await signedIn();
  const form = await web.get('/expedition/edit/fp-ice');
  assert.equal(form.statusCode, 200, form.body);
  assert.match(form.body, /<form method="post" action="\/expedition\/edit\/fp-ice\/1"/);
  assert.match(form.body, /<li><a href="\/expedition\/edit\/fp-ice\/3">Languages<\/a><\/li>/);
  const languages = await web.get('/expedition/edit/fp-ice/3');
  // the languages of the fluent field: a list of links to each language's panel, the UI language's first
  assert.match(languages.body, /<a id="field-motto-en-tab" href="#field-motto-en-panel" data-lang="en" data-selected>English \(en\)<\/a>/);
  assert.match(languages.body, /<a id="field-motto-fr-tab" href="#field-motto-fr-panel" data-lang="fr">French \(fr\)<\/a>/);
  assert.match(languages.body, /<input id="field-motto-de" name="motto-de" lang="de" type="text" value="Weiter"/);
  const saved = await web.post('/expedition/edit/fp-ice/3', { 'motto-en': 'Onwards', 'motto-de': 'Vorwärts', 'motto-fr': 'En avant' });
  assert.equal(saved.statusCode, 303, saved.body);
  assert.equal(saved.headers.location, '/expedition/fp-ice');
  const pkg = await show('fp-ice');
  assert.deepEqual(pkg.motto, { en: 'Onwards', de: 'Vorwärts', fr: 'En avant' });
  assert.equal(pkg.region, 'arctic');
  assert.equal(pkg.title, 'Ice walk 2');
  assert.equal(pkg.state, 'active');
  // the whole-form address of a form with pages saves page 1 only
  const first = await web.post('/expedition/edit/fp-ice', { title: 'Ice walk 3', name: 'fp-ice', owner_org: orgId, private: 'False' });
  assert.equal(first.statusCode, 303, first.body);
  const after1 = await show('fp-ice');
  assert.equal(after1.title, 'Ice walk 3');
  assert.equal(after1.region, 'arctic');
});

test("the dataset page shows a fluent value in the page's language, else the default's", async () => {
  const web = new WebClient(t.app);
  const page = await web.get('/expedition/fp-ice');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /Onwards/);
  assert.doesNotMatch(page.body, /Vorwärts/);
  const french = await web.get('/fr/expedition/fp-ice');
  assert.equal(french.statusCode, 200);
  assert.match(french.body, /En avant/);
  assert.doesNotMatch(french.body, /Onwards/);
  // a language the value does not have: the site's default language (English here)
  const spanish = await web.get('/es/expedition/fp-ice');
  assert.match(spanish.body, /Onwards/);
  // the form's tabs start at the page's language
  const editor = await signedIn();
  const form = await editor.get('/de/expedition/edit/fp-ice/3');
  assert.match(form.body, /<a id="field-motto-de-tab" href="#field-motto-de-panel" data-lang="de" data-selected>/);
  assert.doesNotMatch(form.body, /data-lang="en" data-selected/);
});
