// The user dict as CKAN returns it; what is shown depends on who asks.
import { createHash } from 'node:crypto';
import type { ActionContext } from './context.ts';
import { countCreatedPackages, type UserRow } from '../model/users.ts';

export interface UserDictOptions {
  /** The caller is this user (or a sysadmin): email and apikey are shown. */
  self?: boolean;
  includePasswordHash?: boolean;
  includePluginExtras?: boolean;
  /** Precomputed count (user_list computes it in the same query). */
  numberCreatedPackages?: number;
}

export function emailHash(email: string | null): string {
  return createHash('md5')
    .update((email ?? '').trim().toLowerCase())
    .digest('hex');
}

export function canSeePrivateUserFields(ctx: ActionContext, user: { id: string }): boolean {
  return ctx.identity.sysadmin || ctx.identity.user?.id === user.id;
}

export async function userDict(ctx: ActionContext, u: UserRow, opts: UserDictOptions = {}): Promise<Record<string, unknown>> {
  const self = opts.self ?? canSeePrivateUserFields(ctx, u);
  const out: Record<string, unknown> = {
    id: u.id,
    name: u.name,
    fullname: u.fullname,
    about: u.about,
    created: u.created,
    last_active: u.last_active,
    sysadmin: u.sysadmin,
    state: u.state,
    image_url: u.image_url,
    activity_streams_email_notifications: u.activity_streams_email_notifications,
    display_name: u.fullname || u.name,
    email_hash: emailHash(u.email),
    number_created_packages: opts.numberCreatedPackages ?? (await countCreatedPackages(ctx.db, u.id, self)),
    image_display_url: u.image_url ?? '',
  };
  if (self) {
    out.email = u.email;
    out.apikey = u.apikey;
  }
  if (ctx.identity.sysadmin && opts.includePasswordHash) out.password_hash = u.password_hash;
  if (ctx.identity.sysadmin && opts.includePluginExtras) out.plugin_extras = u.plugin_extras;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
