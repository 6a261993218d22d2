// The CLI's side of the admin socket (admin-socket.ts): finds a running server's socket and hands it
// an account command. Cheap to import: the CLI loads no server code to talk to a running server.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../config/load.ts';
import { CliError } from './extensions.ts';

export function adminSocketPath(config: Config): string {
  return path.resolve(config.str('svc.storage_path'), 'run', 'admin.sock');
}

export interface AdminAnswer {
  ok: boolean;
  lines?: string[];
  error?: string;
}

/**
 * Sends a command to the running server. Undefined when no server listens (no socket, or a
 * stale one): the caller then runs the command itself.
 */
export function sendAdminCommand(config: Config, command: string, args: Record<string, unknown>): Promise<AdminAnswer | undefined> {
  const file = adminSocketPath(config);
  if (!fs.existsSync(file)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    let connected = false;
    let buf = '';
    const c = net.connect(file);
    c.setEncoding('utf8');
    c.once('connect', () => {
      connected = true;
      c.write(JSON.stringify({ command, args }) + '\n');
    });
    c.on('data', (chunk: string) => {
      buf += chunk;
    });
    c.once('end', () => {
      try {
        resolve(JSON.parse(buf.trim()) as AdminAnswer);
      } catch {
        reject(new CliError('the running server sent an answer that is not JSON'));
      }
    });
    c.once('error', (e: NodeJS.ErrnoException) => {
      if (!connected && (e.code === 'ECONNREFUSED' || e.code === 'ENOENT')) resolve(undefined);
      else reject(new CliError(`the running server's admin socket ${file}: ${e.message}`));
    });
  });
}
