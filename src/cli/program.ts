// The svc command line: every command declared here (or by a registered module) with its options,
// its code imported only when it runs, so that `svc --help` and the account commands handed to a
// running server answer without loading the server. runCli is also the entry point of the tests
// (argv in, output captured).
import { Command, CommanderError } from 'commander';
import type { Services } from '../context.ts';
import { ConfigError, loadConfig, type Config } from '../config/load.ts';
import { DataDirLockedError } from '../db/lock.ts';
import { ActionError } from '../errors.ts';
import { registerAccountCommands } from './account-commands.ts';
import { registerCatalogCommands } from './catalog-commands.ts';
import { CliError, cliCommands, type CliIo, type CliTools } from './extensions.ts';
import { registerJobsCommands } from './jobs.ts';
import { loadPluginCommands } from './plugin-commands.ts';

function explain(e: unknown): string {
  if (e instanceof ActionError || e instanceof ConfigError || e instanceof CliError || e instanceof DataDirLockedError) return e.message;
  return (e as Error)?.stack ?? String(e);
}

function processIo(): CliIo {
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
  };
}

function makeTools(program: Command, io: CliIo, exit: { code?: number }): CliTools {
  const load = (overrides: Record<string, unknown> = {}) =>
    loadConfig({ configFile: program.opts().config, overrides, env: io.env, cwd: io.cwd });
  const config = async (overrides: Record<string, unknown> = {}): Promise<Config> => {
    // Core and plugins declare their options when imported: every one must be known to read them.
    await import('../services.ts');
    return load(overrides);
  };
  const withServices = async <T>(fn: (s: Services) => Promise<T>, overrides: Record<string, unknown> = {}): Promise<T> => {
    if (io.services) return fn(io.services);
    const { closeServices, createServices } = await import('../services.ts');
    const pino = (await import('pino')).default;
    const cfg = load({ 'svc.log_level': 'warn', ...overrides });
    const services = await createServices(cfg, { logger: pino({ level: 'warn' }, pino.destination(2)), worker: false });
    try {
      return await fn(services);
    } finally {
      await closeServices(services);
    }
  };
  return {
    io,
    config,
    withServices,
    print: (line) => io.out(`${line}\n`),
    setExitCode: (code) => {
      exit.code = code;
    },
  };
}

/** Declares every command on a new program (plugin modules imported first, cheaply). */
async function buildProgram(io: CliIo, exit: { code?: number } = {}): Promise<Command> {
  await loadPluginCommands();
  const program = new Command();
  program
    .name('svc')
    .description('svc: a data catalog and data store with a CKAN-compatible Action API')
    .option('-c, --config <file>', 'configuration file (default: $SVC_INI or ./svc.ini)')
    .showHelpAfterError()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  const tools = makeTools(program, io, exit);
  // Core options only: enough for the storage folder (admin socket) without loading the plugins.
  const coreConfig = () => loadConfig({ configFile: program.opts().config, env: io.env, cwd: io.cwd });

  program
    .command('serve')
    .description('start the web server (Action API on /api/3/action)')
    .option('-p, --port <n>', 'port (svc.port, default 5000)')
    .option('-H, --host <host>', 'address to bind (svc.host, default localhost)')
    .option('--no-workers', 'web only: run no job worker in this process (jobs run in `svc jobs worker` processes)')
    .action(async (o: { port?: string; host?: string; workers: boolean }) => {
      const overrides: Record<string, unknown> = {};
      if (o.port) overrides['svc.port'] = o.port;
      if (o.host) overrides['svc.host'] = o.host;
      const { serve } = await import('./serve.ts');
      await serve(await tools.config(overrides), { workers: o.workers });
    });

  const configCmd = program.command('config').description('configuration');
  configCmd
    .command('show')
    .description('print the effective configuration (secrets masked), with the values sysadmins set at run time')
    .action(async () => (await import('./config-commands.ts')).showConfig(tools, coreConfig));
  configCmd
    .command('sample')
    .description('print a commented svc.ini with every option, its default and its description')
    .action(async () => (await import('./config-commands.ts')).printSampleConfig(tools));

  const db = program.command('db').description('database schema');
  for (const name of ['init', 'upgrade']) {
    db.command(name)
      .description(name === 'init' ? 'create the database schema (idempotent)' : 'apply pending migrations (idempotent)')
      .action(async () => {
        // Opening the services applies every pending migration (core and plugins).
        await tools.withServices(async () => undefined);
        tools.print('database is up to date');
      });
  }

  registerAccountCommands(program, tools, coreConfig);
  registerCatalogCommands(program, tools, coreConfig);
  registerJobsCommands(program, tools);
  for (const register of cliCommands) register(program, tools);
  return program;
}

/** Runs the command line argv (without node and script); returns the exit status. */
export async function runCli(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const fullIo = { ...processIo(), ...io };
  const exit: { code?: number } = {};
  const program = await buildProgram(fullIo, exit);
  program.exitOverride();
  for (const c of allCommands(program)) c.exitOverride();
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exit.code ?? Number(process.exitCode ?? 0);
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode;
    fullIo.err(`svc: ${explain(e)}\n`);
    return 1;
  } finally {
    process.exitCode = before;
  }
}

function allCommands(c: Command): Command[] {
  return c.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}
