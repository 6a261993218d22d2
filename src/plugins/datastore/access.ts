// Who may read or write a data store table: the catalog's rules for its resource (resource_show,
// resource_update), with aliases resolved first. A refusal names only what the caller sent (an
// alias, never the private resource behind it).
import type { ActionContext } from '../../actions/context.ts';
import { checkAccess, type AuthFunction } from '../../actions/registry.ts';
import type { DatastoreBackend } from '../../datastore/backend.ts';
import { METADATA_VIEW } from '../../datastore/postgres.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../../errors.ts';
import { findDatastoreResource } from '../../model/datastore-flags.ts';
import { Invalid } from '../../validation/validate.ts';
import { tableName } from './params.ts';

export const READ_ONLY_MESSAGE =
  'Cannot edit read-only resource because changes made may be lost. Use a resource created for editing e.g. with datastore_create or use "force=True" to ignore this warning.';

export function backendOf(ctx: { services: ActionContext['services'] }): DatastoreBackend {
  const b = ctx.services.plugins.datastore as DatastoreBackend | undefined;
  if (!b) throw new NotFoundError('the datastore plugin is not enabled');
  return b;
}

/** resource_id, or `id` as its other name (CKAN 2.11), in input not yet validated. */
export function withResourceId(input: Record<string, unknown>): Record<string, unknown> {
  if ((input.resource_id === undefined || input.resource_id === null) && input.id !== undefined) {
    const { id, ...rest } = input;
    return { ...rest, resource_id: id };
  }
  return input;
}

/** The catalog resource a write goes to; read-only unless url_type is 'datastore' or force. */
export async function writableResource(ctx: ActionContext, id: string, force: boolean): Promise<void> {
  const r = await findDatastoreResource(ctx.db, id);
  if (!r) throw new NotFoundError(`Resource "${id}" was not found.`);
  if (r.url_type !== 'datastore' && !force) throw new ValidationError({ 'read-only': [READ_ONLY_MESSAGE] });
}

/** Writes: resource_update on the resource (package_update on the dataset of a resource to create). */
export const resourceUpdateAuth: AuthFunction = async (ctx, params) => {
  const input = withResourceId(params);
  const resource = input.resource as Record<string, unknown> | undefined;
  if (resource && resource.package_id && !input.resource_id) {
    await checkAccess(ctx, 'package_update', { id: resource.package_id });
    return;
  }
  // Neither resource_id nor resource: the handler reports the missing parameter.
  if (!input.resource_id && !resource) return;
  // Checked before validation (datastore_create): a resource_id no table can have is refused here.
  if (input.resource_id) {
    try {
      tableName(input.resource_id, undefined as never);
    } catch (e) {
      if (e instanceof Invalid) throw new ValidationError({ resource_id: [e.message] });
      throw e;
    }
  }
  await checkAccess(ctx, 'resource_update', { id: input.resource_id });
};

// Searches resolve aliases once; auth and handler share the result.
const resolved = new WeakMap<object, string>();

/** The resource id behind a resource id or alias (Not Found when neither). */
export async function resolveReadable(ctx: ActionContext, params: { resource_id?: unknown }): Promise<string> {
  const cached = resolved.get(params);
  if (cached !== undefined) return cached;
  const id = String(params.resource_id ?? '');
  if (id === METADATA_VIEW) {
    resolved.set(params, id);
    return id;
  }
  const r = await backendOf(ctx).resource_id_from_alias(id);
  if (!r.exists || !r.resource_id) throw new NotFoundError(`Resource "${id}" was not found.`);
  resolved.set(params, r.resource_id);
  return r.resource_id;
}

/** Reads: resource_show on the resource behind the id or alias. */
export const resourceShowAuth: AuthFunction = async (ctx, params) => {
  const id = await resolveReadable(ctx, params);
  if (id === METADATA_VIEW) return;
  try {
    await checkAccess(ctx, 'resource_show', { id });
  } catch (e) {
    // The catalog's message names the resource: an alias must not tell whose it is.
    if (e instanceof AuthorizationError && id !== params.resource_id)
      throw new AuthorizationError(`User ${ctx.identity.user?.name ?? ''} not authorized to read resource ${String(params.resource_id)}`);
    throw e;
  }
};
