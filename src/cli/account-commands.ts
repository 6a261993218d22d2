// `svc sysadmin ...`, `svc user ...`, `svc user token ...`: declared here, run by admin-commands.ts
// in the running server (over its admin socket) or, when none runs, in this process.
import { type Command, Option } from 'commander';
import type { Config } from '../config/load.ts';
import { CliError, type CliTools } from './extensions.ts';

const DATA_STORE_PLUGINS = new Set(['datastore', 'loader', 'datatables_view']);

/**
 * Runs an admin command: handed to the running server over its admin socket when one runs
 * (PGlite allows one process per data dir), else here on the database.
 */
export async function runAdmin(tools: CliTools, coreConfig: () => Config, command: string, args: Record<string, unknown>): Promise<void> {
  const { sendAdminCommand } = await import('./admin-client.ts');
  const answer = tools.io.services ? undefined : await sendAdminCommand(coreConfig(), command, args);
  let lines: string[];
  if (answer) {
    if (!answer.ok) throw new CliError(answer.error ?? `${command} failed`);
    lines = answer.lines ?? [];
  } else {
    const { adminCommands } = await import('./admin-commands.ts');
    // Accounts live in the catalog: leave out the plugins that open the data store (seconds in embedded mode).
    const plugins = coreConfig()
      .list('svc.plugins')
      .filter((name) => !DATA_STORE_PLUGINS.has(name));
    lines = await tools.withServices((s) => adminCommands[command](s, args), { 'svc.plugins': plugins });
  }
  for (const line of lines) tools.print(line);
}

export function registerAccountCommands(program: Command, tools: CliTools, coreConfig: () => Config): void {
  const run = (command: string, args: Record<string, unknown>) => runAdmin(tools, coreConfig, command, args);

  const sysadmin = program.command('sysadmin').description('sysadmin accounts (also while the server runs)');
  sysadmin
    .command('add <name>')
    .description('make a user sysadmin, creating the user if missing; --password sets the password of a new or existing user')
    .option('-e, --email <email>', 'email for a new user')
    .option('-p, --password <password>', 'password to set (default for a new user: a random one; use API tokens)')
    .action((name: string, o: { email?: string; password?: string }) =>
      run('sysadmin add', { name, email: o.email, password: o.password }),
    );
  sysadmin
    .command('list')
    .description('list sysadmins')
    .action(() => run('sysadmin list', {}));
  sysadmin
    .command('remove <name>')
    .description('take sysadmin rights away from a user')
    .action((name: string) => run('sysadmin remove', { name }));

  const user = program.command('user').description('user accounts and API tokens (also while the server runs)');
  user
    .command('add <name>')
    .description('create a user')
    .requiredOption('-e, --email <email>', 'email address')
    .option('-p, --password <password>', 'password (default: a random one; use API tokens)')
    .option('--fullname <fullname>', 'full name')
    .action((name: string, o: { email: string; password?: string; fullname?: string }) =>
      run('user add', { name, email: o.email, password: o.password, fullname: o.fullname }),
    );
  user
    .command('list')
    .description('list users')
    .action(() => run('user list', {}));
  user
    .command('remove <name>')
    .description('delete a user (state deleted)')
    .action((name: string) => run('user remove', { name }));
  user
    .command('setpass <name>')
    .description("set a user's password (without --password: asked twice on a terminal, or read from a pipe)")
    .option('-p, --password <password>', 'the new password')
    .action(async (name: string, o: { password?: string }) => {
      let password = o.password;
      if (password === undefined) {
        const { readNewPassword } = await import('./password-prompt.ts');
        password = await readNewPassword(tools.io);
      }
      await run('user setpass', { name, password });
    });

  const token = user.command('token').description('API tokens');
  token
    .command('add <user> <token_name>')
    .description('create an API token; the token is printed alone on the last line')
    .option('--expires-in <n>', 'expire after n units')
    .addOption(new Option('--unit <unit>', 'unit of --expires-in').choices(['seconds', 'minutes', 'hours', 'days']).default('days'))
    .action((userName: string, tokenName: string, o: { expiresIn?: string; unit: string }) =>
      run('user token add', { user: userName, token_name: tokenName, expires_in: o.expiresIn, unit: o.unit }),
    );
  token
    .command('list <user>')
    .description("list a user's API tokens")
    .action((userName: string) => run('user token list', { user: userName }));
  token
    .command('revoke <token_id>')
    .description('revoke an API token by its id')
    .action((id: string) => run('user token revoke', { token_id: id }));
}
