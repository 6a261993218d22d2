// README's quick start, run as a newcomer would: the fenced blocks marked `<!-- quickstart:... -->`
// are taken from README.md and run with bash against a real `npm start` subprocess.
// What differs from a person at a terminal, and why:
// - `npm install` is left out of the start block: the clone running the test is installed already.
// - Port 5000 may be taken by parallel test runs: the server gets a free port (SVC__PORT) and every
//   `localhost:5000` in the blocks is replaced by it.
// - The data lives in a temporary folder (SVC__STORAGE_PATH); on the PostgreSQL pass the catalog is
//   a throw-away database (SVC__DATABASE_URL). The blocks run in another temporary folder (the CSV
//   they write lands there), so `npx svc` is a shell function running this clone's bin/svc.js.
// - The browser's sign-in is done with fetch: the login form with its CSRF token and cookies.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freshPostgresDatabase, onPostgres } from './helpers/app.ts';

const repo = process.cwd();
const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');

/** The shell blocks that follow a `<!-- quickstart:KIND ... -->` marker, in README order. */
function quickstartBlocks(kind: string): string[] {
  const re = new RegExp(`<!-- quickstart:${kind}\\b[^>]*-->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``, 'g');
  return [...readme.matchAll(re)].map((m) => m[1]);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

let port: number;
let base: string;
let storage: string;
let workdir: string;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;
let serverLog = '';
let dropDb: (() => Promise<void>) | undefined;

const onOurPort = (block: string) => block.replaceAll('localhost:5000', `localhost:${port}`);

/** Runs README blocks in one bash, `npx svc` mapped to this clone's CLI; fails on the first error. */
function runBlocks(blocks: string[]): string {
  const preamble = [
    'set -euo pipefail',
    `npx() { if [ "$1" = svc ]; then shift; node ${JSON.stringify(path.join(repo, 'bin/svc.js'))} "$@"; else echo "npx $1: not expected" >&2; return 1; fi; }`,
  ].join('\n');
  const script = `${preamble}\n${blocks.map(onOurPort).join('\n')}`;
  const r = spawnSync('bash', ['-c', script], { cwd: workdir, env, encoding: 'utf8', timeout: 90_000 });
  assert.equal(r.status, 0, `blocks failed (${r.status}):\n${script}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r.stdout;
}

async function waitForServer(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (server?.exitCode !== null && server?.exitCode !== undefined) break;
    try {
      if ((await fetch(`${base}/api/3/action/status_show`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the server did not answer within ${ms} ms:\n${serverLog}`);
}

before(async () => {
  port = await freePort();
  base = `http://localhost:${port}`;
  storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readme-data-'));
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readme-work-'));
  env = { PATH: process.env.PATH, HOME: process.env.HOME, SVC__PORT: String(port), SVC__STORAGE_PATH: storage };
  if (onPostgres) {
    const db = await freshPostgresDatabase();
    env.SVC__DATABASE_URL = db.url;
    dropDb = db.drop;
  }
});

after(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    process.kill(-server.pid, 'SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (server.exitCode === null) process.kill(-server.pid, 'SIGKILL');
  }
  await dropDb?.();
  fs.rmSync(storage, { recursive: true, force: true });
  fs.rmSync(workdir, { recursive: true, force: true });
});

describe('README quick start', () => {
  test('install and start: the start block serves the site on the port given', async () => {
    const [start] = quickstartBlocks('start');
    assert.ok(start, 'README has a <!-- quickstart:start --> block');
    const command = start.replace(/#.*$/gm, '').trim();
    assert.match(command, /^npm install && npm start$/);
    assert.match(readme, /\bnpm test\b/, 'README names the test command');
    server = spawn('bash', ['-c', command.replace(/^npm install && /, '')], { cwd: repo, env, detached: true });
    server.stdout!.on('data', (b) => (serverLog += b));
    server.stderr!.on('data', (b) => (serverLog += b));
    await waitForServer(60_000);
    const home = await fetch(`${base}/`);
    assert.equal(home.status, 200);
    assert.match(home.headers.get('content-type') ?? '', /text\/html/);
  });

  test('sysadmin with a password, signed in through the web form; a dataset with a CSV over the API; found by the search line', async () => {
    const run = quickstartBlocks('run');
    assert.equal(run.length, 2, 'the sysadmin block and the API block are marked <!-- quickstart:run -->');
    for (const block of run) assert.doesNotMatch(block, /<[a-z ]+>/, 'runnable blocks hold no <placeholders>');
    const password = /sysadmin add admin .*--password '([^']+)'/.exec(run[0])?.[1];
    assert.ok(password, 'the sysadmin block sets a password');

    const out = runBlocks(run);
    assert.doesNotMatch(out, /"success":\s*false/, `${out}\n--- server log\n${serverLog}`);
    assert.equal(out.match(/"success":\s*true/g)?.length, 3, `organization, dataset and resource created:\n${out}`);

    // Sign in as a browser does: the form's CSRF token, its cookie, then the session cookie.
    const cookies = new Map<string, string>();
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair.indexOf('=');
        cookies.set(pair.slice(0, i), pair.slice(i + 1));
      }
    };
    const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const form = await fetch(`${base}/user/login`);
    keep(form);
    const csrf = /name="_csrf_token" value="([^"]+)"/.exec(await form.text())?.[1];
    assert.ok(csrf, 'the login page has a CSRF token');
    const signIn = (pw: string) =>
      fetch(`${base}/user/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: cookieHeader(),
          origin: base,
          referer: `${base}/user/login`,
        },
        body: new URLSearchParams({ _csrf_token: csrf, login: 'admin', password: pw }).toString(),
      });
    assert.equal((await signIn(`${password}-wrong`)).status, 401, 'a wrong password is refused');
    const signedIn = await signIn(password);
    assert.ok([302, 303].includes(signedIn.status), `signed in: ${signedIn.status}`);
    keep(signedIn);
    const dashboard = await fetch(`${base}/dashboard`, { headers: { cookie: cookieHeader() }, redirect: 'manual' });
    assert.equal(dashboard.status, 200, 'the dashboard opens for the signed-in sysadmin');
    assert.match(await dashboard.text(), /admin/);

    const [search] = quickstartBlocks('search');
    assert.match(search, /curl .*-g .*package_search/, 'the search line keeps curl off the brackets');
    const found = JSON.parse(runBlocks([search]));
    assert.equal(found.success, true);
    assert.deepEqual(
      found.result.results.map((d: { name: string }) => d.name),
      ['swiss-cities'],
    );
    assert.deepEqual(found.result.facets, { tags: { cities: 1 }, organization: { acme: 1 } });

    // "Once the loader has run (a second or two), the rows are in the data store".
    const pkg = await (await fetch(`${base}/api/3/action/package_show?id=swiss-cities`)).json();
    const resourceId = pkg.result.resources[0].id;
    let rows: unknown[] = [];
    for (let i = 0; i < 60 && !rows.length; i++) {
      const r = await (await fetch(`${base}/api/3/action/datastore_search?resource_id=${resourceId}&q=Bern`)).json();
      if (r.success) rows = r.result.records;
      else await new Promise((res) => setTimeout(res, 500));
    }
    assert.deepEqual(
      rows.map((r: any) => [r.city, r.population]),
      [['Bern', 134000]],
    );
  });
});
