// Custom dataset schemas (svc.scheming.dataset_schemas) validate and store datasets: every named
// validator and preset through the API, on create, show, update, patch and search results.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, type TestApp } from './helpers/app.ts';

const fixture = (name: string) => path.join(import.meta.dirname, 'fixtures', name);
const PRESETS = ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json', 'ckanext.dcat.schemas:presets.yaml'];

let t: TestApp;
let sys: string;

before(async () => {
  t = await startApp({
    plugins: ['activity', 'datastore'],
    config: {
      'svc.scheming.dataset_schemas': [fixture('scheming-validate-survey.yaml'), fixture('scheming-validate-drafts.yaml')],
      'svc.scheming.presets': PRESETS,
    },
  });
  sys = t.sysadminToken;
  await t.ok('organization_create', { name: 'wetlands' }, { token: sys });
});
after(async () => {
  await t?.close();
});

/** The smallest valid survey, with these fields added. */
function survey(name: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'survey', name, owner_org: 'wetlands', notes: 'Counted at dawn', site_code: 'WX-1', habitat: 'marsh', ...fields };
}

async function refused(action: string, data: Record<string, unknown>) {
  const r = await t.call(action, data, { token: sys });
  assert.equal(r.body.success, false, `${action} should fail: ${JSON.stringify(r.body.result)}`);
  assert.equal(r.body.error?.__type, 'Validation Error', JSON.stringify(r.body.error));
  return r.body.error as Record<string, any>;
}

async function absent(name: string) {
  const r = await t.call('package_show', { id: name }, { token: sys });
  assert.equal(r.status, 404, `${name} should not exist`);
}

test('custom fields of every kind are stored typed and shown as top-level keys', async () => {
  const created = await t.ok(
    'package_create',
    survey('dawn-count', {
      title: 'Dawn count',
      tag_string: 'birds, wetland',
      version: '2.1',
      author_email: '  ann@example.org ',
      site_code: ' WX-7 ',
      birds_counted: '42',
      observers: 3,
      verified: 'yes',
      homepage: 'https://birds.example.org/survey',
      weather: 'wet',
      methods: ['transect', 'point'],
      seasons: 'spring',
      species: ['Grey heron', '', 'Bittern'],
      survey_date: '2026-05-04',
      started: '2026-05-04T05:30:00',
      uploaded: '2026-05-04T07:30:00+02:00',
      equipment: '{"binoculars": "10x42", "count": 2}',
      issued: '2026-05',
      summary_translated: { en: 'Dawn count', de: 'Morgenzählung' },
      title_translated: { en: 'Dawn count', de: 'Morgenzählung' },
      notes_md: '{"en": "*Birds*"}',
      keywords: { en: ['heron', 'bittern'], de: ['Reiher'] },
      legacy_dates: '2020-01-02T10:11:12',
      legacy_times: '2020-01-02 10:11',
      raw_settings: '{"zoom": 3}',
      free_note: ['kept', 'as sent'],
      legacy_choices: '["a", "b"]',
      legacy_lines: 'one line',
      legacy_text: 'hello',
      legacy_tags: '{"en": ["x"]}',
      contacts: [
        { name: 'Ann', email: 'ann@example.org', roles: ['observer', 'lead'], since: '2024-01-31' },
        { name: 'Bo', roles: 'observer' },
      ],
      publisher: { name: 'Wetland Agency', kind: 'agency' },
    }),
    { token: sys },
  );
  const shown = await t.ok('package_show', { id: 'dawn-count' });
  for (const dict of [created, shown]) {
    assert.equal(dict.type, 'survey');
    assert.equal(dict.title, 'Dawn count');
    assert.deepEqual(
      dict.tags.map((x: any) => x.name),
      ['birds', 'wetland'],
    );
    assert.equal(dict.version, '2.1');
    assert.equal(dict.author_email, 'ann@example.org');
    assert.equal(dict.site_code, 'WX-7');
    assert.equal(dict.birds_counted, 42);
    assert.equal(dict.observers, 3);
    assert.equal(dict.verified, true);
    assert.equal(dict.homepage, 'https://birds.example.org/survey');
    assert.equal(dict.short_title, 'dawn-count', 'if_empty_same_as(name)');
    assert.equal(dict.habitat, 'marsh');
    assert.equal(dict.weather, 'wet');
    assert.deepEqual(dict.methods, ['point', 'transect'], 'in the order of the choices');
    assert.deepEqual(dict.seasons, ['spring']);
    assert.deepEqual(dict.species, ['Grey heron', 'Bittern']);
    assert.equal(dict.survey_date, '2026-05-04');
    assert.equal(dict.started, '2026-05-04T05:30:00');
    assert.equal(dict.uploaded, '2026-05-04T05:30:00+00:00', 'datetime_tz: stored in UTC');
    assert.deepEqual(dict.equipment, { binoculars: '10x42', count: 2 });
    assert.equal(dict.issued, '2026-05');
    assert.deepEqual(dict.summary_translated, { en: 'Dawn count', de: 'Morgenzählung' });
    assert.deepEqual(dict.title_translated, { en: 'Dawn count', de: 'Morgenzählung' });
    assert.deepEqual(dict.notes_md, { en: '*Birds*' });
    assert.deepEqual(dict.keywords, { en: ['heron', 'bittern'], de: ['Reiher'] });
    assert.equal(dict.legacy_dates, '2020-01-02');
    assert.equal(dict.legacy_times, '2020-01-02T10:11:00');
    assert.deepEqual(dict.raw_settings, { zoom: 3 }, 'scheming_load_json on output');
    assert.deepEqual(dict.free_note, ['kept', 'as sent'], 'a field without validators keeps its value');
    assert.deepEqual(dict.legacy_choices, ['a', 'b'], 'scheming_multiple_choice_output reads JSON text');
    assert.deepEqual(dict.legacy_lines, ['one line'], 'repeating_text_output: plain text is one line');
    assert.deepEqual(dict.legacy_text, { en: 'hello' }, 'fluent_text_output: plain text is the default language');
    assert.deepEqual(dict.legacy_tags, { en: ['x'] }, 'fluent_tags_output reads JSON text');
    assert.deepEqual(dict.contacts, [
      { name: 'Ann', email: 'ann@example.org', roles: ['lead', 'observer'], since: '2024-01-31' },
      { name: 'Bo', roles: ['observer'] },
    ]);
    assert.deepEqual(dict.publisher, [{ name: 'Wetland Agency', kind: 'agency' }], 'repeating_once: still a list');
    assert.equal(
      dict.extras.find((e: any) => e.key === 'habitat'),
      undefined,
      'custom fields are not extras',
    );
  }
});

test('missing required fields, wrong choices and malformed values name the field; nothing is stored', async () => {
  const e = await refused('package_create', {
    type: 'survey',
    name: 'bad-one',
    owner_org: 'wetlands',
    habitat: 'desert',
    methods: ['point', 'flying'],
    survey_date: '2026-13-45',
    birds_counted: 'many',
    observers: -1,
    verified: 'perhaps',
    homepage: 'ftp://example.org',
    author_email: 'not-an-email',
    equipment: '[1, 2]',
    issued: 'last spring',
    started: 'yesterday',
    summary_translated: { EN: 'x' },
    contacts: [{ email: 'a@example.org' }, { name: 'Ok' }],
  });
  assert.deepEqual(e.notes, ['Missing value']);
  assert.deepEqual(e.site_code, ['Missing value']);
  assert.deepEqual(e.habitat, ["Value must be one of ['marsh', 'reed', 'lake']"]);
  assert.deepEqual(e.methods, ['unexpected choice "flying"']);
  assert.deepEqual(e.survey_date, ['Date format incorrect']);
  assert.deepEqual(e.birds_counted, ['Invalid integer']);
  assert.deepEqual(e.observers, ['Must be a natural number']);
  assert.deepEqual(e.verified, ['Value must be a boolean (true or false)']);
  assert.deepEqual(e.homepage, ['Please provide a valid URL']);
  assert.deepEqual(e.author_email, ['Email not-an-email is not a valid format']);
  assert.match(e.equipment[0], /^Unsupported value for JSON field/);
  assert.match(e.issued[0], /^Date format incorrect\. Supported formats are YYYY, YYYY-MM/);
  assert.deepEqual(e.started, ['Date format incorrect']);
  assert.deepEqual(e.summary_translated, ['invalid language code: "EN"']);
  assert.deepEqual(e.contacts, [{ name: ['Missing value'] }, {}]);
  await absent('bad-one');
});

test('a required select is required; an empty value of an optional one is allowed', async () => {
  const e = await refused('package_create', survey('no-habitat', { habitat: '' }));
  assert.deepEqual(e.habitat, ['Missing value']);
  await absent('no-habitat');
  const ok = await t.ok('package_create', survey('no-weather', { weather: '' }), { token: sys });
  assert.equal(ok.weather, '');
});

test('a type without a schema is refused naming the types; no type means dataset', async () => {
  const e = await refused('package_create', { type: 'camel-photos', name: 'camel-1', owner_org: 'wetlands' });
  assert.match(e.type[0], /Unsupported dataset type: camel-photos/);
  assert.match(e.type[0], /survey, report/);
  await absent('camel-1');
  const d = await refused('package_create', { name: 'plain-1', owner_org: 'wetlands' });
  assert.match(d.type[0], /Unsupported dataset type: dataset/);
  await absent('plain-1');
});

test('update replaces custom fields, patch keeps those not sent; a bad update changes nothing', async () => {
  await t.ok('package_create', survey('edit-me', { birds_counted: 5, methods: ['netting'], weather: 'dry' }), { token: sys });
  const patched = await t.ok('package_patch', { id: 'edit-me', birds_counted: '6' }, { token: sys });
  assert.equal(patched.birds_counted, 6);
  assert.deepEqual(patched.methods, ['netting']);
  assert.equal(patched.weather, 'dry');

  const before = await t.ok('package_show', { id: 'edit-me' });
  const e = await refused('package_patch', { id: 'edit-me', habitat: 'forest', birds_counted: 7 });
  assert.deepEqual(e.habitat, ["Value must be one of ['marsh', 'reed', 'lake']"]);
  const unchanged = await t.ok('package_show', { id: 'edit-me' });
  assert.deepEqual(unchanged, before);

  const updated = await t.ok('package_update', survey('edit-me', { id: before.id, habitat: 'lake' }), { token: sys });
  assert.equal(updated.habitat, 'lake');
  assert.equal(updated.birds_counted, undefined, 'package_update: not sent, cleared');
  assert.deepEqual(updated.methods, [], 'a multiple choice not sent is an empty list, as in CKAN');

  const revised = await t.ok('package_revise', { match: { id: before.id }, update: { weather: 'wet' } }, { token: sys });
  assert.equal(revised.package.weather, 'wet');
  const badRevise = await t.call('package_revise', { match: { id: before.id }, update: { weather: 'snow' } }, { token: sys });
  assert.equal(badRevise.body.success, false);
});

test('resources: resource_fields validate, store typed values and show them', async () => {
  const pkg = await t.ok(
    'package_create',
    survey('with-res', {
      resources: [
        {
          url: ' https://example.org/plots.csv ',
          plot_count: '12',
          captured: '2026-05-04T06:00',
          quality: 'checked',
          sections: [{ label: 'North', rows: '3' }],
        },
      ],
    }),
    { token: sys },
  );
  const r = pkg.resources[0];
  assert.equal(r.url, 'https://example.org/plots.csv');
  assert.equal(r.format, 'CSV', 'if_empty_guess_format');
  assert.equal(r.plot_count, 12);
  assert.equal(r.captured, '2026-05-04T06:00:00');
  assert.equal(r.quality, 'checked');
  assert.deepEqual(r.sections, [{ label: 'North', rows: 3 }]);

  const e = await refused(
    'package_update',
    survey('with-res', { id: pkg.id, resources: [{ url: 'https://example.org/x.csv', quality: 'perfect', sections: [{ rows: 'x' }] }] }),
  );
  assert.deepEqual(e.resources, [
    { quality: ["Value must be one of ['raw', 'checked']"], sections: [{ label: ['Missing value'], rows: ['Invalid integer'] }] },
  ]);
  const still = await t.ok('package_show', { id: 'with-res' });
  assert.equal(still.resources[0].quality, 'checked');
});

test('search results and lists show custom fields as package_show does', async () => {
  const shown = await t.ok('package_show', { id: 'dawn-count' });
  const found = await t.ok('package_search', { q: 'name:dawn-count' });
  assert.equal(found.count, 1);
  assert.deepEqual(found.results[0].raw_settings, shown.raw_settings);
  assert.deepEqual(found.results[0].contacts, shown.contacts);
  assert.deepEqual(found.results[0].summary_translated, shown.summary_translated);
  const recent = await t.ok('current_package_list_with_resources', { limit: 100 });
  const item = recent.find((d: any) => d.name === 'dawn-count');
  assert.deepEqual(item.raw_settings, { zoom: 3 });
});

test('form inputs: repeating subfields as field-N-subfield, datetimes as _date/_time, fluent text per language', async () => {
  const pkg = await t.ok(
    'package_create',
    survey('from-form', {
      'contacts-0-name': 'Cy',
      'contacts-0-roles': 'lead',
      'contacts-1-name': 'Di',
      started_date: '2026-06-01',
      started_time: '04:15',
      uploaded_date: '2026-06-01',
      uploaded_time: '12:00',
      uploaded_tz: 'Europe/Berlin',
      'summary_translated-en': 'Morning',
      'summary_translated-de': 'Morgen',
    }),
    { token: sys },
  );
  assert.deepEqual(pkg.contacts, [
    { name: 'Cy', roles: ['lead'] },
    { name: 'Di', roles: [] },
  ]);
  assert.equal(pkg.started, '2026-06-01T04:15:00');
  assert.equal(pkg.uploaded, '2026-06-01T10:00:00+00:00');
  assert.deepEqual(pkg.summary_translated, { en: 'Morning', de: 'Morgen' });
  assert.equal(pkg.started_date, undefined, 'the form parts are not stored');
  assert.equal(pkg['summary_translated-en'], undefined);
});

test('core fields a schema lists: name, version, owner organization, tags and formats by their validators', async () => {
  const e = await refused(
    'package_create',
    survey('Bad Name!', { version: 'v'.repeat(101), owner_org: 'no-such-org', tag_string: 'ok, b@d' }),
  );
  assert.deepEqual(e.name, ['Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_']);
  assert.deepEqual(e.version, ['Version must be a maximum of 100 characters long']);
  assert.deepEqual(e.owner_org, ['Organization does not exist']);
  const taken = await refused('package_create', survey('dawn-count'));
  assert.deepEqual(taken.name, ['That URL is already in use.']);
  const clash = await refused('package_create', survey('clash', { extras: [{ key: 'habitat', value: 'x' }] }));
  assert.deepEqual(clash.extras, [{ key: ['There is a schema field with the same name'] }]);
  await absent('clash');

  const pkg = await t.ok(
    'package_create',
    survey('formats', { resources: [{ url: 'https://example.org/a', format: 'csv' }, { url: 'https://example.org/b.json' }] }),
    { token: sys },
  );
  assert.deepEqual(
    pkg.resources.map((r: any) => r.format),
    ['CSV', 'JSON'],
  );
});

test('fluent_core_translated: the core field shows the text of the default language', async () => {
  const pkg = await t.ok(
    'package_create',
    survey('translated', { title: 'Whatever', title_translated: { en: 'Evening count', de: 'Abendzählung' } }),
    { token: sys },
  );
  assert.equal(pkg.title, 'Evening count');
  assert.deepEqual(pkg.title_translated, { en: 'Evening count', de: 'Abendzählung' });
  const one = await t.ok('package_create', survey('translated-2', { summary_translated: { en: 'Only English' } }), { token: sys });
  assert.deepEqual(one.summary_translated, { en: 'Only English' }, 'a fluent field that is not required needs no language');
  assert.deepEqual(one.title_translated, {}, 'not sent: an empty object, as ckanext-fluent stores it');
  assert.equal(one.title, 'translated-2');
});

test('resource_create, resource_update, resource_patch and resource_show use the resource fields', async () => {
  const pkg = await t.ok('package_create', survey('res-actions'), { token: sys });
  const created = await t.ok(
    'resource_create',
    { package_id: pkg.id, url: 'https://example.org/r.csv', plot_count: '4', quality: 'raw', sections: [{ label: 'East' }] },
    { token: sys },
  );
  assert.equal(created.plot_count, 4);
  assert.deepEqual(created.sections, [{ label: 'East' }]);
  const e = await refused('resource_create', { package_id: pkg.id, url: 'https://example.org/s.csv', quality: 'fine' });
  assert.deepEqual(e.quality, ["Value must be one of ['raw', 'checked']"]);
  assert.equal((await t.ok('package_show', { id: pkg.id })).resources.length, 1, 'nothing stored');

  const patched = await t.ok('resource_patch', { id: created.id, quality: 'checked' }, { token: sys });
  assert.equal(patched.quality, 'checked');
  assert.equal(patched.plot_count, 4);
  const bad = await refused('resource_update', { id: created.id, url: 'https://example.org/r.csv', plot_count: 'many' });
  assert.deepEqual(bad.plot_count, ['Invalid integer']);
  const shown = await t.ok('resource_show', { id: created.id });
  assert.equal(shown.plot_count, 4);
  assert.equal(shown.quality, 'checked');
});

test('draft_fields_required: false lets a draft wait for its required fields; create_validators apply on create', async () => {
  const draft = await t.ok(
    'package_create',
    { type: 'report', name: 'draft-report', owner_org: 'wetlands', state: 'draft', pages: 3 },
    { token: sys },
  );
  assert.equal(draft.state, 'draft');
  assert.deepEqual(draft.chapters, []);
  assert.equal(draft.reviewed, false, 'default(false)');

  const e = await refused('package_create', { type: 'report', name: 'live-report', owner_org: 'wetlands' });
  assert.deepEqual(e.audience, ['Missing value']);
  assert.deepEqual(e.chapters, ['Missing value']);
  assert.deepEqual(e.pages, ['Missing value'], 'create_validators: not_empty');
  await absent('live-report');

  const live = await t.ok(
    'package_create',
    { type: 'report', name: 'live-report', owner_org: 'wetlands', audience: 'staff', chapters: 'Intro', pages: '7', region: 'north' },
    { token: sys },
  );
  assert.deepEqual(live.chapters, ['Intro']);
  const updated = await t.ok('package_patch', { id: live.id, pages: '' }, { token: sys });
  assert.equal(updated.pages, null, 'on update the validators (ignore_missing int_validator) apply: "" is null');
  const wrong = await refused('package_patch', { id: live.id, region: 'west' });
  assert.deepEqual(wrong.region, ["Value must be one of ['north', 'south']"]);
});

test('activity records keep the custom fields as package_show shows them', async () => {
  const pkg = await t.ok('package_create', survey('with-activity', { raw_settings: '{"zoom": 5}', methods: 'netting' }), { token: sys });
  await t.ok('package_patch', { id: pkg.id, birds_counted: 9 }, { token: sys });
  const list = await t.ok('package_activity_list', { id: pkg.id }, { token: sys });
  assert.equal(list.length, 2);
  const [changed, created] = list;
  assert.deepEqual(created.data.package.raw_settings, { zoom: 5 });
  assert.deepEqual(created.data.package.methods, ['netting']);
  assert.equal(created.data.package.birds_counted, undefined);
  assert.equal(changed.data.package.birds_counted, 9);
});

test('svc.scheming.dataset_fallback: a type without a schema is validated by the default rules', async () => {
  const f = await startApp({
    plugins: [],
    config: {
      'svc.scheming.dataset_schemas': [fixture('scheming-validate-drafts.yaml')],
      'svc.scheming.presets': PRESETS,
      'svc.scheming.dataset_fallback': true,
    },
  });
  try {
    await f.ok('organization_create', { name: 'fallback-org' }, { token: f.sysadminToken });
    const plain = await f.ok('package_create', { name: 'plain', owner_org: 'fallback-org', anything: [1, 2] }, { token: f.sysadminToken });
    assert.equal(plain.type, 'dataset');
    assert.deepEqual(plain.anything, [1, 2], 'other keys kept as custom fields, as without schemas');
    const report = await f.call('package_create', { type: 'report', name: 'r1', owner_org: 'fallback-org' }, { token: f.sysadminToken });
    assert.deepEqual(report.body.error?.audience, ['Missing value'], 'a type with a schema still uses it');
  } finally {
    await f.close();
  }
});

test('choices_helper scheming_datastore_choices: the values are the rows of the data store table', async () => {
  const pkg = await t.ok('package_create', survey('stations-list', { resources: [{ url: 'https://example.org/stations' }] }), {
    token: sys,
  });
  await t.ok(
    'datastore_create',
    {
      resource_id: pkg.resources[0].id,
      force: true,
      aliases: ['bird-stations'],
      fields: [
        { id: 'code', type: 'text' },
        { id: 'label', type: 'text' },
      ],
      records: [
        { code: 'S1', label: 'North pier' },
        { code: 'S2', label: 'Reed hide' },
      ],
    },
    { token: sys },
  );
  const ok = await t.ok('package_create', survey('at-station', { station: 'S2' }), { token: sys });
  assert.equal(ok.station, 'S2');
  const extra = await t.ok('package_create', survey('no-station', { station: 'none' }), { token: sys });
  assert.equal(extra.station, 'none', 'datastore_additional_choices');
  const e = await refused('package_create', survey('bad-station', { station: 'S9' }));
  assert.deepEqual(e.station, ["Value must be one of ['none', 'S1', 'S2']"]);
  await absent('bad-station');
});
