// The portal in French, German and Spanish in a real browser (Debian's chromium via playwright-core):
// each language's main pages carry the right lang attribute and pass axe-core; the language
// switcher works without JavaScript and the links keep the chosen language; a browser set to
// Spanish gets Spanish at addresses without a prefix; signing in works in French.
// Screenshots of every language: test-artifacts/screenshots/i18n-<database>/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { axeViolations, browserMissing, describeViolations, startBrowserApp, type BrowserApp } from './helpers/browser.ts';
import { seedCatalog, type SeededCatalog } from './helpers/browser-data.ts';

const LANGUAGES = [
  { locale: 'fr', datasets: 'Jeux de données', switcherLabel: 'Langue' },
  { locale: 'de', datasets: 'Datensätze', switcherLabel: 'Sprache' },
  { locale: 'es', datasets: 'Conjuntos de datos', switcherLabel: 'Idioma' },
];

describe('the portal in several languages', { skip: browserMissing }, () => {
  let b: BrowserApp;
  let data: SeededCatalog;

  before(async () => {
    b = await startBrowserApp('i18n', { config: { 'svc.jobs.poll_interval': 50 } });
    data = await seedCatalog(b.t);
  });
  after(async () => {
    await b?.close();
  });

  async function check(page: Page, url: string, lang: string, step: string) {
    const res = await page.goto(url);
    assert.equal(res?.status(), 200, `${url} answers ${res?.status()}`);
    assert.equal(await page.locator('html').getAttribute('lang'), lang, url);
    await b.shot(page, step);
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
  }

  for (const { locale, datasets, switcherLabel } of LANGUAGES) {
    test(`${locale}: home, search, dataset, resource and login pages, axe-core clean`, async () => {
      const page = await b.visitor();
      await check(page, `/${locale}`, locale, `${locale}-home`);
      await check(page, `/${locale}/dataset?q=rainfall`, locale, `${locale}-search`);
      assert.equal(await page.getByRole('heading', { level: 1 }).first().textContent(), datasets);
      await check(page, `/${locale}/dataset/${data.dataset.name}`, locale, `${locale}-dataset`);
      await check(page, `/${locale}/dataset/${data.dataset.name}/resource/${data.resource.id}`, locale, `${locale}-resource`);
      await check(page, `/${locale}/user/login`, locale, `${locale}-login`);
      const switcher = page.getByRole('navigation', { name: switcherLabel });
      assert.equal(await switcher.getByRole('link').count(), 4);
      assert.equal(await switcher.locator('[aria-current]').getAttribute('lang'), locale);
    });
  }

  test('the switcher works without JavaScript and every link keeps the chosen language', async () => {
    const context = await b.browser.newContext({ baseURL: b.base, javaScriptEnabled: false, locale: 'en-GB' });
    try {
      const page = await context.newPage();
      await page.goto('/fr/dataset');
      await page.getByRole('navigation', { name: 'Langue' }).getByRole('link', { name: 'Deutsch' }).click();
      await page.waitForURL(/\/de\/dataset$/);
      assert.equal(await page.locator('html').getAttribute('lang'), 'de');
      await page.getByRole('link', { name: data.dataset.title }).first().click();
      await page.waitForURL(new RegExp(`/de/dataset/${data.dataset.name}$`));
      await page.getByRole('navigation', { name: 'Hauptnavigation' }).getByRole('link', { name: 'Organisationen' }).click();
      await page.waitForURL(/\/de\/organization$/);
      await b.shot(page, 'de-organizations-after-switch');
      // English, the default, has no prefix; the choice is remembered for addresses without one.
      await page.getByRole('navigation', { name: 'Sprache' }).getByRole('link', { name: 'English' }).click();
      await page.waitForURL((url) => url.pathname === '/organization');
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      await page.goto('/dataset');
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    } finally {
      await context.close();
    }
  });

  test('a browser set to Spanish gets Spanish without a prefix; a search form keeps it', async () => {
    const context = await b.browser.newContext({ baseURL: b.base, locale: 'es-ES' });
    try {
      const page = await context.newPage();
      await page.goto('/');
      assert.equal(await page.locator('html').getAttribute('lang'), 'es');
      await b.shot(page, 'es-home-by-accept-language');
      await page.getByRole('searchbox').first().fill('rainfall');
      await page.getByRole('searchbox').first().press('Enter');
      await page.waitForURL(/\/dataset\?q=rainfall/);
      assert.match((await page.locator('.result-count').textContent()) ?? '', /^\s*2 conjuntos de datos encontrados para «rainfall»\s*$/);
    } finally {
      await context.close();
    }
  });

  test('signing in on the French login page lands on a French page', async () => {
    const page = await b.visitor();
    await page.goto('/fr/user/login');
    await page.getByLabel("Nom d'utilisateur ou adresse e-mail").fill(data.reader.name);
    await page.getByLabel(/^Mot de passe/).fill('correct horse battery');
    await page.getByRole('main').getByRole('button', { name: 'Se connecter' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/fr/') && !url.pathname.startsWith('/fr/user/login'));
    assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
    await check(page, '/fr/dashboard', 'fr', 'fr-dashboard');
  });
});
