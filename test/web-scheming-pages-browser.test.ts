// A custom schema's form with pages and a multilingual field in a real browser (Debian's chromium
// via playwright-core, test/fixtures/scheming-web-formpages.yaml): an editor goes through the
// steps (page 1 creates a draft, Back returns to it, the last step publishes), the languages of
// the fluent field are ARIA tabs worked with the keyboard, and every step is axe-clean.
// Screenshots: test-artifacts/screenshots/scheming-pages-<database>/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { axeViolations, browserMissing, describeViolations, signIn, startBrowserApp, type BrowserApp } from './helpers/browser.ts';

const SCHEMA = path.join(import.meta.dirname, 'fixtures', 'scheming-web-formpages.yaml');

describe('a dataset of a custom type with form pages, through its steps', { skip: browserMissing }, () => {
  let b: BrowserApp;
  let page: Page;

  before(async () => {
    b = await startBrowserApp('scheming-pages', {
      config: {
        'svc.scheming.dataset_schemas': [SCHEMA],
        'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      },
    });
    const owner = await b.t.user('fpb_owner');
    await b.t.user('fpb_editor');
    await b.t.ok('organization_create', { name: 'fpb-org', title: 'Polar Walkers' }, { token: owner.token });
    await b.t.ok('organization_member_create', { id: 'fpb-org', username: 'fpb_editor', role: 'editor' }, { token: owner.token });
    page = await b.visitor();
    await signIn(page, 'fpb_editor');
  });
  after(async () => {
    await b?.close();
  });

  async function axeClean(url: string) {
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
  }

  test('page by page: a draft after the first, Back keeps it, tabs for the languages, published at the end', async () => {
    await page.goto('/expedition/new');
    const steps = page.getByRole('navigation', { name: 'Steps of the form' });
    assert.equal(await steps.locator('[aria-current="step"]').innerText(), 'Basic info');
    await axeClean('/expedition/new');
    await b.shot(page, 'page-1');
    await page.getByLabel('Title').fill('Snow line');
    await page.getByLabel(/^URL/).fill('fpb-snow');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.waitForURL('**/expedition/new/fpb-snow/2');
    assert.equal((await b.t.ok('package_show', { id: 'fpb-snow' }, { token: b.t.sysadminToken })).state, 'draft');
    await page.getByLabel(/^Region/).selectOption({ label: 'Alps' });
    await page.getByRole('group', { name: 'Member 1' }).getByLabel('Name').fill('Ann');
    await axeClean('/expedition/new/fpb-snow/2');

    // Back to page 1 and on again: page 1's values are there
    await page.getByRole('link', { name: 'Back' }).click();
    await page.waitForURL('**/expedition/new/fpb-snow/1');
    assert.equal(await page.getByLabel('Title').inputValue(), 'Snow line');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.waitForURL('**/expedition/new/fpb-snow/2');
    await page.getByLabel(/^Region/).selectOption({ label: 'Alps' });
    await page.getByRole('group', { name: 'Member 1' }).getByLabel('Name').fill('Ann');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.waitForURL('**/expedition/new/fpb-snow/3');

    // The languages are tabs: one panel at a time, arrows and End move between them.
    const motto = page.getByRole('group', { name: 'Motto' });
    const tabs = motto.getByRole('tablist', { name: 'Motto: languages' });
    assert.equal(await tabs.getByRole('tab').count(), 3);
    assert.equal(await motto.getByRole('tab', { name: 'English (en)' }).getAttribute('aria-selected'), 'true');
    await motto.getByLabel('Motto (English (en))').fill('Upwards');
    assert.equal(await motto.getByLabel('Motto (German (de))').isVisible(), false);
    await motto.getByRole('tab', { name: 'English (en)' }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await motto.getByRole('tab', { name: 'German (de)' }).getAttribute('aria-selected'), 'true');
    await motto.getByRole('tabpanel', { name: 'German (de)' }).getByLabel('Motto (German (de))').fill('Aufwärts');
    await motto.getByRole('tab', { name: 'German (de)' }).focus();
    await page.keyboard.press('End');
    assert.equal(await motto.getByRole('tab', { name: 'French (fr)' }).getAttribute('aria-selected'), 'true');
    assert.equal(await motto.getByLabel('Motto (English (en))').isVisible(), false);
    await motto.getByLabel('Motto (French (fr))').fill('Vers le haut');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('ArrowRight');
    assert.equal(
      await motto.getByRole('tab', { name: 'English (en)' }).getAttribute('aria-selected'),
      'true',
      'the last tab wraps to the first',
    );
    await b.shot(page, 'page-3-tabs');
    await axeClean('/expedition/new/fpb-snow/3');
    await page.getByRole('button', { name: 'Finish' }).click();
    await page.waitForURL('**/expedition/fpb-snow');
    await axeClean('/expedition/fpb-snow');

    const pkg = await b.t.ok('package_show', { id: 'fpb-snow' }, { token: b.t.sysadminToken });
    assert.equal(pkg.state, 'active');
    assert.equal(pkg.region, 'alps');
    assert.deepEqual(pkg.crew, [{ name: 'Ann' }]);
    assert.deepEqual(pkg.motto, { en: 'Upwards', de: 'Aufwärts', fr: 'Vers le haut' });
  });

  test('the pages break no Content-Security-Policy rule and raise no script error', () => {
    assert.deepEqual(
      b.problems.filter((p) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(p)),
      [],
    );
  });
});
