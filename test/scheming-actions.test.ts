// scheming_{dataset,group,organization}_schema_list / _show: ckanext-scheming's answers (the
// configured order, the schema expanded or as its file has it, Not Found for an unknown type), to
// anyone, signed in or not.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { startApp, type TestApp } from './helpers/app.ts';

const fixture = (name: string) => path.join(import.meta.dirname, 'fixtures', `scheming-load-${name}`);
const fileData = (name: string) => {
  const text = fs.readFileSync(fixture(name), 'utf8');
  return name.endsWith('.json') ? JSON.parse(text) : parse(text);
};

let t: TestApp;
before(async () => {
  t = await startApp({
    plugins: [],
    config: {
      // field-survey first: the list keeps the configured order
      'svc.scheming.dataset_schemas': [fixture('field-survey.yaml'), fixture('llama-photos.yaml')],
      'svc.scheming.group_schemas': fixture('theme-group.json'),
      'svc.scheming.organization_schemas': fixture('publisher-organization.yaml'),
    },
  });
});
after(async () => {
  await t?.close();
});

const field = (schema: any, list: string, name: string) => schema[list].find((f: any) => f.field_name === name);

test('the lists name the configured types in the configured order, to anonymous callers too', async () => {
  assert.deepEqual(await t.ok('scheming_dataset_schema_list'), ['field-survey', 'llama-photos']);
  assert.deepEqual(await t.ok('scheming_group_schema_list', {}, { method: 'GET' }), ['theme']);
  assert.deepEqual(await t.ok('scheming_organization_schema_list'), ['publisher']);
});

test('dataset schema, expanded by default: the file with each field given its preset values, its own keys winning', async () => {
  const schema = await t.ok('scheming_dataset_schema_show', { type: 'llama-photos' });
  const file = fileData('llama-photos.yaml');
  assert.deepEqual(
    Object.keys(schema).sort(),
    ['about', 'about_url', 'dataset_fields', 'dataset_type', 'resource_fields', 'scheming_version'].sort(),
  );
  assert.equal(schema.dataset_type, 'llama-photos');
  assert.equal(schema.about, file.about);
  assert.deepEqual(
    schema.dataset_fields.map((f: any) => f.field_name),
    file.dataset_fields.map((f: any) => f.field_name),
  );
  const wool = field(schema, 'dataset_fields', 'wool_colour');
  assert.deepEqual(
    { validators: wool.validators, form_snippet: wool.form_snippet, required: wool.required, label: wool.label },
    {
      validators: 'scheming_required scheming_choices',
      form_snippet: 'select.html',
      required: true,
      label: { en: 'Wool colour', de: 'Wollfarbe' },
    },
  );
  // its own validators win over the select preset's
  assert.equal(field(schema, 'dataset_fields', 'shorn').validators, 'scheming_required boolean_validator');
  assert.equal(field(schema, 'dataset_fields', 'shorn').display_snippet, 'select.html');
  assert.equal(field(schema, 'resource_fields', 'url').upload_label, 'Photo');
  assert.equal(field(schema, 'resource_fields', 'url').upload_field, 'upload');
  assert.equal(field(schema, 'resource_fields', 'format').validators, 'if_empty_guess_format ignore_missing clean_format unicode_safe');
});

test('expanded=false answers the schema exactly as its file has it (POST and GET)', async () => {
  const file = fileData('llama-photos.yaml');
  assert.deepEqual(await t.ok('scheming_dataset_schema_show', { type: 'llama-photos', expanded: false }), file);
  assert.deepEqual(await t.ok('scheming_dataset_schema_show', { type: 'llama-photos', expanded: 'false' }, { method: 'GET' }), file);
  const expanded = await t.ok('scheming_dataset_schema_show', { type: 'llama-photos', expanded: 'true' }, { method: 'GET' });
  assert.equal(field(expanded, 'dataset_fields', 'title').form_snippet, 'large_text.html');
});

test('repeating subfields expand too', async () => {
  const schema = await t.ok('scheming_dataset_schema_show', { type: 'field-survey' });
  const observers = field(schema, 'dataset_fields', 'observers');
  assert.deepEqual(
    observers.repeating_subfields.map((f: any) => f.field_name),
    ['observer_name', 'email', 'role', 'aliases'],
  );
  assert.equal(observers.repeating_subfields[2].form_snippet, 'select.html');
  assert.equal(observers.repeating_subfields[3].output_validators, 'scheming_load_json');
  assert.equal(field(schema, 'dataset_fields', 'site').repeating_once, true);
  const checks = field(schema, 'resource_fields', 'checks');
  assert.equal(checks.repeating_subfields[0].validators, 'scheming_required scheming_choices');
  const raw = await t.ok('scheming_dataset_schema_show', { type: 'field-survey', expanded: false });
  assert.equal(field(raw, 'dataset_fields', 'observers').repeating_subfields[2].form_snippet, undefined);
});

test('group and organization schemas: fields expanded, or as in the file', async () => {
  const theme = await t.ok('scheming_group_schema_show', { type: 'theme' });
  assert.equal(theme.group_type, 'theme');
  assert.equal(field(theme, 'fields', 'status').form_snippet, 'select.html');
  assert.deepEqual(await t.ok('scheming_group_schema_show', { type: 'theme', expanded: false }), fileData('theme-group.json'));

  const publisher = await t.ok('scheming_organization_schema_show', { type: 'publisher' });
  assert.equal(publisher.organization_type, 'publisher');
  assert.equal(field(publisher, 'fields', 'image_url').form_snippet, 'organization_upload.html');
  assert.equal(field(publisher, 'fields', 'address').repeating_subfields[1].required, true);
  assert.deepEqual(
    await t.ok('scheming_organization_schema_show', { type: 'publisher', expanded: false }),
    fileData('publisher-organization.yaml'),
  );
});

test('an unknown type is Not Found; a missing type is a Validation Error', async () => {
  for (const [action, type] of [
    ['scheming_dataset_schema_show', 'camel-photos'],
    ['scheming_dataset_schema_show', 'theme'],
    ['scheming_group_schema_show', 'publisher'],
    ['scheming_organization_schema_show', 'theme'],
  ]) {
    const r = await t.call(action, { type });
    assert.equal(r.status, 404, `${action} ${type}`);
    assert.deepEqual(r.body.error, { __type: 'Not Found Error', message: 'Not found' });
  }
  const r = await t.call('scheming_dataset_schema_show', {});
  assert.equal(r.status, 409);
  assert.equal(r.body.error?.__type, 'Validation Error');
  assert.deepEqual(r.body.error?.type, ['Missing value']);
});

test('anonymous callers and signed-in users get the same schema', async () => {
  const user = await t.user('schema_reader');
  const anon = await t.ok('scheming_organization_schema_show', { type: 'publisher' });
  const signedIn = await t.ok('scheming_organization_schema_show', { type: 'publisher' }, { token: user.token });
  assert.deepEqual(signedIn, anon);
});

test('help_show describes the actions', async () => {
  const help = await t.ok('help_show', { name: 'scheming_dataset_schema_show' });
  assert.match(help, /custom schema of a dataset type/);
  assert.match(help, /expanded/);
});
