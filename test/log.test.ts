// Server logs: one line per request for people (pretty), JSON lines for machines, no secrets.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';
import { createLogger, prettyLine, type LogTarget } from '../src/log.ts';

let t: TestApp;
let user: { id: string; name: string; token: string };
before(async () => {
  t = await startApp({ plugins: [] });
  user = await t.user('logan');
  t.services.config.set('svc.log_level', 'info');
});
after(async () => {
  await t?.close();
});

/** Points the app's logger at a capture buffer with the given format. */
function capture(format: string, isTTY: boolean): string[] {
  const lines: string[] = [];
  const target: LogTarget = {
    isTTY,
    write: (text: string) => {
      lines.push(...text.split('\n').filter(Boolean));
    },
  };
  t.services.config.set('svc.log.format', format);
  t.services.logger = createLogger(t.services.config, target);
  return lines;
}

const PRETTY_REQUEST = /^\d\d:\d\d:\d\d\.\d{3} INFO {2}(GET|POST) (\S+) (\d{3}) (\d+) ms( user=\S+)?$/;

test('pretty: one line per request with method, action or path, status and milliseconds', async () => {
  const lines = capture('pretty', false);
  await t.call('site_read', {}, { method: 'GET' });
  await t.call('package_show', { id: 'nope' }, { token: user.token });
  await t.app.inject({ method: 'GET', url: '/no/such/page?api_key=secret-value' });
  assert.equal(lines.length, 3, lines.join('\n'));
  const parsed = lines.map((l) => l.match(PRETTY_REQUEST));
  assert.ok(parsed.every(Boolean), lines.join('\n'));
  assert.deepEqual(
    parsed.map((m) => [m![1], m![2], m![3]]),
    [
      ['GET', 'site_read', '200'],
      ['POST', 'package_show', '404'],
      ['GET', '/no/such/page', '404'],
    ],
  );
  assert.equal(parsed[1]![5], ` user=${user.id}`);
  const all = lines.join('\n');
  assert.ok(!all.includes(user.token) && !all.includes('secret-value'), 'no credentials in the log');
  assert.ok(!all.includes('\x1b['), 'no colours when the target is not a terminal');
});

test('json: a JSON object per line with the same facts', async () => {
  const lines = capture('json', true);
  await t.call('site_read', {}, { token: user.token });
  assert.equal(lines.length, 1);
  const o = JSON.parse(lines[0]);
  assert.equal(o.msg, 'request');
  assert.equal(o.method, 'POST');
  assert.equal(o.action, 'site_read');
  assert.equal(o.status, 200);
  assert.equal(typeof o.ms, 'number');
  assert.ok(!lines[0].includes(user.token));
});

test('auto: pretty on a terminal (coloured), JSON otherwise', async () => {
  let lines = capture('auto', true);
  await t.call('site_read', {});
  assert.match(lines[0], /site_read/);
  assert.ok(lines[0].includes('\x1b['), 'coloured on a terminal');
  assert.throws(() => JSON.parse(lines[0]));
  lines = capture('auto', false);
  await t.call('site_read', {});
  assert.equal(JSON.parse(lines[0]).action, 'site_read');
});

test('secrets are redacted; other events keep their fields; control characters are escaped', () => {
  const lines = capture('pretty', false);
  t.services.logger.warn({ password: 'hunter2', token: 'tok', user: 'amy' }, 'something odd');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /WARN {2}something odd /);
  assert.match(lines[0], /password=\[redacted\]/);
  assert.match(lines[0], /token=\[redacted\]/);
  assert.match(lines[0], /user=amy/);
  assert.ok(!lines[0].includes('hunter2'));
  const fake = prettyLine(JSON.stringify({ level: 30, time: 0, msg: 'request', method: 'GET', url: '/a\n\x1b[31mb', status: 404, ms: 1 }));
  assert.ok(!fake.includes('\n') && !fake.includes('\x1b'), fake);
  t.services.config.set('svc.log.format', 'auto');
});

test('svc.log.format accepts pretty, json and auto only', async () => {
  const r = await t.call('config_option_show', { key: 'svc.log.format' }, { token: t.sysadminToken });
  // not editable at run time: refused like any such option, never a 500
  assert.notEqual(r.status, 500);
  const { loadConfig } = await import('../src/config/load.ts');
  assert.throws(
    () => loadConfig({ env: {}, overrides: { 'svc.log.format': 'fancy' } }),
    /svc\.log\.format.*must be one of pretty, json, auto/,
  );
});
