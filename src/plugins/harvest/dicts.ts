// ckanext-harvest's dict shapes: a source (a dataset of type 'harvest' with its status), a job
// (with stats and error summaries) and an object (with its errors).
import type { Queryable } from '../../db/database.ts';
import { ValidationError } from '../../errors.ts';
import type { HarvestSourceRow } from '../../model/harvest-sources.ts';
import { groupById } from '../../model/groups.ts';
import { jobReport, sourceJobSummary, type HarvestJobRow } from '../../model/harvest-jobs.ts';
import { countSourcePackages, objectErrors, type HarvestObjectRow } from '../../model/harvest-objects.ts';

export async function harvestJobDict(db: Queryable, job: HarvestJobRow) {
  const report = await jobReport(db, job.id);
  return {
    id: job.id,
    source_id: job.source_id,
    source: job.source_id,
    status: job.status,
    created: job.created,
    gather_started: job.gather_started,
    gather_finished: job.gather_finished,
    finished: job.finished,
    stats: report.stats,
    object_error_summary: report.object_error_summary,
    gather_error_summary: report.gather_error_summary,
  };
}

/** harvest_source_show_status: the jobs, the last one with its stats, the public active datasets. */
export async function sourceStatus(db: Queryable, source: HarvestSourceRow) {
  const { jobCount, lastJob } = await sourceJobSummary(db, source.id);
  return {
    job_count: jobCount,
    last_job: lastJob ? await harvestJobDict(db, lastJob) : null,
    total_datasets: await countSourcePackages(db, source.id),
    next_harvest: source.next_run,
  };
}

export async function harvestSourceDict(db: Queryable, s: HarvestSourceRow, opts: { status?: boolean } = {}) {
  const org = s.owner_org ? await groupById(db, s.owner_org) : undefined;
  return {
    id: s.id,
    name: s.name,
    title: s.title,
    type: 'harvest',
    url: s.url,
    notes: s.notes,
    source_type: s.source_type,
    frequency: s.frequency,
    config: s.config,
    owner_org: s.owner_org,
    organization: org ? { id: org.id, name: org.name, title: org.title ?? org.name } : null,
    private: s.private,
    active: s.active,
    state: s.state,
    creator_user_id: s.creator_user_id,
    metadata_created: s.created,
    metadata_modified: s.metadata_modified,
    next_run: s.next_run,
    ...(opts.status === false ? {} : { status: await sourceStatus(db, s) }),
  };
}

export async function harvestObjectDict(db: Queryable, o: HarvestObjectRow) {
  return {
    id: o.id,
    guid: o.guid,
    current: o.current,
    gathered: o.gathered,
    fetch_started: null,
    fetch_finished: o.gathered,
    import_started: o.import_started,
    import_finished: o.import_finished,
    state: o.state,
    report_status: o.report_status,
    content: o.content,
    metadata_modified_date: o.metadata_modified_date,
    harvest_job_id: o.harvest_job_id,
    harvest_source_id: o.harvest_source_id,
    package_id: o.package_id,
    source: o.harvest_source_id,
    job: o.harvest_job_id,
    package: o.package_id,
    remote_url: o.remote_url,
    errors: (await objectErrors(db, o.id)).map((e) => ({
      id: e.id,
      harvest_object_id: e.harvest_object_id,
      message: e.message,
      stage: e.stage,
      line: e.line,
      created: e.created,
    })),
    extras: {},
  };
}

/** ckanext-harvest's `attr` parameter of the show actions: the whole dict, or one of its keys. */
export function dictOrAttr(d: Record<string, unknown>, attr: string | undefined): unknown {
  if (attr === undefined) return d;
  if (!(attr in d)) throw new ValidationError({ attr: [`Unknown attribute ${attr}`] });
  return d[attr];
}
