// Sysadmin pages: the runtime configuration options (config_option_*), the trash (deleted datasets,
// organizations and groups, purged for good) and the users (search, sysadmin flag). The actions
// are sysadmin-only: anyone else gets the 403 page, an anonymous visitor the login page.
import type { WebContext, WebRouter } from '../router.ts';
import { optionDeclaration } from '../../config/options.ts';
import { attempt, enc, field, forbidden, otherMessages } from './manage-forms.ts';

/** Options with a label of their own, in the form's order; other editable options follow. */
const KNOWN_OPTIONS: Record<string, { label: string; help?: string; widget: 'input' | 'textarea' | 'select' }> = {
  'svc.site_title': { label: 'manage.config.site_title', widget: 'input' },
  'svc.site_description': { label: 'manage.config.site_description', widget: 'textarea' },
  'svc.site_logo': { label: 'manage.config.site_logo', help: 'manage.config.site_logo_help', widget: 'input' },
  'svc.site_about': { label: 'manage.config.site_about', help: 'manage.config.markdown_help', widget: 'textarea' },
  'svc.site_intro_text': { label: 'manage.config.site_intro_text', help: 'manage.config.markdown_help', widget: 'textarea' },
  'svc.site_custom_css': { label: 'manage.config.site_custom_css', help: 'manage.config.site_custom_css_help', widget: 'textarea' },
  'svc.homepage_style': { label: 'manage.config.homepage_style', widget: 'select' },
};

/** The form's field name of an option key (dots are awkward in ids). */
const fieldName = (key: string) => key.replace(/[^\w-]/g, '_');

function optionText(value: unknown): string {
  if (Array.isArray(value)) return value.join(' ');
  return value === null || value === undefined ? '' : String(value);
}

async function configFields(ctx: WebContext, posted?: Record<string, unknown>) {
  const keys = await ctx.call<string[]>('config_option_list');
  const known = Object.keys(KNOWN_OPTIONS).filter((k) => keys.includes(k));
  const others = keys.filter((k) => !known.includes(k));
  const fields = [];
  for (const key of [...known, ...others]) {
    const decl = optionDeclaration(key);
    const meta = KNOWN_OPTIONS[key];
    const value = posted ? field(posted, fieldName(key)) : optionText(await ctx.call('config_option_show', { key }));
    fields.push({
      key,
      name: fieldName(key),
      // Options of plugins have no message of their own: their key names them, their declaration explains them.
      label: meta ? ctx.t(meta.label) : key,
      help: meta?.help ? ctx.t(meta.help) : meta ? '' : (decl?.description ?? ''),
      widget: meta?.widget ?? (decl?.type === 'bool' ? 'bool' : 'input'),
      value,
    });
  }
  return fields;
}

async function renderConfig(ctx: WebContext, posted?: Record<string, unknown>, errors?: Record<string, string[]>, status = 200) {
  const fields = await configFields(ctx, posted);
  const byName: Record<string, string[]> = {};
  for (const [k, list] of Object.entries(errors ?? {})) byName[fieldName(k)] = list;
  return ctx.render(
    'manage/admin-config.njk',
    {
      fields,
      errors: byName,
      summary: errors
        ? otherMessages(
            errors,
            fields.map((f) => f.key),
          )
        : [],
      homepage_styles: ['1', '2', '3'].map((v) => ({ value: v, label: ctx.t(`manage.config.homepage_style_${v}`) })),
      bools: [
        { value: 'true', label: ctx.t('manage.yes') },
        { value: 'false', label: ctx.t('manage.no') },
      ],
      tab: 'config',
    },
    status,
  );
}

const TRASH_KINDS = [
  { type: 'package', purge: 'dataset_purge' },
  { type: 'organization', purge: 'organization_purge' },
  { type: 'group', purge: 'group_purge' },
] as const;

export function adminPages(web: WebRouter): void {
  web.get('/ckan-admin', async (ctx) => renderConfig(ctx));

  web.post('/ckan-admin', async (ctx) => {
    const keys = await ctx.call<string[]>('config_option_list');
    // Only the options changed in the form are saved (the others keep following the configuration file).
    const values: Record<string, unknown> = {};
    for (const key of keys) {
      if (!(fieldName(key) in ctx.form)) continue;
      const value = field(ctx.form, fieldName(key)).replace(/\r\n/g, '\n');
      if (value !== optionText(await ctx.call('config_option_show', { key }))) values[key] = value;
    }
    const result = await attempt(() => ctx.call('config_option_update', values));
    if (!result.ok) return renderConfig(ctx, ctx.form, result.errors, 400);
    return ctx.redirect('/ckan-admin', { kind: 'success', text: ctx.t('manage.config.saved') });
  });

  web.get('/ckan-admin/trash', async (ctx) => {
    const trash = await ctx.call('trash_list');
    const sections = TRASH_KINDS.map((k) => ({ type: k.type, items: trash[k.type] as Record<string, unknown>[] }));
    return ctx.render('manage/admin-trash.njk', { sections, empty: sections.every((s) => !s.items.length), tab: 'trash' });
  });

  web.post('/ckan-admin/trash', async (ctx) => {
    const type = field(ctx.form, 'type'); // package, organization, group or all
    const id = field(ctx.form, 'id'); // one item, else all of the type
    const trash = await ctx.call('trash_list');
    let purged = 0;
    for (const kind of TRASH_KINDS) {
      if (type !== 'all' && type !== kind.type) continue;
      for (const item of trash[kind.type] as { id: string }[]) {
        if (id && item.id !== id) continue;
        await ctx.call(kind.purge, { id: item.id });
        purged++;
      }
    }
    return ctx.redirect('/ckan-admin/trash', { kind: 'success', text: ctx.t('manage.trash.purged', { count: purged }) });
  });

  web.get('/ckan-admin/users', async (ctx) => {
    if (!ctx.identity.sysadmin) return forbidden(ctx);
    const q = field(ctx.query, 'q').trim();
    const page = Math.max(1, Number.parseInt(field(ctx.query, 'page'), 10) || 1);
    const perPage = 50;
    const users = await ctx.call<Record<string, any>[]>('user_list', {
      ...(q ? { q } : {}),
      order_by: 'name',
      limit: perPage + 1,
      offset: (page - 1) * perPage,
    });
    return ctx.render('manage/admin-users.njk', {
      q,
      page,
      users: users.slice(0, perPage),
      more: users.length > perPage,
      tab: 'users',
    });
  });

  web.post('/ckan-admin/sysadmin', async (ctx) => {
    if (!ctx.identity.sysadmin) return forbidden(ctx);
    const username = field(ctx.form, 'username');
    const status = field(ctx.form, 'status') === '1';
    const back = `/ckan-admin/users${field(ctx.form, 'q') ? `?q=${enc(field(ctx.form, 'q'))}` : ''}`;
    const result = await attempt(() => ctx.call('user_patch', { id: username, sysadmin: status }));
    if (!result.ok) return ctx.redirect(back, { kind: 'error', text: Object.values(result.errors).flat().join(' ') });
    return ctx.redirect(back, {
      kind: 'success',
      text: ctx.t(status ? 'manage.users.promoted' : 'manage.users.revoked', { name: username }),
    });
  });
}
