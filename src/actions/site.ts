// Site-level actions: site_read, status_show, help_show, get_site_user.
import type { ActionDefinition } from './registry.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { NotFoundError } from '../errors.ts';
import { siteUrl } from '../config/site-url.ts';
import { notEmpty, unicodeString, ignoreMissing, bool } from '../validation/validators.ts';
import { ensureSiteUser } from './site-user.ts';
import { userDict } from './user-dict.ts';

/** The CKAN version clients feature-detect on. */
export const API_COMPAT_VERSION = '2.11.0';

export const siteActions: ActionDefinition<any, any>[] = [
  {
    name: 'site_read',
    sideEffectFree: true,
    auth: anyone,
    help: 'Return true: the caller may read the site.\n\n:rtype: bool',
    handler: () => true,
  },
  {
    name: 'status_show',
    sideEffectFree: true,
    auth: anyone,
    help: 'Return a dictionary with information about the site\'s configuration: site_title, site_description, site_url, error_emails_to, locale_default, extensions, ckan_version.\n\n:rtype: dictionary',
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
      return out;
    },
  },
  {
    name: 'help_show',
    sideEffectFree: true,
    auth: anyone,
    schema: { name: [notEmpty, unicodeString] },
    help: 'Return the help string for a particular API action.\n\n:param name: action function name (e.g. `user_create`, `package_search`)\n:type name: string\n:returns: the help string for the action function, or null if the function does not have one\n:rtype: string',
    handler: (ctx, p: { name: string }) => {
      if (!ctx.services.registry.has(p.name)) throw new NotFoundError('Action function not found');
      return ctx.services.registry.get(p.name).help || null;
    },
  },
  {
    name: 'get_site_user',
    sideEffectFree: true,
    auth: sysadminOnly,
    schema: { defer_commit: [ignoreMissing, ...bool(false)] },
    help: 'Return the site user (the sysadmin account the site uses for its own work), creating it if needed.\n\n:param defer_commit: accepted for compatibility; svc always commits with the call\n:rtype: dictionary',
    handler: async (ctx) => userDict(ctx, await ensureSiteUser(ctx.db, ctx.config), { self: true }),
  },
];
