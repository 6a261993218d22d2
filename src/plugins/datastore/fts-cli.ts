// `svc db upgrade` also gives data store tables made before stored full-text vectors their vector
// column and indexes, and fills them, with a progress bar for large tables (src/datastore/fts.ts).
import type { Command } from 'commander';
import { cliCommands } from '../../cli/extensions.ts';

/** Tables with at least this many rows to fill get a progress bar. */
const BAR_FROM = 10_000;

function progressBar(out: NodeJS.WriteStream) {
  let lastPct = -1;
  return (table: string, done: number, total: number) => {
    if (total < BAR_FROM) return;
    const pct = total ? Math.floor((done / total) * 100) : 100;
    if (pct === lastPct && done < total) return;
    lastPct = pct;
    const width = 30;
    const bar = '#'.repeat(Math.round((pct / 100) * width)).padEnd(width, '-');
    const line = `full-text index ${table} [${bar}] ${String(pct).padStart(3)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} rows`;
    // A terminal gets one line redrawn; a log gets a line per 10 %.
    if (out.isTTY) out.write(`\r${line}${done >= total ? '\n' : ''}`);
    else if (pct % 10 === 0 || done >= total) out.write(`${line}\n`);
    if (done >= total) lastPct = -1;
  };
}

cliCommands.push((program, tools) => {
  const upgrade = program.commands.find((c) => c.name() === 'db')?.commands.find((c: Command) => c.name() === 'upgrade');
  upgrade?.hook('postAction', async () => {
    const { PostgresBackend } = await import('../../datastore/postgres.ts');
    await tools.withServices(async (s) => {
      const backend = s.plugins.datastore;
      if (!(backend instanceof PostgresBackend)) return;
      const n = await backend.upgradeFullText(progressBar(process.stderr));
      tools.print(`data store: ${n} table(s) with full-text vectors up to date`);
    });
  });
});
