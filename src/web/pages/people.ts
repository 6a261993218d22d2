// People and their accounts: the user list, profiles, editing a profile, the dashboard and API tokens.
import type { WebContext, WebRouter } from '../router.ts';
import { activityItem, activityPage, amFollowing, hasAction, showOr404 } from './catalog-common.ts';
import { pageNumber, queryValue } from './catalog-search.ts';
import { attempt, enc, field, forbidden, otherMessages } from './manage-forms.ts';
import { deleteUserSessions } from '../../model/web-sessions.ts';
import { beginSession } from './account.ts';

const USERS_PAGE = 20;
const FEED_PAGE = 20;
const PROFILE_FIELDS = ['fullname', 'email', 'about', 'image_url', 'old_password', 'password1', 'password2'] as const;

/** The profile's user, or 404 (also when the user list is not public and the visitor may not read it). */
const userOr404 = (ctx: WebContext) => showOr404(ctx, 'user_show', { id: ctx.params.name, include_num_followers: true });

async function requireOwnOrSysadmin(ctx: WebContext) {
  const user = await userOr404(ctx);
  const mayEdit = !!ctx.user && (ctx.user.id === user.id || ctx.identity.sysadmin);
  return { user, mayEdit };
}

function profileForm(user: Record<string, any>) {
  return { fullname: user.fullname ?? '', email: user.email ?? '', about: user.about ?? '', image_url: user.image_url ?? '' };
}

export function peoplePages(web: WebRouter): void {
  web.get('/user', async (ctx) => {
    const page = pageNumber(ctx.query);
    const q = queryValue(ctx.query, 'q');
    const users = await ctx.call<Record<string, any>[]>('user_list', {
      ...(q ? { q } : {}),
      limit: USERS_PAGE + 1,
      offset: (page - 1) * USERS_PAGE,
    });
    return ctx.render('people/list.njk', {
      users: users.slice(0, USERS_PAGE),
      q,
      page,
      newer: page > 1 ? page - 1 : null,
      older: users.length > USERS_PAGE ? page + 1 : null,
    });
  });

  web.get('/user/:name', async (ctx) => {
    const { user, mayEdit } = await requireOwnOrSysadmin(ctx);
    const [datasets, stream, following] = await Promise.all([
      ctx.call('package_search', {
        fq: `creator_user_id:"${user.id}"`,
        rows: 20,
        sort: 'metadata_modified desc',
        include_private: true,
        include_drafts: mayEdit,
      }),
      hasAction(ctx, 'user_activity_list') ? activityPage(ctx, 'user_activity_list', user.id, `/user/${enc(user.name)}`) : null,
      amFollowing(ctx, 'user', user.id),
    ]);
    return ctx.render('people/profile.njk', { profile: user, datasets, stream, following, may_edit: mayEdit });
  });

  web.get('/user/edit/:name', async (ctx) => {
    const { user, mayEdit } = await requireOwnOrSysadmin(ctx);
    if (!mayEdit) return forbidden(ctx);
    return ctx.render('people/edit.njk', { profile: user, form: profileForm(user), own: ctx.user?.id === user.id });
  });

  web.post('/user/edit/:name', async (ctx) => {
    const { user, mayEdit } = await requireOwnOrSysadmin(ctx);
    if (!mayEdit) return forbidden(ctx);
    const own = ctx.user?.id === user.id;
    const form = Object.fromEntries(PROFILE_FIELDS.map((k) => [k, field(ctx.form, k)]));
    const changes: Record<string, unknown> = {
      id: user.id,
      fullname: form.fullname,
      email: form.email,
      about: form.about,
      image_url: form.image_url,
    };
    const changingPassword = form.password1 !== '' || form.password2 !== '';
    const result = await attempt(async () => {
      if (changingPassword) {
        if (form.password1 !== form.password2) return { mismatch: true };
        changes.password = form.password1;
        if (own && !ctx.identity.sysadmin) changes.old_password = form.old_password;
      }
      return ctx.call('user_patch', changes);
    });
    const errors = !result.ok
      ? result.errors
      : (result.value as { mismatch?: boolean }).mismatch
        ? { password2: [ctx.t('register.passwords_differ')] }
        : null;
    if (errors) {
      if (errors.password) errors.password1 = errors.password;
      const blank = { ...form, old_password: '', password1: '', password2: '' };
      return ctx.render(
        'people/edit.njk',
        { profile: user, form: blank, own, errors, summary: otherMessages(errors, PROFILE_FIELDS) },
        400,
      );
    }
    if (changingPassword) {
      // A new password ends every session of the user; the one who changed it stays signed in.
      await deleteUserSessions(ctx.services.db, user.id);
      if (own) await beginSession(ctx, user.id);
    }
    return ctx.redirect(`/user/${enc(user.name)}`, { kind: 'success', text: ctx.t('people.edit.saved') });
  });

  web.get('/dashboard', async (ctx) => {
    if (!ctx.user) return forbidden(ctx);
    const page = pageNumber(ctx.query);
    const list = hasAction(ctx, 'dashboard_activity_list')
      ? await ctx.call<Record<string, any>[]>('dashboard_activity_list', { limit: FEED_PAGE + 1, offset: (page - 1) * FEED_PAGE })
      : [];
    const stream = {
      items: list.slice(0, FEED_PAGE).map(activityItem),
      newer_href: page > 1 ? `/dashboard?page=${page - 1}` : null,
      older_href: list.length > FEED_PAGE ? `/dashboard?page=${page + 1}` : null,
    };
    return ctx.render('people/dashboard.njk', { tab: 'news', stream });
  });

  web.get('/dashboard/datasets', async (ctx) => {
    if (!ctx.user) return forbidden(ctx);
    const datasets = await ctx.call('package_search', {
      fq: `creator_user_id:"${ctx.user.id}"`,
      rows: 100,
      sort: 'metadata_modified desc',
      include_private: true,
      include_drafts: true,
    });
    return ctx.render('people/dashboard.njk', { tab: 'datasets', datasets });
  });

  web.get('/dashboard/organizations', async (ctx) => {
    if (!ctx.user) return forbidden(ctx);
    const groups = await ctx.call('organization_list_for_user', { id: ctx.user.id, permission: 'read' });
    return ctx.render('people/dashboard.njk', { tab: 'organizations', groups, kind: 'organization' });
  });

  web.get('/dashboard/groups', async (ctx) => {
    if (!ctx.user) return forbidden(ctx);
    const groups = await ctx.call('group_list_authz', {});
    return ctx.render('people/dashboard.njk', { tab: 'groups', groups, kind: 'group' });
  });

  web.get('/dashboard/followed', async (ctx) => {
    if (!ctx.user) return forbidden(ctx);
    const followees = hasAction(ctx, 'followee_list') ? await ctx.call<Record<string, any>[]>('followee_list', { id: ctx.user.id }) : [];
    const items = followees.map((f) => {
      const d = f.dict ?? {};
      const kind = ['dataset', 'user', 'organization'].includes(f.type) ? f.type : d.is_organization ? 'organization' : 'group';
      return {
        kind,
        kind_label: ctx.t(`people.kind.${kind}`),
        label: f.display_name || d.title || d.name,
        href: `/${kind}/${enc(d.name ?? '')}`,
      };
    });
    return ctx.render('people/dashboard.njk', { tab: 'followed', followees: items });
  });

  web.get('/user/:name/api-tokens', async (ctx) => {
    const { user, mayEdit } = await requireOwnOrSysadmin(ctx);
    if (!mayEdit) return forbidden(ctx);
    const tokens = await ctx.call('api_token_list', { user_id: user.id });
    return ctx.render('people/tokens.njk', { profile: user, tokens });
  });

  web.post('/user/:name/api-tokens', async (ctx) => {
    const { user, mayEdit } = await requireOwnOrSysadmin(ctx);
    if (!mayEdit) return forbidden(ctx);
    const name = field(ctx.form, 'name');
    const result = await attempt(() => ctx.call<{ token: string }>('api_token_create', { user: user.id, name }));
    const tokens = await ctx.call('api_token_list', { user_id: user.id });
    if (!result.ok) return ctx.render('people/tokens.njk', { profile: user, tokens, errors: result.errors, form: { name } }, 400);
    // The token is shown on this response only: it is stored as a hash-like id and never shown again.
    return ctx.render('people/tokens.njk', { profile: user, tokens, new_token: result.value.token, new_token_name: name });
  });

  web.post('/user/:name/api-tokens/revoke', async (ctx) => {
    const { user, mayEdit } = await requireOwnOrSysadmin(ctx);
    if (!mayEdit) return forbidden(ctx);
    await ctx.call('api_token_revoke', { jti: field(ctx.form, 'jti') });
    return ctx.redirect(`/user/${enc(user.name)}/api-tokens`, { kind: 'success', text: ctx.t('people.tokens.revoked') });
  });
}
