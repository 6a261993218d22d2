// The harvest pages (when the harvest plugin is on), at ckanext-harvest's addresses: the list of
// sources, a source (details, last jobs, errors, harvested datasets, "Harvest now" and "Clear"),
// its jobs and job reports, a harvest object's raw content. Forms live in harvest-forms.ts. Every
// read and write goes through the harvest actions as the visitor.
import type { WebContext, WebRouter } from '../router.ts';
import { ActionError, NotFoundError, ValidationError } from '../../errors.ts';
import { enc, field, fieldMessages, forbidden } from './manage-forms.ts';
import { showOr404 } from './catalog-common.ts';
import { harvestFormPages, mayCreate, mayOn } from './harvest-forms.ts';

type Dict = Record<string, any>;

/** Job statuses as ckanext-harvest writes them ('New', 'Running', 'Finished', ...) to message keys. */
const statusKey = (status: unknown) =>
  `harvest.status.${String(status ?? 'none')
    .toLowerCase()
    .replace(/\W+/g, '_')}`;
const STAT_KEYS = ['added', 'updated', 'deleted', 'not modified', 'errored'] as const;

/** A job's counts in a fixed order, for the badges of the source and job pages. */
function jobCounts(job: Dict | null | undefined): { key: string; count: number }[] {
  const stats = (job?.stats ?? {}) as Dict;
  return STAT_KEYS.map((k) => ({ key: `harvest.stats.${k.replace(' ', '_')}`, count: Number(stats[k] ?? 0) }));
}

/** Seconds between two of the API's timestamps (UTC, without zone), or null. */
function durationSeconds(from: unknown, to: unknown): number | null {
  if (typeof from !== 'string' || typeof to !== 'string') return null;
  const ms = Date.parse(`${to}Z`.replace('ZZ', 'Z')) - Date.parse(`${from}Z`.replace('ZZ', 'Z'));
  return Number.isFinite(ms) && ms >= 0 ? Math.round(ms / 100) / 10 : null;
}

const sourceShow = (ctx: WebContext, id: string) => showOr404<Dict>(ctx, 'harvest_source_show', { id });

/** The datasets this source harvested (first page), through package_search. */
async function harvestedDatasets(ctx: WebContext, source: Dict): Promise<{ count: number; results: Dict[] }> {
  try {
    return await ctx.call('package_search', { fq: `harvest_source_id:"${source.id}"`, rows: 20, sort: 'title_string asc' });
  } catch (e) {
    if (e instanceof ActionError) return { count: 0, results: [] };
    throw e;
  }
}

interface JobReport {
  job: Dict;
  gatherErrors: Dict[];
  objectErrors: Dict[];
}

/** A job's errors as its dict summarizes them (message and count). */
const summaries = (job: Dict): JobReport => ({
  job,
  gatherErrors: job.gather_error_summary ?? [],
  objectErrors: job.object_error_summary ?? [],
});

/**
 * A job and its errors: the job's error summaries (message and count), and per object when the
 * plugin has ckanext-harvest's harvest_job_report (its object_errors keyed by object id).
 */
async function jobReport(ctx: WebContext, id: string): Promise<JobReport> {
  const job = await showOr404<Dict>(ctx, 'harvest_job_show', { id });
  if (!ctx.services.registry.has('harvest_job_report')) return summaries(job);
  const report = await ctx.call<Dict>('harvest_job_report', { id });
  const byObject = report.object_errors ?? {};
  const objectErrors = Array.isArray(byObject)
    ? (byObject as Dict[])
    : Object.entries(byObject as Record<string, Dict>).map(([objectId, o]) => ({ object_id: objectId, ...o }));
  return { job, gatherErrors: report.gather_errors ?? [], objectErrors };
}

const jobView = (job: Dict) => ({
  ...job,
  counts: jobCounts(job),
  status_key: statusKey(job.status),
  duration: durationSeconds(job.gather_started ?? job.created, job.finished),
});

export function harvestPages(web: WebRouter): void {
  if (!web.services.config.list('svc.plugins').includes('harvest')) return;

  web.get('/harvest', async (ctx) => {
    const q = field(ctx.query, 'q').trim();
    const all = await ctx.call<Dict[]>('harvest_source_list', { return_last_job_status: true });
    const needle = q.toLowerCase();
    const sources = all
      .filter(
        (s) =>
          !needle ||
          [s.name, s.title, s.url].some((v) =>
            String(v ?? '')
              .toLowerCase()
              .includes(needle),
          ),
      )
      .map((s) => {
        const last = s.status?.last_job ?? null;
        return { ...s, last_job: last ? jobView(last) : null };
      });
    return ctx.render('harvest/list.njk', { q, sources, may_create: await mayCreate(ctx) });
  });

  harvestFormPages(web);

  web.get('/harvest/:id', async (ctx) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    const [datasets, mayRun, mayClear, mayEdit] = await Promise.all([
      harvestedDatasets(ctx, source),
      mayOn(ctx, 'harvest_job_create', { source_id: source.id }),
      mayOn(ctx, 'harvest_source_clear', { id: source.id }),
      mayOn(ctx, 'harvest_source_update', { id: source.id }),
    ]);
    // Those who manage the source see its jobs; others its last job's counts and error summaries.
    const jobs = mayEdit ? await ctx.call<Dict[]>('harvest_job_list', { source_id: source.id, limit: 5 }) : [];
    const lastJob: Dict | null = jobs[0] ?? source.status?.last_job ?? null;
    const last = mayEdit && lastJob ? await jobReport(ctx, lastJob.id) : lastJob && summaries(lastJob);
    return ctx.render('harvest/source.njk', {
      source,
      config_text: typeof source.config === 'string' ? source.config : source.config ? JSON.stringify(source.config, null, 2) : '',
      jobs: jobs.map(jobView),
      job_count: source.status?.job_count ?? jobs.length,
      may_see_jobs: mayEdit,
      last: last ? { job: jobView(last.job), gather_errors: last.gatherErrors, object_errors: last.objectErrors } : null,
      datasets: { ...datasets, count: source.status?.total_datasets ?? datasets.count },
      may_run: mayRun,
      may_clear: mayClear,
      may_edit: mayEdit,
    });
  });

  web.post('/harvest/refresh/:id', async (ctx) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    if (!(await mayOn(ctx, 'harvest_job_create', { source_id: source.id }))) return forbidden(ctx);
    try {
      await ctx.call('harvest_job_create', { source_id: source.id });
    } catch (e) {
      if (!(e instanceof ActionError) || e.status >= 500) throw e;
      // (a refused run says why in the action's words: a job already unfinished, an inactive source)
      const text = e instanceof ValidationError ? Object.values(fieldMessages(e)).flat().join(' ') : e.message;
      return ctx.redirect(`/harvest/${enc(source.name)}`, { kind: 'error', text });
    }
    return ctx.redirect(`/harvest/${enc(source.name)}`, { kind: 'success', text: ctx.t('harvest.run.queued') });
  });

  web.get('/harvest/clear/:id', async (ctx) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    if (!(await mayOn(ctx, 'harvest_source_clear', { id: source.id }))) return forbidden(ctx);
    return ctx.render('manage/confirm.njk', {
      heading: ctx.t('harvest.clear.title'),
      question: ctx.t('harvest.clear.question', { name: source.title || source.name }),
      action: `/harvest/clear/${enc(source.name)}`,
      cancel: `/harvest/${enc(source.name)}`,
      submit: ctx.t('harvest.clear.submit'),
    });
  });

  web.post('/harvest/clear/:id', async (ctx) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    if (!(await mayOn(ctx, 'harvest_source_clear', { id: source.id }))) return forbidden(ctx);
    await ctx.call('harvest_source_clear', { id: source.id });
    return ctx.redirect(`/harvest/${enc(source.name)}`, { kind: 'success', text: ctx.t('harvest.clear.done') });
  });

  web.get('/harvest/:id/job', async (ctx) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    const jobs = await ctx.call<Dict[]>('harvest_job_list', { source_id: source.id });
    return ctx.render('harvest/jobs.njk', { source, jobs: jobs.map(jobView), may_see_jobs: true });
  });

  const jobPage = async (ctx: WebContext, jobId: string | null) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    let id = jobId;
    if (!id) {
      const jobs = await ctx.call<Dict[]>('harvest_job_list', { source_id: source.id });
      if (!jobs[0]) return ctx.redirect(`/harvest/${enc(source.name)}/job`);
      id = jobs[0].id as string;
    }
    const { job, gatherErrors, objectErrors } = await jobReport(ctx, id);
    if (job.source_id && job.source_id !== source.id) throw new NotFoundError('harvest job');
    const running = ['New', 'Running'].includes(String(job.status));
    return ctx.render('harvest/job.njk', {
      source,
      job: jobView(job),
      gather_errors: gatherErrors,
      object_errors: objectErrors,
      may_see_jobs: true,
      may_abort: running && (await mayOn(ctx, 'harvest_job_abort', { source_id: source.id })),
    });
  };
  web.get('/harvest/:id/job/last', (ctx) => jobPage(ctx, null));
  web.get('/harvest/:id/job/:job_id', (ctx) => jobPage(ctx, ctx.params.job_id!));

  web.post('/harvest/:id/job/:job_id/abort', async (ctx) => {
    const source = await sourceShow(ctx, ctx.params.id!);
    if (!(await mayOn(ctx, 'harvest_job_abort', { source_id: source.id }))) return forbidden(ctx);
    await ctx.call('harvest_job_abort', { id: ctx.params.job_id, source_id: source.id });
    return ctx.redirect(`/harvest/${enc(source.name)}/job/${enc(ctx.params.job_id!)}`, {
      kind: 'success',
      text: ctx.t('harvest.job.aborted'),
    });
  });

  // The object's content as it was received (ckanext-harvest serves it raw, typed by its look).
  web.get('/harvest/object/:id', async (ctx) => {
    const object = await showOr404<Dict>(ctx, 'harvest_object_show', { id: ctx.params.id });
    const content = String(object.content ?? '');
    const head = content.trimStart();
    const type = head.startsWith('<') ? 'application/xml' : /^[[{]/.test(head) ? 'application/json' : 'text/plain';
    return ctx.reply
      .type(`${type}; charset=utf-8`)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(content);
  });
}
