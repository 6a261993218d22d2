// The account commands of the CLI (sysadmin, user, user token). Each takes its arguments as an
// object and returns the lines to print, so that the same code runs in the CLI process (on the
// database) or in the running server (handed over its admin socket, see admin-socket.ts).
import type { Services } from '../actions/context.ts';
import { callAction } from '../actions/registry.ts';
import { SYSADMIN_INTERNAL } from '../auth/identity.ts';
import { listSysadmins } from '../model/user-lists.ts';
import { findUser } from '../model/users.ts';
import { catalogAdminCommands } from './catalog-admin-commands.ts';
import { CliError } from './extensions.ts';

type Args = Record<string, unknown>;
export type AdminCommand = (s: Services, args: Args) => Promise<string[]>;

const asSysadmin = (s: Services, action: string, data: Record<string, unknown>) =>
  callAction(s, action, data, { identity: SYSADMIN_INTERNAL });

function str(args: Args, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || !v) throw new CliError(`${key} is required`);
  return v;
}

function optStr(args: Args, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new CliError(`${key} must be a string`);
  return v;
}

function randomPassword(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url');
}

function userLines(rows: { name: string; email?: string | null; sysadmin?: boolean; state?: string }[]): string[] {
  return rows.map((u) => [u.name, u.email ?? '', u.sysadmin ? 'sysadmin' : '', u.state ?? ''].join('\t').trimEnd());
}

const UNITS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };

export const adminCommands: Record<string, AdminCommand> = {
  'sysadmin add': async (s, a) => {
    const name = str(a, 'name');
    const password = optStr(a, 'password');
    if (await findUser(s.db, name)) {
      await asSysadmin(s, 'user_patch', { id: name, sysadmin: true, state: 'active', ...(password === undefined ? {} : { password }) });
      return [`user ${name} is now a sysadmin${password === undefined ? '' : '; password set'}`];
    }
    await asSysadmin(s, 'user_create', {
      name,
      email: optStr(a, 'email') ?? `${name}@localhost.localdomain`,
      password: password ?? randomPassword(),
      sysadmin: true,
    });
    return [
      `created sysadmin ${name}${password === undefined ? ' (random password: sign in with an API token, or set one with svc user setpass)' : ' with the given password'}`,
    ];
  },
  'sysadmin list': async (s) => {
    return userLines(await listSysadmins(s.db, s.config.str('svc.site_id')));
  },
  'sysadmin remove': async (s, a) => {
    const name = str(a, 'name');
    await asSysadmin(s, 'user_patch', { id: name, sysadmin: false });
    return [`user ${name} is no longer a sysadmin`];
  },
  'user add': async (s, a) => {
    const name = str(a, 'name');
    await asSysadmin(s, 'user_create', {
      name,
      email: str(a, 'email'),
      password: optStr(a, 'password') ?? randomPassword(),
      fullname: optStr(a, 'fullname'),
    });
    return [`created user ${name}`];
  },
  'user list': async (s) => userLines((await asSysadmin(s, 'user_list', { order_by: 'name' })) as never),
  'user remove': async (s, a) => {
    const name = str(a, 'name');
    await asSysadmin(s, 'user_delete', { id: name });
    return [`deleted user ${name}`];
  },
  'user setpass': async (s, a) => {
    const name = str(a, 'name');
    const password = str(a, 'password');
    const u = await findUser(s.db, name);
    if (!u || u.state === 'deleted') throw new CliError(`no user ${name}`);
    await asSysadmin(s, 'user_patch', { id: u.id, password });
    return [`password set for user ${name}`];
  },
  'user token add': async (s, a) => {
    const userName = str(a, 'user');
    const tokenName = str(a, 'token_name');
    const { issueToken } = await import('../actions/api-token.ts');
    const u = await findUser(s.db, userName);
    if (!u || u.state === 'deleted') throw new CliError(`no user ${userName}`);
    let expiresAt: Date | null = null;
    const expiresIn = optStr(a, 'expires_in');
    if (expiresIn !== undefined) {
      const n = Number(expiresIn);
      if (!Number.isInteger(n) || n <= 0) throw new CliError('--expires-in must be a positive whole number');
      const unit = optStr(a, 'unit') ?? 'days';
      if (!(unit in UNITS)) throw new CliError(`--unit must be one of ${Object.keys(UNITS).join(', ')}`);
      expiresAt = new Date(Date.now() + n * UNITS[unit] * 1000);
    }
    const created = await s.db.transaction((tx) => issueToken({ db: tx, config: s.config } as never, u, tokenName, expiresAt));
    return [`API token "${tokenName}" created for ${u.name}${expiresAt ? ` (expires ${expiresAt.toISOString()})` : ''}:`, created.token];
  },
  'user token list': async (s, a) => {
    const rows = (await asSysadmin(s, 'api_token_list', { user_id: str(a, 'user') })) as {
      id: string;
      name: string;
      created_at: string;
      last_access: string | null;
    }[];
    return rows.map((t) => [t.id, t.name, t.created_at, t.last_access ?? 'never used'].join('\t'));
  },
  'user token revoke': async (s, a) => {
    const id = str(a, 'token_id');
    await asSysadmin(s, 'api_token_revoke', { jti: id });
    return [`revoked API token ${id}`];
  },
  ...catalogAdminCommands,
};
