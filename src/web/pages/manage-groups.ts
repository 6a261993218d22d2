// Creating, editing and deleting organizations and groups, and managing their members (add by
// user name with a capacity, change the capacity, remove). The same pages under /organization and /group.
import type { WebContext, WebRouter } from '../router.ts';
import { attempt, enc, field, forbidden, otherMessages, type FieldMessages } from './manage-forms.ts';
import { extraData, extraWidgets, groupAction, groupExtras } from './manage-scheming.ts';

type Kind = 'organization' | 'group';
const FIELDS = ['title', 'name', 'description', 'image_url'];

function formValues(source: Record<string, any>, fromGroup: boolean) {
  return Object.fromEntries(FIELDS.map((k) => [k, fromGroup ? String(source[k] ?? '') : field(source, k)]));
}

/** The dict a form describes: the classic fields and those of the kind's custom schema. */
function groupData(ctx: WebContext, kind: Kind): Record<string, unknown> {
  const form = ctx.form;
  const data: Record<string, unknown> = {
    ...extraData(ctx, groupExtras(ctx, kind)),
    ...Object.fromEntries(FIELDS.map((k) => [k, k === 'description' ? field(form, k) : field(form, k).trim()])),
  };
  if (!data.title) data.title = data.name;
  return data;
}

async function renderForm(
  ctx: WebContext,
  kind: Kind,
  vars: { group?: Record<string, any>; form: Record<string, unknown>; errors?: FieldMessages },
  status = 200,
) {
  const canDelete = vars.group ? await ctx.may(`${kind}_delete`, { id: vars.group.id }) : false;
  const extras = groupExtras(ctx, kind);
  return ctx.render(
    'manage/group-form.njk',
    {
      ...vars,
      kind,
      mode: vars.group ? 'edit' : 'new',
      custom_fields: extraWidgets(ctx, extras, vars.group, vars.errors),
      summary: vars.errors ? otherMessages(vars.errors, [...FIELDS, ...(extras?.fields.map((f) => f.field_name) ?? [])]) : [],
      can_delete: canDelete,
    },
    status,
  );
}

/** The group, when the visitor passes authName on it (else the 403 page; missing: 404). */
async function groupFor(ctx: WebContext, kind: Kind, authName: string, extra: Record<string, unknown> = {}) {
  const group = await ctx.call(`${kind}_show`, { id: ctx.params.name, include_datasets: false, include_users: false, ...extra });
  if (!(await ctx.may(authName, { id: group.id }))) return { denied: forbidden(ctx) };
  return { group };
}

async function renderMembers(ctx: WebContext, kind: Kind, group: Record<string, any>, vars: Record<string, unknown> = {}, status = 200) {
  const roles = await ctx.call<{ text: string; value: string }[]>('member_roles_list', { group_type: kind });
  const members = ((group.users ?? []) as Record<string, any>[]).sort((a, b) =>
    String(a.display_name ?? a.name).localeCompare(String(b.display_name ?? b.name)),
  );
  return ctx.render(
    'manage/members.njk',
    {
      kind,
      group,
      members,
      roles: roles.map((r) => ({ value: r.value, label: ctx.t(`manage.role.${r.value}`) })),
      form: { username: field(ctx.query, 'user'), role: 'member' },
      ...vars,
    },
    status,
  );
}

function groupPages(web: WebRouter, kind: Kind): void {
  const base = `/${kind}`;

  web.get(`${base}/new`, async (ctx) => {
    if (!(await ctx.may(`${kind}_create`))) return forbidden(ctx);
    return renderForm(ctx, kind, { form: formValues({}, false) });
  });

  web.post(`${base}/new`, async (ctx) => {
    if (!(await ctx.may(`${kind}_create`))) return forbidden(ctx);
    // "Add another" / "Remove" of a custom schema's repeating fields: the form again, values kept.
    if (groupAction(ctx.form)) return renderForm(ctx, kind, { form: formValues(ctx.form, false) });
    const result = await attempt(() => ctx.call(`${kind}_create`, groupData(ctx, kind)));
    if (!result.ok) return renderForm(ctx, kind, { form: formValues(ctx.form, false), errors: result.errors }, 400);
    return ctx.redirect(`${base}/${enc(result.value.name)}`, { kind: 'success', text: ctx.t(`manage.${kind}.created`) });
  });

  web.get(`${base}/edit/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_update`);
    if (denied) return denied;
    return renderForm(ctx, kind, { group, form: formValues(group, true) });
  });

  web.post(`${base}/edit/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_update`);
    if (denied) return denied;
    if (groupAction(ctx.form)) return renderForm(ctx, kind, { group, form: formValues(ctx.form, false) });
    const result = await attempt(() => ctx.call(`${kind}_patch`, { ...groupData(ctx, kind), id: group.id }));
    if (!result.ok) return renderForm(ctx, kind, { group, form: formValues(ctx.form, false), errors: result.errors }, 400);
    return ctx.redirect(`${base}/${enc(result.value.name)}`, { kind: 'success', text: ctx.t(`manage.${kind}.saved`) });
  });

  web.get(`${base}/delete/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_delete`);
    if (denied) return denied;
    return ctx.render('manage/confirm.njk', {
      heading: ctx.t(`manage.${kind}.delete_title`),
      question: ctx.t(`manage.${kind}.delete_question`, { name: group.title || group.name }),
      action: `${base}/delete/${enc(group.name)}`,
      cancel: `${base}/${enc(group.name)}`,
      submit: ctx.t('manage.delete'),
    });
  });

  web.post(`${base}/delete/:name`, async (ctx) => {
    const group = await ctx.call(`${kind}_show`, { id: ctx.params.name, include_datasets: false, include_users: false });
    const result = await attempt(() => ctx.call(`${kind}_delete`, { id: group.id }));
    if (!result.ok)
      return ctx.redirect(`${base}/${enc(group.name)}`, { kind: 'error', text: Object.values(result.errors).flat().join(' ') });
    return ctx.redirect(base, { kind: 'success', text: ctx.t(`manage.${kind}.deleted`, { name: group.title || group.name }) });
  });

  web.get(`${base}/members/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_member_create`, { include_users: true });
    if (denied) return denied;
    return renderMembers(ctx, kind, group);
  });

  web.get(`${base}/member_new/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_member_create`, { include_users: true });
    if (denied) return denied;
    const current = ((group.users ?? []) as Record<string, any>[]).find((u) => u.name === field(ctx.query, 'user'));
    return renderMembers(ctx, kind, group, { form: { username: field(ctx.query, 'user'), role: current?.capacity ?? 'member' } });
  });

  web.post(`${base}/member_new/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_member_create`);
    if (denied) return denied;
    const username = field(ctx.form, 'username').trim();
    const role = field(ctx.form, 'role') || 'member';
    const result = await attempt(() => ctx.call(`${kind}_member_create`, { id: group.id, username, role }));
    if (!result.ok) {
      const again = await ctx.call(`${kind}_show`, { id: group.id, include_datasets: false, include_users: true });
      return renderMembers(ctx, kind, again, { form: { username, role }, errors: result.errors }, 400);
    }
    return ctx.redirect(`${base}/members/${enc(group.name)}`, {
      kind: 'success',
      text: ctx.t('manage.members.saved', { name: username, role: ctx.t(`manage.role.${role}`) }),
    });
  });

  web.post(`${base}/member_delete/:name`, async (ctx) => {
    const { group, denied } = await groupFor(ctx, kind, `${kind}_member_delete`);
    if (denied) return denied;
    const username = field(ctx.form, 'username') || field(ctx.form, 'user');
    const result = await attempt(() => ctx.call(`${kind}_member_delete`, { id: group.id, username }));
    if (!result.ok)
      return ctx.redirect(`${base}/members/${enc(group.name)}`, { kind: 'error', text: Object.values(result.errors).flat().join(' ') });
    return ctx.redirect(`${base}/members/${enc(group.name)}`, {
      kind: 'success',
      text: ctx.t('manage.members.removed', { name: username }),
    });
  });
}

export function groupFormPages(web: WebRouter): void {
  groupPages(web, 'organization');
  groupPages(web, 'group');
}
