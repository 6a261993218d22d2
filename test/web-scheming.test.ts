// The web pages of a custom dataset type (test/fixtures/scheming-web-survey.yaml): its pages under
// /survey, the form generated from the schema with every widget kind, repeating subfields added and
// removed without JavaScript, errors beside their fields, the dataset page with the fields' labels,
// and the type's search page with facets on its choice fields.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';
import { KNOWN_FORM_SNIPPETS } from '../src/scheming/snippets.ts';
import { FORM_SNIPPET_WIDGETS } from '../src/web/scheming/widgets.ts';

const SCHEMA = path.join(import.meta.dirname, 'fixtures', 'scheming-web-survey.yaml');

let t: TestApp;
let orgId: string;
before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [SCHEMA],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      // datasets of the type "dataset" (no schema) stay possible, for the search page's test
      'svc.scheming.dataset_fallback': true,
    },
  });
  const owner = await t.user('sw_owner');
  await t.user('sw_editor');
  const org = await t.ok('organization_create', { name: 'sw-org', title: 'Bird Society' }, { token: owner.token });
  orgId = org.id;
  await t.ok('organization_member_create', { id: 'sw-org', username: 'sw_editor', role: 'editor' }, { token: owner.token });
});
after(async () => {
  await t?.close();
});

async function signedIn(name = 'sw_editor'): Promise<WebClient> {
  const web = new WebClient(t.app);
  await web.login(name);
  return web;
}

/** The text of a page without tags, spaces collapsed, the entities of the test data decoded. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

/** The element with an id, as HTML (up to its closing tag of the same name, no nesting). */
function element(html: string, id: string): string {
  const m = new RegExp(`<(\\w+)[^>]*\\bid="${id}"[^>]*>`).exec(html);
  assert.ok(m, `an element with id ${id}`);
  const end = html.indexOf(`</${m[1]}>`, m.index);
  return html.slice(m.index, end === -1 ? undefined : end + m[1].length + 3);
}

/** A complete form of the survey type (every widget kind filled). */
function surveyForm(name: string): Record<string, string | string[]> {
  return {
    title: 'Bird count 2024',
    name,
    notes: 'Counting **birds** along the river.',
    owner_org: orgId,
    private: 'False',
    tag_string: 'birds, nature',
    method: 'transect',
    frequency: 'yearly',
    habitats: ['forest', 'meadow'],
    regions: ['north', 'south'],
    observers: ['Ann', 'Bob', ''],
    started: '2024-05-01',
    recorded_at: '2024-05-02T10:30',
    published_at: '2024-05-03T08:00',
    published_at_tz: '+02:00',
    settings: '{"zoom": 3, "filter": "red"}',
    sample_size: '42',
    remarks: 'Rainy week.',
    station_code: 'ST-12',
    source_page: 'https://example.org/birds',
    'contacts-0-name': 'Ann Lee',
    'contacts-0-email': 'ann@example.org',
    'contacts-0-role': 'lead',
    'contacts-1-name': '',
    'contacts-1-email': '',
    'contacts-1-role': '',
    'funder-0-name': 'Nature Fund',
    'funder-0-grant': 'G-7',
    'title_translated-en': 'Bird count',
    'title_translated-de': 'Vogelzählung',
    'description_translated-en': 'About *birds*',
    'description_translated-de': 'Über Vögel',
    'keywords_translated-en': 'bird, count',
    'keywords_translated-de': 'Vogel',
  };
}

test('every form snippet name the loader knows has a widget of the generated form', () => {
  const missing = [...KNOWN_FORM_SNIPPETS].filter((name) => !(name in FORM_SNIPPET_WIDGETS));
  assert.deepEqual(missing, []);
});

test('the new form of a type is generated from its schema: labels, help, placeholders, required marks, every widget', async () => {
  const web = await signedIn();
  const res = await web.get('/survey/new');
  assert.equal(res.statusCode, 200, res.body);
  const html = res.body;
  assert.match(html, /<form method="post" action="\/survey\/new"/);
  // A schema without start_form_page is one page (test/web-scheming-pages.test.ts has the pages).
  assert.doesNotMatch(html, /class="form-steps"/);
  assert.match(html, /<label for="field-title">Survey title<\/label>/);
  assert.match(html, /placeholder="e.g. Bird count 2024"/);
  assert.match(html, /<label for="field-name">Address <span class="required" aria-hidden="true">\*<\/span><\/label>/);
  assert.match(element(html, 'field-name'), /aria-required="true"/);
  assert.match(html, /<p class="help" id="field-notes-help">What was surveyed, and how.<\/p>/);
  assert.match(element(html, 'field-notes'), /<textarea[^>]*aria-describedby="field-notes-help"/);
  // organization and visibility as the classic form has them
  assert.match(element(html, 'field-owner_org'), new RegExp(`<option value="${orgId}"[^>]*>Bird Society</option>`));
  assert.match(element(html, 'field-private'), /<option value="True">Private<\/option>/);
  // select with its labels (by language: English), a blank choice, and the required mark
  const method = element(html, 'field-method');
  assert.match(
    method,
    /<option value="" selected><\/option><option value="transect">Line transect<\/option><option value="point">Point count<\/option>/,
  );
  assert.match(html, /<label for="field-method">Method <span class="required"/);
  // radio and checkboxes are fieldsets of labelled inputs
  assert.match(element(html, 'field-frequency'), /<legend>Frequency<\/legend>/);
  assert.match(html, /<input id="field-frequency-0" type="radio" name="frequency" value="yearly"> Every year/);
  assert.doesNotMatch(element(html, 'field-frequency'), /archived/, 'form_restrict_choices_to leaves out the other choices');
  assert.match(html, /<input id="field-habitats-1" type="checkbox" name="habitats" value="wetland"> Wetland/);
  assert.match(element(html, 'field-regions'), /<select id="field-regions" name="regions" multiple/);
  assert.match(html, /<input id="field-observers-0" name="observers" type="text" value="">/);
  assert.match(html, /<input id="field-started" name="started" type="date"/);
  assert.match(html, /<input id="field-recorded_at" name="recorded_at" type="datetime-local"/);
  assert.match(html, /<select id="field-published_at_tz" name="published_at_tz">/);
  assert.match(html, /<textarea id="field-settings" name="settings" rows="6" class="code"/);
  assert.match(html, /<input id="field-sample_size" name="sample_size" type="number"/);
  // an unknown form snippet is the text widget; form_snippet: null is left out
  assert.match(html, /<input id="field-station_code" name="station_code" type="text" value="" placeholder="e.g. ST-12">/);
  assert.doesNotMatch(html, /internal_note/);
  // repeating subfields: one empty group with its remove button, and an add button; repeating_once: no buttons
  assert.match(html, /<legend>Contact 1<\/legend>/);
  assert.match(html, /name="contacts-0-email"/);
  assert.match(
    html,
    /<button type="submit" class="button remove-group" name="_scheming_remove" value="contacts-0" formnovalidate>Remove Contact 1<\/button>/,
  );
  assert.match(
    html,
    /<button type="submit" class="button add-group" name="_scheming_add" value="contacts" formnovalidate>Add another Contact<\/button>/,
  );
  assert.match(html, /name="funder-0-grant"/);
  assert.doesNotMatch(html, /value="funder-0"|value="funder"/);
  // fluent fields: one panel per language of form_languages (tabs with scripts), inputs named field-<lang>
  const fluent = element(html, 'field-title_translated');
  assert.match(fluent, /<legend>Translated title<\/legend>/);
  assert.match(fluent, /<ul class="lang-tabs" data-lang-tabs aria-label="Translated title: languages">/);
  assert.match(
    fluent,
    /<a id="field-title_translated-en-tab" href="#field-title_translated-en-panel" data-lang="en" data-selected>English \(en\)<\/a>/,
  );
  assert.match(fluent, /<a id="field-title_translated-de-tab" href="#field-title_translated-de-panel" data-lang="de">German \(de\)<\/a>/);
  assert.match(
    html,
    /<section class="field lang-panel" id="field-title_translated-de-panel" aria-labelledby="field-title_translated-de-tab">/,
  );
  assert.match(html, /<label for="field-title_translated-en">Translated title \(English \(en\)\)<\/label>/);
  assert.match(html, /<label for="field-title_translated-de">Translated title \(German \(de\)\)<\/label>/);
  assert.match(html, /<input id="field-title_translated-de" name="title_translated-de" lang="de"/);
  assert.match(html, /<textarea id="field-description_translated-en" name="description_translated-en" lang="en"/);
});

test('a dataset of the type is created through the form with every widget, and its page shows the fields by their labels', async () => {
  const web = await signedIn();
  const created = await web.post('/survey/new', surveyForm('sw-birds'));
  assert.equal(created.statusCode, 303, created.body);
  assert.equal(created.headers.location, '/survey/sw-birds/resource/new');
  const pkg = await t.ok('package_show', { id: 'sw-birds' }, { token: t.sysadminToken });
  assert.equal(pkg.type, 'survey');
  assert.equal(pkg.state, 'draft');
  assert.equal(pkg.method, 'transect');
  assert.equal(pkg.frequency, 'yearly');
  assert.deepEqual(pkg.habitats, ['forest', 'meadow']);
  assert.deepEqual(pkg.regions, ['north', 'south']);
  assert.deepEqual(pkg.observers, ['Ann', 'Bob']);
  assert.match(pkg.started, /^2024-05-01/);
  assert.match(pkg.recorded_at, /^2024-05-02T10:30/);
  assert.equal(new Date(pkg.published_at).toISOString(), '2024-05-03T06:00:00.000Z', 'the time zone of the form was applied');
  assert.deepEqual(pkg.settings, { zoom: 3, filter: 'red' });
  assert.equal(Number(pkg.sample_size), 42);
  assert.deepEqual(pkg.contacts, [{ name: 'Ann Lee', email: 'ann@example.org', role: 'lead' }], 'the empty second group is dropped');
  assert.deepEqual(pkg.funder, [{ name: 'Nature Fund', grant: 'G-7' }]);
  assert.deepEqual(pkg.title_translated, { en: 'Bird count', de: 'Vogelzählung' });
  assert.deepEqual(pkg.description_translated, { en: 'About *birds*', de: 'Über Vögel' });
  assert.deepEqual(pkg.keywords_translated, { en: ['bird', 'count'], de: ['Vogel'] });
  assert.deepEqual(pkg.tags.map((x: { name: string }) => x.name).sort(), ['birds', 'nature']);
  assert.equal(pkg.owner_org, orgId);

  // The second stage and finishing it, under the type's address.
  const stage2 = await web.get('/survey/sw-birds/resource/new');
  assert.equal(stage2.statusCode, 200);
  assert.match(stage2.body, /action="\/survey\/sw-birds\/resource\/new"/);
  // The schema's resource fields beyond the classic ones follow them.
  assert.match(stage2.body, /<label for="field-sensor">Sensor<\/label>/);
  assert.match(element(stage2.body, 'field-sensor'), /<option value="camera">Camera trap<\/option>/);
  const finished = await web.post('/survey/sw-birds/resource/new', {
    url: 'https://example.org/birds.csv',
    name: 'Counts',
    sensor: 'camera',
    save: 'go-metadata',
  });
  assert.equal(finished.statusCode, 303, finished.body);
  assert.equal(finished.headers.location, '/survey/sw-birds');
  const withResource = await t.ok('package_show', { id: 'sw-birds' }, { token: t.sysadminToken });
  assert.equal(withResource.resources[0].sensor, 'camera');
  const resourcePage = await web.get(`/survey/sw-birds/resource/${withResource.resources[0].id}`);
  assert.equal(resourcePage.statusCode, 200);
  assert.match(text(resourcePage.body), /Sensor Camera trap/, 'a resource field by its label, the choice by its label');
  const resourceEdit = await web.get(`/survey/sw-birds/resource/${withResource.resources[0].id}/edit`);
  assert.match(element(resourceEdit.body, 'field-sensor'), /<option value="camera" selected>Camera trap<\/option>/);

  const page = await web.get('/survey/sw-birds');
  assert.equal(page.statusCode, 200);
  const body = text(page.body);
  assert.match(page.body, /<link rel="canonical" href="http:\/\/test.local\/survey\/sw-birds">/);
  assert.match(body, /Method Line transect/, 'a choice is shown by its label');
  assert.match(body, /Frequency Every year/);
  assert.match(body, /Habitats Forest Meadow/);
  assert.match(body, /Regions North South/);
  assert.match(body, /Observers Ann Bob/);
  assert.match(body, /Start date 1 May 2024/);
  assert.match(body, /Recorded at 2 May 2024 at 10:30 UTC/);
  assert.match(body, /Published at 3 May 2024 at 06:00 UTC/);
  assert.match(body, /Instrument settings \{ "zoom": 3, "filter": "red" \}/);
  assert.match(body, /Sample size 42/);
  assert.match(body, /Contacts Name Ann Lee E-mail ann@example.org Role Lead scientist/);
  assert.match(page.body, /<a href="mailto:ann@example.org" rel="nofollow">ann@example.org<\/a>/);
  assert.match(page.body, /<a href="https:\/\/example.org\/birds" rel="nofollow">/);
  assert.match(body, /Funder Name Nature Fund Grant number G-7/);
  assert.match(body, /Translated title Bird count/, 'a fluent value in the UI language');
  assert.doesNotMatch(body, /Vogelzählung/);
  assert.match(page.body, /Translated description<\/th><td><div class="prose"><p>About <em>birds<\/em><\/p>/);
  // Shown in their own places, not twice; form_snippet/display_snippet null not at all.
  const info = text(page.body.slice(page.body.indexOf('id="info-title"'), page.body.indexOf('</table>')));
  assert.doesNotMatch(info, /Survey title|Summary|Counting|Keywords|Publisher|Bird Society|Internal note/);
  // Links of the page stay under the type.
  assert.match(page.body, /href="\/survey\/edit\/sw-birds"/);
  assert.match(page.body, /href="\/survey\/sw-birds\/resource\//);

  // /dataset/<name> shows it too (as CKAN 2.11 does), pointing at the type's address.
  const also = await web.get('/dataset/sw-birds');
  assert.equal(also.statusCode, 200);
  assert.match(also.body, /<link rel="canonical" href="http:\/\/test.local\/survey\/sw-birds">/);
  assert.match(text(also.body), /Method Line transect/);
});

test("repeating subfields are added and removed with the form's buttons, values kept, without JavaScript", async () => {
  const web = await signedIn();
  const form = surveyForm('sw-groups');
  delete form['contacts-1-name'];
  delete form['contacts-1-email'];
  delete form['contacts-1-role'];
  const added = await web.post('/survey/new', { ...form, _scheming_add: 'contacts' });
  assert.equal(added.statusCode, 200, 'the form comes back, nothing is saved');
  assert.match(added.body, /<legend>Contact 2<\/legend>/);
  assert.match(added.body, /<input id="field-contacts-0-name" name="contacts-0-name" type="text" value="Ann Lee"/);
  assert.match(added.body, /<input id="field-contacts-1-name" name="contacts-1-name" type="text" value=""/);
  assert.match(added.body, /value="Bird count 2024"/, 'the other values are kept');
  assert.match(added.body, /<option value="transect" selected>Line transect<\/option>/);
  assert.match(added.body, /<input id="field-habitats-2" type="checkbox" name="habitats" value="meadow" checked>/);
  assert.match(added.body, /<input id="field-title_translated-de" name="title_translated-de" lang="de" type="text" value="Vogelzählung"/);
  assert.equal((await t.call('package_show', { id: 'sw-groups' }, { token: t.sysadminToken })).status, 404);

  // Fill the second group, then remove the first: the second becomes the first.
  const two = { ...form, 'contacts-1-name': 'Bo Berg', 'contacts-1-email': 'bo@example.org', 'contacts-1-role': 'field' };
  const removed = await web.post('/survey/new', { ...two, _scheming_remove: 'contacts-0' });
  assert.equal(removed.statusCode, 200);
  assert.doesNotMatch(removed.body, /<legend>Contact 2<\/legend>/);
  assert.doesNotMatch(removed.body, /Ann Lee/);
  assert.match(removed.body, /<input id="field-contacts-0-name" name="contacts-0-name" type="text" value="Bo Berg"/);

  // Another observer input, values kept.
  const more = await web.post('/survey/new', { ...form, observers: ['Ann', 'Bob'], _scheming_add: 'observers' });
  assert.equal(more.statusCode, 200);
  assert.match(more.body, /<input id="field-observers-1" name="observers" type="text" value="Bob">/);
  assert.match(more.body, /<input id="field-observers-2" name="observers" type="text" value="">/);

  // Saving what the buttons made: one contact, Bo.
  const removedForm = { ...form, 'contacts-0-name': 'Bo Berg', 'contacts-0-email': 'bo@example.org', 'contacts-0-role': 'field' };
  const saved = await web.post('/survey/new', removedForm);
  assert.equal(saved.statusCode, 303, saved.body);
  const pkg = await t.ok('package_show', { id: 'sw-groups' }, { token: t.sysadminToken });
  assert.deepEqual(pkg.contacts, [{ name: 'Bo Berg', email: 'bo@example.org', role: 'field' }]);

  // Editing: the groups come from the dataset; adding one and saving keeps both.
  const edit = await web.get('/survey/edit/sw-groups');
  assert.equal(edit.statusCode, 200);
  assert.match(edit.body, /<form method="post" action="\/survey\/edit\/sw-groups"/);
  assert.match(edit.body, /<input id="field-contacts-0-name" name="contacts-0-name" type="text" value="Bo Berg"/);
  assert.doesNotMatch(edit.body, /contacts-1-name/);
  const editAdd = await web.post(
    '/survey/edit/sw-groups',
    { ...removedForm, _scheming_add: 'contacts' },
    { from: '/survey/edit/sw-groups' },
  );
  assert.equal(editAdd.statusCode, 200);
  assert.match(editAdd.body, /name="contacts-1-name"/);
  const update = await web.post(
    '/survey/edit/sw-groups',
    { ...removedForm, 'contacts-1-name': 'Cy Dahl', 'contacts-1-email': '', 'contacts-1-role': '', method: 'point' },
    { from: '/survey/edit/sw-groups' },
  );
  assert.equal(update.statusCode, 303, update.body);
  const updated = await t.ok('package_show', { id: 'sw-groups' }, { token: t.sysadminToken });
  assert.deepEqual(
    updated.contacts.map((c: { name: string }) => c.name),
    ['Bo Berg', 'Cy Dahl'],
  );
  assert.equal(updated.method, 'point');
  assert.equal(updated.type, 'survey');
});

test('errors of package_create are shown beside their fields, nested ones beside the subfield, and nothing is stored', async () => {
  const web = await signedIn();
  const res = await web.post('/survey/new', {
    ...surveyForm('sw-bad'),
    method: '',
    frequency: 'sometimes',
    settings: '[1, 2',
    'contacts-0-name': '',
    'contacts-0-email': 'ann@example.org',
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /role="alert"/);
  const method = element(res.body, 'field-method-error');
  assert.match(method, /Missing value/);
  assert.match(element(res.body, 'field-method'), /aria-invalid="true"/);
  assert.match(element(res.body, 'field-method'), /aria-describedby="field-method-error"/);
  assert.match(element(res.body, 'field-frequency-error'), /.+/);
  assert.match(element(res.body, 'field-settings-error'), /JSON/);
  assert.match(element(res.body, 'field-contacts-0-name-error'), /Missing value/);
  assert.match(element(res.body, 'field-contacts-0-name'), /aria-invalid="true"/);
  // The values stay in the form.
  assert.match(res.body, /<input id="field-contacts-0-email" name="contacts-0-email" type="text" value="ann@example.org"/);
  assert.match(res.body, /<textarea id="field-settings" name="settings" rows="6" class="code"[^>]*>\[1, 2<\/textarea>/);
  assert.equal((await t.call('package_show', { id: 'sw-bad' }, { token: t.sysadminToken })).status, 404);
});

test("the type's search page lists its datasets with facets on its choice fields, by their labels", async () => {
  const web = await signedIn();
  for (const [name, method] of [
    ['sw-search-1', 'transect'],
    ['sw-search-2', 'point'],
  ] as const) {
    await t.ok(
      'package_create',
      { ...{ name, title: `Search ${name}`, owner_org: orgId, type: 'survey', method, habitats: ['wetland'] } },
      { token: t.sysadminToken },
    );
  }
  await t.ok('package_create', { name: 'sw-plain', title: 'Plain dataset', owner_org: orgId }, { token: t.sysadminToken });
  const res = await web.get('/survey');
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /href="\/survey\/sw-search-1"/);
  assert.doesNotMatch(res.body, /sw-plain/, 'datasets of other types are not listed');
  assert.match(res.body, /<a class="button primary" href="\/survey\/new">/);
  const facet = element(res.body, 'facet-method');
  assert.match(facet, /Method/);
  assert.match(res.body, /href="\/survey\?method=transect"[^>]*>\s*Line transect<\/a>/);
  assert.match(res.body, /<h3 id="facet-habitats">Habitats<\/h3>/);
  const filtered = await web.get('/survey?method=point');
  assert.equal(filtered.statusCode, 200);
  assert.match(filtered.body, /sw-search-2/);
  assert.doesNotMatch(filtered.body, /href="\/survey\/sw-search-1"/);
  assert.match(text(filtered.body), /Method: Point count/);
  // /dataset shows the type "dataset" only, as CKAN's does.
  const all = await web.get('/dataset');
  assert.match(all.body, /sw-plain/);
  assert.doesNotMatch(all.body, /sw-search-1/);
});

test('the type "dataset" with a schema, labels in the UI language, and an organization schema with its own fields', async () => {
  const app = await startApp({
    plugins: ['datastore'],
    config: {
      'svc.scheming.dataset_schemas': [SCHEMA, path.join(import.meta.dirname, 'fixtures', 'scheming-web-dataset.yaml')],
      'svc.scheming.organization_schemas': [path.join(import.meta.dirname, 'fixtures', 'scheming-web-org.yaml')],
      'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      'svc.locale_default': 'de',
    },
  });
  try {
    await app.user('sw_admin', { sysadmin: true });
    const web = new WebClient(app.app);
    await web.login('sw_admin');

    // An organization: the schema's own fields after the classic ones, required marks, errors beside them.
    const orgForm = await web.get('/organization/new');
    assert.equal(orgForm.statusCode, 200);
    assert.match(orgForm.body, /<label for="field-department_id">Department code <span class="required"/);
    assert.match(orgForm.body, /<p class="help" id="field-department_id-help">The code of the ministry&#39;s department.<\/p>/);
    assert.match(element(orgForm.body, 'field-sector'), /<option value="health">Health<\/option>/);
    assert.match(orgForm.body, /name="offices-0-city"/);
    const orgFields = { title: 'Ministry of Roads', name: 'sw-roads', description: '', image_url: '', sector: 'transport' };
    const missing = await web.post('/organization/new', {
      ...orgFields,
      department_id: '',
      'offices-0-city': 'Bern',
      'offices-0-phone': '',
    });
    assert.equal(missing.statusCode, 400);
    assert.match(element(missing.body, 'field-department_id-error'), /Missing value/);
    assert.match(missing.body, /name="offices-0-city" type="text" value="Bern"/);
    const another = await web.post('/organization/new', { ...orgFields, 'offices-0-city': 'Bern', _scheming_add: 'offices' });
    assert.equal(another.statusCode, 200);
    assert.match(another.body, /name="offices-1-city"/);
    const org = await web.post('/organization/new', {
      ...orgFields,
      department_id: 'D-7',
      'offices-0-city': 'Bern',
      'offices-0-phone': '031',
      'offices-1-city': 'Chur',
      'offices-1-phone': '',
    });
    assert.equal(org.statusCode, 303, org.body);
    const shown = await app.ok('organization_show', { id: 'sw-roads' });
    assert.equal(shown.department_id, 'D-7');
    assert.equal(shown.sector, 'transport');
    assert.deepEqual(
      shown.offices.map((o: { city: string }) => o.city),
      ['Bern', 'Chur'],
    );
    const about = text((await web.get('/organization/about/sw-roads')).body);
    assert.match(about, /Department code D-7/);
    assert.match(about, /Sector Transport/);
    assert.match(about, /Offices Office 1 City Bern Phone 031 Office 2 City Chur/);
    const edit = await web.get('/organization/edit/sw-roads');
    assert.match(edit.body, /<input id="field-department_id" name="department_id" type="text" value="D-7"/);

    // A choices_helper field: before its table exists, only the additional choices; then the table's rows too.
    const before = await web.get('/dataset/new');
    assert.match(
      element(before.body, 'field-species'),
      /<option value=""[^>]*><\/option><option value="other">Other species<\/option>\s*<\/select>/,
    );
    const holder = await app.ok('package_create', { name: 'sw-lists', type: 'dataset', owner_org: shown.id }, { token: app.sysadminToken });
    const table = await app.ok(
      'resource_create',
      { package_id: holder.id, url: 'https://example.org/species.csv', name: 'Species' },
      { token: app.sysadminToken },
    );
    await app.ok(
      'datastore_create',
      {
        resource_id: table.id,
        aliases: ['sw-species'],
        fields: [
          { id: 'code', type: 'text' },
          { id: 'common_name', type: 'text' },
        ],
        records: [
          { code: 'ardea', common_name: 'Grey heron' },
          { code: 'anas', common_name: 'Mallard' },
        ],
        force: true,
      },
      { token: app.sysadminToken },
    );

    // /dataset/new comes from the schema of the type "dataset"; labels in German where given, else English.
    const form = await web.get('/dataset/new');
    assert.match(
      element(form.body, 'field-species'),
      /<option value="other">Other species<\/option><option value="ardea">Grey heron<\/option><option value="anas">Mallard<\/option>/,
    );
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<form method="post" action="\/dataset\/new"/);
    assert.match(form.body, /<label for="field-theme">Thema<\/label>/);
    assert.match(element(form.body, 'field-theme'), /<option value="env">Umwelt<\/option><option value="econ">Economy<\/option>/);
    assert.match(element(form.body, 'field-license_id'), /<option value="cc-by"/);
    assert.doesNotMatch(form.body, /name="extras__0__key"/, 'not the classic form');
    const survey = await web.get('/survey/new');
    assert.match(survey.body, /<label for="field-method">Methode <span/);
    assert.match(
      element(survey.body, 'field-method'),
      /<option value="transect">Linientransekt<\/option><option value="point">Point count<\/option>/,
    );
    const orgId = shown.id;
    const created = await web.post('/dataset/new', {
      species: 'ardea',
      title: 'Air',
      name: 'sw-air',
      notes: '',
      owner_org: orgId,
      private: 'False',
      license_id: '',
      theme: 'env',
    });
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, '/dataset/sw-air/resource/new');
    const pkg = await app.ok('package_show', { id: 'sw-air' }, { token: app.sysadminToken });
    assert.equal(pkg.type, 'dataset');
    assert.equal(pkg.theme, 'env');
    assert.equal(pkg.species, 'ardea');
    const page = text((await web.get('/dataset/sw-air')).body);
    assert.match(page, /Thema Umwelt/);
    assert.match(page, /Species Grey heron/, 'a choices_helper value by its label from the table');
  } finally {
    await app.close();
  }
});
