// Hostile and odd HTTP requests: the server stays up, every answer under /api/ is the envelope
// with the right status, oversized and slow clients are refused or cut off.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let port: number;
before(async () => {
  t = await startApp({ plugins: [], config: { 'svc.headers_timeout': 1, 'svc.request_timeout': 2, 'svc.max_resource_size': 1 } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
after(async () => {
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends raw bytes on a new connection; resolves with what came back when the server closes it (or after `wait` ms). */
function rawRequest(
  head: string,
  opts: { body?: (socket: net.Socket) => void; wait?: number } = {},
): Promise<{ text: string; closedAfterMs: number | null }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closedAfterMs: closed ? Date.now() - started : null });
    };
    const timer = setTimeout(() => finish(false), opts.wait ?? 10_000);
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('close', () => finish(true));
    socket.on('error', (e) =>
      (e as NodeJS.ErrnoException).code === 'ECONNRESET' || (e as NodeJS.ErrnoException).code === 'EPIPE' ? undefined : reject(e),
    );
    socket.on('connect', () => {
      socket.write(head);
      opts.body?.(socket);
    });
  });
}

function parseRaw(text: string): { status: number; headers: string; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const headers = text.slice(0, end);
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1]), headers, body: text.slice(end + 4) };
}

async function stillUp(): Promise<void> {
  await sleep(200);
  const r = await t.call('status_show', {}, { method: 'GET' });
  assert.equal(r.status, 200);
  assert.equal(r.body.success, true);
}

function assertEnvelope(r: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, message: RegExp) {
  assert.equal(r.statusCode, status, r.body);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const body = JSON.parse(r.body);
  assert.equal(body.success, false, r.body);
  assert.match(body.help, /\/api\/3\/action\/help_show\?name=/);
  assert.ok(body.error.__type, r.body);
  assert.match(body.error.message, message);
}

describe('no request ends the process', () => {
  test('names from an object prototype are not files: 404, and the server keeps answering', { timeout: 30_000 }, async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const docs = await t.app.inject({ method: 'GET', url: `/api/3/docs/${name}` });
      assert.equal(docs.statusCode, 404, `/api/3/docs/${name}`);
      const asset = await t.app.inject({ method: 'GET', url: `/static/000000000000/${name}` });
      assert.equal(asset.statusCode, 404, `/static/…/${name}`);
    }
    await stillUp();
  });
});

describe('every answer under /api/ is the envelope', () => {
  test('other methods on an action: 405 with Allow: GET, POST', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      for (const url of ['/api/3/action/site_read', '/api/action/no_such_action']) {
        const r = await t.app.inject({ method, url, payload: method === 'OPTIONS' ? undefined : '{}' });
        assertEnvelope(r, 405, /method/i);
        assert.equal(r.headers.allow, 'GET, POST');
      }
    }
  });

  test('HEAD is a GET: a POST-only action is refused, its body ignored', async () => {
    const r = await t.app.inject({
      method: 'HEAD',
      url: '/api/3/action/organization_create',
      headers: { authorization: t.sysadminToken, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'made-by-head' }),
    });
    assert.equal(r.statusCode, 400);
    const list = await t.ok('organization_list', {});
    assert.ok(!list.includes('made-by-head'), 'nothing created');
    assert.equal((await t.app.inject({ method: 'HEAD', url: '/api/3/action/site_read' })).statusCode, 200);
  });

  test('an address under /api/ that is no route: 404 envelope', async () => {
    for (const url of ['/api/nothing', '/api/3/nothing', '/api/2/action/site_read', '/api/3/action/']) {
      assertEnvelope(await t.app.inject({ method: 'GET', url }), 404, /Not found/);
    }
  });

  test('odd action names: bad URL encoding and very long names are 400 envelopes', async () => {
    assertEnvelope(await t.app.inject({ method: 'GET', url: '/api/3/action/%E0%A4%A' }), 400, /address/);
    const long = await t.app.inject({ method: 'GET', url: `/api/3/action/${'a'.repeat(500)}` });
    assertEnvelope(long, 400, /Action name not known/);
    assert.ok(long.body.length < 2000, 'the name is not echoed at length');
  });

  test('an unreadable Content-Type: 415 envelope naming the header', async () => {
    for (const type of ['text', ';', 'a b/c']) {
      const r = await t.app.inject({ method: 'POST', url: '/api/3/action/site_read', headers: { 'content-type': type }, payload: '{}' });
      assertEnvelope(r, 415, /Content-Type/);
    }
  });

  test('a 100 KB query string: 431 envelope', async () => {
    const { text } = await rawRequest(`GET /api/3/action/site_read?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const r = parseRaw(text);
    assert.equal(r.status, 431, text.slice(0, 300));
    assert.match(r.headers, /content-type: application\/json/i);
    const body = JSON.parse(r.body);
    assert.equal(body.success, false);
    assert.match(body.error.message, /header/i);
    await stillUp();
  });

  test('a body declared far over the limit is refused at once with a 413 envelope, before it is read', { timeout: 30_000 }, async () => {
    const boundary = 'xyz';
    for (const type of [`multipart/form-data; boundary=${boundary}`, 'application/json']) {
      let sent = 0;
      const { text, closedAfterMs } = await rawRequest(
        `POST /api/3/action/resource_create HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${2 * 1024 ** 3}\r\n\r\n`,
        {
          // Keep sending (slowly) as a client with a 2 GB body would; the answer must come first.
          body: (socket) => {
            socket.write(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="big.csv"\r\n\r\n`);
            const chunk = Buffer.alloc(64 * 1024, 97);
            const timer = setInterval(() => {
              if (socket.destroyed || sent > 64 * 1024 * 1024) return clearInterval(timer);
              socket.write(chunk, () => undefined);
              sent += chunk.length;
            }, 5);
          },
        },
      );
      const r = parseRaw(text);
      assert.equal(r.status, 413, text.slice(0, 300));
      const body = JSON.parse(r.body);
      assert.equal(body.success, false);
      assert.match(body.error.message, /larger than the limit/);
      assert.ok(closedAfterMs !== null && closedAfterMs < 5000, `connection closed early (${closedAfterMs} ms)`);
      assert.ok(sent < 64 * 1024 * 1024, `refused before the body was read (${sent} bytes sent)`);
    }
    await stillUp();
  });
});

describe('names from an object prototype in parameters', () => {
  test('package_search sorts and filters by __proto__/constructor: a clear answer, never a 500', async () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const sort = await t.call('package_search', { sort: `${name} desc` });
      assert.equal(sort.status, 400, JSON.stringify(sort.body));
      assert.equal(sort.body.error?.__type, 'Search Query Error');
      for (const input of [{ q: `${name}:x` }, { fq: `${name}:x` }]) {
        const r = await t.call('package_search', input);
        assert.ok(r.status < 500, `${JSON.stringify(input)}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    }
    const query = await t.app.inject({ method: 'GET', url: '/api/3/action/package_search?__proto__=x&constructor=y' });
    assert.ok(query.statusCode < 500, query.body);
  });
});

describe('uploads over the limit', () => {
  test('a streamed upload (no declared size) over svc.max_resource_size is refused when it reaches the limit, not read to the end', {
    timeout: 30_000,
  }, async () => {
    const boundary = 'xyz';
    let sent = 0;
    const { text, closedAfterMs } = await rawRequest(
      `POST /api/3/action/resource_create HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      {
        body: (socket) => {
          const chunked = (b: Buffer | string) => {
            const buf = Buffer.from(b);
            socket.write(`${buf.length.toString(16)}\r\n`);
            socket.write(buf);
            socket.write('\r\n', () => undefined);
          };
          chunked(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="big.csv"\r\n\r\n`);
          const chunk = Buffer.alloc(64 * 1024, 97);
          const timer = setInterval(() => {
            if (socket.destroyed || sent > 64 * 1024 * 1024) return clearInterval(timer);
            chunked(chunk);
            sent += chunk.length;
          }, 5);
        },
      },
    );
    const r = parseRaw(text);
    assert.equal(r.status, 409, `[${text.slice(0, 300)}] ${closedAfterMs}`);
    assert.deepEqual(JSON.parse(r.body).error.upload, ['File upload too large: the limit is 1 MB']);
    assert.ok(closedAfterMs !== null && closedAfterMs < 5000, `connection closed early (${closedAfterMs} ms)`);
    assert.ok(sent < 16 * 1024 * 1024, `refused near the limit (${sent} bytes sent)`);
    await stillUp();
  });
});

describe('a client silent in the middle of its body', () => {
  let idle: TestApp;
  let idlePort: number;
  before(async () => {
    idle = await startApp({ plugins: [], config: { 'svc.body_idle_timeout': 1 } });
    await idle.app.listen({ port: 0, host: '127.0.0.1' });
    idlePort = (idle.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await idle?.close();
  });

  test('is cut off after svc.body_idle_timeout (the whole request may take longer)', { timeout: 30_000 }, async () => {
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const socket = net.connect(idlePort, '127.0.0.1', () => {
        socket.write('POST /api/3/action/site_read HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Date.now() - started));
      setTimeout(() => socket.destroy(), 10_000);
    });
    assert.ok(closedAfter < 5000, `closed after ${closedAfter} ms`);
    // A request whose body arrives keeps its connection for the next request.
    const r = await fetch(`http://127.0.0.1:${idlePort}/api/3/action/site_read`, { method: 'POST', body: '{}' });
    assert.equal((await r.json()).success, true);
  });
});

describe('slow clients are cut off', () => {
  test('a connection that sends its headers slowly is closed (svc.headers_timeout)', { timeout: 30_000 }, async () => {
    const { closedAfterMs } = await rawRequest('GET /api/3/action/site_read HTTP/1.1\r\nHost: x\r\n', {
      body: (socket) => {
        const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write('X-Slow: 1\r\n')), 200);
      },
      wait: 8000,
    });
    assert.ok(closedAfterMs !== null && closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
  });

  test('a connection that sends its body slowly is closed (svc.request_timeout)', { timeout: 30_000 }, async () => {
    const { closedAfterMs } = await rawRequest(
      'POST /api/3/action/site_read HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
      {
        body: (socket) => {
          const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(' ')), 200);
        },
        wait: 8000,
      },
    );
    assert.ok(closedAfterMs !== null && closedAfterMs < 6000, `closed after ${closedAfterMs} ms`);
    await stillUp();
  });
});
