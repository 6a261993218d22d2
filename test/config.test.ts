// Configuration: ini file, environment, validation; runtime options through the Action API.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, envName, loadConfig } from '../src/config/load.ts';
import { optionDeclarations } from '../src/config/options.ts';
import { addEditableOption, removeEditableOption } from '../src/actions/config.ts';
import { ignoreMissing, intValidator } from '../src/validation/validators.ts';
import { Invalid } from '../src/validation/validate.ts';
import { startApp, type TestApp } from './helpers/app.ts';

describe('loading configuration', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
  const ini = path.join(dir, 'svc.ini');
  fs.writeFileSync(
    ini,
    '# a comment\n[app:main]\nsvc.port = 6001\nsvc.site_title = From the file\nsvc.auth.allow_dataset_collaborators = yes\n',
  );

  test('environment names: upper case, dots as double underscores', () => {
    assert.equal(envName('svc.auth.allow_dataset_collaborators'), 'SVC__AUTH__ALLOW_DATASET_COLLABORATORS');
  });

  test('file, then environment (wins), then defaults', () => {
    const c = loadConfig({ configFile: ini, env: { SVC__SITE_TITLE: 'From env' } });
    assert.equal(c.int('svc.port'), 6001);
    assert.equal(c.str('svc.site_title'), 'From env');
    assert.equal(c.bool('svc.auth.allow_dataset_collaborators'), true);
    assert.equal(c.int('svc.group_and_organization_list_max'), 1000);
  });

  test('SVC_INI and ./svc.ini are found', () => {
    assert.equal(loadConfig({ env: { SVC_INI: ini } }).int('svc.port'), 6001);
    assert.equal(loadConfig({ env: {}, cwd: dir }).int('svc.port'), 6001);
    assert.equal(loadConfig({ env: {}, cwd: os.tmpdir() }).int('svc.port'), 5000);
  });

  test('a bad value stops with a message naming the option', () => {
    assert.throws(
      () => loadConfig({ env: { SVC__PORT: 'eighty' } }),
      (e: Error) => e instanceof ConfigError && /svc\.port/.test(e.message),
    );
    assert.throws(() => loadConfig({ env: { SVC__AUTH__PUBLIC_USER_DETAILS: 'maybe' } }), /svc\.auth\.public_user_details/);
    assert.throws(() => loadConfig({ env: { SVC__DATABASE_URL: 'mysql://x' } }), /svc\.database_url/);
    assert.throws(() => loadConfig({ configFile: path.join(dir, 'missing.ini'), env: {} }), /not found/);
  });

  test('config show masks secrets', () => {
    const shown = loadConfig({ env: { SVC__SECRET: 'shh', SVC__DATABASE_URL: 'postgresql://u:p@h/db' } }).show();
    assert.equal(shown['svc.secret'], '********');
    assert.equal(shown['svc.database_url'], '********');
  });

  test('docs/configuration.md lists every option with its environment name, and says how many there are', () => {
    const doc = fs.readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const declared = optionDeclarations();
    const missing = declared.filter((d) => !doc.includes(`| \`${d.name}\` (\`${envName(d.name)}\`)`)).map((d) => d.name);
    assert.deepEqual(missing, []);
    assert.match(doc, new RegExp(`${declared.length} options in all`));
  });
});

describe('runtime configuration options', () => {
  let t: TestApp;
  let user: { token: string };
  before(async () => {
    t = await startApp({ plugins: [] });
    user = await t.user('plain');
  });
  after(async () => {
    await t?.close();
  });

  test("config_option_list has exactly the spec's ten keys; sysadmin only", async () => {
    const keys = await t.ok('config_option_list', {}, { token: t.sysadminToken });
    assert.deepEqual(keys, [
      'svc.hola',
      'svc.homepage_style',
      'svc.main_css',
      'svc.site_about',
      'svc.site_custom_css',
      'svc.site_description',
      'svc.site_intro_text',
      'svc.site_logo',
      'svc.site_title',
      'svc.site_url',
    ]);
    assert.equal((await t.call('config_option_list', {}, { token: user.token })).status, 403);
    assert.equal((await t.call('config_option_list')).status, 403);
  });

  test('config_option_update persists, takes effect at once, and is sysadmin only', async () => {
    assert.equal((await t.call('config_option_update', { 'svc.site_title': 'Hacked' }, { token: user.token })).status, 403);
    const r = await t.ok('config_option_update', { 'svc.site_title': 'Open Data Town' }, { token: t.sysadminToken });
    assert.deepEqual(r, { 'svc.site_title': 'Open Data Town' });
    assert.equal((await t.ok('status_show')).site_title, 'Open Data Town');
    assert.equal(await t.ok('config_option_show', { key: 'svc.site_title' }, { token: t.sysadminToken }), 'Open Data Town');
    const saved = await t.services.db.query("SELECT value FROM system_info WHERE key = 'config:svc.site_title'");
    assert.equal(JSON.parse(saved.rows[0].value), 'Open Data Town');
  });

  test('keys outside the editable set and bad values are Validation Errors that change nothing', async () => {
    const outside = await t.call(
      'config_option_update',
      { 'svc.site_title': 'Changed?', 'svc.database_url': 'postgresql://evil' },
      { token: t.sysadminToken },
    );
    assert.equal(outside.status, 409);
    assert.equal(outside.body.error!.__type, 'Validation Error');
    assert.match(outside.body.error!.message, /svc\.database_url/);
    const bad = await t.call('config_option_update', { 'svc.homepage_style': '9' }, { token: t.sysadminToken });
    assert.equal(bad.status, 409);
    assert.ok(bad.body.error!['svc.homepage_style']);
    const show = await t.call('config_option_show', { key: 'svc.secret' }, { token: t.sysadminToken });
    assert.equal(show.status, 409);
    assert.equal((await t.ok('status_show')).site_title, 'Open Data Town');
  });

  test('plugins add keys with validator chains (ignore_missing first)', async () => {
    addEditableOption('svc.datasets_per_page', [
      ignoreMissing,
      intValidator,
      (v: number) => {
        if (v > 100) throw new Invalid('too many');
        return v;
      },
    ]);
    try {
      await t.ok('config_option_update', { 'svc.datasets_per_page': '50' }, { token: t.sysadminToken });
      assert.equal(t.services.config.int('svc.datasets_per_page'), 50);
      const bad = await t.call('config_option_update', { 'svc.datasets_per_page': '500' }, { token: t.sysadminToken });
      assert.deepEqual(bad.body.error!['svc.datasets_per_page'], ['too many']);
      assert.equal(t.services.config.int('svc.datasets_per_page'), 50);
    } finally {
      removeEditableOption('svc.datasets_per_page');
    }
  });
});
