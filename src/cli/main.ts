// The svc command line: serve, config, db, sysadmin, user, user token, datastore.
import { Command, Option } from 'commander';
import pino from 'pino';
import type { Services } from '../actions/context.ts';
import { ConfigError, loadConfig, type Config } from '../config/load.ts';
import { DataDirLockedError } from '../db/lock.ts';
import { ActionError } from '../errors.ts';
import { closeServices, createServices } from '../services.ts';
import { serve } from './serve.ts';
import { cliCommands } from './extensions.ts';
import { registerSearchIndexCommands } from './search-index.ts';
import { adminCommands, CliError } from './admin-commands.ts';
import { sendAdminCommand } from './admin-socket.ts';
import './jobs.ts'; // adds `svc jobs ...`

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

/**
 * Runs an account command: handed to the running server over its admin socket when one runs
 * (PGlite allows one process per data dir), else here on the database.
 */
async function runAdmin(command: string, args: Record<string, unknown>): Promise<void> {
  const answer = await sendAdminCommand(config(), command, args);
  let lines: string[];
  if (answer) {
    if (!answer.ok) throw new CliError(answer.error ?? `${command} failed`);
    lines = answer.lines ?? [];
  } else {
    lines = await withServices((s) => adminCommands[command](s, args));
  }
  for (const line of lines) console.log(line);
}

const sysadmin = program.command('sysadmin').description('sysadmin accounts (also while the server runs)');
sysadmin
  .command('add <name>')
  .description('make a user sysadmin, creating the user if missing')
  .option('-e, --email <email>', 'email for a new user')
  .option('-p, --password <password>', 'password for a new user (default: a random one; use API tokens)')
  .action((name: string, o: { email?: string; password?: string }) =>
    runAdmin('sysadmin add', { name, email: o.email, password: o.password }),
  );
sysadmin
  .command('list')
  .description('list sysadmins')
  .action(() => runAdmin('sysadmin list', {}));
sysadmin
  .command('remove <name>')
  .description('take sysadmin rights away from a user')
  .action((name: string) => runAdmin('sysadmin remove', { name }));

const user = program.command('user').description('user accounts and API tokens (also while the server runs)');
user
  .command('add <name>')
  .description('create a user')
  .requiredOption('-e, --email <email>', 'email address')
  .option('-p, --password <password>', 'password (default: a random one; use API tokens)')
  .option('--fullname <fullname>', 'full name')
  .action((name: string, o: { email: string; password?: string; fullname?: string }) =>
    runAdmin('user add', { name, email: o.email, password: o.password, fullname: o.fullname }),
  );
user
  .command('list')
  .description('list users')
  .action(() => runAdmin('user list', {}));
user
  .command('remove <name>')
  .description('delete a user (state deleted)')
  .action((name: string) => runAdmin('user remove', { name }));

const token = user.command('token').description('API tokens');
token
  .command('add <user> <token_name>')
  .description('create an API token; the token is printed alone on the last line')
  .option('--expires-in <n>', 'expire after n units')
  .addOption(new Option('--unit <unit>', 'unit of --expires-in').choices(['seconds', 'minutes', 'hours', 'days']).default('days'))
  .action((userName: string, tokenName: string, o: { expiresIn?: string; unit: string }) =>
    runAdmin('user token add', { user: userName, token_name: tokenName, expires_in: o.expiresIn, unit: o.unit }),
  );
token
  .command('list <user>')
  .description("list a user's API tokens")
  .action((userName: string) => runAdmin('user token list', { user: userName }));
token
  .command('revoke <token_id>')
  .description('revoke an API token by its id')
  .action((id: string) => runAdmin('user token revoke', { token_id: id }));

registerSearchIndexCommands(program, { config, withServices });
for (const register of cliCommands) register(program, { config, withServices });

function explain(e: unknown): string {
  if (e instanceof ActionError) return e.message;
  if (e instanceof ConfigError || e instanceof DataDirLockedError || e instanceof CliError) return e.message;
  return (e as Error)?.stack ?? String(e);
}

program.parseAsync(process.argv).catch((e) => {
  console.error(`svc: ${explain(e)}`);
  process.exit(1);
});
