// loader: fills the data store from resources' files (uploaded or linked), in background jobs.
// Creating or updating a resource (new upload or URL) whose format is in svc.loader.formats queues
// a load; xloader_submit queues one by hand; `svc loader submit` runs them from the command line.
import type { Plugin } from '../plugin.ts';
import { declareOption } from '../../config/options.ts';
import { ConfigError } from '../../config/load.ts';
import { onPackageChange } from '../../model/packages.ts';
import { loaderActions } from './actions.ts';
import { runLoad } from './job.ts';
import { sweepStaleLoadFiles } from './tmp-files.ts';
import { uploadTmpDir } from '../../files/storage.ts';
import { LOAD_JOB_TYPE, parseValue, TASK_TYPE } from './status.ts';
import { loaderFormats, resourceFormat, sourceSignature, submitLoad } from './submit.ts';
import './cli.ts'; // adds `svc loader submit`

const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');
declareOption({
  name: 'svc.loader.formats',
  type: 'list',
  default: ['csv', 'tsv', 'txt', 'xls', 'xlsx', 'ods'],
  description: 'Resource formats the loader loads into the data store (format guessed from the file name or mime type when not given)',
});
declareOption({
  name: 'svc.loader.auto',
  type: 'bool',
  default: true,
  description: 'Load resources automatically when they are created or get a new file or URL',
});
declareOption({
  name: 'svc.loader.max_size',
  type: 'int',
  default: 1024,
  validate: positive,
  description: 'Largest file the loader downloads, in MB',
});
declareOption({
  name: 'svc.loader.timeout',
  type: 'int',
  default: 300,
  validate: positive,
  description: 'Longest time a download may take, in seconds',
});
declareOption({
  name: 'svc.loader.allow_private_urls',
  type: 'bool',
  default: false,
  description: 'Allow links to loopback, private, link-local (cloud metadata) and other reserved addresses',
});
declareOption({
  name: 'svc.loader.direct_copy',
  type: 'bool',
  default: true,
  description: 'Plain UTF-8 CSV goes to COPY as it is (false: every file is read in two passes, rows rewritten for COPY)',
});
declareOption({
  name: 'svc.loader.copy_streams',
  type: 'int',
  default: 2,
  // Each takes a connection of the data store's write pool (10) beside the load's own.
  validate: (v: number) => (v >= 1 && v <= 8 ? undefined : 'must be between 1 and 8'),
  description:
    "PostgreSQL: connections copying a plain CSV file at once, into a table made beforehand that only the swap makes readable (1: the load's own connection only)",
});
declareOption({ name: 'svc.loader.queue', type: 'string', default: 'default', description: 'Job queue of loads' });

export const loaderPlugin: Plugin = {
  name: 'loader',
  setup(services) {
    if (!services.plugins.datastore)
      throw new ConfigError('the loader plugin needs the datastore plugin: list datastore before loader in svc.plugins');
    services.jobs.registerJobType(LOAD_JOB_TYPE, ({ job, signal }) =>
      runLoad(services, String(job.data.resource_id), {
        jobId: job.id,
        ignoreHash: !!job.data.ignore_hash,
        userId: typeof job.data.user_id === 'string' ? job.data.user_id : null,
        signal,
      }),
    );
    services.registry.defineAll(loaderActions);
    const stale = sweepStaleLoadFiles(uploadTmpDir(services.config));
    if (stale.length) services.logger.info({ files: stale }, 'removed temporary files of loads that stopped');
    // New uploads and URLs of loadable resources are loaded once the change commits.
    onPackageChange(services, async (db, packageId, change, afterCommit, origin) => {
      if (change !== 'changed' || !services.config.bool('svc.loader.auto')) return;
      const formats = loaderFormats(services);
      const rows = await db.query<{
        id: string;
        url: string | null;
        url_type: string | null;
        format: string | null;
        mimetype: string | null;
        last_modified: string | null;
        size: unknown;
        value: string | null;
      }>(
        `SELECT r.id, r.url, r.url_type, r.format, r.mimetype, r.last_modified, r.size, t.value
         FROM resources r JOIN packages p ON p.id = r.package_id
         LEFT JOIN task_status t ON t.entity_id = r.id AND t.task_type = $2 AND t.key = $2
         WHERE r.package_id = $1 AND r.state = 'active' AND p.state = 'active'`,
        [packageId, TASK_TYPE],
      );
      for (const r of rows.rows) {
        if (r.url_type === 'datastore' || !r.url || !formats.has(resourceFormat(r))) continue;
        const source = sourceSignature(r);
        if (parseValue(r.value ? ({ value: r.value } as never) : null).source === source) continue;
        const task = r.value === null ? null : { value: r.value };
        await submitLoad(services, db, r.id, { source, afterCommit, userId: origin?.identity?.user?.id, task });
      }
    });
  },
};
