// task_status_update/_many/show/delete: CKAN's task status records (writes are sysadmin-only).
import type { ActionDefinition } from './registry.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { deleteTaskStatus, findTaskStatus, saveTaskStatus } from '../model/task-status.ts';
import { ignoreMissing, isoDate, notEmpty, unicodeString } from '../validation/validators.ts';
import { validateOrThrow, type Schema, type Validator } from '../validation/validate.ts';

/** value is text; a JSON object or list sent is stored as its JSON text. */
const textValue: Validator = (v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : unicodeString(v, undefined as never));

const taskStatusSchema: Schema = {
  id: [ignoreMissing, unicodeString],
  entity_id: [notEmpty, unicodeString],
  entity_type: [notEmpty, unicodeString],
  task_type: [notEmpty, unicodeString],
  key: [notEmpty, unicodeString],
  value: [ignoreMissing, textValue],
  state: [ignoreMissing, unicodeString],
  last_updated: [ignoreMissing, isoDate],
  error: [ignoreMissing, unicodeString],
};

async function update(ctx: Parameters<ActionDefinition['handler']>[0], p: any) {
  const row = await saveTaskStatus(ctx.db, p);
  if (!row) throw new NotFoundError('Task status not found');
  return row;
}

export const taskStatusActions: ActionDefinition<any, any>[] = [
  {
    name: 'task_status_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    schema: taskStatusSchema,
    help: 'Create or update a task status (the record of (entity_id, task_type, key), or the one with that id).\n\n:param id: the id of the task status to update (optional)\n:param entity_id, entity_type, task_type, key: what the task is about (required)\n:param value, state, error: (optional)\n:param last_updated: ISO date (optional, default now)\n:returns: the task status\n:rtype: dictionary',
    handler: update,
  },
  {
    name: 'task_status_update_many',
    sideEffectFree: false,
    auth: sysadminOnly,
    help: 'Create or update several task statuses (as task_status_update) in one call.\n\n:param data: a list of task status dicts\n:returns: {"results": [task status, ...]}\n:rtype: dictionary',
    handler: async (ctx, p) => {
      if (!Array.isArray(p.data)) throw new ValidationError({ data: [p.data === undefined ? 'Missing value' : 'Must be a list of dicts'] });
      const results = [];
      for (const item of p.data) {
        if (!item || typeof item !== 'object' || Array.isArray(item)) throw new ValidationError({ data: ['Must be a list of dicts'] });
        results.push(await update(ctx, await validateOrThrow(taskStatusSchema, item, ctx)));
      }
      return { results };
    },
  },
  {
    name: 'task_status_show',
    sideEffectFree: true,
    auth: anyone,
    schema: {
      id: [ignoreMissing, unicodeString],
      entity_id: [ignoreMissing, unicodeString],
      task_type: [ignoreMissing, unicodeString],
      key: [ignoreMissing, unicodeString],
    },
    help: 'Return a task status, by id or by entity_id, task_type and key.\n\n:param id: (optional)\n:param entity_id, task_type, key: (together, when id is not given)\n:rtype: dictionary',
    handler: async (ctx, p) => {
      if (!p.id) {
        const missing = ['entity_id', 'task_type', 'key'].filter((k) => !p[k]);
        if (missing.length) throw new ValidationError(Object.fromEntries(missing.map((k) => [k, ['Missing value']])));
      }
      const row = await findTaskStatus(ctx.db, p.id ? { id: p.id } : { entity_id: p.entity_id, task_type: p.task_type, key: p.key });
      if (!row) throw new NotFoundError('Task status not found');
      return row;
    },
  },
  {
    name: 'task_status_delete',
    sideEffectFree: false,
    auth: sysadminOnly,
    schema: { id: [notEmpty, unicodeString] },
    help: 'Delete a task status.\n\n:param id: the id of the task status',
    handler: async (ctx, p) => {
      if (!(await deleteTaskStatus(ctx.db, p.id))) throw new NotFoundError('Task status not found');
      return null;
    },
  },
];
