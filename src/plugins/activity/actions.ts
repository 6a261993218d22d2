// Activity stream actions: *_activity_list, recently_changed_packages_activity_list, dashboard_*,
// activity_show, activity_data_show, activity_diff.
import { Type } from '@sinclair/typebox';
import type { ActionContext } from '../../actions/context.ts';
import { checkAccess, defineAction, type ActionDefinition } from '../../actions/registry.ts';
import { p } from '../../validation/params.ts';
import { anyone } from '../../auth/rules.ts';
import {
  canEditGroup,
  canEditPackage,
  canReadPackage,
  canSeeActivityDetail,
  requireUser,
  userPermissionLabels,
  visiblePackagesCondition,
} from '../../auth/authz.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../../errors.ts';
import {
  dashboardLastViewed,
  findActivity,
  listActivities,
  markDashboardViewed,
  previousActivity,
  type ActivityRow,
  type ActivityScope,
} from '../../model/activities.ts';
import { findGroup, findPackage } from '../../model/packages.ts';
import { findUser } from '../../model/users.ts';
import { Invalid, type Validator } from '../../validation/validate.ts';
import { DIFF_TYPES, diffObjects, type DiffType } from './diff.ts';

const activitySchema = Type.Object(
  {
    id: Type.String(),
    timestamp: Type.String(),
    user_id: Type.Union([Type.String(), Type.Null()]),
    object_id: Type.String(),
    revision_id: Type.Null(),
    activity_type: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown()),
    permission_labels: Type.Array(Type.String()),
    is_new: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true, title: 'Activity' },
);
const activityList = Type.Array(activitySchema);

/** 'package', 'group', 'organization' or 'user': the object an activity type is about (views: their dataset). */
const objectTypeOf = (activityType: string) => (activityType.endsWith(' resource view') ? 'package' : activityType.split(' ').pop()!);

const limitParam = () => p.natural('the most activities to return (default svc.activity_list_limit, at most svc.activity_list_limit_max)');

const timestamp: Validator = (v: number) => {
  if (!Number.isFinite(v) || Math.abs(v) > 1e11) throw new Invalid('Not a valid timestamp');
  return v;
};

const paging = {
  offset: p.natural('where to start').default(0),
  limit: limitParam(),
  after: p.number('only activities after this time (unix timestamp in seconds)').use(timestamp),
  before: p.number('only activities before this time (unix timestamp in seconds)').use(timestamp),
};

const filters = {
  include_hidden_activity: p
    .boolean('include activity of the site user and of svc.hide_activity_from_users (sysadmins only)')
    .default(false),
  activity_types: p.stringList('only activities of these types'),
  exclude_activity_types: p.stringList('leave out activities of these types'),
};

type Paging = { offset: number; limit?: number; after?: number; before?: number };
type Filters = { include_hidden_activity: boolean; activity_types?: string[]; exclude_activity_types?: string[] };

function pageSize(ctx: ActionContext, limit: number | undefined): number {
  const max = ctx.config.int('svc.activity_list_limit_max');
  return Math.min(limit ?? ctx.config.int('svc.activity_list_limit'), max);
}

async function hiddenUserIds(ctx: ActionContext): Promise<string[]> {
  const names = ctx.config.list('svc.hide_activity_from_users');
  const ids: string[] = [];
  for (const n of names.length ? names : [ctx.config.str('svc.site_id')]) {
    const u = await findUser(ctx.db, n);
    if (u) ids.push(u.id);
  }
  return ids;
}

/** A page of the activities in scope that the caller may see. */
async function page(ctx: ActionContext, scope: ActivityScope, prm: Paging & Partial<Filters>): Promise<ActivityRow[]> {
  if (prm.activity_types && prm.exclude_activity_types) {
    throw new ValidationError({ activity_types: ['Cannot be used together with `exclude_activity_types'] });
  }
  const sysadmin = ctx.identity.sysadmin;
  let visible = null;
  if (!sysadmin) {
    const params: unknown[] = [];
    visible = { cond: await visiblePackagesCondition(ctx, params, 'p'), params };
  }
  return listActivities(ctx.db, {
    scope,
    labels: sysadmin ? null : await userPermissionLabels(ctx),
    visible,
    hiddenUserIds: prm.include_hidden_activity && sysadmin ? [] : await hiddenUserIds(ctx),
    types: prm.activity_types,
    excludeTypes: prm.exclude_activity_types,
    after: prm.after,
    before: prm.before,
    limit: pageSize(ctx, prm.limit),
    offset: prm.offset,
  });
}

/** May the caller edit the object of this activity (so see its full detail)? */
async function mayEditObject(ctx: ActionContext, a: ActivityRow): Promise<boolean> {
  if (ctx.identity.sysadmin) return true;
  const type = objectTypeOf(a.activity_type);
  if (type === 'package') {
    const pkg = await findPackage(ctx.db, a.object_id);
    return !!pkg && (await canEditPackage(ctx, pkg));
  }
  if (type === 'user') return ctx.identity.user?.id === a.object_id;
  return canEditGroup(ctx, a.object_id);
}

/** The summary of an object shown instead of its dict when the caller may not see the detail. */
function summary(data: Record<string, any> | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    if (key === 'actor' || !value || typeof value !== 'object') out[key] = value;
    else out[key] = Object.fromEntries(['id', 'name', 'title', 'fullname', 'type'].filter((k) => k in value).map((k) => [k, value[k]]));
  }
  return out;
}

async function dictize(ctx: ActionContext, rows: ActivityRow[]): Promise<Record<string, unknown>[]> {
  const publicDetail = canSeeActivityDetail(ctx, false);
  const editable = new Map<string, boolean>();
  const out: Record<string, unknown>[] = [];
  for (const a of rows) {
    let full = publicDetail;
    if (!full) {
      if (!editable.has(a.object_id)) editable.set(a.object_id, await mayEditObject(ctx, a));
      full = editable.get(a.object_id)!;
    }
    out.push({
      activity_type: a.activity_type,
      data: full ? a.data : summary(a.data),
      id: a.id,
      object_id: a.object_id,
      permission_labels: a.permission_labels,
      revision_id: null,
      timestamp: a.timestamp,
      user_id: a.user_id,
    });
  }
  return out;
}

/** The activity, if the caller may see it (and, with detail, its data); else 404 / 403. */
async function visibleActivity(ctx: ActionContext, id: string, detail: boolean): Promise<ActivityRow> {
  const a = await findActivity(ctx.db, id);
  if (!a) throw new NotFoundError('Activity not found');
  if (ctx.identity.sysadmin) return a;
  const type = objectTypeOf(a.activity_type);
  if (type === 'package') {
    const labels = await userPermissionLabels(ctx);
    const pkg = await findPackage(ctx.db, a.object_id);
    const readable = pkg ? (await canReadPackage(ctx, pkg)) || (pkg.state === 'deleted' && !pkg.private) : true;
    if (!a.permission_labels.some((l) => labels.includes(l)) || !readable)
      throw new AuthorizationError('Unauthorized to view activity data');
  } else if (type !== 'user') {
    await checkAccess(ctx, `${type}_show`, { id: a.object_id });
  }
  if (detail && !canSeeActivityDetail(ctx, await mayEditObject(ctx, a))) {
    throw new AuthorizationError(`User ${ctx.identity.user?.name ?? ''} not authorized to see the detail of activity ${a.id}`);
  }
  return a;
}

const scopedList = (kind: 'package' | 'group' | 'organization' | 'user'): ActionDefinition<any, any> =>
  defineAction({
    name: `${kind}_activity_list`,
    sideEffectFree: true,
    auth: anyone,
    description: `Return the activity stream of a ${kind === 'package' ? 'dataset' : kind}${kind === 'group' || kind === 'organization' ? ' and its datasets' : kind === 'user' ? ' (what they did and what was done to them)' : ''}, newest first. Activities of private datasets are shown only to those who may read them; without svc.auth.public_activity_stream_detail the data of each activity is a summary unless you may edit its object.`,
    params: { id: p.string(`the id or name of the ${kind}`).required(), ...paging, ...filters },
    returns: { description: 'activities', rtype: 'list', schema: activityList },
    handler: async (ctx, prm) => {
      let id: string;
      if (kind === 'package') {
        const pkg = await findPackage(ctx.db, prm.id);
        if (!pkg) throw new NotFoundError('Package not found');
        await checkAccess(ctx, 'package_show', { id: pkg.id });
        id = pkg.id;
      } else if (kind === 'user') {
        const user = await findUser(ctx.db, prm.id);
        if (!user) throw new NotFoundError('User not found');
        await checkAccess(ctx, 'user_show', { id: user.id });
        id = user.id;
      } else {
        const group = await findGroup(ctx.db, prm.id);
        if (!group || group.is_organization !== (kind === 'organization'))
          throw new NotFoundError(`${kind === 'group' ? 'Group' : 'Organization'} not found`);
        await checkAccess(ctx, `${kind}_show`, { id: group.id });
        id = group.id;
      }
      return dictize(ctx, await page(ctx, { kind, id } as ActivityScope, prm));
    },
  });

async function dashboard(ctx: ActionContext, prm: Paging): Promise<Record<string, unknown>[]> {
  const me = ctx.identity.user!;
  const list = await dictize(ctx, await page(ctx, { kind: 'dashboard', userId: me.id }, prm));
  const lastViewed = (await dashboardLastViewed(ctx.db, me.id)) ?? me.created;
  for (const a of list) a.is_new = a.user_id !== me.id && String(a.timestamp) > String(lastViewed);
  return list;
}

const loginRequired = (action: string) => (ctx: ActionContext) => requireUser(ctx, action);

const diffType: Validator = (v: string) => {
  if (!(DIFF_TYPES as readonly string[]).includes(v)) throw new Invalid('diff_type not recognized');
  return v;
};

export const activityActions: ActionDefinition<any, any>[] = [
  scopedList('package'),
  scopedList('group'),
  scopedList('organization'),
  scopedList('user'),
  defineAction({
    name: 'recently_changed_packages_activity_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the activity of all datasets you may see, newest first.',
    params: { ...paging, ...filters },
    returns: { description: 'activities', rtype: 'list', schema: activityList },
    handler: async (ctx, prm) => dictize(ctx, await page(ctx, { kind: 'recent_packages' }, prm)),
  }),
  defineAction({
    name: 'dashboard_activity_list',
    sideEffectFree: true,
    auth: loginRequired('dashboard_activity_list'),
    description:
      'Return your dashboard: your own activity and that of the users, datasets, groups and organizations you follow, newest first. Each activity has is_new: it happened since you last marked your dashboard seen (dashboard_mark_activities_old), and not by you.',
    params: paging,
    returns: { description: 'activities with is_new', rtype: 'list', schema: activityList },
    handler: (ctx, prm) => dashboard(ctx, prm),
  }),
  defineAction({
    name: 'dashboard_new_activities_count',
    sideEffectFree: true,
    auth: loginRequired('dashboard_new_activities_count'),
    description: 'Return how many activities of your dashboard are new (at most svc.activity_list_limit_max).',
    returns: { description: 'a count', rtype: 'int', schema: Type.Integer() },
    handler: async (ctx) =>
      (await dashboard(ctx, { offset: 0, limit: ctx.config.int('svc.activity_list_limit_max') })).filter((a) => a.is_new).length,
  }),
  defineAction({
    name: 'dashboard_mark_activities_old',
    sideEffectFree: false,
    auth: loginRequired('dashboard_mark_activities_old'),
    description: 'Mark all activities of your dashboard as seen.',
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx) => {
      await markDashboardViewed(ctx.db, ctx.identity.user!.id);
      return null;
    },
  }),
  defineAction({
    name: 'activity_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return one activity.',
    params: {
      id: p.string('the id of the activity').required(),
      include_data: p
        .boolean('include the object dict (needs edit rights on the object unless svc.auth.public_activity_stream_detail)')
        .default(true),
    },
    returns: { description: 'the activity', rtype: 'dictionary', schema: activitySchema },
    handler: async (ctx, prm) => {
      const a = await visibleActivity(ctx, prm.id, prm.include_data);
      const [out] = await dictize(ctx, [a]);
      if (prm.include_data) out.data = a.data;
      return out;
    },
  }),
  defineAction({
    name: 'activity_data_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the data of one activity: the object dict as it was then.',
    params: {
      id: p.string('the id of the activity').required(),
      object_type: p.string("'package', 'user', 'group' or 'organization': only that object of the data"),
    },
    returns: { description: 'the data', rtype: 'dictionary', schema: Type.Record(Type.String(), Type.Unknown()) },
    handler: async (ctx, prm) => {
      const a = await visibleActivity(ctx, prm.id, true);
      if (!a.data) throw new NotFoundError('Could not find data in the activity');
      if (!prm.object_type) return a.data;
      if (!(prm.object_type in a.data)) throw new NotFoundError('Could not find that object_type in the activity');
      return a.data[prm.object_type];
    },
  }),
  defineAction({
    name: 'activity_diff',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the difference between the object of an activity and the object of the activity before it.',
    params: {
      id: p.string('the id of the activity').required(),
      object_type: p.string("'package', 'user', 'group' or 'organization'").required(),
      diff_type: p.string("'unified', 'context' or 'html'").default('unified').use(diffType),
    },
    returns: {
      description: 'diff (text) and activities (the previous one and this one)',
      rtype: 'dictionary',
      schema: Type.Object({ diff: Type.String(), activities: activityList }),
    },
    handler: async (ctx, prm) => {
      const a = await visibleActivity(ctx, prm.id, true);
      const prev = await previousActivity(ctx.db, a, prm.object_type);
      if (!prev) throw new NotFoundError('Previous activity for this object not found');
      const objs = [prev, a].map((x) => x.data?.[prm.object_type]);
      if (objs.some((o) => o === undefined)) throw new NotFoundError('Could not find object in the activity data');
      const activities = await dictize(ctx, [prev, a]);
      activities.forEach((x, i) => (x.data = [prev, a][i].data));
      return { diff: diffObjects(objs[0], objs[1], prm.diff_type as DiffType), activities };
    },
  }),
];
