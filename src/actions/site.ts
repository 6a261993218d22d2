// Site-level actions: site_read, status_show, help_show, get_site_user.
import { Type } from '@sinclair/typebox';
import { actionHelp, defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { siteUrl } from '../config/site-url.ts';
import { ensureSiteUser } from './site-user.ts';
import { userDict } from './user-dict.ts';
import { userSchema } from './result-schemas.ts';
import type { ReplicaStatus } from '../db/replicas.ts';

/** The CKAN version clients feature-detect on. */
export const API_COMPAT_VERSION = '2.11.0';

const replicaSchema = Type.Object({
  name: Type.String(),
  address: Type.String(),
  serving: Type.Boolean(),
  in_recovery: Type.Union([Type.Boolean(), Type.Null()]),
  lag_seconds: Type.Union([Type.Number(), Type.Null()]),
  lag_bytes: Type.Union([Type.Number(), Type.Null()]),
  problem: Type.Optional(Type.String()),
});

function replicaDict(r: ReplicaStatus): Record<string, unknown> {
  return {
    name: r.name,
    address: r.address,
    serving: r.serving,
    in_recovery: r.inRecovery,
    lag_seconds: r.lagSeconds,
    lag_bytes: r.lagBytes,
    ...(r.problem ? { problem: r.problem } : {}),
  };
}

export const siteActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'site_read',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return true: the caller may read the site.',
    returns: { description: 'true', rtype: 'bool', schema: Type.Boolean() },
    handler: () => true,
  }),
  defineAction({
    name: 'status_show',
    sideEffectFree: true,
    auth: anyone,
    description: "Return information about the site's configuration.",
    returns: {
      description:
        'site_title, site_description, site_url, error_emails_to, locale_default, extensions and ckan_version (hidden from non-sysadmins when svc.hide_version is true); for sysadmins, read_replicas: each replica of svc.database_read_urls with its lag, and datastore_read_replica: the server of svc.datastore.read_url (in_recovery: a streaming replica) with its lag',
      rtype: 'dictionary',
      schema: Type.Object({
        site_title: Type.String(),
        site_description: Type.String(),
        site_url: Type.String(),
        error_emails_to: Type.Union([Type.String(), Type.Null()]),
        locale_default: Type.String(),
        extensions: Type.Array(Type.String()),
        ckan_version: Type.Optional(Type.String()),
        read_replicas: Type.Optional(Type.Array(replicaSchema)),
        datastore_read_replica: Type.Optional(replicaSchema),
      }),
    },
    handler: (ctx) => {
      const { config } = ctx;
      const out: Record<string, unknown> = {
        site_title: config.str('svc.site_title'),
        site_description: config.str('svc.site_description'),
        site_url: siteUrl(config),
        error_emails_to: config.str('svc.error_emails_to') || null,
        locale_default: config.str('svc.locale_default'),
        extensions: config.list('svc.plugins'),
      };
      if (!config.bool('svc.hide_version') || ctx.identity.sysadmin) out.ckan_version = API_COMPAT_VERSION;
      const replicas = ctx.services.reads?.status();
      if (replicas?.length && ctx.identity.sysadmin) out.read_replicas = replicas.map(replicaDict);
      const datastoreRead = ctx.services.datastoreReads?.status()[0];
      if (datastoreRead && ctx.identity.sysadmin) out.datastore_read_replica = replicaDict(datastoreRead);
      return out;
    },
  }),
  defineAction({
    name: 'help_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the help string for a particular API action.',
    params: {
      name: p.string('action function name (e.g. `user_create`, `package_search`)').required(),
    },
    returns: { description: 'the help string for the action function', rtype: 'string', schema: Type.String() },
    handler: (ctx, params) => {
      if (!ctx.services.registry.has(params.name)) throw new NotFoundError('Action function not found');
      return actionHelp(ctx.services.registry.get(params.name), ctx.services) || null;
    },
  }),
  defineAction({
    name: 'get_site_user',
    sideEffectFree: true,
    auth: sysadminOnly,
    description: 'Return the site user (the sysadmin account the site uses for its own work), creating it if needed.',
    params: {
      defer_commit: p.boolean('accepted for compatibility; svc always commits with the call').default(false),
    },
    returns: { description: 'the site user', rtype: 'dictionary', schema: userSchema },
    handler: async (ctx) => userDict(ctx, await ensureSiteUser(ctx.db, ctx.config), { self: true }),
  }),
];
