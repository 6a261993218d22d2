// `svc search-index rebuild [--only-missing] | check | clear`. Rebuild runs in batches with a
// progress bar, safe while the server runs (each batch is its own short transaction).
import type { Command } from 'commander';
import type { Config } from '../config/load.ts';
import { runAdmin } from './account-commands.ts';
import type { CliTools } from './extensions.ts';

export function registerSearchIndexCommands(program: Command, tools: CliTools, coreConfig: () => Config): void {
  const cmd = program.command('search-index').description('the package_search index');
  cmd
    .command('rebuild')
    .description('index every dataset again (or only those missing from the index)')
    .option('--only-missing', 'only datasets that are not indexed yet')
    .option('--batch-size <n>', 'datasets per transaction', '500')
    .action(async (o: { onlyMissing?: boolean; batchSize: string }) => {
      const cliProgress = (await import('cli-progress')).default;
      const { rebuildSearchIndex } = await import('../search/service.ts');
      await tools.withServices(async (s) => {
        const bar = new cliProgress.SingleBar(
          { format: 'indexing [{bar}] {percentage}% | {value}/{total} datasets | {eta}s left', etaBuffer: 20 },
          cliProgress.Presets.shades_classic,
        );
        const started = Date.now();
        let begun = false;
        const n = await rebuildSearchIndex(s, {
          onlyMissing: !!o.onlyMissing,
          batchSize: Math.max(1, Number(o.batchSize) || 500),
          progress: (done, total) => {
            if (!begun) {
              bar.start(total, 0);
              begun = true;
            }
            bar.update(done);
          },
        });
        bar.stop();
        const secs = (Date.now() - started) / 1000;
        tools.print(`indexed ${n} datasets in ${secs.toFixed(1)} s (${Math.round(n / Math.max(secs, 0.001))} datasets/s)`);
      });
    });
  cmd
    .command('check')
    .description('list the datasets missing from the index or indexed in an older version (also while the server runs)')
    .action(async () => {
      await runAdmin(tools, coreConfig, 'search-index check', {});
    });
  cmd
    .command('clear')
    .description('empty the index (searches find nothing until svc search-index rebuild; also while the server runs)')
    .action(() => runAdmin(tools, coreConfig, 'search-index clear', {}));
}
