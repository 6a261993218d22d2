// `svc dataset delete|purge`, `svc views create`, `svc search-index ...`: the catalog commands an
// operator reaches for (CKAN: `ckan dataset delete|purge`, `ckan views create`, `ckan search-index`).
import type { Command } from 'commander';
import type { Config } from '../config/load.ts';
import { runAdmin } from './account-commands.ts';
import type { CliTools } from './extensions.ts';
import { registerSearchIndexCommands } from './search-index.ts';

export function registerCatalogCommands(program: Command, tools: CliTools, coreConfig: () => Config): void {
  const run = (command: string, args: Record<string, unknown>) => runAdmin(tools, coreConfig, command, args);
  const dataset = program.command('dataset').description('datasets (also while the server runs)');
  dataset
    .command('delete <name_or_id>')
    .description('delete a dataset (state deleted: it can still be restored)')
    .action((id: string) => run('dataset delete', { id }));
  dataset
    .command('purge <name_or_id>')
    .description('remove a dataset for good, with its resources and uploaded files')
    .action((id: string) => run('dataset purge', { id }));

  const views = program.command('views').description('resource views (also while the server runs)');
  views
    .command('create [datasets...]')
    .description('create the default views (svc.views.default_views) that resources lack, of these datasets or of every active one')
    .action((datasets: string[]) => run('views create', { datasets }));

  registerSearchIndexCommands(program, tools, coreConfig);
}
