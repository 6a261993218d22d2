// The web interface as a person uses it, in a real browser (Debian's chromium via playwright-core),
// on the real server listening on a port. Selectors are labels, roles and visible text.
//   1. A newcomer registers, creates an organization and a dataset with a CSV upload, waits for
//      the loader, explores the table (filter, search, sort, downloads), finds the dataset through
//      search and facets, follows it and sees its activity on the dashboard.
//   2. An anonymous visitor (and a signed-in outsider) cannot see a private dataset anywhere:
//      search, home, organization page, dataset page, resource page and explorer, file download,
//      data store dumps; a member of its organization can (so the checks would catch a leak).
// Screenshots of every step: test-artifacts/screenshots/browser-<database>/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { browserMissing, eventually, signIn, startBrowserApp, type BrowserApp } from './helpers/browser.ts';
import { RAINFALL_CSV, seedCatalog, type SeededCatalog } from './helpers/browser-data.ts';

const NEWCOMER = { name: 'nora_newcomer', fullname: 'Nora Newcomer', email: 'nora@example.org', password: 'a long enough secret' };
const ORG = { name: 'coastal-weather', title: 'Coastal Weather Service' };
const DATASET = { name: 'coastal-rainfall', title: 'Coastal rainfall by station', tags: 'coast, rainfall' };

let b: BrowserApp;
let seeded: SeededCatalog;

// The app and the browser are started once, only where chromium is installed.
before(async () => {
  if (browserMissing) return;
  b = await startBrowserApp('browser', {
    config: { 'svc.auth.create_user_via_web': true, 'svc.jobs.poll_interval': 50, 'svc.loader.timeout': 30 },
  });
  seeded = await seedCatalog(b.t);
});
after(async () => {
  await b?.close();
});

/** Waits until the locator is visible (a readable failure when it never is). */
async function sees(locator: Locator, what = String(locator)): Promise<void> {
  await locator
    .first()
    .waitFor({ state: 'visible' })
    .catch((e) => {
      throw new Error(`expected to see ${what}: ${(e as Error).message.split('\n')[0]}`);
    });
}

async function absent(locator: Locator, what: string): Promise<void> {
  assert.equal(await locator.count(), 0, `${what} should not be on the page`);
}

describe('a newcomer publishes a dataset and finds it again', { skip: browserMissing }, () => {
  let page: Page;
  let resourceUrl = '';

  before(async () => {
    page = await b.visitor();
  });

  test('registers from the home page and is signed in', async () => {
    await page.goto('/');
    await sees(page.getByRole('heading', { level: 1 }));
    await sees(page.getByRole('search'));
    await b.shot(page, 'home');
    await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Register' }).click();
    await page.waitForURL('**/user/register');
    await page.getByLabel(/^Username/).fill(NEWCOMER.name);
    await page.getByLabel(/^Full name/).fill(NEWCOMER.fullname);
    await page.getByLabel(/^E-mail/).fill(NEWCOMER.email);
    await page.getByLabel(/^Password/).fill(NEWCOMER.password);
    await page.getByLabel(/^Confirm password/).fill(NEWCOMER.password);
    await b.shot(page, 'register-form');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/user/register'));
    const account = page.getByRole('navigation', { name: 'Account' });
    await sees(account.getByRole('link', { name: NEWCOMER.fullname }), 'the new user in the account menu');
    await sees(account.getByRole('button', { name: 'Log out' }));
    await b.shot(page, 'registered');
  });

  test('logs out, and in again with the new password', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await sees(page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Log in' }));
    await page.goto('/user/login');
    await page.getByLabel('Username or e-mail').fill(NEWCOMER.name);
    await page.getByLabel(/^Password/).fill('not the password');
    await page.getByRole('main').getByRole('button', { name: 'Log in' }).click();
    await sees(page.getByRole('alert'), 'the login error');
    await b.shot(page, 'login-failed');
    await signIn(page, NEWCOMER.email, NEWCOMER.password);
    await sees(page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: NEWCOMER.fullname }));
  });

  test('creates an organization', async () => {
    await page.goto('/organization');
    await page.getByRole('link', { name: 'Add organization' }).click();
    await page.getByLabel(/^Title/).fill(ORG.title);
    await page.getByLabel(/^URL name/).fill(ORG.name);
    await page.getByLabel(/^Description/).fill('Rain gauges along the **coast**.');
    await b.shot(page, 'organization-form');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForURL(`**/organization/${ORG.name}`);
    await sees(page.getByRole('heading', { name: ORG.title }));
    await b.shot(page, 'organization-created');
  });

  test('creates a dataset with a CSV upload', async () => {
    await page.goto('/dataset');
    await page.getByRole('link', { name: 'Add dataset' }).click();
    await page.waitForURL('**/dataset/new*');
    await page.getByLabel(/^Title/).fill(DATASET.title);
    await page.getByLabel(/^URL name/).fill(DATASET.name);
    await page.getByLabel(/^Description/).fill('Monthly rainfall at **coastal** stations.');
    await page.getByLabel(/^Tags/).fill(DATASET.tags);
    await page.getByLabel(/^Organization/).selectOption({ label: ORG.title });
    await page.getByLabel(/^Visibility/).selectOption({ label: 'Public' });
    await b.shot(page, 'dataset-form');
    await page.getByRole('button', { name: /add data/i }).click();
    await page.waitForURL(`**/dataset/${DATASET.name}/resource/new`);
    await page.getByLabel(/^Upload a file/).setInputFiles(RAINFALL_CSV);
    await page.getByLabel(/^Name/).fill('Rainfall by station');
    await b.shot(page, 'resource-form');
    await page.getByRole('button', { name: 'Finish' }).click();
    await page.waitForURL(`**/dataset/${DATASET.name}/resource/*`);
    resourceUrl = new URL(page.url()).pathname;
    await sees(page.getByRole('heading', { name: /Rainfall by station/ }));
    await b.shot(page, 'resource-uploaded');
  });

  test('waits for the loader on the resource page and sees the table in the explorer', async () => {
    await eventually(
      'the loader to finish',
      async () => {
        await page.goto(resourceUrl);
        if (await page.getByText('Failed', { exact: true }).count()) throw new Error('the loader failed');
        return (await page.getByText('Loaded', { exact: true }).count()) > 0;
      },
      90_000,
      500,
    );
    await b.shot(page, 'loaded');
    const table = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: /station/ }) });
    await sees(table, 'the explorer table');
    for (const column of ['station', 'city', 'rainfall_mm', 'measured_on'])
      await sees(table.getByRole('columnheader', { name: new RegExp(column) }), `column ${column}`);
    await sees(table.getByRole('cell', { name: 'North Ridge' }));
    await sees(page.getByText(/of 10 rows/), 'the row count');
    await sees(page.getByRole('heading', { name: 'Data dictionary' }));
  });

  test('filters, searches and sorts the table, and downloads it in every format', async () => {
    const table = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: /station/ }) });
    await page.getByLabel('Filter city', { exact: true }).fill('Bayside');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await sees(page.getByText(/of 3 rows/), 'three Bayside rows');
    await sees(table.getByRole('cell', { name: 'Harbour Point' }));
    await absent(table.getByRole('cell', { name: 'North Ridge' }), 'a row of Alderton');
    await b.shot(page, 'explorer-filtered');

    await page.getByRole('link', { name: /Clear search, filters and sort/ }).click();
    await page.getByLabel('Search the table', { exact: true }).fill('Glacier');
    await page.getByRole('search', { name: 'Search and filter the table' }).getByRole('button', { name: 'Search' }).click();
    await sees(page.getByText(/of 1 row\b/), 'one matching row');
    await sees(table.getByRole('cell', { name: 'Glacier Lake' }));
    await absent(table.getByRole('cell', { name: 'Harbour Point' }), 'a row without the word');
    await b.shot(page, 'explorer-searched');

    await page.getByRole('link', { name: /Clear search, filters and sort/ }).click();
    await table.getByRole('link', { name: /rainfall_mm/ }).click();
    await sees(table.getByRole('columnheader', { name: /rainfall_mm/ }).and(page.locator('[aria-sort="ascending"]')), 'the sorted column');
    const firstRow = await table
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: /^\d+(\.\d+)?$/ }) }) // data rows: a rainfall figure
      .first()
      .textContent();
    assert.match(firstRow ?? '', /Pier Head/, 'the smallest rainfall first');
    await b.shot(page, 'explorer-sorted');

    const downloads = page.getByRole('region', { name: 'Download the data' });
    for (const [label, marker] of [
      [/CSV/, 'station,city'],
      [/TSV/, 'station\tcity'],
      [/^JSON$/, '"North Ridge"'],
      [/XML/, 'North Ridge'],
    ] as const) {
      const href = await downloads.getByRole('link', { name: label }).getAttribute('href');
      assert.ok(href, `a ${label} download link`);
      const res = await page.request.get(href!);
      assert.equal(res.status(), 200, `${href} answers ${res.status()}`);
      assert.ok((await res.text()).includes(marker), `${href} holds the rows`);
    }
    const file = await page.request.get((await page.getByRole('link', { name: 'Download', exact: true }).getAttribute('href'))!);
    assert.equal(file.status(), 200);
    assert.match(await file.text(), /^station,city,rainfall_mm,measured_on/);
  });

  test('finds the dataset through search and facets', async () => {
    await page.goto('/');
    await page.getByRole('search').getByRole('searchbox').fill('rainfall');
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**/dataset?q=rainfall*');
    await sees(page.getByRole('link', { name: DATASET.title }));
    await sees(page.getByRole('link', { name: seeded.dataset.title }), 'the other rainfall dataset');
    await b.shot(page, 'search');

    await page
      .getByRole('region', { name: 'Organizations' })
      .getByRole('link', { name: new RegExp(ORG.title) })
      .click();
    await page.waitForURL(/organization=coastal-weather/);
    await sees(page.getByRole('link', { name: DATASET.title }));
    await absent(page.getByRole('link', { name: seeded.dataset.title }), 'the dataset of another organization');
    await page.getByRole('region', { name: 'Tags' }).getByRole('link', { name: /coast/ }).click();
    await page.waitForURL(/tags=coast/);
    await sees(page.getByRole('link', { name: DATASET.title }));
    await b.shot(page, 'search-facets');

    await page.getByRole('link', { name: DATASET.title }).click();
    await page.waitForURL(`**/dataset/${DATASET.name}`);
    await sees(page.getByRole('heading', { name: DATASET.title }));
    await sees(page.getByRole('link', { name: 'Rainfall by station' }));
    const jsonLd = await page.locator('script[type="application/ld+json"]').textContent();
    assert.match(jsonLd ?? '', /"@type":\s*"Dataset"/);
  });

  test('follows the dataset and sees its activity on the dashboard', async () => {
    await page.getByRole('button', { name: 'Follow' }).click();
    await sees(page.getByRole('button', { name: 'Unfollow' }));
    await sees(page.getByRole('status').filter({ hasText: /following/ }), 'the follow confirmation');
    await b.shot(page, 'followed');
    // Someone else changes the followed dataset: the change reaches the newcomer's news feed.
    await b.t.ok('package_patch', { id: DATASET.name, notes: 'Monthly rainfall, checked by the network.' }, { token: b.t.sysadminToken });
    await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Dashboard' }).click();
    await page.waitForURL('**/dashboard*');
    const main = page.getByRole('main');
    await sees(main.getByRole('link', { name: DATASET.title }), 'the followed dataset in the news feed');
    await sees(main.getByText('test_sysadmin'), "the other user's change in the news feed");
    await b.shot(page, 'dashboard');
  });
});

describe('a private dataset stays hidden from those outside its organization', { skip: browserMissing }, () => {
  const secretUrls = () => ({
    dataset: `/dataset/${seeded.secret.name}`,
    byId: `/dataset/${seeded.secret.id}`,
    resource: `/dataset/${seeded.secret.name}/resource/${seeded.secret.resourceId}`,
    explorer: `/dataset/${seeded.secret.name}/resource/${seeded.secret.resourceId}?q=secret`,
    activity: `/dataset/activity/${seeded.secret.name}`,
    download: `/dataset/${seeded.secret.id}/resource/${seeded.secret.resourceId}/download/gauges.csv`,
    dumps: ['csv', 'tsv', 'json', 'xml'].map((f) => `/datastore/dump/${seeded.secret.resourceId}?format=${f}`),
    api: `/api/3/action/datastore_search?resource_id=${seeded.secret.resourceId}`,
  });

  async function cannotSee(page: Page, who: string) {
    const urls = secretUrls();
    for (const url of [
      '/',
      '/dataset',
      '/dataset?q=secret',
      `/organization/${seeded.org.name}`,
      '/dataset?q=gauges&organization=rainfall-office',
    ]) {
      const res = await page.goto(url);
      assert.equal(res?.status(), 200, `${url} answers ${res?.status()}`);
      await absent(page.getByText(seeded.secret.title), `${who}: the private dataset on ${url}`);
      assert.ok(!(await page.content()).includes(seeded.secret.name), `${who}: the private dataset's name on ${url}`);
    }
    await b.shot(page, `${who}-search`);
    for (const url of [urls.dataset, urls.byId, urls.resource, urls.explorer, urls.activity]) {
      const res = await page.goto(url);
      assert.equal(res?.status(), 404, `${who}: ${url} answers ${res?.status()}`);
      await sees(page.getByRole('heading', { name: 'Not found' }), `the not-found page at ${url}`);
      assert.ok(!(await page.content()).includes('secret-gauge-a'), `${who}: rows on ${url}`);
    }
    await b.shot(page, `${who}-not-found`);
    for (const url of [urls.download, ...urls.dumps, urls.api]) {
      const res = await page.request.get(url);
      assert.ok([403, 404].includes(res.status()), `${who}: ${url} answers ${res.status()}`);
      assert.ok(!(await res.text()).includes('secret-gauge-a'), `${who}: rows from ${url}`);
    }
  }

  test('an anonymous visitor sees it nowhere', async () => {
    await cannotSee(await b.visitor(), 'anonymous');
  });

  test('a signed-in user outside the organization sees it nowhere', async () => {
    const page = await b.visitor();
    await signIn(page, seeded.reader.name);
    await cannotSee(page, 'outsider');
  });

  test('a member of the organization sees it, its table and its dumps (the checks above would catch a leak)', async () => {
    const page = await b.visitor();
    await signIn(page, 'test_sysadmin');
    const urls = secretUrls();
    await page.goto('/dataset?q=secret');
    await sees(page.getByRole('link', { name: seeded.secret.title }));
    const res = await page.goto(urls.resource);
    assert.equal(res?.status(), 200);
    await sees(page.getByRole('cell', { name: 'secret-gauge-a' }));
    await b.shot(page, 'member-sees-private');
    for (const url of [urls.download, ...urls.dumps]) {
      const r = await page.request.get(url);
      assert.equal(r.status(), 200, `${url} answers ${r.status()}`);
      assert.ok((await r.text()).includes('secret-gauge-a'), `rows from ${url}`);
    }
  });
});
