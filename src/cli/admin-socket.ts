// The admin socket: a running server accepts the CLI's account commands (admin-commands.ts) on a
// Unix socket in the storage folder, so `svc sysadmin add` and friends work while it runs (PGlite
// allows one process per data dir). The socket lives in <storage>/run (mode 0700) with mode 0600:
// only the account running the server can reach it, and it never listens on the network.
// One JSON request line per connection ({command, args}), one JSON answer line ({ok, lines | error}).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Services } from '../actions/context.ts';
import { ActionError } from '../errors.ts';
import { adminCommands } from './admin-commands.ts';
import { adminSocketPath, type AdminAnswer } from './admin-client.ts';
import { CliError } from './extensions.ts';

const MAX_REQUEST = 64 * 1024;
// Unix socket paths are limited to about 100 bytes (sun_path).
const MAX_SOCKET_PATH = 100;

/** Starts listening; returns the function that stops and removes the socket (undefined when it cannot listen). */
export async function listenAdminSocket(services: Services): Promise<(() => Promise<void>) | undefined> {
  const file = adminSocketPath(services.config);
  const log = services.logger;
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) {
    log.warn({ socket: file }, 'svc.storage_path is too long for the admin socket: CLI account commands need the server stopped');
    return undefined;
  }
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  // A socket left by a server that did not stop cleanly: nobody answers on it any more.
  if (!(await answers(file))) fs.rmSync(file, { force: true });
  else {
    log.warn({ socket: file }, 'another svc server answers on the admin socket; this one does not take it over');
    return undefined;
  }
  const server = net.createServer((conn) => serveConnection(services, conn));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });
  fs.chmodSync(file, 0o600);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(file, { force: true });
  };
}

function serveConnection(services: Services, conn: net.Socket): void {
  let buf = '';
  conn.setEncoding('utf8');
  conn.setTimeout(60_000, () => conn.destroy());
  conn.on('error', () => undefined);
  conn.on('data', (chunk: string) => {
    buf += chunk;
    if (buf.length > MAX_REQUEST) {
      conn.end(JSON.stringify({ ok: false, error: 'request too large' }) + '\n');
      return;
    }
    const nl = buf.indexOf('\n');
    if (nl < 0) return;
    conn.removeAllListeners('data');
    void handle(services, buf.slice(0, nl)).then((answer) => conn.end(JSON.stringify(answer) + '\n'));
  });
}

async function handle(services: Services, line: string): Promise<AdminAnswer> {
  let command: unknown;
  let args: unknown;
  try {
    ({ command, args } = JSON.parse(line));
  } catch {
    return { ok: false, error: 'not a JSON request' };
  }
  const run = typeof command === 'string' && Object.hasOwn(adminCommands, command) ? adminCommands[command] : undefined;
  if (!run) return { ok: false, error: `unknown admin command ${JSON.stringify(command)}` };
  if (!args || typeof args !== 'object' || Array.isArray(args)) return { ok: false, error: 'args must be an object' };
  try {
    const lines = await run(services, args as Record<string, unknown>);
    // Names only: passwords and tokens never reach the log.
    services.logger.info({ command, user: (args as any).name ?? (args as any).user }, 'admin command over the socket');
    return { ok: true, lines };
  } catch (e) {
    if (e instanceof ActionError || e instanceof CliError) return { ok: false, error: e.message };
    services.logger.error({ err: e, command }, 'admin command failed');
    return { ok: false, error: 'the server could not run the command (see its log)' };
  }
}

/** Is a server answering on the socket? */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(file);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
