// Pieces the catalog pages share: reading what the visitor may see (else 404), safe links from
// user-entered URLs, activity streams and follower lists as the templates show them.
import { AuthorizationError, NotFoundError } from '../../errors.ts';
import type { WebContext } from '../router.ts';
import { pageNumber } from './catalog-search.ts';

/** Calls a show action; what the visitor may not read is answered as missing (CKAN does the same). */
export async function showOr404<T = any>(ctx: WebContext, action: string, data: Record<string, unknown>): Promise<T> {
  try {
    return await ctx.call<T>(action, data);
  } catch (e) {
    if (e instanceof AuthorizationError) throw new NotFoundError(action.replace(/_show$/, ''));
    throw e;
  }
}

/** A user-entered address as a link target: only http(s), mailto and same-site paths; else null (shown as text). */
export function safeLink(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  const u = url.trim();
  if (/^\/(?![/\\])/.test(u)) return u;
  return /^(https?:\/\/|mailto:)[^\s]+$/i.test(u) ? u : null;
}

/** The site's address without a trailing slash (for absolute URLs in JSON-LD and canonical links). */
export function siteUrl(ctx: WebContext): string {
  return ctx.services.config.str('svc.site_url').replace(/\/+$/, '');
}

/** Whether an action exists (the activity plugin may be off). */
export function hasAction(ctx: WebContext, name: string): boolean {
  return ctx.services.registry.has(name);
}

const ACTIVITY_PAGE = 20;

export interface ActivityItem {
  id: string;
  actor: string | null;
  /** Message key of what happened ('catalog.activity.new_package' ...). */
  verb: string;
  object_label: string;
  object_href: string | null;
  timestamp: string;
}

export function activityItem(a: Record<string, any>): ActivityItem {
  const data = (a.data ?? {}) as Record<string, any>;
  const type = String(a.activity_type ?? '');
  let label = '';
  let href: string | null = null;
  if (type.endsWith('resource view')) {
    label = data.title || data.view_type || '';
    href = `/dataset/${encodeURIComponent(a.object_id)}`;
  } else if (data.package) {
    label = data.package.title || data.package.name;
    href = `/dataset/${encodeURIComponent(data.package.name ?? a.object_id)}`;
  } else if (data.group) {
    label = data.group.title || data.group.name;
    const kind = data.group.is_organization || type.endsWith('organization') ? 'organization' : 'group';
    href = `/${kind}/${encodeURIComponent(data.group.name ?? a.object_id)}`;
  } else if (data.user) {
    label = data.user.fullname || data.user.name;
    href = `/user/${encodeURIComponent(data.user.name ?? a.object_id)}`;
  }
  return {
    id: a.id,
    actor: typeof data.actor === 'string' ? data.actor : null,
    verb: `catalog.activity.${type.replace(/\s+/g, '_')}`,
    object_label: label,
    object_href: href,
    timestamp: a.timestamp,
  };
}

/** A page of an activity stream (`<kind>_activity_list`), newest first, with links to the newer and older pages. */
export async function activityPage(ctx: WebContext, action: string, id: string, path: string) {
  if (!hasAction(ctx, action)) throw new NotFoundError('activity'); // the activity plugin is off
  const page = pageNumber(ctx.query);
  const list = await ctx.call<Record<string, any>[]>(action, { id, limit: ACTIVITY_PAGE + 1, offset: (page - 1) * ACTIVITY_PAGE });
  return {
    items: list.slice(0, ACTIVITY_PAGE).map(activityItem),
    newer_href: page > 1 ? `${path}${page > 2 ? `?page=${page - 1}` : ''}` : null,
    older_href: list.length > ACTIVITY_PAGE ? `${path}?page=${page + 1}` : null,
  };
}

/** The visitor's follow state of an object (`am_following_<kind>`), null for anonymous visitors. */
export async function amFollowing(ctx: WebContext, kind: 'dataset' | 'group' | 'user', id: string): Promise<boolean | null> {
  if (!ctx.user) return null;
  return ctx.call<boolean>(`am_following_${kind}`, { id });
}
