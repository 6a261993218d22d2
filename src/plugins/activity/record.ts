// Recording activities: dataset changes (with their resources) through the catalog's change
// listener, group, organization and user writes by wrapping their actions. One activity per
// object per call: a second change in the same call updates the first activity's dict.
import { ANONYMOUS, type ActionContext, type Services } from '../../actions/context.ts';
import { userDict } from '../../actions/user-dict.ts';
import { packagePermissionLabels } from '../../auth/authz.ts';
import { hasActivity, insertActivity, updateActivity } from '../../model/activities.ts';
import { findView } from '../../model/resource-views.ts';
import { datasetDictOfWrite } from '../../model/package-dict.ts';
import { findGroup, findPackage, onPackageChange, type ChangeContext } from '../../model/packages.ts';
import { findUser } from '../../model/users.ts';
import type { Queryable } from '../../db/database.ts';

/** Activities recorded by the current call, by object id; keyed by the call's afterCommit hook (one per top-level call). */
const recordedInCall = new WeakMap<object, Map<string, string>>();

interface Recording {
  objectId: string;
  /** e.g. 'new package', 'changed group', 'deleted organization'. */
  activityType: string;
  /** The type when the object has no activity yet (decided by the insert), e.g. 'new package'. */
  firstActivityType?: string;
  data: Record<string, unknown>;
  labels: string[];
}

async function record(db: Queryable, source: Pick<ChangeContext, 'afterCommit' | 'identity'>, r: Recording): Promise<void> {
  const user = source.identity?.user ?? null;
  const data = { ...r.data, actor: user?.name ?? null };
  const seen = source.afterCommit ? (recordedInCall.get(source.afterCommit) ?? new Map<string, string>()) : undefined;
  if (seen && source.afterCommit) recordedInCall.set(source.afterCommit, seen);
  const earlier = seen?.get(r.objectId);
  if (earlier) {
    await updateActivity(db, earlier, { activity_type: r.activityType, data, permission_labels: r.labels });
    return;
  }
  const id = await insertActivity(db, {
    user_id: user?.id ?? null,
    object_id: r.objectId,
    activity_type: r.activityType,
    firstActivityType: r.firstActivityType,
    data,
    permission_labels: r.labels,
  });
  seen?.set(r.objectId, id);
}

/** 'new' the first time an object is seen, else 'changed' ('deleted' when it is). */
async function verb(db: Queryable, objectId: string, deleted: boolean): Promise<string> {
  if (deleted) return 'deleted';
  return (await hasActivity(db, objectId)) ? 'changed' : 'new';
}

function listenToDatasets(services: Services): void {
  onPackageChange(
    services,
    async (db, packageId, change, _later, source) => {
      if (change === 'purged') return;
      // (the parts read are kept for the answer of the write when it runs in a transaction of its own)
      const read = await datasetDictOfWrite({ db, config: services.config, identity: { sysadmin: false } }, packageId, {
        keepParts: db !== services.db,
      });
      // drafts are not announced: their first activity comes when they become active
      if (!read || read.row.state === 'draft') return;
      const { row: pkg, dict } = read;
      const deleted = change === 'deleted' || pkg.state === 'deleted';
      const labels = packagePermissionLabels(pkg, services.config.bool('svc.auth.allow_dataset_collaborators'));
      await record(db, source, {
        objectId: pkg.id,
        activityType: deleted ? 'deleted package' : 'changed package',
        firstActivityType: deleted ? undefined : 'new package',
        data: { package: dict },
        labels,
      });
    },
    // last: the dict is the dataset as the other listeners leave it (the write's answer may reuse its parts)
    { last: true },
  );
}

type Handler = (ctx: ActionContext, params: Record<string, any>) => unknown;

/** Wraps group_*, organization_* and user_* writes: after the handler, the object's dict is recorded. */
function wrapWrites(services: Services): void {
  const { registry } = services;
  for (const kind of ['group', 'organization'] as const) {
    for (const op of ['create', 'update', 'patch', 'delete'] as const) {
      const name = `${kind}_${op}`;
      if (!registry.has(name)) continue;
      registry.chainAction(name, (next: Handler) => async (ctx, params) => {
        const before = op === 'delete' ? await findGroup(ctx.db, String(params.id)) : undefined;
        const result = (await next(ctx, params)) as Record<string, any> | null;
        const id = before?.id ?? result?.id;
        if (!id) return result;
        const dict = await ctx.call(`${kind}_show`, { id, include_users: false, include_datasets: false }, { ignoreAuth: true });
        const activityType = `${await verb(ctx.db, id, op === 'delete')} ${kind}`;
        await record(ctx.db, ctx, { objectId: id, activityType, data: { group: dict }, labels: ['public'] });
        return result;
      });
    }
  }
  for (const op of ['create', 'update', 'patch', 'delete'] as const) {
    const name = `user_${op}`;
    if (!registry.has(name)) continue;
    registry.chainAction(name, (next: Handler) => async (ctx, params) => {
      const before = op === 'delete' ? await findUser(ctx.db, String(params.id)) : undefined;
      const result = (await next(ctx, params)) as Record<string, any> | null;
      const id = before?.id ?? result?.id;
      const row = id ? await findUser(ctx.db, id) : undefined;
      if (!row) return result;
      // the public user dict: no email or keys in the stream
      const dict = await userDict({ ...ctx, identity: ANONYMOUS }, row);
      // CKAN has no 'deleted user' activity: a deletion is a change of the user (state deleted)
      const activityType = (await hasActivity(ctx.db, row.id)) || op !== 'create' ? 'changed user' : 'new user';
      await record(ctx.db, ctx, { objectId: row.id, activityType, data: { user: dict }, labels: ['public'] });
      return result;
    });
  }
}

/** View writes are activities of the view's dataset, with the view dict as data (CKAN's shape). */
function wrapViewWrites(services: Services): void {
  const { registry } = services;
  for (const op of ['create', 'update', 'delete'] as const) {
    const name = `resource_view_${op}`;
    if (!registry.has(name)) continue;
    registry.chainAction(name, (next: Handler) => async (ctx, params) => {
      const before = op === 'delete' ? await findView(ctx.db, String(params.id)) : undefined;
      const result = (await next(ctx, params)) as Record<string, any>;
      const view = op === 'delete' ? before : await findView(ctx.db, result.id);
      const pkg = view ? await findPackage(ctx.db, view.package_id) : undefined;
      if (!view || !pkg || pkg.state === 'draft') return result;
      const data = op === 'delete' ? { id: view.id, resource_id: view.resource_id, package_id: view.package_id } : { ...result };
      const labels = packagePermissionLabels(pkg, services.config.bool('svc.auth.allow_dataset_collaborators'));
      const activityType = `${op === 'create' ? 'new' : op === 'update' ? 'changed' : 'deleted'} resource view`;
      const user = ctx.identity.user;
      await insertActivity(ctx.db, {
        user_id: user?.id ?? null,
        object_id: pkg.id,
        activity_type: activityType,
        data,
        permission_labels: labels,
      });
      return result;
    });
  }
}

export function recordActivities(services: Services): void {
  listenToDatasets(services);
  wrapWrites(services);
  wrapViewWrites(services);
}
