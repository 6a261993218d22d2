// Follow and unfollow buttons' posts for datasets, organizations, groups and users:
// POST /<kind>/follow/<name> and /<kind>/unfollow/<name>, then back to the object's page (or the
// form's came_from on this site) with a message.
import { ValidationError } from '../../errors.ts';
import { localPath, type WebRouter } from '../router.ts';
import { showOr404 } from './catalog-common.ts';

type Dict = Record<string, any>;

interface Followable {
  /** The first part of the object's addresses. */
  path: string;
  show: string;
  /** The action suffix: follow_<kind>, unfollow_<kind>. */
  kind: 'dataset' | 'group' | 'user';
}

const FOLLOWABLE: Followable[] = [
  { path: 'dataset', show: 'package_show', kind: 'dataset' },
  { path: 'organization', show: 'organization_show', kind: 'group' },
  { path: 'group', show: 'group_show', kind: 'group' },
  { path: 'user', show: 'user_show', kind: 'user' },
];

const displayName = (d: Dict): string => d.display_name || d.title || d.fullname || d.name;

export function followPages(web: WebRouter): void {
  for (const f of FOLLOWABLE) {
    for (const verb of ['follow', 'unfollow'] as const) {
      web.post(`/${f.path}/${verb}/:name`, async (ctx) => {
        const fallback = `/${f.path}/${encodeURIComponent(ctx.params.name)}`;
        if (!ctx.user) return ctx.redirect(`/user/login?came_from=${encodeURIComponent(fallback)}`);
        const show: Dict = { id: ctx.params.name };
        if (f.path !== 'dataset' && f.path !== 'user') Object.assign(show, { include_users: false, include_datasets: false });
        const object = await showOr404<Dict>(ctx, f.show, show);
        const back = localPath(ctx.form.came_from, `/${f.path}/${encodeURIComponent(object.name)}`);
        try {
          await ctx.call(`${verb}_${f.kind}`, { id: object.id });
        } catch (e) {
          if (!(e instanceof ValidationError)) throw e;
          return ctx.redirect(back, { kind: 'error', text: e.message });
        }
        const text = ctx.t(verb === 'follow' ? 'catalog.follow.done' : 'catalog.unfollow.done', { name: displayName(object) });
        return ctx.redirect(back, { kind: 'success', text });
      });
    }
  }
}
