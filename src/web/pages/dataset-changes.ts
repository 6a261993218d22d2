// A dataset's changes page (/dataset/changes/<activity id>): what one "updated the dataset"
// activity changed from the version before it, and /dataset/changes_multiple for a range of
// versions, as CKAN's activity plugin shows them. The versions come from activity_diff, so only
// those who may see an activity's detail see its changes.
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { WebContext, WebRouter } from '../router.ts';
import { hasAction, showOr404 } from './catalog-common.ts';
import { datasetChanges } from './dataset-change-list.ts';

type Dict = Record<string, any>;

/** Versions one range page compares at most (each one an activity_diff). */
const MAX_RANGE = 50;
/** Versions offered in the range form. */
const VERSIONS_OFFERED = 100;

/** The activity types of a dataset's versions (views of its resources are activities of it too, without a version). */
const VERSION_TYPES = ['new package', 'changed package', 'deleted package'];

const unixSeconds = (timestamp: string) => Date.parse(/[zZ]$/.test(timestamp) ? timestamp : `${timestamp}Z`) / 1000;

/**
 * The two versions an activity compares, when activity_diff cannot give them: the activity before
 * it is a resource view's, which has no version of the dataset. (activity_show checks the right to
 * see the detail, as activity_diff does.)
 */
async function versionsAround(ctx: WebContext, activityId: string): Promise<[Dict, Dict]> {
  const after = await ctx.call<Dict>('activity_show', { id: activityId, include_data: true });
  if (!after.data?.package) throw new NotFoundError('Could not find object in the activity data');
  const [previous] = await ctx.call<Dict[]>('package_activity_list', {
    id: after.object_id,
    before: unixSeconds(String(after.timestamp)),
    activity_types: VERSION_TYPES,
    limit: 1,
  });
  if (!previous) throw new NotFoundError('Previous activity for this object not found');
  return [await ctx.call<Dict>('activity_show', { id: previous.id, include_data: true }), after];
}

/** One step of the history: the activity, the one before it, and what changed between them. */
async function step(ctx: WebContext, activityId: string) {
  let activities: [Dict, Dict];
  let table: string | null = null;
  try {
    const diff = await ctx.call<{ diff: string; activities: Dict[] }>('activity_diff', {
      id: activityId,
      object_type: 'package',
      diff_type: 'html',
    });
    activities = diff.activities as [Dict, Dict];
    table = diff.diff;
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
    activities = await versionsAround(ctx, activityId);
  }
  const [before, after] = activities;
  return {
    id: after.id,
    previous_id: before.id,
    previous_timestamp: String(before.timestamp),
    timestamp: after.timestamp,
    actor: typeof after.data?.actor === 'string' ? after.data.actor : null,
    changes: datasetChanges(before.data.package, after.data.package),
    // activity_diff's table: made from the two versions' JSON with every character escaped.
    diff_html: table,
    package: after.data.package as Dict,
  };
}

const requiredParam = (ctx: WebContext, name: string): string => {
  const v = ctx.query[name];
  const value = (Array.isArray(v) ? v[0] : v)?.trim();
  if (!value) throw new ValidationError({ [name]: ['Missing value'] }, `${name}: Missing value`);
  return value;
};

async function renderChanges(ctx: WebContext, steps: Awaited<ReturnType<typeof step>>[], cut: boolean) {
  const newest = steps[0]!;
  // The dataset as it is now, for its name and title; as the activity had it if it is gone.
  let pkg: Dict = newest.package;
  try {
    pkg = await showOr404(ctx, 'package_show', { id: newest.package.id });
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
  }
  const history = await ctx.call<Dict[]>('package_activity_list', {
    id: newest.package.id,
    limit: VERSIONS_OFFERED,
    activity_types: VERSION_TYPES,
  });
  const versions = history.map((a) => ({ id: a.id, timestamp: a.timestamp, type: a.activity_type }));
  return ctx.render('catalog/dataset-changes.njk', {
    pkg,
    steps,
    cut,
    max_range: MAX_RANGE,
    versions,
    new_id: newest.id,
    old_id: steps.at(-1)!.previous_id,
  });
}

export function datasetChangesPages(web: WebRouter): void {
  web.get('/dataset/changes/:id', async (ctx) => {
    if (!hasAction(ctx, 'activity_diff')) throw new NotFoundError('activity');
    return renderChanges(ctx, [await step(ctx, ctx.params.id!)], false);
  });

  web.get('/dataset/changes_multiple', async (ctx) => {
    if (!hasAction(ctx, 'activity_diff')) throw new NotFoundError('activity');
    const newId = requiredParam(ctx, 'new_id');
    const oldId = requiredParam(ctx, 'old_id');
    const [newer, older] = await Promise.all([newId, oldId].map((id) => ctx.call<Dict>('activity_show', { id, include_data: false })));
    if (newer!.object_id !== older!.object_id)
      throw new ValidationError({ old_id: ['Not an activity of the same dataset'] }, 'old_id: Not an activity of the same dataset');
    // A range given backwards shows the newer version's own changes (as CKAN).
    if (String(older!.timestamp) >= String(newer!.timestamp)) return renderChanges(ctx, [await step(ctx, newId)], false);
    const steps: Awaited<ReturnType<typeof step>>[] = [];
    let current = newId;
    let cut = false;
    for (;;) {
      if (steps.length === MAX_RANGE) {
        cut = true;
        break;
      }
      let next: Awaited<ReturnType<typeof step>>;
      try {
        next = await step(ctx, current);
      } catch (e) {
        // The dataset's first version has nothing before it.
        if (e instanceof NotFoundError && steps.length) break;
        throw e;
      }
      steps.push(next);
      if (next.previous_id === oldId || next.previous_timestamp < String(older!.timestamp)) break;
      current = next.previous_id;
    }
    return renderChanges(ctx, steps, cut);
  });
}
