// The svc command line: serve, config, db, sysadmin, user, user token, datastore.
import { Command, Option } from 'commander';
import pino from 'pino';
import type { Services } from '../actions/context.ts';
import { callAction } from '../actions/registry.ts';
import { SYSADMIN_INTERNAL } from '../auth/identity.ts';
import { ConfigError, loadConfig, type Config } from '../config/load.ts';
import { DataDirLockedError } from '../db/lock.ts';
import { ActionError } from '../errors.ts';
import { closeServices, createServices } from '../services.ts';
import { serve } from './serve.ts';
import { cliCommands } from './extensions.ts';
import '../jobs/cli.ts'; // adds `svc jobs ...`

const program = new Command();
program
  .name('svc')
  .description('svc: a data catalog and data store with a CKAN-compatible Action API')
  .option('-c, --config <file>', 'configuration file (default: $SVC_INI or ./svc.ini)')
  .showHelpAfterError();

function config(overrides: Record<string, unknown> = {}): Config {
  return loadConfig({ configFile: program.opts().config, overrides });
}

/** Opens the services, runs fn, closes them: for one-shot commands. */
async function withServices<T>(fn: (s: Services) => Promise<T>, overrides: Record<string, unknown> = {}): Promise<T> {
  const cfg = config({ 'svc.log_level': 'warn', ...overrides });
  const services = await createServices(cfg, { logger: pino({ level: 'warn' }, pino.destination(2)), worker: false });
  try {
    return await fn(services);
  } finally {
    await closeServices(services);
  }
}

const asSysadmin = (s: Services, action: string, data: Record<string, unknown>) => callAction(s, action, data, { identity: SYSADMIN_INTERNAL });

program
  .command('serve')
  .description('start the web server (Action API on /api/3/action)')
  .option('-p, --port <n>', 'port (svc.port, default 5000)')
  .option('-H, --host <host>', 'address to bind (svc.host, default localhost)')
  .action(async (o: { port?: string; host?: string }) => {
    const overrides: Record<string, unknown> = {};
    if (o.port) overrides['svc.port'] = o.port;
    if (o.host) overrides['svc.host'] = o.host;
    await serve(config(overrides));
  });

const configCmd = program.command('config').description('configuration');
configCmd
  .command('show')
  .description('print the effective configuration (secrets masked)')
  .action(() => {
    const cfg = config();
    console.log(`# config file: ${cfg.file ?? '(none)'}`);
    for (const [k, v] of Object.entries(cfg.show())) console.log(`${k} = ${Array.isArray(v) ? v.join(' ') : v}`);
  });

const db = program.command('db').description('database schema');
for (const name of ['init', 'upgrade']) {
  db.command(name)
    .description(name === 'init' ? 'create the database schema (idempotent)' : 'apply pending migrations (idempotent)')
    .action(async () => {
      // createServices applies every pending migration (core and plugins).
      await withServices(async () => undefined);
      console.log('database is up to date');
    });
}

function printUsers(rows: { name: string; email?: string | null; sysadmin?: boolean; state?: string }[]) {
  for (const u of rows) console.log([u.name, u.email ?? '', u.sysadmin ? 'sysadmin' : '', u.state ?? ''].join('\t').trimEnd());
}

const sysadmin = program.command('sysadmin').description('sysadmin accounts');
sysadmin
  .command('add <name>')
  .description('make a user sysadmin, creating the user if missing')
  .option('-e, --email <email>', 'email for a new user')
  .option('-p, --password <password>', 'password for a new user (default: a random one; use API tokens)')
  .action(async (name: string, o: { email?: string; password?: string }) => {
    await withServices(async (s) => {
      const existing = await s.db.query<{ id: string }>('SELECT id FROM users WHERE name = $1', [name]);
      if (existing.rows.length) {
        await asSysadmin(s, 'user_patch', { id: name, sysadmin: true, state: 'active' });
        console.log(`user ${name} is now a sysadmin`);
      } else {
        await asSysadmin(s, 'user_create', { name, email: o.email ?? `${name}@localhost.localdomain`, password: o.password ?? randomPassword(), sysadmin: true });
        console.log(`created sysadmin ${name}`);
      }
    });
  });
sysadmin
  .command('list')
  .description('list sysadmins')
  .action(async () => {
    await withServices(async (s) => {
      const r = await s.db.query("SELECT name, email, sysadmin, state FROM users WHERE sysadmin AND state <> 'deleted' AND name <> $1 ORDER BY name", [s.config.str('svc.site_id')]);
      printUsers(r.rows);
    });
  });
sysadmin
  .command('remove <name>')
  .description('take sysadmin rights away from a user')
  .action(async (name: string) => {
    await withServices(async (s) => {
      await asSysadmin(s, 'user_patch', { id: name, sysadmin: false });
      console.log(`user ${name} is no longer a sysadmin`);
    });
  });

const user = program.command('user').description('user accounts and API tokens');
user
  .command('add <name>')
  .description('create a user')
  .requiredOption('-e, --email <email>', 'email address')
  .option('-p, --password <password>', 'password (default: a random one; use API tokens)')
  .option('--fullname <fullname>', 'full name')
  .action(async (name: string, o: { email: string; password?: string; fullname?: string }) => {
    await withServices(async (s) => {
      await asSysadmin(s, 'user_create', { name, email: o.email, password: o.password ?? randomPassword(), fullname: o.fullname });
      console.log(`created user ${name}`);
    });
  });
user
  .command('list')
  .description('list users')
  .action(async () => {
    await withServices(async (s) => printUsers((await asSysadmin(s, 'user_list', { order_by: 'name' })) as never));
  });
user
  .command('remove <name>')
  .description('delete a user (state deleted)')
  .action(async (name: string) => {
    await withServices(async (s) => {
      await asSysadmin(s, 'user_delete', { id: name });
      console.log(`deleted user ${name}`);
    });
  });

const token = user.command('token').description('API tokens');
token
  .command('add <user> <token_name>')
  .description('create an API token; the token is printed alone on the last line')
  .option('--expires-in <n>', 'expire after n units')
  .addOption(new Option('--unit <unit>', 'unit of --expires-in').choices(['seconds', 'minutes', 'hours', 'days']).default('days'))
  .action(async (userName: string, tokenName: string, o: { expiresIn?: string; unit: string }) => {
    await withServices(async (s) => {
      const { issueToken } = await import('../actions/api-token.ts');
      const { findUser } = await import('../model/users.ts');
      const u = await findUser(s.db, userName);
      if (!u || u.state === 'deleted') throw new CliError(`no user ${userName}`);
      let expiresAt: Date | null = null;
      if (o.expiresIn !== undefined) {
        const n = Number(o.expiresIn);
        if (!Number.isInteger(n) || n <= 0) throw new CliError('--expires-in must be a positive whole number');
        expiresAt = new Date(Date.now() + n * { seconds: 1, minutes: 60, hours: 3600, days: 86400 }[o.unit as 'days'] * 1000);
      }
      const created = await s.db.transaction((tx) => issueToken({ db: tx, config: s.config } as never, u, tokenName, expiresAt));
      console.log(`API token "${tokenName}" created for ${u.name}${expiresAt ? ` (expires ${expiresAt.toISOString()})` : ''}:`);
      console.log(created.token);
    });
  });
token
  .command('list <user>')
  .description("list a user's API tokens")
  .action(async (userName: string) => {
    await withServices(async (s) => {
      const rows = (await asSysadmin(s, 'api_token_list', { user_id: userName })) as { id: string; name: string; created_at: string; last_access: string | null }[];
      for (const t of rows) console.log([t.id, t.name, t.created_at, t.last_access ?? 'never used'].join('\t'));
    });
  });
token
  .command('revoke <token_id>')
  .description('revoke an API token by its id')
  .action(async (id: string) => {
    await withServices(async (s) => {
      await asSysadmin(s, 'api_token_revoke', { jti: id });
      console.log(`revoked API token ${id}`);
    });
  });

for (const register of cliCommands) register(program, { config, withServices });

class CliError extends Error {}

function randomPassword(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url');
}

function explain(e: unknown): string {
  if (e instanceof ActionError) return e.message;
  if (e instanceof ConfigError || e instanceof DataDirLockedError || e instanceof CliError) return e.message;
  return (e as Error)?.stack ?? String(e);
}

program.parseAsync(process.argv).catch((e) => {
  console.error(`svc: ${explain(e)}`);
  process.exit(1);
});
