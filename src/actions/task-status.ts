// task_status_update/_many/show/delete: CKAN's task status records (writes are sysadmin-only).
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import type { ActionContext } from './context.ts';
import { p } from '../validation/params.ts';
import { denied, sysadminOnly } from '../auth/rules.ts';
import { canReadPackage } from '../auth/authz.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { datasetOfEntity, deleteTaskStatus, findTaskStatus, saveTaskStatus, type TaskStatusWrite } from '../model/task-status.ts';
import { unicodeString } from '../validation/validators.ts';

/** value is text; a JSON object or list sent is stored as its JSON text. */
const textValue = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : unicodeString(v, undefined as never));

const taskStatusParams = {
  id: p.string('the id of the task status to update'),
  entity_id: p.string('id of what the task is about').required(),
  entity_type: p.string('type of what the task is about (e.g. resource)').required(),
  task_type: p.string('kind of task (e.g. xloader)').required(),
  key: p.string('key of the record within the task').required(),
  value: p.any('text (a JSON object or list is stored as its JSON text)').use(textValue),
  state: p.string('state of the task'),
  last_updated: p.datetime('when it changed (default now)'),
  error: p.string('error message'),
};

/**
 * A task status about a dataset or a resource (a load's log: file name, columns, values quoted in
 * warnings) is read by those who may read that dataset; others (CKAN: anyone) stay open to all.
 */
const taskStatusShowAuth: AuthFunction = async (ctx, q) => {
  let entityId = typeof q.entity_id === 'string' ? q.entity_id : undefined;
  if (typeof q.id === 'string' && q.id) entityId = (await findTaskStatus(ctx.db, { id: q.id }))?.entity_id;
  const pkg = entityId ? await datasetOfEntity(ctx.db, entityId) : undefined;
  if (pkg && !(await canReadPackage(ctx, pkg))) throw denied(ctx, 'read this task status');
};

async function update(ctx: ActionContext, q: TaskStatusWrite) {
  const row = await saveTaskStatus(ctx.db, q);
  if (!row) throw new NotFoundError('Task status not found');
  return row;
}

export const taskStatusActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'task_status_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    params: taskStatusParams,
    description: 'Create or update a task status: the record of (entity_id, task_type, key), or the one with that id.',
    returns: {
      description: 'the task status (id, entity_id, entity_type, task_type, key, value, state, error, last_updated)',
      rtype: 'dictionary',
    },
    handler: (ctx, q) => update(ctx, q as TaskStatusWrite),
  }),
  defineAction({
    name: 'task_status_update_many',
    sideEffectFree: false,
    auth: sysadminOnly,
    params: { data: p.listOf(taskStatusParams, 'the task statuses').required() },
    description: 'Create or update several task statuses (as task_status_update) in one call: all or none.',
    returns: { description: '{"results": [task status, ...]}', rtype: 'dictionary' },
    handler: async (ctx, q) => {
      const results = [];
      for (const item of q.data) results.push(await update(ctx, item as TaskStatusWrite));
      return { results };
    },
  }),
  defineAction({
    name: 'task_status_show',
    sideEffectFree: true,
    auth: taskStatusShowAuth,
    params: {
      id: p.string('the id of the task status'),
      entity_id: p.string('with task_type and key, when id is not given'),
      task_type: p.string('with entity_id and key'),
      key: p.string('with entity_id and task_type'),
    },
    description: 'Return a task status, by id or by entity_id, task_type and key.',
    returns: { description: 'the task status', rtype: 'dictionary' },
    handler: async (ctx, q) => {
      if (!q.id) {
        const missing = (['entity_id', 'task_type', 'key'] as const).filter((k) => !q[k]);
        if (missing.length) throw new ValidationError(Object.fromEntries(missing.map((k) => [k, ['Missing value']])));
      }
      const row = await findTaskStatus(ctx.db, q.id ? { id: q.id } : { entity_id: q.entity_id!, task_type: q.task_type!, key: q.key! });
      if (!row) throw new NotFoundError('Task status not found');
      return row;
    },
  }),
  defineAction({
    name: 'task_status_delete',
    sideEffectFree: false,
    auth: sysadminOnly,
    params: { id: p.string('the id of the task status').required() },
    description: 'Delete a task status.',
    handler: async (ctx, q) => {
      if (!(await deleteTaskStatus(ctx.db, q.id))) throw new NotFoundError('Task status not found');
      return null;
    },
  }),
];
