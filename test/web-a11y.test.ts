// Accessibility of the main pages in a real browser (Debian's chromium through playwright-core):
// axe-core finds no serious or critical violation (WCAG 2 A/AA rules and best practices), the
// pages break no Content-Security-Policy rule, the keyboard reaches the content through the skip
// link with a visible focus, and a phone-sized screen needs no sideways scrolling.
// Screenshots: test-artifacts/screenshots/a11y-<database>/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { axeViolations, browserMissing, describeViolations, signIn, startBrowserApp, type BrowserApp } from './helpers/browser.ts';
import { seedCatalog, type SeededCatalog } from './helpers/browser-data.ts';

describe('accessibility of the main pages', { skip: browserMissing }, () => {
  let b: BrowserApp;
  let data: SeededCatalog;
  let anonymous: Page;
  let signedIn: Page;

  before(async () => {
    b = await startBrowserApp('a11y', { config: { 'svc.auth.create_user_via_web': true, 'svc.jobs.poll_interval': 50 } });
    data = await seedCatalog(b.t);
    anonymous = await b.visitor();
    signedIn = await b.visitor();
    await signIn(signedIn, data.reader.name);
  });
  after(async () => {
    await b?.close();
  });

  async function check(page: Page, url: string, step: string) {
    const res = await page.goto(url);
    assert.equal(res?.status(), 200, `${url} answers ${res?.status()}`);
    await b.shot(page, step);
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
  }

  test('home', () => check(anonymous, '/', 'home'));
  test('dataset search with a query and a facet', () => check(anonymous, '/dataset?q=rainfall&tags=weather', 'search'));
  test('dataset search, everything', () => check(anonymous, '/dataset', 'search-all'));
  test('dataset page', () => check(anonymous, `/dataset/${data.dataset.name}`, 'dataset'));
  test('resource page with the data explorer', () =>
    check(anonymous, `/dataset/${data.dataset.name}/resource/${data.resource.id}`, 'resource'));
  test('organization page', () => check(anonymous, `/organization/${data.org.name}`, 'organization'));
  test('login', () => check(anonymous, '/user/login', 'login'));
  test('register', () => check(anonymous, '/user/register', 'register'));
  test('dashboard', () => check(signedIn, '/dashboard', 'dashboard'));

  test('a form with errors: each message is tied to its field', async () => {
    const page = await b.visitor();
    await page.goto('/user/register');
    await page.getByLabel(/^Username/).fill('x');
    await page.getByLabel(/^E-mail/).fill('x@example.org');
    await page.getByLabel(/^Password/).fill('short');
    await page.getByLabel(/^Confirm password/).fill('other');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').first().waitFor();
    await b.shot(page, 'register-errors');
    const invalid = page.locator('[aria-invalid="true"]');
    assert.ok((await invalid.count()) > 0, 'fields with errors are marked invalid');
    for (const field of await invalid.all()) {
      const described = await field.getAttribute('aria-describedby');
      assert.ok(described, 'an invalid field points at its message');
    }
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations('/user/register (errors)', violations)}`);
  });

  test('the pages break no Content-Security-Policy rule and raise no script error', () => {
    assert.deepEqual(
      b.problems.filter((p) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(p)),
      [],
    );
  });

  test('the keyboard reaches the content through the skip link, with a visible focus', async () => {
    await anonymous.goto('/');
    await anonymous.keyboard.press('Tab');
    const skip = anonymous.getByRole('link', { name: 'Skip to content' });
    assert.ok(await skip.evaluate((el) => el === document.activeElement), 'the first Tab focuses the skip link');
    const box = await skip.boundingBox();
    assert.ok(box && box.x >= 0 && box.y >= 0 && box.width > 0, `the focused skip link is on screen: ${JSON.stringify(box)}`);
    const outline = await skip.evaluate((el) => getComputedStyle(el).outlineStyle);
    assert.notEqual(outline, 'none', 'the focused link has an outline');
    await b.shot(anonymous, 'skip-link-focused');
    await anonymous.keyboard.press('Enter');
    assert.equal(await anonymous.evaluate(() => document.activeElement?.id), 'content');
  });

  test('a phone-sized screen needs no sideways scrolling', async () => {
    await anonymous.setViewportSize({ width: 375, height: 740 });
    try {
      for (const [url, step] of [
        ['/', 'phone-home'],
        ['/dataset', 'phone-search'],
        [`/dataset/${data.dataset.name}`, 'phone-dataset'],
        [`/dataset/${data.dataset.name}/resource/${data.resource.id}`, 'phone-resource'],
        [`/organization/${data.org.name}`, 'phone-organization'],
        ['/user/login', 'phone-login'],
      ]) {
        await anonymous.goto(url);
        await b.shot(anonymous, step);
        const width = await anonymous.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 375, `${url} is ${width} px wide on a 375 px screen`);
      }
    } finally {
      await anonymous.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
