// xloader_submit / xloader_status (CKAN's names), with datapusher_submit / datapusher_status as
// aliases. Whoever may edit the dataset may submit a load and see its status.
import { checkAccess, type ActionDefinition, type AuthFunction } from '../../actions/registry.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { findResource } from '../../model/resources.ts';
import { MISSING, type Validator } from '../../validation/validate.ts';
import { bool, ignoreMissing, notEmpty, unicodeString } from '../../validation/validators.ts';
import { loadTask, statusDict } from './status.ts';
import { sourceSignature, submitLoad } from './submit.ts';

/** `id` is accepted for resource_id (as xloader_status does). */
const fromId: Validator = (v, f) => (v === MISSING || v === null || v === undefined || v === '' ? f.data.id ?? v : v);

const canEditResource: AuthFunction = async (ctx, p) => {
  await checkAccess(ctx, 'resource_update', { id: p.resource_id ?? p.id });
};

async function activeResource(ctx: Parameters<ActionDefinition['handler']>[0], id: string) {
  const res = await findResource(ctx.db, id);
  if (!res || res.state !== 'active') throw new NotFoundError('Resource was not found.');
  return res;
}

const submit: ActionDefinition = {
  name: 'xloader_submit',
  sideEffectFree: false,
  auth: canEditResource,
  schema: { id: [ignoreMissing, unicodeString], resource_id: [fromId, notEmpty, unicodeString], ignore_hash: bool(false) },
  help: 'Load a resource\'s file (upload or link) into the data store, in the background.\n\n:param resource_id: the id of the resource\n:param ignore_hash: load even when the file has not changed since the last load (optional, default false)\n:returns: true when the load was queued\n:rtype: bool',
  handler: async (ctx, p) => {
    const res = await activeResource(ctx, p.resource_id);
    if (res.url_type === 'datastore') throw new ValidationError({ resource_id: ['the resource is a data store table (url_type "datastore"): there is no file to load'] });
    await submitLoad(ctx.services, ctx.db, res.id, { ignoreHash: p.ignore_hash, source: sourceSignature(res), afterCommit: ctx.afterCommit });
    return true;
  },
};

const status: ActionDefinition = {
  name: 'xloader_status',
  sideEffectFree: true,
  auth: canEditResource,
  schema: { id: [ignoreMissing, unicodeString], resource_id: [fromId, notEmpty, unicodeString] },
  help: 'The status of the last load of a resource into the data store: status (pending, running, complete, error), job_id, last_updated, task_info with the log lines, error.\n\n:param resource_id: the id of the resource\n:rtype: dictionary',
  handler: async (ctx, p) => {
    const res = await activeResource(ctx, p.resource_id);
    const row = await loadTask(ctx.db, res.id);
    if (!row) throw new NotFoundError('Resource has no load status (it was never submitted to the loader)');
    return statusDict(row);
  },
};

export const loaderActions: ActionDefinition[] = [
  submit, status,
  { ...submit, name: 'datapusher_submit', help: `Same as xloader_submit.\n\n${submit.help}` },
  { ...status, name: 'datapusher_status', help: `Same as xloader_status.\n\n${status.help}` },
];
