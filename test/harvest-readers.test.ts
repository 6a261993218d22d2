// How svc reads other catalogs: the harvest fetch (SSRF rule, limits, retries, User-Agent, gzip),
// the DCAT RDF and data.json readers on documents served here (pages, changes and deletions,
// malformed documents and records), and a source's config applied to a dataset. No database.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { checkSourceUrl, createHarvestFetch, type HarvestFetchOptions } from '../src/harvest/fetch.ts';
import { readerFor } from '../src/harvest/readers.ts';
import { HarvestSourceError, type HarvestSourceSpec, type HarvestSourceType, type RemoteDataset } from '../src/harvest/types.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures', 'harvest');
const TYPES: Record<string, string> = {
  '.ttl': 'text/turtle; charset=utf-8',
  '.rdf': 'application/rdf+xml',
  '.jsonld': 'application/ld+json',
  '.json': 'application/json',
  '.nt': 'application/octet-stream',
};

let server: http.Server;
let base: string;
const hits = new Map<string, number>();
const agents: string[] = [];
/** What /catalog/<name> serves: a fixture's name, changed between runs (else the fixture of that name). */
const current: Record<string, string> = {};

before(async () => {
  server = http.createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    agents.push(String(req.headers['user-agent']));
    if (u.pathname === '/down') {
      res.writeHead(500, 'Internal Server Error');
      return res.end('oops');
    }
    if (u.pathname === '/flaky') {
      // Fails twice, then answers.
      if (hits.get('/flaky')! <= 2) {
        res.writeHead(503);
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('fine');
    }
    if (u.pathname === '/missing') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end('{"success": false}');
    }
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: u.searchParams.get('to')! });
      return res.end();
    }
    if (u.pathname === '/gzip') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      return res.end(zlib.gzipSync(`zipped ${req.headers['accept-encoding']}`));
    }
    if (u.pathname === '/bomb') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      return res.end(zlib.gzipSync(Buffer.alloc(100_000, 'a')));
    }
    if (u.pathname === '/slow') {
      res.writeHead(200);
      return res.write('a'); // never ends
    }
    const last = path.basename(u.pathname);
    const name = u.pathname.startsWith('/catalog/') ? (current[last] ?? last) : last;
    const file = path.join(fixtures, name);
    if (!fs.existsSync(file)) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'text/plain' });
    res.end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const limits: HarvestFetchOptions = {
  allowPrivate: true,
  timeoutMs: 3000,
  maxBytes: 50_000,
  userAgent: 'svc-harvest/test (+http://test.local)',
  retryDelayMs: 5,
};
const fetch = createHarvestFetch(limits);
const signal = new AbortController().signal;

async function readAll(type: HarvestSourceType, url: string, config: HarvestSourceSpec['config'] = {}) {
  const source: HarvestSourceSpec = { id: 'src', url, source_type: type, config };
  const out: RemoteDataset[] = [];
  for await (const r of readerFor(type).read(source, { since: null, signal, fetch })) out.push(r);
  const guids = await readerFor(type).listGuids(source, { signal, fetch });
  return { records: out, byGuid: new Map(out.map((r) => [r.guid, r])), guids };
}

describe('the harvest fetch', () => {
  test('names svc in its User-Agent, accepts gzip and unpacks it', async () => {
    const r = await fetch(`${base}/gzip`);
    assert.equal(r.status, 200);
    assert.match(r.text, /^zipped .*gzip/);
    assert.equal(agents.at(-1), 'svc-harvest/test (+http://test.local)');
  });

  test('retries a failing server a bounded number of times, then fails with its status', async () => {
    hits.delete('/down');
    await assert.rejects(fetch(`${base}/down`), (e: unknown) => {
      assert.ok(e instanceof HarvestSourceError);
      assert.equal(e.status, 500);
      assert.match(e.message, /answered HTTP 500.*4 tries/);
      return true;
    });
    assert.equal(hits.get('/down'), 4);
    const r = await fetch(`${base}/flaky`);
    assert.equal(r.text, 'fine');
    assert.equal(hits.get('/flaky'), 3);
  });

  test('answers 4xx as they are, for the reader to word', async () => {
    const r = await fetch(`${base}/missing`);
    assert.equal(r.status, 404);
    assert.equal(r.text, '{"success": false}');
  });

  test('limits the unpacked size and the time', async () => {
    const small = createHarvestFetch({ ...limits, maxBytes: 10_000 });
    await assert.rejects(small(`${base}/bomb`), /larger than the limit of 10000 bytes \(svc\.harvest\.max_size\)/);
    const quick = createHarvestFetch({ ...limits, timeoutMs: 200 });
    await assert.rejects(quick(`${base}/slow`), /did not answer within 0 s \(svc\.harvest\.timeout\)|did not answer within/);
  });

  test('refuses private addresses: written, resolved, and after a redirect', async () => {
    const closed = createHarvestFetch({ ...limits, allowPrivate: false });
    await assert.rejects(closed(`${base}/gzip`), /refused to connect to 127\.0\.0\.1.*svc\.harvest\.allow_private_urls/);
    const resolving = createHarvestFetch({
      ...limits,
      allowPrivate: false,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const port = new URL(base).port;
    await assert.rejects(resolving(`http://catalog.test:${port}/gzip`), /refused to connect to catalog\.test \(127\.0\.0\.1\)/);
    // 127.0.0.1 allowed, 127.0.0.2 not: the redirect's target is checked again.
    const narrowed = createHarvestFetch({ ...limits, allowPrivate: false, isBlocked: (a) => a === '127.0.0.2' });
    assert.equal((await narrowed(`${base}/gzip`)).status, 200);
    await assert.rejects(
      narrowed(`${base}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${port}/gzip`)}`),
      /refused to connect to 127\.0\.0\.2/,
    );
    await assert.rejects(fetch('ftp://example.org/x'), /only http and https/);
  });

  test('checkSourceUrl: what a source may be, before any request', () => {
    assert.equal(checkSourceUrl('https://data.example.org/catalog.ttl', false), null);
    assert.match(checkSourceUrl('http://10.0.0.7/api', false)!, /private.*svc\.harvest\.allow_private_urls/);
    assert.match(checkSourceUrl('http://[::1]:5000/', false)!, /private/);
    assert.match(checkSourceUrl('http://localhost:5000/', false)!, /private/);
    assert.equal(checkSourceUrl('http://localhost:5000/', true), null);
    assert.match(checkSourceUrl('file:///etc/passwd', true)!, /only http and https/);
    assert.match(checkSourceUrl('not a url', true)!, /not a valid URL/);
  });
});

describe('the DCAT RDF reader', () => {
  test('follows hydra pages once each, maps datasets, and makes unreadable records errors of their own', async () => {
    current.lakes = 'dcat-page1.ttl';
    hits.delete('/dcat-page1.ttl');
    hits.delete('/dcat-page2.ttl');
    const { records, byGuid, guids } = await readAll('dcat_rdf', `${base}/dcat-page1.ttl`);
    // Each page read once: page 2 names page 1 as next, and the walk stops; listGuids after a
    // completed read of the same run reuses what it saw.
    assert.equal(hits.get('/dcat-page1.ttl'), 1);
    assert.equal(hits.get('/dcat-page2.ttl'), 1);
    const again = await readerFor('dcat_rdf').listGuids(
      { id: 'src', url: `${base}/dcat-page1.ttl`, source_type: 'dcat_rdf', config: {} },
      { signal: new AbortController().signal, fetch },
    );
    assert.equal(hits.get('/dcat-page2.ttl'), 2);
    // water-quality is listed on both pages: read once.
    assert.deepEqual(
      records.map((r) => r.guid),
      [
        'https://lakes.example.org/dataset/water-quality',
        'https://lakes.example.org/dataset/boat-ramps',
        'fish-counts',
        'https://lakes.example.org/dataset/untitled',
      ],
    );
    const wq = byGuid.get('https://lakes.example.org/dataset/water-quality')!;
    assert.equal(wq.remoteUrl, 'https://lakes.example.org/water-quality');
    assert.equal(wq.modified, '2026-10-01T09:00:00');
    assert.equal(wq.dataset!.title, 'Water quality');
    assert.equal(wq.dataset!.license_id, 'cc-by');
    assert.deepEqual((wq.dataset!.tags as { name: string }[]).map((t) => t.name).sort(), ['lakes', 'water']);
    assert.equal((wq.dataset!.resources as any[])[0].url, 'https://lakes.example.org/files/wq.csv');
    // content is the parsed dict with its keys sorted: the same record gives the same text.
    assert.equal(wq.content, JSON.stringify(JSON.parse(wq.content)));
    assert.ok(wq.content.indexOf('"extras"') < wq.content.indexOf('"title"'));
    // A blank-node dataset is known by its dct:identifier; its remote URL is unknown.
    assert.equal(byGuid.get('fish-counts')!.remoteUrl, null);
    const untitled = byGuid.get('https://lakes.example.org/dataset/untitled')!;
    assert.equal(untitled.dataset, null);
    assert.match(untitled.error!, /no dct:title/);
    assert.deepEqual([...guids].sort(), [...byGuid.keys()].sort());
    assert.deepEqual([...again].sort(), [...guids].sort());
  });

  test('a second version: a change and deletions show', async () => {
    current.lakes = 'dcat-page1.ttl';
    const first = await readAll('dcat_rdf', `${base}/catalog/lakes`);
    current.lakes = 'dcat-v2.ttl';
    const second = await readAll('dcat_rdf', `${base}/catalog/lakes`);
    const wq = 'https://lakes.example.org/dataset/water-quality';
    assert.equal(second.byGuid.get(wq)!.dataset!.title, 'Water quality of the lakes');
    assert.notEqual(second.byGuid.get(wq)!.content, first.byGuid.get(wq)!.content);
    assert.equal(second.byGuid.get('fish-counts')!.content, first.byGuid.get('fish-counts')!.content);
    assert.deepEqual([...second.guids].sort(), ['fish-counts', wq]);
  });

  test('reads RDF/XML and JSON-LD by their content type, N-Triples by the source config', async () => {
    const xml = await readAll('dcat_rdf', `${base}/dcat-catalog.rdf`);
    assert.deepEqual(
      xml.records.map((r) => [r.guid, r.dataset?.title]),
      [
        ['https://hills.example.org/dataset/trails', 'Hiking trails'],
        ['https://hills.example.org/dataset/huts', 'Mountain huts'],
      ],
    );
    const jsonld = await readAll('dcat_rdf', `${base}/dcat-catalog.jsonld`);
    assert.equal(jsonld.byGuid.get('https://coast.example.org/dataset/tides')!.remoteUrl, 'https://coast.example.org/tides');
    assert.equal(jsonld.records.length, 2);
    const nt = await readAll('dcat_rdf', `${base}/dcat-catalog.nt`, { rdf_format: 'nt' });
    assert.equal(nt.byGuid.get('https://moor.example.org/dataset/peat')!.dataset!.title, 'Peat depth');
  });

  test('a malformed document or a source that fails is an error of the job', async () => {
    await assert.rejects(readAll('dcat_rdf', `${base}/dcat-malformed.ttl`), (e: unknown) => {
      assert.ok(e instanceof HarvestSourceError);
      assert.match(e.message, /dcat-malformed\.ttl is not a DCAT document that can be read/);
      return true;
    });
    await assert.rejects(
      readAll('dcat_rdf', `${base}/nothing-here.ttl`),
      (e: unknown) => e instanceof HarvestSourceError && e.status === 404,
    );
    await assert.rejects(readAll('dcat_rdf', `${base}/down`), (e: unknown) => e instanceof HarvestSourceError && e.status === 500);
  });
});

describe('the data.json reader', () => {
  test('maps Project Open Data datasets; skips non-public ones; records without identity or repeated are errors', async () => {
    const { records, byGuid, guids } = await readAll('dcat_json', `${base}/datajson-catalog.json`);
    assert.deepEqual(
      records.map((r) => [r.guid, !!r.dataset]),
      [
        ['https://data.example.gov/id/air-quality', true],
        ['road-works', true],
        ['#4', false],
        ['road-works#5', false],
      ],
    );
    assert.match(byGuid.get('#4')!.error!, /dataset 4 has no identifier/);
    assert.match(byGuid.get('road-works#5')!.error!, /identifier road-works is used by an earlier dataset/);
    assert.deepEqual([...guids].sort(), ['https://data.example.gov/id/air-quality', 'road-works']);

    const air = byGuid.get('https://data.example.gov/id/air-quality')!;
    assert.equal(air.remoteUrl, 'https://data.example.gov/air');
    assert.equal(air.modified, '2026-10-05');
    assert.deepEqual(air.organization, { name: 'department-of-environment', title: 'Department of Environment' });
    const d = air.dataset!;
    assert.equal(d.title, 'Air quality readings');
    assert.equal(d.notes, "Hourly readings of the county's air monitors.");
    assert.equal(d.url, 'https://data.example.gov/air');
    assert.equal(d.maintainer, 'Air desk');
    assert.equal(d.maintainer_email, 'air@example.gov');
    assert.equal(d.license_id, 'cc-by');
    assert.deepEqual(d.tags, [{ name: 'air' }, { name: 'health' }]);
    const extras = Object.fromEntries((d.extras as { key: string; value: string }[]).map((e) => [e.key, e.value]));
    assert.equal(extras.identifier, 'https://data.example.gov/id/air-quality');
    assert.equal(extras.modified, '2026-10-05');
    assert.equal(extras.temporal_start, '2019-01-01');
    assert.equal(extras.temporal_end, '2026-09-30');
    assert.equal(extras.publisher_name, 'Department of Environment');
    assert.equal(extras.bureau_code, '["010:04"]');
    assert.deepEqual(JSON.parse(extras.spatial).coordinates[0][0], [-124.5, 32.5]);
    assert.deepEqual(d.resources, [
      {
        url: 'https://data.example.gov/files/air.csv',
        name: 'Readings (CSV)',
        description: 'One row per monitor and hour.',
        download_url: 'https://data.example.gov/files/air.csv',
        mimetype: 'text/csv',
        format: 'CSV',
        size: 20480,
      },
      { url: 'https://data.example.gov/api/air', name: 'Readings API', access_url: 'https://data.example.gov/api/air', format: 'API' },
    ]);
    const works = byGuid.get('road-works')!.dataset!;
    assert.deepEqual(works.tags, [{ name: 'roads' }, { name: 'traffic' }]);
    assert.equal((works.extras as any[]).find((e) => e.key === 'spatial').value, '{"type":"Point","coordinates":[-120.1,38.2]}');
  });

  test('a second version: changed, removed and added datasets (one written the DCAT-US 3 way)', async () => {
    current.gov = 'datajson-catalog.json';
    const first = await readAll('dcat_json', `${base}/catalog/gov`);
    current.gov = 'datajson-catalog-v2.json';
    const second = await readAll('dcat_json', `${base}/catalog/gov`);
    const air = 'https://data.example.gov/id/air-quality';
    assert.notEqual(second.byGuid.get(air)!.content, first.byGuid.get(air)!.content);
    assert.equal(second.byGuid.get(air)!.modified, '2026-11-10');
    assert.deepEqual([...second.guids], [air, 'https://data.example.gov/id/noise']);
    const noise = second.byGuid.get('https://data.example.gov/id/noise')!.dataset!;
    const extras = Object.fromEntries((noise.extras as { key: string; value: string }[]).map((e) => [e.key, e.value]));
    assert.equal(noise.maintainer_email, 'noise@example.gov');
    assert.deepEqual([extras.temporal_start, extras.temporal_end], ['2024-01-01', '2025-12-31']);
    assert.deepEqual(JSON.parse(extras.spatial).coordinates[0][2], [-119, 36]);
    assert.deepEqual(noise.resources, [
      { url: 'https://data.example.gov/noise', access_url: 'https://data.example.gov/noise', mimetype: 'text/html', format: 'HTML' },
    ]);
  });

  test('a DCAT-US 3 document in JSON-LD is read as RDF; malformed JSON fails the job', async () => {
    const { records } = await readAll('dcat_json', `${base}/dcat-catalog.jsonld`);
    assert.equal(records.length, 2);
    await assert.rejects(readAll('dcat_json', `${base}/datajson-malformed.json`), /datajson-malformed\.json is not a JSON document/);
    await assert.rejects(readAll('dcat_json', `${base}/dcat-page1.ttl`), /is not a JSON document/);
  });
});
