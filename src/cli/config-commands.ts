// `svc config show` (the effective configuration, and the values sysadmins set at run time with
// config_option_update) and `svc config sample` (a commented svc.ini made from the declarations).
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/load.ts';
import { envName } from '../config/load.ts';
import { optionDeclarations, type OptionDeclaration } from '../config/options.ts';
import { CliError, type CliTools } from './extensions.ts';

const shown = (v: unknown) => (Array.isArray(v) ? v.join(' ') : String(v ?? ''));

export async function showConfig(tools: CliTools, coreConfig: () => Config): Promise<void> {
  const cfg = await tools.config();
  const runtime = await runtimeValues(tools, cfg, coreConfig);
  tools.print(`# config file: ${cfg.file ?? '(none)'}`);
  if (typeof runtime === 'string') tools.print(`# values set at run time (config_option_update): not read, ${runtime}`);
  else if (Object.keys(runtime).length)
    tools.print('# values marked "run time" were set by a sysadmin (config_option_update) and win over the file');
  for (const [k, v] of Object.entries(cfg.show())) {
    if (typeof runtime !== 'string' && k in runtime) {
      tools.print(`${k} = ${shown(runtime[k])}    # run time (config_option_update); file/environment: ${shown(v)}`);
    } else tools.print(`${k} = ${shown(v)}`);
  }
}

/** The saved runtime values, or why they could not be read. */
async function runtimeValues(tools: CliTools, cfg: Config, coreConfig: () => Config): Promise<Record<string, unknown> | string> {
  let lines: string[] | undefined;
  try {
    if (tools.io.services) {
      const { adminCommands } = await import('./admin-commands.ts');
      lines = await adminCommands['config runtime'](tools.io.services, {});
    } else {
      const { sendAdminCommand } = await import('./admin-client.ts');
      const answer = await sendAdminCommand(coreConfig(), 'config runtime', {});
      if (answer && !answer.ok) return `the running server answered: ${answer.error}`;
      lines = answer?.lines ?? (await readFromDatabase(cfg));
      if (!lines) return 'there is no database yet';
    }
  } catch (e) {
    return `the database could not be read (${e instanceof Error ? e.message : String(e)})`;
  }
  const values: Record<string, unknown> = {};
  for (const line of lines) {
    const tab = line.indexOf('\t');
    values[line.slice(0, tab)] = JSON.parse(line.slice(tab + 1));
  }
  return values;
}

/** Reads the saved runtime options from the catalog database itself (no server runs). */
async function readFromDatabase(cfg: Config): Promise<string[] | undefined> {
  if (!cfg.str('svc.database_url') && !fs.existsSync(path.join(cfg.str('svc.storage_path'), 'catalog'))) return undefined;
  const { openCatalogDatabase } = await import('../services.ts');
  const { allSystemInfo } = await import('../model/system-info.ts');
  const db = await openCatalogDatabase(cfg);
  try {
    const saved = await allSystemInfo(db, 'config:');
    return Object.entries(saved).map(([k, v]) => `${k.slice('config:'.length)}\t${v}`);
  } finally {
    await db.close();
  }
}

const TYPE_NAMES: Record<OptionDeclaration['type'], string> = {
  string: 'text',
  int: 'integer',
  float: 'number',
  bool: 'true or false',
  list: 'list, separated by spaces',
};

export async function printSampleConfig(tools: CliTools): Promise<void> {
  // Every module that declares options (core, jobs, views, plugins) is loaded with the services.
  await import('../services.ts');
  const decls = optionDeclarations().sort((a, b) => a.name.localeCompare(b.name));
  if (!decls.length) throw new CliError('no options are declared');
  tools.print('# svc configuration (svc.ini), written by `svc config sample`.');
  tools.print('# Every option with its default, commented out: remove the "#" before an option to set it.');
  tools.print('# The environment wins over this file: SVC__PORT=8080 sets svc.port (dots become "__").');
  tools.print('# Options marked "run time" may also be changed by sysadmins while svc runs (config_option_update).');
  for (const d of decls) {
    const notes = [TYPE_NAMES[d.type], d.secret ? 'secret' : '', d.runtimeEditable ? 'run time' : '', `env ${envName(d.name)}`].filter(
      Boolean,
    );
    tools.print('');
    tools.print(`# ${d.description} (${notes.join('; ')})`);
    tools.print(`#${d.name} = ${shown(d.default)}`.trimEnd());
  }
}
