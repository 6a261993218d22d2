// The loader's download of links: only http(s), addresses checked at connect time after DNS and on
// every redirect, size and time limits, errors that say what happened.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchToFile, isPrivateAddress, type FetchOptions } from '../src/loader/fetch.ts';

let server: http.Server;
let port: number;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fetch-'));
const dest = () => path.join(tmp, `f-${Math.random()}`);
const base = (host = '127.0.0.1') => `http://${host}:${port}`;

before(async () => {
  server = http.createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    if (u.pathname === '/ok.csv') {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end('a,b\n1,2\n');
      return;
    }
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: u.searchParams.get('to')! });
      res.end();
      return;
    }
    if (u.pathname === '/big') {
      res.writeHead(200, { 'content-length': '5000' });
      res.end('x'.repeat(5000));
      return;
    }
    if (u.pathname === '/big-chunked') {
      res.writeHead(200);
      res.write('x'.repeat(3000));
      res.end('y'.repeat(3000));
      return;
    }
    if (u.pathname === '/slow') {
      res.writeHead(200);
      res.write('a');
      return;
    } // never ends
    res.writeHead(404, 'Not Found');
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
  port = (server.address() as AddressInfo).port;
});
after(() => {
  server.closeAllConnections();
  server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const open: FetchOptions = { maxBytes: 4096, timeoutMs: 3000, allowPrivate: true };
const closed: FetchOptions = { ...open, allowPrivate: false };
const refused = /refused to connect/;

describe('fetching links', () => {
  test('private, loopback, link-local, multicast and reserved ranges', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      'ff02::1',
    ]) {
      assert.equal(isPrivateAddress(a), true, a);
    }
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700::1111']) assert.equal(isPrivateAddress(a), false, a);
  });

  test('allowed: downloads with its md5 and content type', async () => {
    const file = dest();
    const r = await fetchToFile(`${base()}/ok.csv`, file, open);
    assert.equal(fs.readFileSync(file, 'utf8'), 'a,b\n1,2\n');
    assert.equal(r.bytes, 8);
    assert.equal(r.contentType, 'text/csv');
    assert.match(r.sha256, /^[0-9a-f]{64}$/);
    const via = await fetchToFile(`${base()}/redirect?to=/ok.csv`, dest(), open);
    assert.equal(via.finalUrl, `${base()}/ok.csv`);
  });

  test('refused when private addresses are not allowed: literal, localhost, a name resolving to 127.0.0.1, metadata', async () => {
    await assert.rejects(() => fetchToFile(`${base()}/ok.csv`, dest(), closed), refused);
    await assert.rejects(() => fetchToFile(`${base('localhost')}/ok.csv`, dest(), closed), refused);
    await assert.rejects(() => fetchToFile(`http://[::1]:${port}/ok.csv`, dest(), closed), refused);
    await assert.rejects(() => fetchToFile('http://169.254.169.254/latest/meta-data/', dest(), closed), refused);
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    await assert.rejects(
      () => fetchToFile(`${base('internal.example')}/ok.csv`, dest(), { ...closed, resolve }),
      /refused to connect to internal\.example \(127\.0\.0\.1\)/,
    );
  });

  test('a redirect to a private address (literal or by DNS) is refused at its connect', async () => {
    // Only 127.0.0.1 counts as public here, so the first hop is allowed and the redirect is not.
    const isBlocked = (a: string) => a !== '127.0.0.1';
    const resolve = async (h: string) => [{ address: h === 'public.example' ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const opts = { ...closed, isBlocked, resolve };
    assert.equal((await fetchToFile(`${base('public.example')}/ok.csv`, dest(), opts)).bytes, 8);
    await assert.rejects(
      () => fetchToFile(`${base('public.example')}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${port}/ok.csv`)}`, dest(), opts),
      refused,
    );
    await assert.rejects(
      () => fetchToFile(`${base('public.example')}/redirect?to=${encodeURIComponent(`http://evil.example:${port}/ok.csv`)}`, dest(), opts),
      /refused to connect to evil\.example \(127\.0\.0\.2\)/,
    );
  });

  test('only http and https; bad URLs; HTTP errors; size and time limits', async () => {
    await assert.rejects(() => fetchToFile('ftp://example.org/x.csv', dest(), open), /only http and https/);
    await assert.rejects(() => fetchToFile('file:///etc/passwd', dest(), open), /only http and https/);
    await assert.rejects(() => fetchToFile('not a url', dest(), open), /not a valid URL/);
    await assert.rejects(() => fetchToFile(`${base()}/missing`, dest(), open), /HTTP 404 Not Found/);
    await assert.rejects(() => fetchToFile(`${base()}/big`, dest(), open), /5000 bytes, more than the limit of 4096 bytes/);
    await assert.rejects(() => fetchToFile(`${base()}/big-chunked`, dest(), open), /larger than the limit of 4096 bytes/);
    await assert.rejects(() => fetchToFile(`${base()}/slow`, dest(), { ...open, timeoutMs: 300 }), /timed out/);
    await assert.rejects(
      () => fetchToFile(`${base()}/redirect?to=/redirect%3Fto%3D%2Fok.csv`, dest(), { ...open, maxRedirects: 1 }),
      /too many redirects/,
    );
  });
});
