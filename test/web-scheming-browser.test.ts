// A custom dataset type's pages in a real browser (Debian's chromium via playwright-core): an
// editor fills the form generated from test/fixtures/scheming-web-survey.yaml (selects, radios,
// checkboxes, dates, languages, repeating contacts added and removed by the form's own buttons),
// adds the data with a custom resource field, and reads the dataset page; axe-core finds no
// serious or critical violation on the form (also with errors), the dataset page and the type's
// search page. Screenshots: test-artifacts/screenshots/scheming-<database>/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { axeViolations, browserMissing, describeViolations, signIn, startBrowserApp, type BrowserApp } from './helpers/browser.ts';

const SCHEMA = path.join(import.meta.dirname, 'fixtures', 'scheming-web-survey.yaml');

describe('a dataset of a custom type through its generated form', { skip: browserMissing }, () => {
  let b: BrowserApp;
  let page: Page;

  before(async () => {
    b = await startBrowserApp('scheming', {
      config: {
        'svc.scheming.dataset_schemas': [SCHEMA],
        'svc.scheming.presets': ['ckanext.scheming:presets.json', 'ckanext.fluent:presets.json'],
      },
    });
    const owner = await b.t.user('swb_owner');
    await b.t.user('swb_editor');
    await b.t.ok('organization_create', { name: 'swb-org', title: 'Wader Watch' }, { token: owner.token });
    await b.t.ok('organization_member_create', { id: 'swb-org', username: 'swb_editor', role: 'editor' }, { token: owner.token });
    page = await b.visitor();
    await signIn(page, 'swb_editor');
  });
  after(async () => {
    await b?.close();
  });

  async function axeClean(url: string) {
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
  }

  test('the form is axe-clean, and shows errors beside the fields', async () => {
    await page.goto('/survey/new');
    await b.shot(page, 'form');
    await axeClean('/survey/new');
    await page.getByLabel(/^Address/).fill('wader-count');
    await page.getByRole('button', { name: 'Next: add data' }).click();
    await page.getByRole('alert').first().waitFor();
    await b.shot(page, 'form-errors');
    const method = page.getByLabel(/^Method/);
    assert.equal(await method.getAttribute('aria-invalid'), 'true');
    assert.match((await page.locator('#field-method-error').textContent()) ?? '', /Missing value/);
    await axeClean('/survey/new (errors)');
  });

  test('an editor fills every kind of widget, adds and removes contacts, and saves', async () => {
    await page.goto('/survey/new');
    await page.getByLabel('Survey title').fill('Wader count 2024');
    await page.getByLabel(/^Address/).fill('wader-count');
    await page.getByLabel('Summary').fill('Waders on the **mudflats**.');
    await page.getByLabel('Keywords', { exact: true }).fill('waders, coast');
    await page.getByLabel(/^Method/).selectOption({ label: 'Point count' });
    await page.getByRole('group', { name: 'Frequency' }).getByLabel('Once').check();
    await page.getByRole('group', { name: 'Habitats' }).getByLabel('Wetland').check();
    await page.getByRole('group', { name: 'Habitats' }).getByLabel('Meadow').check();
    await page.getByLabel('Regions').selectOption(['south']);
    await page.getByLabel('Observers 1').fill('Ann');
    await page.getByLabel('Start date').fill('2024-04-01');
    await page.getByLabel('Recorded at').fill('2024-04-02T06:15');
    await page.getByLabel('Instrument settings').fill('{"scope": "20x"}');
    await page.getByLabel('Sample size').fill('17');
    const first = page.getByRole('group', { name: 'Contact 1' });
    await first.getByLabel(/^Name/).fill('Ann Lee');
    await first.getByLabel('Role').selectOption({ label: 'Lead scientist' });
    // The languages of a fluent field are tabs: English's panel first; the arrow key opens German's.
    const titles = page.getByRole('group', { name: 'Translated title' });
    await titles.getByLabel('Translated title (English (en))').fill('Wader count');
    assert.equal(await titles.getByLabel('Translated title (German (de))').isVisible(), false);
    await titles.getByRole('tab', { name: 'English (en)' }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await titles.getByRole('tab', { name: 'German (de)' }).getAttribute('aria-selected'), 'true');
    assert.equal(await titles.getByLabel('Translated title (English (en))').isVisible(), false);
    await titles.getByRole('tabpanel', { name: 'German (de)' }).getByLabel('Translated title (German (de))').fill('Watvogelzählung');
    await b.shot(page, 'language-tabs');

    // Add a second contact: the page comes back with both, the values kept.
    await page.getByRole('button', { name: 'Add another Contact' }).click();
    const second = page.getByRole('group', { name: 'Contact 2' });
    await second.waitFor();
    assert.equal(await page.getByRole('group', { name: 'Contact 1' }).getByLabel(/^Name/).inputValue(), 'Ann Lee');
    assert.equal(await page.getByLabel('Survey title').inputValue(), 'Wader count 2024');
    assert.ok(await page.getByRole('group', { name: 'Habitats' }).getByLabel('Meadow').isChecked());
    await second.getByLabel(/^Name/).fill('Bo Berg');
    await second.getByLabel('E-mail').fill('bo@example.org');
    await b.shot(page, 'two-contacts');
    // Remove the first: Bo moves up.
    await page.getByRole('button', { name: 'Remove Contact 1' }).click();
    await page.getByRole('group', { name: 'Contact 2' }).waitFor({ state: 'detached' });
    assert.equal(await page.getByRole('group', { name: 'Contact 1' }).getByLabel(/^Name/).inputValue(), 'Bo Berg');
    await axeClean('/survey/new (filled)');

    await page.getByRole('button', { name: 'Next: add data' }).click();
    await page.waitForURL('**/survey/wader-count/resource/new');
    await page.getByLabel('Link').fill('https://example.org/waders.csv');
    await page.getByLabel('Name').fill('Counts');
    await page.getByLabel('Sensor').selectOption({ label: 'Audio recorder' });
    await page.getByRole('button', { name: 'Finish' }).click();
    await page.waitForURL('**/survey/wader-count');
    await b.shot(page, 'dataset');

    const info = page.locator('table.info-table');
    const row = (label: string) => info.getByRole('row', { name: new RegExp(`^${label}`) });
    assert.match(await row('Method').innerText(), /Point count/);
    assert.match(await row('Frequency').innerText(), /Once/);
    assert.match(await row('Habitats').innerText(), /Wetland\s+Meadow/);
    assert.match(await row('Start date').innerText(), /1 April 2024/);
    assert.match(await row('Contacts').innerText(), /Bo Berg/);
    assert.doesNotMatch(await row('Contacts').innerText(), /Ann Lee/);
    assert.match(await row('Translated title').innerText(), /Wader count/);
    await axeClean('/survey/wader-count');

    const pkg = await b.t.ok('package_show', { id: 'wader-count' }, { token: b.t.sysadminToken });
    assert.equal(pkg.state, 'active');
    assert.deepEqual(pkg.habitats, ['wetland', 'meadow']);
    assert.deepEqual(
      pkg.contacts.map((c: { name: string; email: string }) => [c.name, c.email]),
      [['Bo Berg', 'bo@example.org']],
    );
    assert.equal(pkg.resources[0].sensor, 'audio');
  });

  test("the type's search page has facets for its choice fields and is axe-clean", async () => {
    await page.goto('/survey');
    await b.shot(page, 'search');
    const facet = page.getByRole('region', { name: 'Method' });
    await facet.getByRole('link', { name: /Point count/ }).click();
    await page.waitForURL('**/survey?method=point');
    assert.ok(await page.getByRole('link', { name: 'Wader count 2024' }).isVisible());
    await axeClean('/survey?method=point');
  });

  test('the pages break no Content-Security-Policy rule and raise no script error', () => {
    assert.deepEqual(
      b.problems.filter((p) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(p)),
      [],
    );
  });
});
