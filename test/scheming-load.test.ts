// Loading custom schemas at start (svc.scheming.*): every built-in preset expands, preset files
// given by CKAN's names or by path, and every kind of bad file stops the start with a message
// naming the file, the line or field, and what is wrong.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startApp, type TestApp } from './helpers/app.ts';
import type { Database } from '../src/db/database.ts';
import { loadConfig } from '../src/config/load.ts';
import { closeServices, createServices } from '../src/services.ts';
import { BUILTIN_PRESET_FILES } from '../src/scheming/presets.ts';
import { parseValidatorSpec } from '../src/scheming/load.ts';

const fixture = (name: string) => path.join(import.meta.dirname, 'fixtures', `scheming-load-${name}`);
const ALL_PRESETS = 'ckanext.scheming:presets.json ckanext.fluent:presets.json ckanext.dcat.schemas:presets.yaml';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scheming-load-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a schema file of this test into the temporary folder; returns its path. */
function schemaFile(name: string, text: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, text);
  return file;
}

/** A dataset schema of type "broken" with these field lines. */
function dataset(fields: string, head = 'dataset_type: broken'): string {
  return `${head}\ndataset_fields:\n${fields}\n`;
}

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: any[] = [];
  const logger = pino({ level: 'warn' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

/**
 * Starts the services as `svc serve` does with this configuration; returns the message of the
 * start-up error. The schemas are read before the database is used, so a closed stand-in serves
 * (a database per case took seconds on a busy machine).
 */
async function startupError(config: Record<string, unknown>): Promise<string> {
  const db = { close: async () => undefined } as unknown as Database;
  const services = await createServices(loadConfig({ env: {}, overrides: { 'svc.log_level': 'silent', ...config }, cwd: tmp }), {
    db,
    logger: pino({ level: 'silent' }),
    worker: false,
  }).catch((e: Error) => e);
  if (services instanceof Error) return services.message;
  await closeServices(services);
  assert.fail('the start did not fail');
}

describe('built-in presets', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      plugins: [],
      config: {
        'svc.scheming.dataset_schemas': [fixture('every-preset.yaml'), fixture('multilingual.yaml')],
        // the line as a CKAN ini has it, continuation lines and all
        'svc.scheming.presets': 'ckanext.scheming:presets.json\n    ckanext.fluent:presets.json\n    ckanext.dcat.schemas:presets.yaml',
      },
    });
  });
  after(() => t?.close());

  test('every preset of the three built-in preset files loads and is merged into its field', async () => {
    const schema = await t.ok('scheming_dataset_schema_show', { type: 'every-preset' });
    const byName = new Map(schema.dataset_fields.map((f: any) => [f.field_name, f]));
    const missing: string[] = [];
    for (const [file, presets] of BUILTIN_PRESET_FILES) {
      for (const preset of presets) {
        const field: any = byName.get(`with_${preset.preset_name}`);
        if (!field) {
          missing.push(`${file} ${preset.preset_name}`);
          continue;
        }
        assert.equal(field.preset, preset.preset_name);
        for (const [key, value] of Object.entries(preset.values)) assert.deepEqual(field[key], value, `${preset.preset_name}.${key}`);
      }
    }
    assert.deepEqual(missing, [], 'the fixture has a field for every built-in preset');
  });

  test("the preset names carry ckanext-scheming's, ckanext-fluent's and ckanext-dcat's validators and widgets", async () => {
    const schema = await t.ok('scheming_dataset_schema_show', { type: 'every-preset' });
    const field = (n: string) => schema.dataset_fields.find((f: any) => f.field_name === `with_${n}`);
    assert.equal(field('title').validators, 'if_empty_same_as(name) unicode_safe');
    assert.equal(field('dataset_slug').validators, 'not_empty unicode_safe name_validator package_name_validator');
    assert.equal(field('select').form_snippet, 'select.html');
    assert.equal(field('radio').display_snippet, 'select.html');
    assert.equal(field('multiple_checkbox').output_validators, 'scheming_multiple_choice_output');
    assert.equal(field('date').validators, 'scheming_required isodate convert_to_json_if_date');
    assert.equal(field('datetime_tz').validators, 'scheming_isodatetime_tz convert_to_json_if_datetime');
    assert.equal(field('json_object').output_validators, 'scheming_load_json');
    assert.equal(field('fluent_core_translated').output_validators, 'fluent_core_translated_output');
    assert.equal(field('fluent_tags').validators, 'fluent_tags');
    assert.equal(field('dcat_date').display_snippet, 'dcat_date.html');
    assert.deepEqual(field('select').choices, [
      { value: 'one', label: 'One' },
      { value: 'two', label: 'Two' },
    ]);
  });

  test("a CKAN configuration's scheming.presets line names the built-ins as it is", async () => {
    const schema = await t.ok('scheming_dataset_schema_show', { type: 'multilingual' });
    const title = schema.dataset_fields.find((f: any) => f.field_name === 'title_translated');
    assert.equal(title.form_snippet, 'fluent_text.html');
    assert.deepEqual(title.label, { en: 'Title', fr: 'Titre', de: 'Titel' });
    const issued = schema.dataset_fields.find((f: any) => f.field_name === 'issued');
    assert.equal(issued.validators, 'ignore_missing dcat_date convert_to_json_if_datetime');
  });
});

describe('preset files', () => {
  let t: TestApp;
  before(async () => {
    const schema = schemaFile(
      'with-own-presets.yaml',
      [
        'dataset_type: tagged-llamas',
        'dataset_fields:',
        '- field_name: tag_number',
        '  preset: llama_tag_number',
        '- field_name: notes',
        '  preset: markdown',
        '- field_name: story',
        '  preset: markdown',
        '  display_snippet: markdown.html',
      ].join('\n'),
    );
    // svc.scheming.presets without ckanext.scheming:presets.json: the built-in ones are there all the same
    t = await startApp({
      plugins: [],
      config: { 'svc.scheming.dataset_schemas': [schema, fixture('llama-photos.yaml')], 'svc.scheming.presets': fixture('presets.yaml') },
    });
  });
  after(() => t?.close());

  test("a preset file by path adds presets, and replaces a built-in one of the same name; a field's own keys still win", async () => {
    const [tagNumber, notes, story] = (await t.ok('scheming_dataset_schema_show', { type: 'tagged-llamas' })).dataset_fields;
    assert.equal(tagNumber.validators, 'ignore_missing strip_value int_validator');
    assert.equal(tagNumber.form_snippet, 'number.html');
    assert.deepEqual([notes.form_snippet, notes.display_snippet], ['textarea.html', 'text.html']);
    assert.deepEqual([story.form_snippet, story.display_snippet], ['textarea.html', 'markdown.html']);
  });

  test('the built-in scheming presets are there even when svc.scheming.presets leaves them out', async () => {
    const schema = await t.ok('scheming_dataset_schema_show', { type: 'llama-photos' });
    assert.equal(schema.dataset_fields.find((f: any) => f.field_name === 'wool_colour').form_snippet, 'select.html');
  });

  test('without the fluent presets, a fluent field is an unknown preset naming file, line, field and name', async () => {
    const message = await startupError({ 'svc.scheming.dataset_schemas': fixture('multilingual.yaml') });
    assert.match(message, /scheming-load-multilingual\.yaml line 16: field "title_translated": unknown preset "fluent_core_translated"/);
  });

  test("a preset file inside a CKAN extension svc does not include asks for the file's path", async () => {
    const message = await startupError({
      'svc.scheming.dataset_schemas': fixture('llama-photos.yaml'),
      'svc.scheming.presets': 'ckanext.scheming:presets.json ckanext.dataset_series.schemas:presets.yaml',
    });
    assert.match(
      message,
      /svc\.scheming\.presets: "ckanext\.dataset_series\.schemas:presets\.yaml" names a file inside the CKAN extension/,
    );
    assert.match(message, /give its path/);
  });

  test('a preset file without its presets list', async () => {
    const presets = schemaFile('no-presets.yaml', 'about: nothing here\n');
    const message = await startupError({ 'svc.scheming.dataset_schemas': fixture('llama-photos.yaml'), 'svc.scheming.presets': presets });
    assert.match(message, /svc\.scheming\.presets: .*no-presets\.yaml line 1: a preset file needs a "presets" list/);
  });
});

describe('schema files that stop the start', () => {
  const cases: { name: string; file?: string; text?: string; config?: Record<string, unknown>; message: RegExp }[] = [
    {
      name: 'a missing file',
      config: { 'svc.scheming.dataset_schemas': path.join(tmp, 'nowhere.yaml') },
      message: /svc\.scheming\.dataset_schemas: .*nowhere\.yaml: file not found/,
    },
    {
      name: 'a schema of a CKAN extension named by module',
      config: { 'svc.scheming.dataset_schemas': 'ckanext.dcat.schemas:dcat_ap_full.yaml' },
      message: /"ckanext\.dcat\.schemas:dcat_ap_full\.yaml" names a file inside the CKAN extension ckanext\.dcat\.schemas.*give its path/,
    },
    {
      name: 'a file that is not YAML',
      file: 'bad.yaml',
      text: 'dataset_type: broken\ndataset_fields:\n- field_name: a\n  label: [unclosed\n',
      message: /bad\.yaml line \d+, column \d+: not valid YAML/,
    },
    {
      name: 'a file that is not JSON',
      file: 'bad.json',
      text: '{\n  "dataset_type": "broken",\n  "dataset_fields": [,]\n}\n',
      message: /bad\.json line 3, column 22: not valid JSON: Unexpected token ','$/,
    },
    {
      name: 'a schema without its type',
      file: 'no-type.yaml',
      text: 'dataset_fields:\n- field_name: a\n',
      message: /no-type\.yaml line 1: "dataset_type" must name the type/,
    },
    {
      name: 'a field without field_name',
      file: 'no-name.yaml',
      text: dataset('- field_name: a\n- label: Nameless'),
      message: /no-name\.yaml line 4: dataset_fields item 2 has no field_name/,
    },
    {
      name: 'a field given twice',
      file: 'twice.yaml',
      text: dataset('- field_name: colour\n- field_name: size\n- field_name: colour'),
      message: /twice\.yaml line 5: field "colour" is defined twice in dataset_fields \(first on line 3\)/,
    },
    {
      name: 'choices that are not a list',
      file: 'choices.yaml',
      text: dataset('- field_name: colour\n  preset: select\n  choices: brown white'),
      message: /choices\.yaml line 5: field "colour": choices must be a list/,
    },
    {
      name: 'a choice without value',
      file: 'choice-value.yaml',
      text: dataset('- field_name: colour\n  preset: select\n  choices:\n  - label: Brown'),
      message: /choice-value\.yaml line 6: field "colour": choice 1 must be a mapping with a value/,
    },
    {
      name: 'an unknown preset',
      file: 'preset.yaml',
      text: dataset('- field_name: colour\n  preset: selekt'),
      message: /preset\.yaml line 4: field "colour": unknown preset "selekt"/,
    },
    {
      name: 'an unknown validator',
      file: 'validator.yaml',
      text: dataset('- field_name: humps\n  validators: ignore_missing int_validater'),
      message: /validator\.yaml line 4: field "humps" validators: unknown validator "int_validater"/,
    },
    {
      name: 'an unknown output validator',
      file: 'output.yaml',
      text: dataset('- field_name: humps\n  output_validators: to_camel_count'),
      message: /output\.yaml line 4: field "humps" output_validators: unknown validator "to_camel_count"/,
    },
    {
      name: 'an unknown validator with arguments',
      file: 'call.yaml',
      text: dataset('- field_name: humps\n  validators: if_empty_same_ass(name)'),
      message: /call\.yaml line 4: field "humps" validators: unknown validator "if_empty_same_ass"/,
    },
    {
      name: 'an unknown validator in a subfield',
      file: 'subfield.yaml',
      text: dataset('- field_name: contacts\n  repeating_subfields:\n  - field_name: email\n    validators: mail_validator'),
      message: /subfield\.yaml line 6: field "email" validators: unknown validator "mail_validator"/,
    },
    {
      name: 'a subfield without field_name',
      file: 'subfield-name.yaml',
      text: dataset('- field_name: contacts\n  repeating_subfields:\n  - label: Email'),
      message: /subfield-name\.yaml line 5: dataset_fields\.repeating_subfields item 1 has no field_name/,
    },
    {
      name: 'an unknown choices_helper',
      file: 'helper.yaml',
      text: dataset('- field_name: country\n  preset: select\n  choices_helper: my_country_list'),
      message: /helper\.yaml line 5: field "country": unknown choices_helper "my_country_list"/,
    },
    {
      name: 'scheming_datastore_choices without its resource',
      file: 'datastore-choices.yaml',
      text: dataset('- field_name: country\n  preset: select\n  choices_helper: scheming_datastore_choices'),
      message: /datastore-choices\.yaml line 3: field "country": scheming_datastore_choices needs datastore_choices_resource/,
    },
    {
      name: 'an unknown scheming_version',
      file: 'version.yaml',
      text: dataset('- field_name: a', 'scheming_version: 3\ndataset_type: broken'),
      message: /version\.yaml line 1: scheming_version 3 is not supported \(1 or 2\)/,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const config = c.config ?? { 'svc.scheming.dataset_schemas': schemaFile(c.file!, c.text!) };
      assert.match(await startupError(config), c.message);
    });
  }

  test('two schemas with the same dataset_type', async () => {
    const copy = schemaFile('llamas-again.yaml', fs.readFileSync(fixture('llama-photos.yaml'), 'utf8'));
    const message = await startupError({ 'svc.scheming.dataset_schemas': [fixture('llama-photos.yaml'), copy] });
    assert.match(message, /llamas-again\.yaml and .*scheming-load-llama-photos\.yaml both define dataset_type "llama-photos"/);
  });

  test('two organization schemas of the same type', async () => {
    const file = fixture('publisher-organization.yaml');
    const message = await startupError({ 'svc.scheming.organization_schemas': [file, file] });
    assert.match(message, /both define organization_type "publisher"/);
  });
});

describe('other schema forms', () => {
  let t: TestApp;
  const warnings: string[] = [];
  before(async () => {
    const widgets = schemaFile(
      'widgets.yaml',
      [
        'dataset_type: widgets',
        'dataset_fields:',
        '- field_name: a',
        '  form_snippet: llama_picker.html',
        '- field_name: b',
        '  form_snippet: llama_picker.html',
        '  display_snippet: llama_card.html',
        '- field_name: c',
        '  display_snippet: null',
      ].join('\n'),
    );
    const yaml11 = schemaFile(
      'yaml11.yaml',
      [
        'dataset_type: yaml-eleven',
        'dataset_fields:',
        '- field_name: a',
        '  required: yes',
        '  default: 2024-05-01',
        '  validators: ignore_missing',
        '  validators: not_empty unicode_safe',
      ].join('\n'),
    );
    const countries = schemaFile(
      'countries.yaml',
      dataset(
        [
          '- field_name: country',
          '  preset: select',
          '  choices_helper: scheming_datastore_choices',
          '  datastore_choices_resource: countries',
          '  datastore_additional_choices:',
          '  - value: none',
          '    label: None',
        ].join('\n'),
        'dataset_type: countries',
      ),
    );
    const org = schemaFile(
      'default-org.json',
      JSON.stringify({ scheming_version: 1, fields: [{ field_name: 'title', label: 'Name' }, { field_name: 'phone' }] }),
    );
    const { logger, lines } = capturingLogger();
    t = await startApp({
      plugins: [],
      logger,
      config: {
        'svc.scheming.dataset_schemas': [widgets, yaml11, countries],
        'svc.scheming.group_schemas': fixture('theme-group.json'),
        'svc.scheming.organization_schemas': org,
      },
    });
    warnings.push(...lines.filter((l) => /^scheming:/.test(l.msg)).map((l) => l.msg));
  });
  after(() => t?.close());

  test('a widget svc does not have: one warning per name, the default widget; null means no widget', async () => {
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.match(warnings[0], /form_snippet "llama_picker\.html" \(.*widgets\.yaml line 4, field "a"\) has no widget in svc/);
    assert.match(warnings[1], /display_snippet "llama_card\.html" \(.*widgets\.yaml line 7, field "b"\)/);
    const fields = (await t.ok('scheming_dataset_schema_show', { type: 'widgets' })).dataset_fields;
    assert.equal(fields[0].form_snippet, 'llama_picker.html', 'the schema still says what the file says');
    assert.equal(fields[2].display_snippet, null);
  });

  test('JSON schemas of scheming_version 1; an organization schema without a type key is the default type', async () => {
    assert.deepEqual(await t.ok('scheming_group_schema_list'), ['theme']);
    assert.deepEqual(await t.ok('scheming_organization_schema_list'), ['organization']);
    const theme = await t.ok('scheming_group_schema_show', { type: 'theme' });
    assert.equal(theme.scheming_version, 1);
    assert.equal(theme.fields.find((f: any) => f.field_name === 'image_url').form_snippet, 'organization_upload.html');
    assert.deepEqual((await t.ok('scheming_organization_schema_show', { type: 'organization' })).fields[1], { field_name: 'phone' });
  });

  test('YAML reads as ckanext-scheming reads it: yes/no are booleans, a repeated key takes the last value, dates stay text', async () => {
    const [a] = (await t.ok('scheming_dataset_schema_show', { type: 'yaml-eleven' })).dataset_fields;
    assert.deepEqual([a.required, a.default, a.validators], [true, '2024-05-01', 'not_empty unicode_safe']);
  });

  test('scheming_datastore_choices with its resource loads; the choices are read at request time', async () => {
    const [country] = (await t.ok('scheming_dataset_schema_show', { type: 'countries' })).dataset_fields;
    assert.equal(country.choices_helper, 'scheming_datastore_choices');
    assert.equal(country.choices, undefined);
  });
});

describe('without any schema configured', () => {
  let t: TestApp;
  before(async () => {
    // presets alone configure no schema
    t = await startApp({ plugins: [], config: { 'svc.scheming.presets': ALL_PRESETS } });
  });
  after(() => t?.close());

  test('svc runs as without scheming: no schemas, empty lists, show is Not Found', async () => {
    assert.equal(t.services.scheming, undefined);
    for (const kind of ['dataset', 'group', 'organization']) {
      assert.deepEqual(await t.ok(`scheming_${kind}_schema_list`), []);
      const r = await t.call(`scheming_${kind}_schema_show`, { type: kind });
      assert.equal(r.status, 404);
      assert.equal(r.body.error?.__type, 'Not Found Error');
    }
  });
});

test('validators strings read as ckanext-scheming reads them: Python literals keep their type, other arguments are text', () => {
  const calls = (text: string) => parseValidatorSpec(text).map(({ name, args }) => [name, ...args]);
  assert.deepEqual(calls('scheming_required  if_empty_same_as(name) unicode_safe'), [
    ['scheming_required'],
    ['if_empty_same_as', 'name'],
    ['unicode_safe'],
  ]);
  assert.deepEqual(calls('xxx(hello,world) xxx(hello,1)'), [
    ['xxx', 'hello', 'world'],
    ['xxx', 'hello', '1'],
  ]);
  assert.deepEqual(calls('xxx("hello",1,None) default(True) default(2.5)'), [
    ['xxx', 'hello', 1, null],
    ['default', true],
    ['default', 2.5],
  ]);
  assert.deepEqual(calls('xxx("hello\\x20world") xxx((1,2)) xxx([1,2]) default(())'), [
    ['xxx', 'hello world'],
    ['xxx', 1, 2],
    ['xxx', [1, 2]],
    ['default', []],
  ]);
  // not a call (no closing parenthesis): the whole text is the name, which no validator has
  assert.deepEqual(calls('foo(bar'), [['foo(bar']]);
});
