// The svc command line, run as a user would: a child process per command.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freshPostgresDatabase, onPostgres } from './helpers/app.ts';

const bin = path.resolve('bin/svc.js');
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

describe('svc CLI', () => {
  test('--help lists the commands', () => {
    const r = svc('--help');
    assert.equal(r.code, 0);
    for (const c of ['serve', 'db', 'sysadmin', 'user', 'config']) assert.match(r.out, new RegExp(`\\b${c}\\b`));
    assert.match(svc('user', 'token', 'add', '--help').out, /--expires-in/);
  });

  test('db init and db upgrade are idempotent', () => {
    assert.equal(svc('db', 'init').code, 0);
    const again = svc('db', 'upgrade');
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /up to date/);
  });

  test('sysadmin add creates or promotes; list; remove', () => {
    let r = svc('sysadmin', 'add', 'root', '--email', 'root@example.org', '--password', 'longenough');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /created sysadmin root/);
    assert.equal(svc('user', 'add', 'jane', '--email', 'jane@example.org').code, 0);
    r = svc('sysadmin', 'add', 'jane');
    assert.match(r.out, /jane is now a sysadmin/);
    r = svc('sysadmin', 'list');
    assert.deepEqual(
      r.out
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
      ['jane', 'root'],
    );
    assert.equal(svc('sysadmin', 'remove', 'jane').code, 0);
    assert.deepEqual(
      svc('sysadmin', 'list')
        .out.trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
      ['root'],
    );
  });

  test('user add validates; list; remove', () => {
    const bad = svc('user', 'add', 'x', '--email', 'nope');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /Must be at least 2 characters long/);
    assert.match(bad.err, /not a valid format/);
    assert.equal(svc('user', 'add', 'temp', '--email', 'temp@example.org').code, 0);
    assert.match(svc('user', 'list').out, /^temp\t/m);
    assert.equal(svc('user', 'remove', 'temp').code, 0);
    assert.doesNotMatch(svc('user', 'list').out, /^temp\t/m);
  });

  test('user token add prints the token alone on the last line; list; revoke', () => {
    const r = svc('user', 'token', 'add', 'root', 'ci', '--expires-in', '2', '--unit', 'hours');
    assert.equal(r.code, 0, r.err);
    const last = r.out.trim().split('\n').pop()!;
    assert.match(last, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const list = svc('user', 'token', 'list', 'root').out.trim().split('\n');
    const row = list.find((l) => l.split('\t')[1] === 'ci');
    assert.ok(row);
    const id = row!.split('\t')[0];
    const revoked = svc('user', 'token', 'revoke', id);
    assert.equal(revoked.code, 0, revoked.err);
    assert.ok(!svc('user', 'token', 'list', 'root').out.includes('\tci\t'));
    const bad = svc('user', 'token', 'add', 'nobody', 'x');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /no user nobody/);
  });

  test('datastore set-permissions prints the SQL for the read-only user; embedded needs none', () => {
    const embedded = svc('datastore', 'set-permissions');
    assert.equal(embedded.code, 1);
    assert.match(embedded.err, /embedded data store/);
    const r = spawnSync(process.execPath, [bin, 'datastore', 'set-permissions'], {
      env: { ...env, SVC__DATASTORE__WRITE_URL: 'postgresql://ds_owner@db/ds', SVC__DATASTORE__READ_URL: 'postgresql://ds_reader@db/ds' },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /GRANT SELECT ON ALL TABLES IN SCHEMA public TO "ds_reader";/);
    assert.match(r.stdout, /ALTER DEFAULT PRIVILEGES FOR USER "ds_owner" IN SCHEMA public GRANT SELECT ON TABLES TO "ds_reader";/);
    const same = spawnSync(process.execPath, [bin, 'datastore', 'set-permissions'], {
      env: { ...env, SVC__DATASTORE__WRITE_URL: 'postgresql://u@db/ds', SVC__DATASTORE__READ_URL: 'postgresql://u@db/ds' },
      encoding: 'utf8',
    });
    assert.equal(same.status, 1);
    assert.match(same.stderr, /different user/);
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

  test('a bad option value stops with a message naming it', () => {
    const r = spawnSync(process.execPath, [bin, 'config', 'show'], { env: { ...env, SVC__PORT: 'eighty' }, encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /svc\.port/);
    const shown = svc('config', 'show');
    assert.match(shown.out, /^svc\.port = 5000$/m);
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
    try {
      await waitForHttp(`${base}/site_read`);
      const body = await (await fetch(`${base}/site_read`)).json();
      assert.equal(body.result, true);
      // only the server's account may reach the socket
      assert.equal(fs.statSync(sock).mode & 0o777, 0o600);
      assert.equal(fs.statSync(path.dirname(sock)).mode & 0o777, 0o700);
      assert.ok(fs.statSync(sock).isSocket());

      let r = svc('sysadmin', 'add', 'live-admin', '--email', 'live@example.org');
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /created sysadmin live-admin/);
      r = svc('user', 'add', 'live-user', '--email', 'live-user@example.org', '--fullname', 'Live User');
      assert.equal(r.code, 0, r.err);
      r = svc('user', 'token', 'add', 'live-admin', 'first', '--expires-in', '1', '--unit', 'days');
      assert.equal(r.code, 0, r.err);
      const token = r.out.trim().split('\n').pop()!;
      const me = await (await fetch(`${base}/user_show?id=live-user`, { headers: { authorization: token } })).json();
      assert.equal(me.result.fullname, 'Live User');
      assert.equal(me.result.email, 'live-user@example.org', "the token is a sysadmin's");
      assert.match(svc('user', 'list').out, /^live-user\t/m);
      assert.match(svc('sysadmin', 'list').out, /^live-admin\t/m);
      const tokens = svc('user', 'token', 'list', 'live-admin').out;
      assert.match(tokens, /\tfirst\t/);
      // errors come back as from the direct commands
      const bad = svc('user', 'add', 'x', '--email', 'nope');
      assert.equal(bad.code, 1);
      assert.match(bad.err, /Must be at least 2 characters long/);
      assert.doesNotMatch(bad.err, /at .*\.ts:\d+/);
      const noUser = svc('user', 'token', 'add', 'nobody', 'x');
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
