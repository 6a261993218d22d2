// The chart view's edit form (/dataset/{id}/resource/{rid}/edit_view/{view_id}): its preview
// drawn on the server (the "Preview" button without JavaScript, the preview address for
// js/chart-form.js), errors naming the option, saving, and who may open it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { as, organizationWithTeam, type TestUser } from './helpers/fixtures.ts';
import { WebClient } from './helpers/web-client.ts';

let t: TestApp;
let editor: TestUser;
let resourceId: string;
let viewId: string;
let formUrl: string;

before(async () => {
  t = await startApp({ plugins: ['datastore', 'chart'] });
  ({
    users: { views_chart_form_editor: editor },
  } = await organizationWithTeam(t, { name: 'views-chart-form-org' }, { views_chart_form_editor: 'editor' }));
  await t.ok('package_create', { name: 'views-chart-form', owner_org: 'views-chart-form-org' }, as(editor));
  ({ resource_id: resourceId } = await t.ok(
    'datastore_create',
    {
      resource: { package_id: 'views-chart-form', name: 'sales' },
      fields: [
        { id: 'region', type: 'text' },
        { id: 'amount', type: 'int' },
        { id: 'visits', type: 'int' },
      ],
      records: [
        { region: 'north', amount: 5, visits: 1 },
        { region: 'north', amount: 7, visits: 2 },
        { region: 'south', amount: 3, visits: 4 },
      ],
    },
    as(editor),
  ));
  ({ id: viewId } = await t.ok(
    'resource_view_create',
    { resource_id: resourceId, view_type: 'chart', title: 'Amount by region', x: 'region', y: 'amount' },
    as(editor),
  ));
  formUrl = `/dataset/views-chart-form/resource/${resourceId}/edit_view/${viewId}`;
});
after(async () => {
  await t?.close();
});

async function editorClient(): Promise<WebClient> {
  const web = new WebClient(t.app);
  await web.login(editor.name);
  return web;
}

test('chart_view_data with preview options: the chart as configured, without saving it; a bad column names the option', async () => {
  const data = await t.ok('chart_view_data', { id: viewId, y: 'visits', aggregate: 'max' });
  assert.deepEqual(data.series[0].points, [
    { x: 'north', y: 2 },
    { x: 'south', y: 4 },
  ]);
  const saved = await t.ok('chart_view_data', { id: viewId });
  assert.deepEqual(saved.config.y, ['amount'], 'the saved view is unchanged');
  const bad = await t.call('chart_view_data', { id: viewId, x: 'nope' });
  assert.equal(bad.body.success, false);
  assert.equal(bad.body.error?.__type, 'Validation Error');
  assert.match(bad.body.error?.x[0], /Column "nope" is not in the table/);
});

test('the edit form: labelled options, the preview live for screen readers, and the preview drawn for the posted options', async () => {
  const web = await editorClient();
  const page = await web.get(formUrl);
  assert.equal(page.statusCode, 200);
  for (const name of ['x', 'y', 'group_by', 'aggregate', 'chart']) assert.match(page.body, new RegExp(`<label for="field-${name}">`));
  assert.match(page.body, /id="chart-preview" aria-live="polite"/);
  assert.match(page.body, /<svg[^>]*role="img"/, 'the saved chart is previewed');
  assert.match(page.body, /js\/chart-form\.js/);
  // Without JavaScript: the "Preview" button posts the form and the page draws those options.
  const previewed = await web.post(formUrl, {
    title: 'Amount by region',
    x: 'region',
    y: 'visits',
    aggregate: 'sum',
    chart: 'bar',
    preview: '1',
  });
  assert.equal(previewed.statusCode, 200);
  assert.match(previewed.body, /Bar chart of the sum of visits by region/);
  assert.equal((await t.ok('chart_view_data', { id: viewId })).config.y[0], 'amount', 'a preview saves nothing');
  const wrong = await web.post(formUrl, { title: 'Amount by region', x: 'nope', y: 'amount', preview: '1' });
  assert.equal(wrong.statusCode, 400);
  assert.match(wrong.body, /id="x-error"[^>]*>Column &quot;nope&quot; is not in the table/);
});

test('the preview address gives the figure alone, or the errors naming the options with status 409', async () => {
  const web = await editorClient();
  const ok = await web.get(`${formUrl}/preview?x=region&y=amount&aggregate=count&chart=line`);
  assert.equal(ok.statusCode, 200);
  assert.match(ok.body, /^\s*<figure class="chart-view"/);
  assert.match(ok.body, /Line chart of the count of amount by region/);
  const bad = await web.get(`${formUrl}/preview?x=region&y=region&aggregate=sum`);
  assert.equal(bad.statusCode, 409);
  assert.match(bad.body, /role="alert"/);
  assert.match(bad.body, /<li data-field="y"><a href="#field-y">y<\/a>: Column &quot;region&quot; is not numeric/);
});

test('saving the form updates the view; visitors who may not edit it get no form', async () => {
  const web = await editorClient();
  const saved = await web.post(formUrl, {
    title: 'Visits',
    description: '',
    x: 'region',
    y: 'visits',
    group_by: '',
    aggregate: 'sum',
    chart: 'area',
  });
  assert.equal(saved.statusCode, 303);
  assert.equal(saved.headers.location, `/dataset/views-chart-form/resource/${resourceId}?view_id=${viewId}`);
  const view = await t.ok('resource_view_show', { id: viewId });
  assert.deepEqual([view.title, view.y, view.chart], ['Visits', ['visits'], 'area']);
  const anonymous = new WebClient(t.app);
  // Not signed in: sent to sign in first (the site's rule for pages that need a user).
  for (const url of [formUrl, `${formUrl}/preview?x=region`]) {
    const r = await anonymous.get(url);
    assert.equal(r.statusCode, 303, url);
    assert.match(String(r.headers.location), /^\/user\/login/);
  }
  assert.equal((await web.get(`/dataset/views-chart-form/resource/${resourceId}/edit_view/not-a-view`)).statusCode, 404);
});
