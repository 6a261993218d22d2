// npm run sweep [-- --postgres URL] [--seconds N] [--max-requests N] [--concurrency N]
// The hostile-input sweep (docs/hostile-sweep.md): starts svc on a temporary storage folder and a
// free loopback port (PGlite, or a throw-away database on the PostgreSQL server of URL), seeds a
// sysadmin, a user, an organization, a public and a private dataset with a data store table, then
// sends hostile values for every parameter of every action of /api/3/openapi.json as anonymous,
// user and sysadmin, odd HTTP to /api/, and hostile query strings to the web pages, while it
// samples status_show's latency. Prints counts and the first examples of each kind of failure;
// exits 1 when there was any 5xx, non-envelope answer under /api/, crash or timeout.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values: args } = parseArgs({
  options: {
    postgres: { type: 'string' },
    seconds: { type: 'string', default: '240' },
    'max-requests': { type: 'string', default: '40000' },
    concurrency: { type: 'string', default: '2' },
    'timeout-ms': { type: 'string', default: '30000' },
    keep: { type: 'boolean', default: false },
  },
});
const budgetMs = Number(args.seconds) * 1000;
const maxRequests = Number(args['max-requests']);
const concurrency = Number(args.concurrency);
const requestTimeoutMs = Number(args['timeout-ms']);
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const run = promisify(execFile);

// ---- the server ----------------------------------------------------------------------------
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sweep-'));
fs.writeFileSync(path.join(storage, 'svc.ini'), '[app:main]\n');
let database: { url: string; drop: () => Promise<void> } | undefined;
if (args.postgres) database = await freshDatabase(args.postgres);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SVC_INI: path.join(storage, 'svc.ini'),
  SVC__STORAGE_PATH: storage,
  SVC__HOST: '127.0.0.1',
  SVC__PORT: String(port),
  SVC__LOG_LEVEL: 'error',
  SVC__DATASTORE__SQLSEARCH__ENABLED: 'true',
  ...(database ? { SVC__DATABASE_URL: database.url } : {}),
};
let server: ChildProcess | undefined;
let serverLog = '';
const serverErrors = new Map<string, string>();
const crashes: string[] = [];
let stopping = false;
let listening = false;
let ready: Promise<void> = Promise.resolve();

async function startServer(): Promise<void> {
  listening = false;
  const child = spawn(process.execPath, [path.join(repo, 'bin/svc.js'), 'serve'], { env, cwd: storage, stdio: ['ignore', 'pipe', 'pipe'] });
  server = child;
  let partial = ''; // a log line continued in the next chunk (only its start is kept)
  const keep = (b: Buffer) => {
    const text = b.toString();
    serverLog = (serverLog + text).slice(-20_000);
    // The server logs at level error: what went wrong behind each 5xx, first message of each kind.
    const lines = text.split('\n');
    lines[0] = partial + lines[0];
    partial = lines.pop()!.slice(0, 4000);
    for (const line of lines) {
      const m = /"message":"([^"]{0,240})|"msg":"([^"]{0,240})/.exec(line.slice(0, 4000));
      const what = m?.[1] ?? m?.[2];
      if (what && serverErrors.size < 30 && !serverErrors.has(what)) serverErrors.set(what, line.slice(0, 400));
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    if (!listening) return;
    crashes.push(
      `server exited (code ${code}, signal ${signal}) while in flight: ${[...inFlight].slice(0, 5).join(' | ')}\n    log tail: ${serverLog.slice(-600).replace(/\n/g, '\n    ')}`,
    );
    // The sweep waits for the server to be back; a server that cannot start again ends the sweep.
    ready = crashes.length < 5 ? startServer() : Promise.reject(new Error('the server crashed 5 times'));
    ready.catch(() => undefined);
  });
  for (let i = 0; i < 600; i++) {
    try {
      const r = await fetch(`${base}/api/3/action/status_show`);
      if (r.ok) {
        listening = true;
        return;
      }
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`svc did not start:\n${serverLog}`);
}

async function cli(...argv: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(repo, 'bin/svc.js'), ...argv], { env, cwd: storage });
  return stdout.trim();
}

// ---- requests and their classification -------------------------------------------------------
type Who = 'anonymous' | 'user' | 'sysadmin';
const tokens: Record<Who, string | undefined> = { anonymous: undefined, user: undefined, sysadmin: undefined };
interface Case {
  label: string;
  method: string;
  url: string;
  who: Who;
  body?: string | Buffer;
  contentType?: string;
}
const counts = { requests: 0, fivexx: 0, nonEnvelope: 0, timeouts: 0, networkErrors: 0 };
const examples: Record<'fivexx' | 'nonEnvelope' | 'timeouts' | 'networkErrors', string[]> = {
  fivexx: [],
  nonEnvelope: [],
  timeouts: [],
  networkErrors: [],
};
const byStatus = new Map<number, number>();
const inFlight = new Set<string>();

/** The slowest answers of the run (time, status and request). */
const slowest: { ms: number; what: string }[] = [];
function noteSlow(ms: number, what: string): void {
  if (slowest.length >= 10 && ms <= slowest[slowest.length - 1].ms) return;
  slowest.push({ ms, what });
  slowest.sort((a, b) => b.ms - a.ms);
  slowest.length = Math.min(slowest.length, 10);
}

function note(kind: keyof typeof examples, text: string): void {
  counts[kind]++;
  if (examples[kind].length < 15) examples[kind].push(text);
}

function isEnvelope(text: string): boolean {
  try {
    const j = JSON.parse(text);
    return !!j && typeof j === 'object' && typeof j.success === 'boolean' && typeof j.help === 'string' && ('result' in j || 'error' in j);
  } catch {
    return false;
  }
}

async function send(c: Case): Promise<void> {
  const headers: Record<string, string> = {};
  if (tokens[c.who]) headers.Authorization = tokens[c.who]!;
  if (c.body !== undefined) headers['Content-Type'] = c.contentType ?? 'application/json';
  const label = `${c.who} ${c.method} ${c.label}`;
  inFlight.add(label);
  counts.requests++;
  const t0 = performance.now();
  try {
    const r = await fetch(c.url, {
      method: c.method,
      headers,
      body: c.body as BodyInit | undefined,
      signal: AbortSignal.timeout(requestTimeoutMs),
      redirect: 'manual',
    });
    const text = await r.text();
    noteSlow(performance.now() - t0, `${r.status} ${label}`);
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    if (r.status >= 500) note('fivexx', `${r.status} ${label}: ${text.slice(0, 200)}`);
    const p = new URL(c.url).pathname;
    // The API's own documents, and CKAN's version answers at /api and /api/3.
    const exempt = r.ok && c.method === 'GET' && /^\/api(\/3)?\/?$|^\/api\/3\/(docs|openapi\.json)/.test(p);
    if (p.startsWith('/api/') && !exempt && !isEnvelope(text)) note('nonEnvelope', `${r.status} ${label}: ${text.slice(0, 160)}`);
  } catch (e) {
    const err = e as Error;
    if (err.name === 'TimeoutError') note('timeouts', `no answer in ${requestTimeoutMs} ms: ${label}`);
    else note('networkErrors', `${label}: ${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`);
  } finally {
    inFlight.delete(label);
  }
}

async function call(who: Who, action: string, body: unknown): Promise<any> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (tokens[who]) headers.Authorization = tokens[who]!;
  const r = await fetch(`${base}/api/3/action/${action}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const j = (await r.json()) as { success: boolean; result: any; error: unknown };
  if (!j.success) throw new Error(`seeding: ${action} failed: ${JSON.stringify(j.error).slice(0, 300)}`);
  return j.result;
}

// ---- hostile values --------------------------------------------------------------------------
function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}
const oneMB = 'x'.repeat(1_000_000);
/** Each value is JSON text, so that keys like __proto__ and numbers JSON cannot round-trip stay as sent. */
const hostile: [string, string][] = [
  ['number', '12345'],
  ['negative', '-1'],
  ['int overflow', '2147483648'],
  ['huge number', '1e308'],
  ['beyond double', '1e400'],
  ['unsafe integer', '9007199254740993'],
  ['fraction', '0.5'],
  ['true', 'true'],
  ['null', 'null'],
  ['empty object', '{}'],
  ['object', '{"a":{"b":[1,"x",null]}}'],
  ['empty list', '[]'],
  ['list of objects', '[{"x":1},{"__proto__":{"polluted":true}}]'],
  ['proto object', '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}'],
  ['string __proto__', '"__proto__"'],
  ['string constructor', '"constructor"'],
  ['string toString', '"toString"'],
  ['empty string', '""'],
  ['spaces', '"   "'],
  ['NUL', '"a\\u0000b"'],
  ['lone surrogate', '"\\ud800x"'],
  ['unicode', '"Ωmega ≈ ç √ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🚀 \\u202e rtl \\u0301"'],
  ['control chars', '"\\u0001\\u001b[31m\\r\\n\\t"'],
  ['sql quote', `"' OR '1'='1' --"`],
  ['sql drop', '"x\\"; DROP TABLE package; --"'],
  ['sql sleep', `"1); SELECT pg_sleep(5); --"`],
  ['sql comment', '"/* */ UNION SELECT * FROM users --"'],
  ['solr', '"*:* OR name:[* TO *] AND title:\\"x\\"~2 (((("'],
  ['wildcards', JSON.stringify('"a* " '.repeat(300))],
  ['phrases', JSON.stringify('"alpha beta" '.repeat(300))],
  ['date junk', '"9999-99-99T99:99:99"'],
  ['negative string', '"-1"'],
  ['NaN', '"NaN"'],
  ['infinity string', '"Infinity"'],
  ['path', '"../../../../etc/passwd"'],
  ['url', '"http://127.0.0.1:1/x"'],
  ['html', '"<script>alert(1)</script>"'],
  ['format string', '"%s%s%s%n$' + '{x}{{7*7}}"'],
  ['deep list', nested(500)],
  ['deep object', '{"a":'.repeat(300) + '1' + '}'.repeat(300)],
  ['1 MB string', JSON.stringify(oneMB)],
  ['100,000 strings', JSON.stringify(Array.from({ length: 100_000 }, (_, i) => `v${i % 7}`))],
  ['100,000 numbers', JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i))],
  ['100,000 objects', `[${Array(100_000).fill('{"id":"x"}').join(',')}]`],
];
const inQuery = hostile.filter(([k]) =>
  /^(negative|int overflow|beyond double|string __proto__|NUL|lone surrogate|sql quote|solr|wildcards|date junk|object)$/.test(k),
);
const forUndeclared = hostile.filter(([k]) => /^(proto object|string constructor|NUL|1 MB string|100,000 strings|deep object)$/.test(k));

// ---- seeding ---------------------------------------------------------------------------------
interface Seed {
  org: { id: string; name: string };
  publicDataset: { id: string; name: string };
  privateDataset: { id: string; name: string };
  resource: { id: string };
  privateResource: { id: string };
}

async function seed(): Promise<Seed> {
  await cli('sysadmin', 'add', 'sweepadmin', '--email', 'admin@example.org');
  await cli('user', 'add', 'sweepuser', '--email', 'user@example.org');
  tokens.sysadmin = (await cli('user', 'token', 'add', 'sweepadmin', 'sweep')).split('\n').pop();
  tokens.user = (await cli('user', 'token', 'add', 'sweepuser', 'sweep')).split('\n').pop();
  const org = await call('sysadmin', 'organization_create', { name: 'sweep-org', title: 'Sweep org' });
  const ds = (name: string, priv: boolean) =>
    call('sysadmin', 'package_create', {
      name,
      title: name,
      owner_org: org.id,
      private: priv,
      tags: [{ name: 'sweep' }],
      notes: 'water quality',
    });
  const publicDataset = await ds('sweep-public', false);
  const privateDataset = await ds('sweep-private', true);
  const table = async (packageId: string) => {
    const r = await call('sysadmin', 'datastore_create', {
      resource: { package_id: packageId, name: 'table', format: 'CSV' },
      fields: [
        { id: 'city', type: 'text' },
        { id: 'n', type: 'int' },
      ],
      records: Array.from({ length: 50 }, (_, i) => ({ city: `city ${i}`, n: i })),
      primary_key: ['city'],
    });
    return { id: r.resource_id as string };
  };
  return { org, publicDataset, privateDataset, resource: await table(publicDataset.id), privateResource: await table(privateDataset.id) };
}

/** Valid values for parameters that name the seeded things, so a hostile value in another parameter gets past "not found". */
function plausible(action: string, param: string, s: Seed): unknown {
  const entity = action.startsWith('resource_view') ? 'view' : action.split('_')[0];
  if (/_(delete|purge|revoke|clear|remove)$|^(bulk_|user_invite)/.test(action)) return undefined;
  const create = action.endsWith('_create');
  switch (param) {
    case 'id':
      if (create) return undefined;
      return entity === 'package'
        ? s.publicDataset.id
        : entity === 'resource' || entity === 'datastore'
          ? s.resource.id
          : entity === 'organization' || entity === 'group'
            ? s.org.id
            : entity === 'user'
              ? 'sweepuser'
              : undefined;
    case 'name':
      return create ? `sweep-${Math.random().toString(36).slice(2, 10)}` : undefined;
    case 'package_id':
      return s.publicDataset.id;
    case 'resource_id':
      return s.resource.id;
    case 'owner_org':
      return s.org.id;
    case 'url':
      return 'http://example.com/data.csv';
    default:
      return undefined;
  }
}

// ---- the cases -------------------------------------------------------------------------------
/** One generator per action of the document (cases made as they are sent: some bodies are megabytes). */
function actionCases(doc: any, s: Seed): Generator<Case>[] {
  return Object.entries<any>(doc.paths)
    .filter(([p]) => p.startsWith('/api/3/action/'))
    .map(([p, item], i) => casesOfAction(p, item, s, i));
}

function* casesOfAction(p: string, item: any, s: Seed, first: number): Generator<Case> {
  const whos: Who[] = ['anonymous', 'user', 'sysadmin'];
  let turn = first;
  {
    const action = p.slice('/api/3/action/'.length);
    const schema = item.post?.requestBody?.content?.['application/json']?.schema ?? {};
    const params = Object.keys(schema.properties ?? {});
    const baseBody: Record<string, unknown> = {};
    for (const q of params) {
      const v = plausible(action, q, s);
      if (v !== undefined) baseBody[q] = v;
    }
    const url = `${base}${p}`;
    for (const who of whos) yield { label: `${action} {}`, method: 'POST', url, who, body: '{}' };
    for (const [kind, raw] of [
      ['array body', '[]'],
      ['string body', '"x"'],
      ['null body', 'null'],
      ['proto body', '{"__proto__":{"x":1}}'],
      ['truncated', '{"id":'],
    ]) {
      yield { label: `${action} ${kind}`, method: 'POST', url, who: whos[turn++ % 3], body: raw };
    }
    for (const q of [...params, '__proto__', 'constructor']) {
      for (const [kind, raw] of params.includes(q) ? hostile : forUndeclared) {
        const rest = { ...baseBody };
        delete rest[q];
        const restText = JSON.stringify(rest).slice(1, -1);
        const body = `{${restText}${restText ? ',' : ''}${JSON.stringify(q)}:${raw}}`;
        yield { label: `${action} ${q}=<${kind}>`, method: 'POST', url, who: whos[turn++ % 3], body };
      }
      if (item.get && params.includes(q)) {
        for (const [kind, raw] of inQuery) {
          const value = (() => {
            const v = JSON.parse(raw);
            return typeof v === 'string' ? v : raw;
          })();
          yield {
            label: `GET ${action}?${q}=<${kind}>`,
            method: 'GET',
            url: `${url}?${new URLSearchParams({ [q]: value })}`,
            who: whos[turn++ % 3],
          };
        }
      }
    }
  }
}

function* oddHttpCases(): Generator<Case> {
  const a = `${base}/api/3/action`;
  for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    yield {
      label: `${method} package_show`,
      method,
      url: `${a}/package_show`,
      who: 'anonymous',
      body: method === 'OPTIONS' ? undefined : '{}',
    };
  }
  for (const ct of [
    'application/x-weird',
    'text/plain',
    ';;;',
    'application/json; charset=ebcdic',
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'application/x-www-form-urlencoded',
  ]) {
    yield { label: `content-type ${ct}`, method: 'POST', url: `${a}/package_search`, who: 'user', body: '{"q":"x"}', contentType: ct };
  }
  yield { label: 'invalid JSON', method: 'POST', url: `${a}/package_show`, who: 'anonymous', body: '{"id": nope' };
  yield {
    label: 'latin-1 bytes',
    method: 'POST',
    url: `${a}/package_show`,
    who: 'anonymous',
    body: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]),
  };
  yield {
    label: '2 MB body',
    method: 'POST',
    url: `${a}/package_search`,
    who: 'anonymous',
    body: JSON.stringify({ q: 'x'.repeat(2_000_000) }),
  };
  yield { label: '100 KB query string', method: 'GET', url: `${a}/package_search?q=${'x'.repeat(100_000)}`, who: 'anonymous' };
  yield { label: '20 KB query string', method: 'GET', url: `${a}/package_search?q=${'y'.repeat(20_000)}`, who: 'anonymous' };
  const oddNames = [
    'constructor',
    '__proto__',
    'toString',
    'hasOwnProperty',
    '%00',
    '..%2f..%2fetc',
    '%E0%A4%A',
    'a'.repeat(10_000),
    'package_show%20',
    'PACKAGE_SHOW',
    '',
    '%2e%2e',
    'package_show;x=1',
  ];
  for (const n of oddNames) {
    yield { label: `action name ${n.slice(0, 30)}`, method: 'POST', url: `${a}/${n}`, who: 'anonymous', body: '{}' };
    yield { label: `GET action name ${n.slice(0, 30)}`, method: 'GET', url: `${a}/${n}`, who: 'anonymous' };
  }
  for (const p of [
    '/api/3/docs/constructor',
    '/api/3/docs/__proto__',
    '/api/3/docs/toString',
    '/api/3/docs/hasOwnProperty',
    '/api/3/docs/..%2f..%2fpackage.json',
    '/api/3/nope',
    '/api/2/action/package_show',
    '/api/action/package_show',
    '/api/3/action/',
  ]) {
    yield { label: p, method: 'GET', url: `${base}${p}`, who: 'anonymous' };
  }
}

function* pageCases(s: Seed): Generator<Case> {
  const ds = `/dataset/${s.publicDataset.name}`;
  const pages = [
    '/',
    '/dataset',
    ds,
    `${ds}/resource/${s.resource.id}`,
    `/dataset/${s.privateDataset.name}`,
    `/dataset/activity/${s.publicDataset.name}`,
    `/dataset/followers/${s.publicDataset.name}`,
    `/dataset/groups/${s.publicDataset.name}`,
    '/organization',
    `/organization/${s.org.name}`,
    '/group',
    '/user',
    '/user/sweepuser',
    '/user/login',
    '/user/register',
    '/user/reset',
    '/about',
    '/dashboard',
    '/ckan-admin',
    '/api/3/docs',
    `/datastore/dump/${s.resource.id}`,
    `/datastore/dump/${s.privateResource.id}`,
    '/dataset/new',
    `/dataset/edit/${s.publicDataset.name}`,
  ];
  const queries: [string, string][] = [
    ['q junk', `q=${encodeURIComponent("' OR 1=1 --\u0000")}`],
    ['sort junk', 'sort=__proto__%20desc&page=-1'],
    ['huge page', 'page=99999999999999999999&limit=-5'],
    ['1500 tags', Array.from({ length: 1500 }, (_, i) => `tags=t${i}`).join('&')],
    ['proto keys', '__proto__=1&constructor=2&toString=3&q[]=x&q[a]=y'],
    ['bad percent', 'q=%E0%A4%A&sort=%ZZ'],
    ['phrases', `q=${encodeURIComponent('"a b" '.repeat(300))}`],
    ['filters', 'filter.city=%00&offset=-1&limit=1e9&format=../../x&bom=maybe&fields=__proto__'],
    ['30 KB q', `q=${'z'.repeat(30_000)}`],
  ];
  const whos: Who[] = ['anonymous', 'user', 'sysadmin'];
  let turn = 0;
  for (const page of pages)
    for (const [kind, q] of queries) yield { label: `${page}?<${kind}>`, method: 'GET', url: `${base}${page}?${q}`, who: whos[turn++ % 3] };
}

// ---- status_show latency while the sweep runs ------------------------------------------------
// In a process of its own, so that the sweep's own work (megabyte bodies) never delays a sample.
const SAMPLER = `
const [base, timeout] = process.argv.slice(1);
for (;;) {
  const t0 = performance.now();
  try { await (await fetch(base + '/api/3/action/status_show', { signal: AbortSignal.timeout(Number(timeout)) })).text(); } catch {}
  process.stdout.write((performance.now() - t0).toFixed(2) + '\\n');
  await new Promise((r) => setTimeout(r, 100));
}`;
const latencies: number[] = [];
function sampleStatus(): () => Promise<void> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SAMPLER, base, String(requestTimeoutMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let rest = '';
  child.stdout.on('data', (b: Buffer) => {
    const lines = (rest + b.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) if (l) latencies.push(Number(l));
  });
  return async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
}
function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : Number.NaN;
}

// ---- helpers ---------------------------------------------------------------------------------
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
async function freshDatabase(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `svc_sweep_${process.pid}_${Date.now()}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
/** How many cases were not sent (time or request limit), counting the rest of the queue. */
function casesLeft(queue: Generator<Case>): string {
  let left = 0;
  for (let r = queue.next(); !r.done; r = queue.next()) left++;
  return left ? `${left} cases not sent (time or request limit)` : 'every case sent';
}
function interleave<T>(...gens: Generator<T>[]): Generator<T> {
  return (function* () {
    let live = gens;
    while (live.length) {
      const next: Generator<T>[] = [];
      for (const g of live) {
        const r = g.next();
        if (!r.done) {
          yield r.value;
          next.push(g);
        }
      }
      live = next;
    }
  })();
}

// ---- main ------------------------------------------------------------------------------------
const started = Date.now();
let exitCode = 0;
try {
  await startServer();
  const s = await seed();
  const doc = (await (await fetch(`${base}/api/3/openapi.json`)).json()) as any;
  const actions = Object.keys(doc.paths).filter((p) => p.startsWith('/api/3/action/')).length;
  console.log(`svc on ${base} (${database ? 'PostgreSQL' : 'PGlite'}), storage ${storage}; ${actions} actions in the OpenAPI document`);
  // Odd HTTP and pages first (few), then the actions; each action's cases interleaved with the others' so a
  // time limit still reaches every action.
  const queue = interleave(oddHttpCases(), pageCases(s), ...actionCases(doc, s));
  const deadline = started + budgetMs;
  const stopSampler = sampleStatus();
  const worker = async () => {
    for (;;) {
      if (Date.now() > deadline || counts.requests >= maxRequests) return;
      const r = queue.next();
      if (r.done) return;
      try {
        await ready;
      } catch {
        return;
      }
      await send(r.value);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await stopSampler();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\n${new Date().toISOString()} hostile sweep, ${database ? 'PostgreSQL' : 'PGlite'}: ${seconds} s, ${casesLeft(queue)}`);
  console.log(`requests: ${counts.requests}`);
  console.log(`5xx: ${counts.fivexx}`);
  console.log(`non-envelope answers under /api/: ${counts.nonEnvelope}`);
  console.log(`crashes (server process gone): ${crashes.length}`);
  console.log(`no answer within ${requestTimeoutMs} ms: ${counts.timeouts}`);
  console.log(`connection errors: ${counts.networkErrors}`);
  console.log(
    `status_show: ${latencies.length} samples, p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p95 ${percentile(latencies, 0.95).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
  );
  console.log(
    `statuses: ${[...byStatus]
      .sort((a, b) => a[0] - b[0])
      .map(([k, v]) => `${k}×${v}`)
      .join(' ')}`,
  );
  const show = (title: string, xs: string[]) => {
    if (!xs.length) return;
    console.log(`\nfirst ${title}:`);
    for (const x of xs) console.log(`  - ${x}`);
  };
  show('5xx', examples.fivexx);
  show('non-envelope answers', examples.nonEnvelope);
  show('crashes', crashes);
  show('timeouts', examples.timeouts);
  show('connection errors', examples.networkErrors);
  show('errors in the server log', [...serverErrors.values()]);
  show(
    'slowest answers',
    slowest.map((x) => `${(x.ms / 1000).toFixed(1)} s: ${x.what}`),
  );
  if (counts.fivexx || counts.nonEnvelope || crashes.length || counts.timeouts || percentile(latencies, 0.95) >= 50) exitCode = 1;
} catch (e) {
  console.error(e);
  exitCode = 2;
} finally {
  stopping = true;
  server?.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1500));
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (database) await database.drop().catch((e) => console.error(`dropping the sweep database: ${e}`));
  if (!args.keep) fs.rmSync(storage, { recursive: true, force: true });
}
process.exit(exitCode);
