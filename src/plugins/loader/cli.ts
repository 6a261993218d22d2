// `svc loader submit RESOURCE_ID | --dataset ID | --all [--sync] [--ignore-hash]`.
import { cliCommands } from '../../cli/extensions.ts';
import type { Services } from '../../actions/context.ts';
import { BadRequestError } from '../../errors.ts';

interface Options {
  dataset?: string;
  all?: boolean;
  sync?: boolean;
  ignoreHash?: boolean;
}

async function resourcesToLoad(s: Services, id: string | undefined, o: Options): Promise<{ id: string; url: string | null }[]> {
  type Row = {
    id: string;
    url: string | null;
    url_type: string | null;
    format: string | null;
    mimetype: string | null;
    last_modified: string | null;
    size: unknown;
  };
  const cols = 'r.id, r.url, r.url_type, r.format, r.mimetype, r.last_modified, r.size';
  let rows: Row[];
  if (id) {
    rows = (await s.db.query<Row>(`SELECT ${cols} FROM resources r WHERE r.id = $1 AND r.state = 'active'`, [id])).rows;
    if (!rows.length) throw new BadRequestError(`no active resource ${id}`);
    return rows;
  }
  if (o.dataset) {
    rows = (
      await s.db.query<Row>(
        `SELECT ${cols} FROM resources r JOIN packages p ON p.id = r.package_id
      WHERE (p.id = $1 OR p.name = $1) AND r.state = 'active' AND p.state <> 'deleted' ORDER BY r.position`,
        [o.dataset],
      )
    ).rows;
  } else {
    rows = (
      await s.db.query<Row>(`SELECT ${cols} FROM resources r JOIN packages p ON p.id = r.package_id
      WHERE r.state = 'active' AND p.state = 'active' ORDER BY p.name, r.position`)
    ).rows;
  }
  const { loaderFormats, resourceFormat } = await import('./submit.ts');
  const formats = loaderFormats(s);
  return rows.filter((r) => r.url_type !== 'datastore' && r.url && formats.has(resourceFormat(r)));
}

function registerLoaderCli(
  program: Parameters<(typeof cliCommands)[number]>[0],
  { withServices }: Parameters<(typeof cliCommands)[number]>[1],
): void {
  const loader = program.command('loader').description('load resource files into the data store');
  loader
    .command('submit [resource_id]')
    .description('load a resource, the loadable resources of a dataset (--dataset) or of every dataset (--all)')
    .option('--dataset <id>', 'every loadable resource of this dataset')
    .option('--all', 'every loadable resource of every active dataset')
    .option('--sync', 'load here and now with a progress bar, instead of queueing jobs for the workers')
    .option('--ignore-hash', 'load even files that have not changed since their last load')
    .action(async (id: string | undefined, o: Options) =>
      withServices(async (s) => {
        if ([id, o.dataset, o.all].filter(Boolean).length !== 1)
          throw new BadRequestError('give one of RESOURCE_ID, --dataset ID or --all');
        if (!s.plugins.datastore) throw new BadRequestError('the datastore and loader plugins must be enabled (svc.plugins)');
        const cliProgress = (await import('cli-progress')).default;
        const { runLoad } = await import('./job.ts');
        const { sourceSignature, submitLoad } = await import('./submit.ts');
        const list = await resourcesToLoad(s, id, o);
        if (!list.length) console.log('no loadable resources');
        let failed = 0;
        for (const r of list) {
          if (!o.sync) {
            const full = (await s.db.query('SELECT url, url_type, last_modified, size FROM resources WHERE id = $1', [r.id])).rows[0];
            const job = await s.db.transaction((tx) =>
              submitLoad(s, tx, r.id, { ignoreHash: o.ignoreHash, source: sourceSignature(full) }),
            );
            console.log(`queued load of ${r.id} (job ${job.id})`);
            continue;
          }
          const bar = new cliProgress.SingleBar(
            {
              format: `${r.id.slice(0, 8)} {phase} [{bar}] {percentage}% | {rows} rows | {mb} MB`,
              hideCursor: true,
              clearOnComplete: false,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(1, 0, { phase: 'start   ', rows: 0, mb: '0.0' });
          try {
            const out = await runLoad(s, r.id, {
              jobId: null,
              ignoreHash: o.ignoreHash,
              onProgress: (p) => {
                if (p.total) bar.setTotal(p.total);
                bar.update(p.total ? Math.min(p.bytes, p.total) : 0, {
                  phase: p.phase.padEnd(8),
                  rows: p.rows,
                  mb: (p.bytes / 1048576).toFixed(1),
                });
              },
            });
            bar.stop();
            console.log(
              out.skipped
                ? `${r.id}: unchanged, not loaded`
                : `${r.id}: ${out.rows} rows, ${out.columns.length} columns (${out.columns.map((c) => `${c.id} ${c.type}`).join(', ')})`,
            );
          } catch (e) {
            bar.stop();
            failed++;
            console.error(`${r.id}: load failed: ${(e as Error).message}`);
          }
        }
        if (failed) process.exitCode = 1;
      }),
    );
}

cliCommands.push(registerLoaderCli);
