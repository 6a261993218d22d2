// What the benchmarks share: the admin database, logging, the child server they start.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { setPermissionsSql } from '../src/plugins/datastore/permissions.ts';

/** The PostgreSQL server the benchmarks make their databases on (a superuser). */
export const ADMIN_URL = process.env.SVC_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function log(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

/** The URL with another database (and user). */
export function urlWith(url: string, db: string, user?: string): string {
  const u = new URL(url);
  u.pathname = '/' + db;
  if (user) {
    u.username = user;
    u.password = '';
  }
  return u.toString();
}

/** Runs one statement on its own connection. */
export async function adminQuery(sql: string, url = ADMIN_URL): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A bench's catalog at its end: kept and named (SVC_BENCH_KEEP, or a reused one), else dropped; its storage removed. */
export async function keepOrDropCatalog(dbName: string, dbUrl: string, storage: string, reused: boolean): Promise<void> {
  if (process.env.SVC_BENCH_KEEP || reused) console.log(`kept database ${dbUrl}`);
  else await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  fs.rmSync(storage, { recursive: true, force: true });
}

/** Resident memory of a process (Linux). */
export const rssBytes = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

const benchDir = path.dirname(new URL(import.meta.url).pathname);

/** Starts bench/server.ts as a child with this configuration (and Node options, e.g. --cpu-prof); resolves once it listens. */
export async function startServer(
  config: Record<string, unknown>,
  nodeOptions: string[] = [],
): Promise<{ child: ChildProcess; port: number; token: string }> {
  const child = fork(path.join(benchDir, 'server.ts'), [], {
    execArgv: ['--import', 'tsx', ...nodeOptions],
    env: { ...process.env, SVC_BENCH_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const msg = await new Promise<any>((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server.ts exited with ${code}`)));
  });
  return { child, port: msg.port, token: msg.token };
}

/** Stops a child server: SIGTERM, then SIGKILL when it has not exited within 15 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 15000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** Calls an action on the child server; throws with the error when it fails. */
export async function api(port: number, token: string, action: string, body: unknown): Promise<any> {
  const send = () =>
    fetch(`http://127.0.0.1:${port}/api/3/action/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: token },
      body: JSON.stringify(body),
    });
  // A kept-alive connection idle for longer than the server keeps it (a long raw step between two
  // calls) can be closed just as it is reused: the request never reached the server, send it again.
  const res = await send().catch((e) => {
    if ((e as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw e;
    return send();
  });
  const json: any = await res.json();
  if (!json.success) throw new Error(`${action}: ${JSON.stringify(json.error)}`);
  return json.result;
}

/** The read-only login of the benchmarks' data stores. */
const READ_ROLE = 'svc_bench_reader';

/** Gives a throw-away data store database its read-only role (as `svc datastore set-permissions`); returns the read URL. */
export async function grantDataStoreReader(writeUrl: string, database: string): Promise<string> {
  await adminQuery(`DO $$ BEGIN CREATE ROLE ${READ_ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
  const readUrl = urlWith(ADMIN_URL, database, READ_ROLE);
  await adminQuery(setPermissionsSql(writeUrl, readUrl), writeUrl);
  return readUrl;
}
