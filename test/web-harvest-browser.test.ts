// The harvest pages in a real browser: axe-core finds no serious or critical violation on the
// source list, the source page after a run, the job report, the forms (one with an error) and a
// harvested dataset's page. Screenshots: test-artifacts/screenshots/harvest-<database>/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { startApp, type TestApp } from './helpers/app.ts';
import {
  axeViolations,
  browserMissing,
  describeViolations,
  eventually,
  signIn,
  startBrowserApp,
  type BrowserApp,
} from './helpers/browser.ts';
import { asSysadmin, organizationWithTeam } from './helpers/fixtures.ts';

describe('accessibility of the harvest pages', { skip: browserMissing }, () => {
  let remote: TestApp;
  let b: BrowserApp;
  let page: Page;
  let jobId: string;
  let harvested: string;

  before(async () => {
    remote = await startApp({ plugins: [], config: { 'svc.jobs.in_process_worker': false } });
    await remote.app.listen({ port: 0, host: '127.0.0.1' });
    await remote.ok('organization_create', { name: 'remote-org' }, asSysadmin(remote));
    await remote.ok(
      'package_create',
      { name: 'rivers', title: 'Rivers', notes: 'Every river.', owner_org: 'remote-org' },
      asSysadmin(remote),
    );
    b = await startBrowserApp('harvest', {
      plugins: ['harvest'],
      config: { 'svc.harvest.allow_private_urls': true, 'svc.harvest.scheduler': false, 'svc.jobs.poll_interval': 50 },
    });
    await organizationWithTeam(b.t, { name: 'hb-org', title: 'Harvesting org' }, { hb_admin: 'admin' });
    const url = `http://127.0.0.1:${(remote.app.server.address() as AddressInfo).port}`;
    await b.t.ok(
      'harvest_source_create',
      { name: 'remote', title: 'Remote site', url, source_type: 'ckan', owner_org: 'hb-org' },
      asSysadmin(b.t),
    );
    jobId = (await b.t.ok('harvest_job_create', { source_id: 'remote' }, asSysadmin(b.t))).id;
    await eventually('the harvest job ends', async () => {
      const job = await b.t.ok('harvest_job_show', { id: jobId }, asSysadmin(b.t));
      return job.status === 'Finished' ? job : undefined;
    });
    harvested = (await b.t.ok('package_search', { q: 'Rivers' })).results[0].name;
    page = await b.visitor();
    await signIn(page, 'hb_admin');
  });
  after(async () => {
    await b?.close();
    await remote?.close();
  });

  async function check(url: string, step: string) {
    const res = await page.goto(url);
    assert.equal(res?.status(), 200, `${url} answers ${res?.status()}`);
    await b.shot(page, step);
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `serious or critical violations:\n${describeViolations(url, violations)}`);
  }

  test('source list', () => check('/harvest', 'list'));
  test('source page after a run', () => check('/harvest/remote', 'source'));
  test('job report', () => check(`/harvest/remote/job/${jobId}`, 'job'));
  test('new source form', () => check('/harvest/new', 'new'));
  test('edit form', () => check('/harvest/edit/remote', 'edit'));
  test('harvested dataset', () => check(`/dataset/${harvested}`, 'dataset'));

  test('the form with an error: the message is tied to its field, the page stays clean', async () => {
    await page.goto('/harvest/edit/remote');
    await page.getByLabel('Configuration').fill('{"default_tags": [');
    await page.getByRole('button', { name: 'Save harvest source' }).click();
    await page.getByRole('alert').first().waitFor();
    const config = page.getByLabel('Configuration');
    assert.match(String(await config.getAttribute('aria-describedby')), /config-error/);
    await b.shot(page, 'edit-errors');
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, describeViolations('/harvest/edit/remote (errors)', violations));
  });
});
