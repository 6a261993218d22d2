// harvest: keeps this catalog in step with other catalogs (CKAN sites, DCAT documents and
// endpoints), with ckanext-harvest's actions. A job's gather and its imports run as jobs of the
// queue; the scheduler starts sources by their frequency. See docs/harvesting.md.
import type { Plugin } from '../plugin.ts';
import type { Services } from '../../context.ts';
import { declareOption } from '../../config/options.ts';
import '../../harvest/options.ts';
import { harvestFetch } from '../../harvest/fetch.ts';
import { readerFor } from '../../harvest/readers.ts';
import { GATHER_JOB_TYPE, IMPORT_JOB_TYPE, runGather, type HarvestDeps } from '../../harvest/run-gather.ts';
import { runImportBatch } from '../../harvest/run-import.ts';
import { schedulerTick } from '../../harvest/scheduler.ts';
import { sourceActions } from './source-actions.ts';
import { jobActions } from './job-actions.ts';
import { objectActions } from './object-actions.ts';

const positive = (v: number) => (v > 0 ? undefined : 'must be a positive number');
declareOption({
  name: 'svc.harvest.scheduler',
  type: 'bool',
  default: true,
  description:
    'Run harvest sources by their frequency from this process (every process that runs the plugin ticks; nodes never start one source twice)',
});
declareOption({
  name: 'svc.harvest.scheduler_interval',
  type: 'int',
  default: 60,
  validate: positive,
  description: 'Seconds between two looks for harvest sources due to run (and for jobs whose worker died)',
});
declareOption({
  name: 'svc.harvest.import_batch',
  type: 'int',
  default: 100,
  validate: (v: number) => (v >= 1 && v <= 1000 ? undefined : 'must be between 1 and 1000'),
  description: 'Harvest objects gathered per transaction and imported per queue job',
});
declareOption({
  name: 'svc.harvest.import_concurrency',
  type: 'int',
  default: 4,
  validate: (v: number) => (v >= 1 && v <= 16 ? undefined : 'must be between 1 and 16'),
  description: 'PostgreSQL: transactions of one import job run at once (the embedded database runs one at a time)',
});
declareOption({
  name: 'svc.harvest.import_while_gathering',
  type: 'bool',
  default: true,
  description:
    'PostgreSQL: the gather imports each batch it adds while it reads the next ones (the queued import jobs then find them done; off: only the import jobs import, after the gather when one worker runs)',
});
declareOption({ name: 'svc.harvest.queue', type: 'string', default: 'default', description: 'Job queue of harvest gathers and imports' });

/** What the plugin shares in services.plugins.harvest (tests hand in their own readers). */
export interface HarvestService {
  deps: HarvestDeps;
  tick: () => ReturnType<typeof schedulerTick>;
}

export const harvestPlugin: Plugin = {
  name: 'harvest',
  setup(services: Services) {
    const shared: HarvestService = {
      deps: { readerFor, fetch: (s) => harvestFetch(s.config) },
      tick: () => schedulerTick(services),
    };
    services.plugins.harvest = shared;
    services.registry.defineAll([...sourceActions, ...jobActions, ...objectActions]);
    const jobData = (data: Record<string, unknown>) => String(data.harvest_job_id);
    services.jobs.registerJobType(GATHER_JOB_TYPE, ({ job, signal }) => {
      const jobId = jobData(job.data);
      const importNow =
        services.db.kind === 'postgres' && services.config.bool('svc.harvest.import_while_gathering')
          ? (ids: string[]) => runImportBatch(services, jobId, ids, signal)
          : undefined;
      return runGather(services, shared.deps, jobId, signal, importNow);
    });
    services.jobs.registerJobType(IMPORT_JOB_TYPE, ({ job, signal }) =>
      runImportBatch(services, jobData(job.data), (job.data.object_ids as string[]) ?? [], signal),
    );
    if (services.config.bool('svc.harvest.scheduler')) {
      const timer = setInterval(() => {
        shared.tick().catch((e) => services.logger.error({ err: e }, 'harvest scheduler tick failed'));
      }, services.config.int('svc.harvest.scheduler_interval') * 1000);
      timer.unref();
      services.onClose.push(async () => clearInterval(timer));
    }
  },
};
