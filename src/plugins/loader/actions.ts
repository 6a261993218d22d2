// xloader_submit / xloader_status (CKAN's names), with datapusher_submit / datapusher_status as
// aliases. Whoever may edit the dataset may submit a load and see its status.
import { checkAccess, defineAction, type ActionDefinition, type AuthFunction } from '../../actions/registry.ts';
import type { ActionContext } from '../../actions/context.ts';
import { p } from '../../validation/params.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { findResource } from '../../model/resources.ts';
import { loadTask, statusDict } from './status.ts';
import { sourceSignature, submitLoad } from './submit.ts';

const canEditResource: AuthFunction = async (ctx, q) => {
  if (!(q.resource_id ?? q.id)) throw new ValidationError({ resource_id: ['Missing value'] });
  await checkAccess(ctx, 'resource_update', { id: q.resource_id ?? q.id });
};

async function activeResource(ctx: ActionContext, q: { resource_id?: string; id?: string }) {
  const id = q.resource_id ?? q.id;
  if (!id) throw new ValidationError({ resource_id: ['Missing value'] });
  const res = await findResource(ctx.db, id);
  if (!res || res.state !== 'active') throw new NotFoundError('Resource was not found.');
  return res;
}

const resourceParams = {
  resource_id: p.string('the id of the resource'),
  id: p.string('the id of the resource (when resource_id is not given)'),
};

const submit = defineAction({
  name: 'xloader_submit',
  sideEffectFree: false,
  auth: canEditResource,
  params: { ...resourceParams, ignore_hash: p.boolean('load even when the file has not changed since the last load').default(false) },
  description: "Load a resource's file (upload or link) into the data store, in the background. Status: xloader_status.",
  returns: { description: 'true when the load was queued', rtype: 'bool' },
  handler: async (ctx, q) => {
    const res = await activeResource(ctx, q);
    if (res.url_type === 'datastore')
      throw new ValidationError({ resource_id: ['the resource is a data store table (url_type "datastore"): there is no file to load'] });
    await submitLoad(ctx.services, ctx.db, res.id, {
      ignoreHash: q.ignore_hash,
      source: sourceSignature(res),
      afterCommit: ctx.afterCommit,
      userId: ctx.identity.user?.id,
    });
    return true;
  },
});

const status = defineAction({
  name: 'xloader_status',
  sideEffectFree: true,
  auth: canEditResource,
  params: resourceParams,
  description: 'The status of the last load of a resource into the data store.',
  returns: {
    description: 'status (pending, running, complete, error), job_id, job_url, last_updated, task_info (with the log lines), error',
    rtype: 'dictionary',
  },
  handler: async (ctx, q) => {
    const res = await activeResource(ctx, q);
    const row = await loadTask(ctx.db, res.id);
    if (!row) throw new NotFoundError('Resource has no load status (it was never submitted to the loader)');
    return statusDict(row);
  },
});

export const loaderActions: ActionDefinition<any, any>[] = [
  submit,
  status,
  { ...submit, name: 'datapusher_submit', description: `Same as xloader_submit. ${submit.description}` },
  { ...status, name: 'datapusher_status', description: `Same as xloader_status. ${status.description}` },
];
