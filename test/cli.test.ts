// The svc command line. Most commands run in-process through runCli (argv in, output captured) on
// the test app's services; a few run as a user runs them, in a child process: --help, serve with
// the admin socket, a socket left behind.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freshPostgresDatabase, onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';
import { runCliIn, type CliOptions, type CliRun } from './helpers/cli.ts';
import { loadConfig } from '../src/config/load.ts';
import { optionDeclarations } from '../src/config/options.ts';

const bin = path.resolve('bin/svc.js');
let t: TestApp;

before(async () => {
  t = await startApp({ plugins: ['datastore', 'image_view', 'datatables_view', 'expire_api_token'] });
  await t.ok('organization_create', { name: 'cli-org' }, { token: t.sysadminToken });
});
after(async () => {
  await t.close();
});

/** Runs a command line in this process on the test app's services. */
const cli = (argv: string[], opts: CliOptions = {}): Promise<CliRun> => runCliIn(t, argv, opts);

async function signsIn(name: string, password: string): Promise<boolean> {
  const r = await new WebClient(t.app).post('/user/login', { login: name, password });
  return r.statusCode === 303;
}

describe('svc CLI, in-process', () => {
  test('--help lists the commands, plugin commands too', async () => {
    const r = await cli(['--help']);
    assert.equal(r.code, 0);
    for (const c of ['serve', 'db', 'sysadmin', 'user', 'config', 'dataset', 'views', 'search-index', 'jobs', 'loader', 'datastore']) {
      assert.match(r.out, new RegExp(`^  ${c}\\b`, 'm'));
    }
    assert.match((await cli(['user', 'token', 'add', '--help'])).out, /--expires-in/);
    assert.match((await cli(['user', 'setpass', '--help'])).out, /--password/);
    const bad = await cli(['no-such-command']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /unknown command 'no-such-command'/);
  });

  test('sysadmin add creates or promotes; list; remove', async () => {
    let r = await cli(['sysadmin', 'add', 'root', '--email', 'root@example.org', '--password', 'longenough']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /created sysadmin root/);
    assert.ok(await signsIn('root', 'longenough'));
    assert.equal((await cli(['user', 'add', 'jane', '--email', 'jane@example.org'])).code, 0);
    r = await cli(['sysadmin', 'add', 'jane']);
    assert.match(r.out, /jane is now a sysadmin/);
    const admins = async () =>
      (await cli(['sysadmin', 'list'])).out
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]);
    assert.deepEqual(await admins(), ['jane', 'root', 'test_sysadmin']);
    assert.equal((await cli(['sysadmin', 'remove', 'jane'])).code, 0);
    assert.deepEqual(await admins(), ['root', 'test_sysadmin']);
  });

  test("sysadmin add --password sets an existing user's password, and says so", async () => {
    assert.equal((await cli(['user', 'add', 'first-admin', '--email', 'first@example.org'])).code, 0);
    assert.ok(!(await signsIn('first-admin', 'the new password')));
    const r = await cli(['sysadmin', 'add', 'first-admin', '--password', 'the new password']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /first-admin is now a sysadmin; password set/);
    assert.ok(await signsIn('first-admin', 'the new password'));
    const short = await cli(['sysadmin', 'add', 'first-admin', '--password', 'short']);
    assert.equal(short.code, 1);
    assert.match(short.err, /password: Your password must be 8 characters or longer/);
    assert.ok(await signsIn('first-admin', 'the new password'), 'a refused password changes nothing');
  });

  test('user setpass: from --password, from a pipe; errors name the problem', async () => {
    assert.equal((await cli(['user', 'add', 'pat', '--email', 'pat@example.org'])).code, 0);
    let r = await cli(['user', 'setpass', 'pat', '--password', 'option password']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /password set for user pat/);
    assert.ok(await signsIn('pat', 'option password'));
    r = await cli(['user', 'setpass', 'pat'], { stdin: 'piped password\n' });
    assert.equal(r.code, 0, r.err);
    assert.ok(await signsIn('pat', 'piped password'));
    assert.ok(!(await signsIn('pat', 'option password')));
    r = await cli(['user', 'setpass', 'pat'], { stdin: '' });
    assert.equal(r.code, 1);
    assert.match(r.err, /no password on standard input/);
    r = await cli(['user', 'setpass', 'nobody', '--password', 'long enough']);
    assert.equal(r.code, 1);
    assert.match(r.err, /no user nobody/);
    r = await cli(['user', 'setpass', 'pat', '--password', 'short']);
    assert.equal(r.code, 1);
    assert.match(r.err, /8 characters/);
    assert.ok(await signsIn('pat', 'piped password'));
  });

  test('user add validates; list; remove', async () => {
    const bad = await cli(['user', 'add', 'x', '--email', 'nope']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /Must be at least 2 characters long/);
    assert.match(bad.err, /not a valid format/);
    assert.doesNotMatch(bad.err, /at .*\.ts:\d+/);
    assert.equal((await cli(['user', 'add', 'temp', '--email', 'temp@example.org'])).code, 0);
    assert.match((await cli(['user', 'list'])).out, /^temp\t/m);
    assert.equal((await cli(['user', 'remove', 'temp'])).code, 0);
    assert.doesNotMatch((await cli(['user', 'list'])).out, /^temp\t/m);
  });

  test('user token add prints the token alone on the last line; list; revoke', async () => {
    await cli(['sysadmin', 'add', 'tokens-admin', '--password', 'longenough']);
    const r = await cli(['user', 'token', 'add', 'tokens-admin', 'ci', '--expires-in', '2', '--unit', 'hours']);
    assert.equal(r.code, 0, r.err);
    const token = r.out.trim().split('\n').pop()!;
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal((await t.call('package_create', { name: 'by-token', owner_org: 'cli-org' }, { token })).status, 200);
    const list = (await cli(['user', 'token', 'list', 'tokens-admin'])).out.trim().split('\n');
    const row = list.find((l) => l.split('\t')[1] === 'ci');
    assert.ok(row);
    const revoked = await cli(['user', 'token', 'revoke', row!.split('\t')[0]]);
    assert.equal(revoked.code, 0, revoked.err);
    assert.ok(!(await cli(['user', 'token', 'list', 'tokens-admin'])).out.includes('\tci\t'));
    assert.equal((await t.call('package_create', { name: 'by-token-2', owner_org: 'cli-org' }, { token })).status, 403);
    const bad = await cli(['user', 'token', 'add', 'nobody', 'x']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /no user nobody/);
  });

  test('dataset delete, then purge, by name or id', async () => {
    const ds = await t.ok(
      'package_create',
      { name: 'old-data', owner_org: 'cli-org', resources: [{ url: 'http://x/a.csv' }] },
      { token: t.sysadminToken },
    );
    let r = await cli(['dataset', 'delete', 'old-data']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /deleted dataset old-data/);
    assert.equal((await t.ok('package_show', { id: ds.id }, { token: t.sysadminToken })).state, 'deleted');
    assert.equal((await t.call('package_show', { id: ds.id })).status, 403);
    r = await cli(['dataset', 'purge', ds.id]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /purged dataset old-data/);
    assert.equal((await t.call('package_show', { id: ds.id }, { token: t.sysadminToken })).status, 404);
    r = await cli(['dataset', 'delete', 'old-data']);
    assert.equal(r.code, 1);
    assert.match(r.err, /no dataset old-data/);
  });

  test('views create makes the default views resources lack', async () => {
    const ds = await t.ok(
      'package_create',
      { name: 'pictures', owner_org: 'cli-org', resources: [{ url: 'http://x/cat.png', format: 'PNG' }] },
      { token: t.sysadminToken },
    );
    const resourceId = ds.resources[0].id;
    const views = async () => (await t.ok('resource_view_list', { id: resourceId })).map((v: any) => v.view_type);
    for (const v of await t.ok('resource_view_list', { id: resourceId })) {
      await t.ok('resource_view_delete', { id: v.id }, { token: t.sysadminToken });
    }
    assert.deepEqual(await views(), []);
    let r = await cli(['views', 'create', 'pictures']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^pictures: 1 view\(s\) created$/m);
    assert.deepEqual(await views(), ['image_view']);
    r = await cli(['views', 'create']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^created 0 view\(s\) on \d+ dataset\(s\)$/m);
    assert.deepEqual(await views(), ['image_view'], 'none twice');
    r = await cli(['views', 'create', 'no-such-dataset']);
    assert.equal(r.code, 1);
    assert.match(r.err, /no dataset no-such-dataset/);
  });

  test('jobs list says when there are none', async () => {
    const r = await cli(['jobs', 'list']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'No jobs.\n');
  });

  test('config sample: every declared option with its default, a file svc reads back', async () => {
    const r = await cli(['config', 'sample']);
    assert.equal(r.code, 0, r.err);
    for (const d of optionDeclarations()) assert.match(r.out, new RegExp(`^#${d.name.replace(/\./g, '\\.')} =`, 'm'), d.name);
    assert.match(r.out, /^# TCP port the server listens on \(integer; env SVC__PORT\)\n#svc\.port = 5000$/m);
    const file = path.join(t.storagePath, 'sample.ini');
    fs.writeFileSync(file, r.out.replace(/^#(?=[a-z])/gm, ''));
    const cfg = loadConfig({ configFile: file, env: {} });
    for (const d of optionDeclarations()) assert.deepEqual(cfg.get(d.name), d.default, d.name);
  });

  test('config show marks the values sysadmins set at run time', async () => {
    await t.ok('config_option_update', { 'svc.site_title': 'Open Data Here' }, { token: t.sysadminToken });
    const r = await cli(['config', 'show']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^svc\.site_title = Open Data Here {4}# run time \(config_option_update\); file\/environment: svc$/m);
    assert.match(r.out, /^svc\.port = 5000$/m);
  });

  test('a bad option value stops with a message naming it', async () => {
    const r = await cli(['config', 'show'], { env: { SVC__PORT: 'eighty', SVC__STORAGE_PATH: t.storagePath }, own: true });
    assert.equal(r.code, 1);
    assert.match(r.err, /svc\.port/);
    assert.doesNotMatch(r.err, /at .*\.ts:\d+/);
  });

  test('datastore set-permissions prints the SQL for the read-only user; embedded needs none', async () => {
    const env = { SVC__STORAGE_PATH: t.storagePath };
    const embedded = await cli(['datastore', 'set-permissions'], { env, own: true });
    assert.equal(embedded.code, 1);
    assert.match(embedded.err, /embedded data store/);
    const urls = (w: string, r: string) => ({ ...env, SVC__DATASTORE__WRITE_URL: w, SVC__DATASTORE__READ_URL: r });
    const r = await cli(['datastore', 'set-permissions'], {
      env: urls('postgresql://ds_owner@db/ds', 'postgresql://ds_reader@db/ds'),
      own: true,
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /GRANT SELECT ON ALL TABLES IN SCHEMA public TO "ds_reader";/);
    assert.match(r.out, /ALTER DEFAULT PRIVILEGES FOR USER "ds_owner" IN SCHEMA public GRANT SELECT ON TABLES TO "ds_reader";/);
    const same = await cli(['datastore', 'set-permissions'], { env: urls('postgresql://u@db/ds', 'postgresql://u@db/ds'), own: true });
    assert.equal(same.code, 1);
    assert.match(same.err, /different user/);
  });
});

describe('svc CLI, as a user runs it (child processes)', () => {
  let storage: string;
  let env: NodeJS.ProcessEnv;
  let dropDb: (() => Promise<void>) | undefined;

  before(async () => {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SVC__STORAGE_PATH: storage,
      SVC__PLUGINS: 'expire_api_token',
      SVC__LOG_LEVEL: 'warn',
    };
    if (onPostgres) {
      const db = await freshPostgresDatabase();
      env.SVC__DATABASE_URL = db.url;
      dropDb = db.drop;
    }
  });
  after(async () => {
    await dropDb?.();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  function svc(...args: string[]) {
    const r = spawnSync(process.execPath, [bin, ...args], { env, cwd: storage, encoding: 'utf8', timeout: 120_000 });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }

  test('--help lists the commands', () => {
    const r = svc('--help');
    assert.equal(r.code, 0, r.err);
    for (const c of ['serve', 'db', 'sysadmin', 'user', 'config', 'loader']) assert.match(r.out, new RegExp(`\\b${c}\\b`));
  });

  test('db init and db upgrade are idempotent', () => {
    assert.equal(svc('db', 'init').code, 0);
    const again = svc('db', 'upgrade');
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /up to date/);
  });

  test('a PostgreSQL data store without the read-only user does not start', () => {
    const r = spawnSync(process.execPath, [bin, 'db', 'init'], {
      env: { ...env, SVC__PLUGINS: 'datastore', SVC__DATASTORE__WRITE_URL: 'postgresql://ds_owner@127.0.0.1:1/ds' },
      cwd: storage,
      encoding: 'utf8',
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /svc\.datastore\.read_url must be set/);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/);
  });

  test('serve answers on the port; account commands go to the running server over its admin socket', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const server = spawn(process.execPath, [bin, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      env: { ...env, SVC__LOG_LEVEL: 'info', SVC__LOG__FORMAT: 'pretty' },
      cwd: storage,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    server.stdout!.on('data', (d) => {
      log += d;
    });
    const base = `http://127.0.0.1:${port}/api/3/action`;
    const sock = path.join(storage, 'run', 'admin.sock');
    const live = (...args: string[]) => cli(args, { env, own: true });
    try {
      await waitForHttp(`${base}/site_read`);
      const body = await (await fetch(`${base}/site_read`)).json();
      assert.equal(body.result, true);
      // only the server's account may reach the socket
      assert.equal(fs.statSync(sock).mode & 0o777, 0o600);
      assert.equal(fs.statSync(path.dirname(sock)).mode & 0o777, 0o700);
      assert.ok(fs.statSync(sock).isSocket());

      // the binary hands its command to the server; the others run in-process through the same socket client
      let r = svc('sysadmin', 'add', 'live-admin', '--email', 'live@example.org');
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /created sysadmin live-admin/);
      r = await live('user', 'add', 'live-user', '--email', 'live-user@example.org', '--fullname', 'Live User');
      assert.equal(r.code, 0, r.err);
      // an existing user made sysadmin with a password, or given one: both said, both through the socket
      r = await live('sysadmin', 'add', 'live-user', '--password', 'live password 1');
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /user live-user is now a sysadmin; password set/);
      r = await live('sysadmin', 'remove', 'live-user');
      assert.equal(r.code, 0, r.err);
      const piped = spawnSync(process.execPath, [bin, 'user', 'setpass', 'live-user'], {
        env,
        cwd: storage,
        encoding: 'utf8',
        input: 'live password 2\n',
      });
      assert.equal(piped.status, 0, piped.stderr);
      assert.match(piped.stdout, /password set for user live-user/);
      r = await live('user', 'token', 'add', 'live-admin', 'first', '--expires-in', '1', '--unit', 'days');
      assert.equal(r.code, 0, r.err);
      const token = r.out.trim().split('\n').pop()!;
      const me = await (await fetch(`${base}/user_show?id=live-user`, { headers: { authorization: token } })).json();
      assert.equal(me.result.fullname, 'Live User');
      assert.equal(me.result.email, 'live-user@example.org', "the token is a sysadmin's");
      assert.match((await live('user', 'list')).out, /^live-user\t/m);
      assert.match((await live('sysadmin', 'list')).out, /^live-admin\t/m);
      const tokens = (await live('user', 'token', 'list', 'live-admin')).out;
      assert.match(tokens, /\tfirst\t/);
      // errors come back as from the direct commands
      const bad = await live('user', 'add', 'x', '--email', 'nope');
      assert.equal(bad.code, 1);
      assert.match(bad.err, /Must be at least 2 characters long/);
      assert.doesNotMatch(bad.err, /at .*\.ts:\d+/);
      const noUser = await live('user', 'token', 'add', 'nobody', 'x');
      assert.equal(noUser.code, 1);
      assert.match(noUser.err, /no user nobody/);
      // the socket takes these commands only
      const odd = await askSocket(sock, '{"command": "db upgrade", "args": {}}\n');
      assert.deepEqual(odd, { ok: false, error: 'unknown admin command "db upgrade"' });
      assert.equal((await askSocket(sock, 'not json\n')).ok, false);
      if (!onPostgres) {
        const locked = svc('db', 'upgrade');
        assert.equal(locked.code, 1);
        assert.match(locked.err, /in use by another svc process/);
      }
      // the log: a line per request for people, no password or token
      assert.match(log, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET site_read 200 \d+ ms$/m);
      assert.match(log, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET user_show 200 \d+ ms user=\S+$/m);
      assert.match(log, /admin command over the socket command=user token add user=live-admin/);
      assert.match(log, /admin command over the socket command=user setpass user=live-user/);
      assert.ok(!log.includes('live password'), 'no password in the log');
      assert.ok(!log.includes(token), 'no token in the log');
    } finally {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    assert.ok(!fs.existsSync(sock), 'the socket goes with the server');
    // without a server the commands work on the database directly
    const direct = svc('user', 'list');
    assert.equal(direct.code, 0, direct.err);
    assert.match(direct.out, /^live-user\t/m);
  });

  test('a socket left behind by a killed server is ignored', { timeout: 60_000 }, async () => {
    const sock = path.join(storage, 'run', 'admin.sock');
    fs.mkdirSync(path.dirname(sock), { recursive: true, mode: 0o700 });
    const holder = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((r) => holder.stdout!.once('data', r));
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    assert.ok(fs.existsSync(sock), 'stale socket file');
    const r = svc('user', 'add', 'after-crash', '--email', 'after-crash@example.org');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /created user after-crash/);
    fs.rmSync(sock, { force: true });
  });
});

function askSocket(file: string, request: string): Promise<any> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const c = net.connect(file, () => c.write(request));
    c.setEncoding('utf8');
    c.on('data', (d) => {
      buf += d;
    });
    c.on('end', () => resolve(JSON.parse(buf)));
    c.on('error', reject);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`server did not answer at ${url}`);
}
