// The context of a read outside an action call (a download, a data store dump): the caller's
// identity on the database, no transaction; an action it calls runs as a call of its own.
import type { ActionContext, Identity, Services } from '../context.ts';
import { callAction } from './registry.ts';

export function readContext(services: Services, identity: Identity, request?: ActionContext['request']): ActionContext {
  return {
    services,
    config: services.config,
    identity,
    db: services.db,
    ignoreAuth: false,
    ...(request ? { request } : {}),
    call: (name, input) => callAction(services, name, input, { identity }) as Promise<any>,
  };
}
