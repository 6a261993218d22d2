// Every registered action (taken from the registry, so new ones are covered) gets hostile input:
// each declared parameter with the wrong JSON type, NUL and lone-surrogate strings, a 1 MB string,
// nesting 10,000 deep, numbers that do not fit, negative limits, unknown and path-like ids; as
// POST and GET, anonymous and sysadmin. Each answer must be a clean envelope: no 500, an error
// __type when it fails, no stack trace; and the server must still answer afterwards.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from './helpers/app.ts';
import type { ActionDefinition } from '../src/actions/registry.ts';

let t: TestApp;

before(async () => {
  t = await startApp();
  const org = await t.ok('organization_create', { name: 'hostile-org' }, { token: t.sysadminToken });
  await t.ok('group_create', { name: 'hostile-group' }, { token: t.sysadminToken });
  const pkg = await t.ok('package_create', { name: 'hostile-ds', owner_org: org.id, tags: [{ name: 'tag1' }] }, { token: t.sysadminToken });
  await t.ok('resource_create', { package_id: pkg.id, url: 'http://example.org/a.csv', format: 'CSV' }, { token: t.sysadminToken });
});
after(async () => {
  await t?.close();
});

/** The parameter names an action declares (adapt here when declarations change shape). */
function declaredParamNames(def: ActionDefinition): string[] {
  // (actions not yet declared with params had validator chains in `schema`)
  const legacy = (def as { schema?: Record<string, unknown> }).schema ?? {};
  return [...new Set([...Object.keys(def.params ?? {}), ...Object.keys(legacy)])].filter((k) => k !== '$extras');
}

/** Names many actions read, for actions that declare none (handlers that validate their own input). */
const COMMON = ['id', 'name', 'package_id', 'resource_id', 'q', 'limit', 'groups', 'email', 'format', 'records', 'fields', 'info'];

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** Hostile values as JSON text (so 1e400 and 2^64 reach the server as written). */
const VALUES: string[] = [
  '123',
  'true',
  '[]',
  '{"a":{"b":[1]}}',
  '-1',
  '1e400',
  '18446744073709551616',
  '"a\\u0000b"',
  '"\\ud800x"',
  '"../../etc/passwd"',
  `"${randomUUID()}"`,
  '"hostile-ds"',
  'DEEP',
];
const BIG = `"${'x'.repeat(1 << 20)}"`;

/** A GET query value for a JSON text: strings as themselves, anything else as its text. */
function queryValue(raw: string): string {
  return raw.startsWith('"') ? JSON.parse(raw) : raw;
}

const STACK = /\n\s+at [^\n]+:\d+:\d+/;
/** PostgreSQL's own words: messages say what is wrong in ours, naming the field. */
const DATABASE_TEXT =
  /invalid input syntax for|syntax error at or near|out of range for type|value too long for type|violates [a-z-]+ constraint|index row (requires|size)|bind message has|could not determine data type|invalid byte sequence for encoding|field value out of range|operator does not exist/i;

async function send(action: string, param: string, raw: string, method: 'GET' | 'POST', token?: string) {
  const headers: Record<string, string> = token ? { authorization: token } : {};
  const res =
    method === 'GET'
      ? await t.app.inject({ method, url: `/api/3/action/${action}?${new URLSearchParams({ [param]: queryValue(raw) })}`, headers })
      : await t.app.inject({
          method,
          url: `/api/3/action/${action}`,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: `{${JSON.stringify(param)}:${raw}}`,
        });
  return res;
}

const failures: string[] = [];

/** Records what is wrong with one answer (all are reported at the end). */
function checkEnvelope(what: string, res: { statusCode: number; body: string }) {
  try {
    assertEnvelope(what, res);
  } catch (e) {
    failures.push((e as Error).message.split('\n')[0].slice(0, 240));
  }
}

function assertEnvelope(what: string, res: { statusCode: number; body: string }) {
  assert.notEqual(res.statusCode, 500, `${what}: 500 ${res.body.slice(0, 300)}`);
  assert.ok(res.statusCode < 500, `${what}: ${res.statusCode}`);
  assert.doesNotMatch(res.body, STACK, `${what}: stack trace in the body`);
  assert.doesNotMatch(res.body, DATABASE_TEXT, `${what}: the database's words in the body: ${res.body.slice(0, 200)}`);
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    assert.fail(`${what}: not JSON: ${res.body.slice(0, 200)}`);
  }
  assert.equal(typeof body.success, 'boolean', `${what}: no success flag`);
  if (body.success) assert.equal(res.statusCode, 200, what);
  else assert.equal(typeof body.error?.__type, 'string', `${what}: no error __type: ${res.body.slice(0, 200)}`);
}

/** The rest of the cross product stops after this long (the first pass always runs whole). */
const BUDGET_MS = 30_000;

interface Probe {
  name: string;
  param: string;
  raw: string;
  combo: number;
}

function probeOf(name: string, param: string, pi: number, value: string, vi: number): Probe {
  // Nesting 10,000 deep, as lists and as objects in turn.
  const raw = value === 'DEEP' ? (pi % 2 ? deepObject(10000) : deep(10000)) : value;
  return { name, param, raw, combo: pi + vi };
}

test('every action answers hostile parameter values with a clean envelope', async () => {
  const registry = t.services.registry;
  const names = registry.names();
  assert.ok(names.length > 50, 'the registry lists the actions');
  const identities = [undefined, t.sysadminToken];
  const probe = async (p: Probe) => {
    // Every (method, identity) pair in turn, so each action sees all four without 4x the requests.
    const method = p.combo % 2 === 0 ? 'POST' : 'GET';
    const token = identities[Math.floor(p.combo / 2) % 2];
    const res = await send(p.name, p.param, p.raw, method, token);
    checkEnvelope(`${p.name} ${method} ${token ? 'sysadmin' : 'anonymous'} ${p.param}=${p.raw.slice(0, 40)}`, res);
  };
  const rest: Probe[] = [];
  let sent = 0;
  // First pass, whole: every action gets every hostile value, and every parameter at least one
  // wrong type, plus a 1 MB string, a body nested 10,000 deep and a malformed multipart body.
  for (const name of names) {
    const declared = declaredParamNames(registry.get(name));
    const params = declared.length ? declared : COMMON;
    const first = new Set<string>();
    for (const [vi, value] of VALUES.entries()) {
      const pi = vi % params.length;
      await probe(probeOf(name, params[pi], pi, value, vi));
      first.add(`${pi}:${vi}`);
      sent++;
    }
    for (const [pi, param] of params.entries()) {
      for (const [vi, value] of VALUES.entries()) {
        if (first.has(`${pi}:${vi}`)) continue;
        if (pi >= VALUES.length && vi === (pi * 7) % VALUES.length) await probe(probeOf(name, param, pi, value, vi));
        else rest.push(probeOf(name, param, pi, value, vi));
      }
    }
    checkEnvelope(`${name} 1 MB string`, await send(name, params[0], BIG, 'POST', t.sysadminToken));
    checkEnvelope(
      `${name} deep body`,
      await t.app.inject({
        method: 'POST',
        url: `/api/3/action/${name}`,
        headers: { 'content-type': 'application/json' },
        payload: deep(10000),
      }),
    );
    const boundary = 'xyz';
    checkEnvelope(
      `${name} malformed multipart`,
      await t.app.inject({
        method: 'POST',
        url: `/api/3/action/${name}`,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: `--${boundary}\r\nContent-Disposition: form-data; name="id"\r\n\r\nabc`,
      }),
    );
    sent += 3;
  }
  // Then the rest of (parameter x value) for every action, round-robin over the actions, while time lasts.
  const started = Date.now();
  const byAction = new Map<string, Probe[]>();
  for (const p of rest) (byAction.get(p.name) ?? byAction.set(p.name, []).get(p.name)!).push(p);
  const queues = [...byAction.values()];
  while (queues.some((q) => q.length) && Date.now() - started < BUDGET_MS) {
    for (const q of queues) {
      const p = q.shift();
      if (p) {
        await probe(p);
        sent++;
      }
    }
  }
  if (process.env.HOSTILE_TIMING) console.log(`sent ${sent}, left ${queues.reduce((n, q) => n + q.length, 0)} of ${rest.length}`);
  assert.ok(sent > 1000);
  assert.deepEqual(failures.slice(0, 60), [], `${failures.length} bad answers`);
  // The server still answers.
  const status = await t.call('status_show');
  assert.equal(status.status, 200);
  assert.equal(status.body.success, true);
});

test('a large data store body with a record value nested 10,000 deep is a Validation Error and writes nothing', async () => {
  const pkg = await t.ok('package_show', { id: 'hostile-ds' }, { token: t.sysadminToken });
  const ds = await t.ok(
    'datastore_create',
    {
      resource: { package_id: pkg.id },
      fields: [
        { id: 'a', type: 'json' },
        { id: 'b', type: 'text' },
      ],
    },
    { token: t.sysadminToken },
  );
  // Large enough that the records are read lazily from the body's bytes.
  const filler = Array.from({ length: 3000 }, (_, i) => `{"a": 1, "b": "row ${i}"}`).join(',');
  for (const action of ['datastore_upsert', 'datastore_create']) {
    const body = `{"resource_id": "${ds.resource_id}", "method": "insert", "records": [${filler}, {"a": ${deep(10000)}, "b": "x"}]}`;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/3/action/${action}`,
      headers: { 'content-type': 'application/json', authorization: t.sysadminToken },
      payload: body,
    });
    assert.equal(res.statusCode, 409, `${action}: ${res.body.slice(0, 300)}`);
    assert.equal(res.json().error.__type, 'Validation Error');
    assert.ok(res.json().error.records, res.body.slice(0, 300));
  }
  const found = await t.ok('datastore_search', { resource_id: ds.resource_id, limit: 1 }, { token: t.sysadminToken });
  assert.equal(found.total, 0);
});
