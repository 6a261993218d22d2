// The CKAN API reader against a second svc listening on a port (a real CKAN Action API): public
// datasets only, mapped for package_create here, changes since a time, every id for deletions;
// and against a stand-in CKAN whose datasets share one modification time, to show the pages
// neither skip nor repeat a dataset.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { ckanBaseUrl, ckanReader } from '../src/harvest/ckan-reader.ts';
import { dcatRdfReader } from '../src/harvest/dcat-reader.ts';
import { dcatReadSettings } from '../src/harvest/dcat-settings.ts';
import { createHarvestFetch } from '../src/harvest/fetch.ts';
import { HarvestSourceError, type HarvestSourceConfig, type RemoteDataset } from '../src/harvest/types.ts';

const fetch = createHarvestFetch({
  allowPrivate: true,
  timeoutMs: 10_000,
  maxBytes: 10_000_000,
  userAgent: 'svc-harvest/test',
  retryDelayMs: 5,
});
const signal = new AbortController().signal;

async function read(url: string, config: HarvestSourceConfig = {}, since: string | null = null) {
  const source = { id: 'src', url, source_type: 'ckan' as const, config };
  const records: RemoteDataset[] = [];
  for await (const r of ckanReader.read(source, { since, signal, fetch })) records.push(r);
  return records;
}
const guidsOf = (url: string, config: HarvestSourceConfig = {}) =>
  ckanReader.listGuids({ id: 'src', url, source_type: 'ckan', config }, { signal, fetch });

test('the base URL: with or without a trailing slash or the API path', () => {
  for (const u of [
    'https://ckan.example.org',
    'https://ckan.example.org/',
    'https://ckan.example.org/api/3/action',
    'https://ckan.example.org/api/3/action/',
    'https://ckan.example.org/api/3',
    'https://ckan.example.org/api/action/package_search?q=x',
  ])
    assert.equal(ckanBaseUrl(u), 'https://ckan.example.org', u);
  assert.equal(ckanBaseUrl('https://example.org/data/'), 'https://example.org/data');
});

describe('reading a CKAN site', () => {
  let remote: TestApp;
  let base: string;
  let ids: Record<string, string>;
  before(async () => {
    // This site's DCAT profiles: what DCAT sources are read with (dcatReadSettings).
    remote = await startApp({ config: { 'svc.dcat.rdf.profiles': 'euro_dcat_ap_2,schemaorg' } });
    const token = remote.sysadminToken;
    await remote.ok('organization_create', { name: 'river-office', title: 'River office', description: 'Keeps the rivers' }, { token });
    await remote.ok('group_create', { name: 'nature', title: 'Nature' }, { token });
    const make = (name: string, extra: Record<string, unknown> = {}) =>
      remote.ok(
        'package_create',
        {
          name,
          title: name.replace(/-/g, ' '),
          owner_org: 'river-office',
          tags: [{ name: 'water' }],
          extras: [
            { key: 'source_system', value: 'gauges' },
            { key: 'harvest_object_id', value: 'from-an-earlier-harvest' },
          ],
          groups: [{ name: 'nature' }],
          resources: [{ url: `https://files.example.org/${name}.csv`, format: 'CSV', name: 'table' }],
          ...extra,
        },
        { token },
      );
    ids = {};
    for (const name of ['river-levels', 'river-flow', 'river-temperature']) ids[name] = (await make(name)).id;
    ids.secret = (await make('secret-gauges', { private: true })).id;
    const address = await remote.app.listen({ port: 0, host: '127.0.0.1' });
    base = address.replace('localhost', '127.0.0.1');
  });
  after(() => remote.close());

  test('public datasets, mapped for package_create here', async () => {
    const records = await read(`${base}/api/3/action/`);
    assert.deepEqual(records.map((r) => r.guid).sort(), [ids['river-levels'], ids['river-flow'], ids['river-temperature']].sort());
    const r = records.find((x) => x.guid === ids['river-levels'])!;
    assert.equal(r.remoteUrl, `${base}/dataset/river-levels`);
    assert.match(r.modified!, /Z$/);
    assert.equal(JSON.parse(r.content).organization.name, 'river-office');
    assert.deepEqual(r.organization, {
      id: r.organization!.id,
      name: 'river-office',
      title: 'River office',
      description: 'Keeps the rivers',
    });
    const d = r.dataset!;
    assert.equal(d.id, ids['river-levels']);
    assert.equal(d.name, 'river-levels');
    for (const k of [
      'organization',
      'owner_org',
      'metadata_modified',
      'metadata_created',
      'num_resources',
      'num_tags',
      'state',
      'private',
      'revision_id',
    ])
      assert.equal(k in d, false, k);
    assert.deepEqual(d.tags, [{ name: 'water' }]);
    assert.deepEqual(d.extras, [{ key: 'source_system', value: 'gauges' }]);
    assert.deepEqual(
      (d.groups as any[]).map((g) => g.name),
      ['nature'],
    );
    const res = (d.resources as Record<string, unknown>[])[0];
    assert.equal(res.url, 'https://files.example.org/river-levels.csv');
    for (const k of ['id', 'package_id', 'position', 'datastore_active', 'url_type', 'created']) assert.equal(k in res, false, k);
    assert.deepEqual([...(await guidsOf(base))].sort(), records.map((x) => x.guid).sort());
  });

  test('the source config filters: q, fq, organizations and groups', async () => {
    const records = await read(base, { q: 'name:river-flow' });
    assert.deepEqual(
      records.map((r) => r.guid),
      [ids['river-flow']],
    );
    const fq = await read(base, { fq: 'name:river-levels OR name:river-temperature' });
    assert.equal(fq.length, 2);
    assert.deepEqual([...(await guidsOf(base, { fq: 'name:river-levels' }))], [ids['river-levels']]);
    // ckanext-harvest's organization and group filters.
    assert.equal((await read(base, { organizations_filter_include: ['river-office', 'other'] })).length, 3);
    assert.equal((await read(base, { organizations_filter_exclude: ['river-office'] })).length, 0);
    assert.equal((await read(base, { fq: 'name:river-flow', groups_filter_exclude: ['sport'] })).length, 1);
    assert.equal((await guidsOf(base, { groups_filter_include: ['sport'] })).size, 0);
  });

  test('since: only what changed; small pages read it all in order', async () => {
    const before = await read(base);
    const last = before
      .map((r) => r.modified!)
      .sort()
      .at(-1)!;
    await remote.ok('package_patch', { id: 'river-flow', notes: 'now measured at six points' }, { token: remote.sysadminToken });
    const changed = await read(base, {}, new Date(Date.parse(last) + 1).toISOString());
    assert.deepEqual(
      changed.map((r) => r.guid),
      [ids['river-flow']],
    );
    assert.equal(changed[0].dataset!.notes, 'now measured at six points');
    // One per page: the river-flow change put it last.
    const paged = await read(base, { rows: 1 });
    assert.deepEqual(
      paged.map((r) => r.dataset!.name),
      ['river-levels', 'river-temperature', 'river-flow'],
    );
    // A deleted dataset disappears from the ids.
    await remote.ok('package_delete', { id: 'river-temperature' }, { token: remote.sysadminToken });
    assert.equal((await guidsOf(base, { rows: 2 })).has(ids['river-temperature']), false);
  });

  test("a DCAT source is read with this site's profiles and licence register", async () => {
    const dcat = dcatReadSettings(remote.services);
    assert.deepEqual(dcat.profiles, ['euro_dcat_ap_2', 'schemaorg']);
    const doc = `@prefix dcat: <http://www.w3.org/ns/dcat#> . @prefix dct: <http://purl.org/dc/terms/> .
      <https://x.example.org/d> a dcat:Dataset ; dct:title "D" ; dct:license <http://www.opendefinition.org/licenses/cc-by> .`;
    const stub = async (url: string) => ({ status: 200, url, contentType: 'text/turtle', text: doc });
    const source = { id: 's', url: 'https://x.example.org/catalog.ttl', source_type: 'dcat_rdf' as const, config: {} };
    const records: RemoteDataset[] = [];
    for await (const r of dcatRdfReader.read(source, { since: null, signal, fetch: stub, dcat })) records.push(r);
    assert.equal(records[0].dataset!.license_id, 'cc-by');
    // A profile the source names that reads no DCAT fails the job.
    await assert.rejects(
      dcatRdfReader.listGuids({ ...source, config: { profiles: ['schemaorg'] } }, { signal, fetch: stub, dcat }),
      /profiles cannot read DCAT/,
    );
  });
});

describe('a stand-in CKAN', () => {
  let server: http.Server;
  let base: string;
  let fail = false;
  const requests: URLSearchParams[] = [];
  // Seven datasets, five of them modified in the same millisecond.
  const datasets = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id, i) => ({
    id,
    name: `set-${id}`,
    title: `Set ${id}`,
    metadata_modified: i < 5 ? '2026-11-01T10:00:00.123456' : `2026-11-0${i - 2}T10:00:00.000000`,
  }));
  before(async () => {
    server = http.createServer((req, res) => {
      const u = new URL(req.url!, 'http://x');
      if (fail) {
        res.writeHead(500);
        return res.end('{"success": false, "error": {"message": "broken"}}');
      }
      if (u.pathname === '/html/api/3/action/package_search') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>not an API</html>');
      }
      if (u.pathname === '/bad-fq/api/3/action/package_search') {
        res.writeHead(409, { 'content-type': 'application/json' });
        return res.end('{"success": false, "error": {"__type": "Search Query Error", "message": "Search Query is invalid"}}');
      }
      requests.push(u.searchParams);
      const from = /metadata_modified:\[(\S+) TO \*\]/.exec(u.searchParams.get('fq') ?? '')?.[1];
      const ms = (t: string) => Math.floor(Date.parse(`${t.replace(/Z$/, '')}Z`));
      const matching = datasets
        .filter((d) => !from || ms(d.metadata_modified) >= ms(from))
        .sort((x, y) => ms(x.metadata_modified) - ms(y.metadata_modified) || x.id.localeCompare(y.id));
      const start = Number(u.searchParams.get('start'));
      const rows = Number(u.searchParams.get('rows'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, result: { count: matching.length, results: matching.slice(start, start + rows) } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  test('pages through datasets of one millisecond without skipping or repeating', async () => {
    requests.length = 0;
    const records = await read(base, { rows: 2 });
    assert.deepEqual(
      records.map((r) => r.guid),
      ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
    );
    assert.equal(requests[0].get('sort'), 'metadata_modified asc, id asc');
    assert.equal(requests[0].get('include_private'), 'false');
    assert.equal(requests[0].get('rows'), '2');
    // The second page starts at the time of the first page's last dataset, past the two read there.
    assert.equal(requests[1].get('fq'), 'metadata_modified:[2026-11-01T10:00:00.123Z TO *]');
    assert.equal(requests[1].get('start'), '2');
  });

  test('a source that fails, answers no API, or refuses the query: an error of the job', async () => {
    fail = true;
    await assert.rejects(read(base), (e: unknown) => e instanceof HarvestSourceError && e.status === 500 && /HTTP 500/.test(e.message));
    fail = false;
    await assert.rejects(read(`${base}/html`), /did not answer JSON: is .*\/html a CKAN site\?/);
    await assert.rejects(
      read(`${base}/bad-fq`),
      (e: unknown) => e instanceof HarvestSourceError && e.status === 409 && /Search Query is invalid/.test(e.message),
    );
  });
});
