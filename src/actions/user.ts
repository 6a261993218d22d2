// User actions: user_create, user_show, user_list, user_update, user_patch, user_delete, user_autocomplete.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { hashPassword, passwordProblem, verifyPassword } from '../auth/passwords.ts';
import { denied, sysadminOnly } from '../auth/rules.ts';
import { visiblePackagesCondition } from '../auth/authz.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../errors.ts';
import {
  findUser,
  findUserByEmail,
  insertUser,
  lockEmail,
  listUsers,
  removeUserMemberships,
  updateUser,
  USER_ORDER_BY,
  type UserRow,
} from '../model/users.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import { Type } from '@sinclair/typebox';
import { p, type ParamValues } from '../validation/params.ts';
import { listOf, userSchema } from './result-schemas.ts';
import { userDict } from './user-dict.ts';
import { issueToken } from './api-token.ts';
import { deleteUserTokens } from '../model/api-tokens.ts';
import { packagesCreatedBy } from '../model/package-lists.ts';
import { autocompleteUsers } from '../model/user-lists.ts';

// --- auth rules -----------------------------------------------------------------------------

const userListAuth: AuthFunction = (ctx) => {
  if (!ctx.config.bool('svc.auth.public_user_details') && !ctx.identity.user)
    throw new AuthorizationError('Action user_list requires an authenticated user');
};

const userCreateAuth: AuthFunction = (ctx) => {
  if (ctx.web ? !ctx.config.bool('svc.auth.create_user_via_web') : !ctx.config.bool('svc.auth.create_user_via_api'))
    throw denied(ctx, ctx.web ? 'register on this site' : 'create users via the API');
};

/** Self or sysadmin (the target is given as id/name in params). */
const selfOnly =
  (action: string): AuthFunction =>
  async (ctx, params) => {
    if (!ctx.identity.user) throw new AuthorizationError(`Action ${action} requires an authenticated user`);
    const target = params.id ?? params.user_id ?? params.user;
    if (target === undefined) return;
    const user = await findUser(ctx.db, String(target));
    if (!user || user.id !== ctx.identity.user.id) throw denied(ctx, `edit user ${target}`);
  };

// --- validators -----------------------------------------------------------------------------

const passwordValidator: Validator = (v) => {
  const problem = passwordProblem(v);
  if (problem) throw new Invalid(problem);
  return v;
};

const nameAvailable: Validator = async (v, f) => {
  const existing = await findUser(f.context.db, v);
  const own = f.data.id ?? f.context._editingUserId;
  if (existing && existing.name === v && existing.id !== own) throw new Invalid('That login name is not available.');
  return v;
};

const emailAvailable: Validator = async (v, f) => {
  await lockEmail(f.context.db, v);
  const existing = await findUserByEmail(f.context.db, v);
  if (existing && existing.id !== f.context._editingUserId) throw new Invalid(`The email address '${v}' belongs to a registered user.`);
  return v;
};

/** Only sysadmins may set these; for anyone else the key is refused by name. */
const sysadminField: Validator = (v, f) => {
  if (!f.context.identity.sysadmin && !f.context.ignoreAuth) throw new Invalid(`The input field ${f.key} was not expected.`);
  return v;
};

const profileFields = {
  fullname: p.string('the full name'),
  about: p.string('a description of the user'),
  image_url: p.string("URL of the user's picture"),
  activity_streams_email_notifications: p.boolean('email notifications of activity'),
  sysadmin: p.boolean('whether the user is a sysadmin (sysadmins only)').first(sysadminField),
  state: p.enum(['active', 'pending', 'deleted'], 'the account state (sysadmins only)').first(sysadminField),
  plugin_extras: p.object('data of plugins (sysadmins only)').first(sysadminField),
};

const password = (description: string) => p.custom<string>(description, [passwordValidator], Type.String({ minLength: 8 }));

/** Records the user being edited, so the uniqueness checks of name and email skip it. */
const editingUser: Validator = async (v, f) => {
  const u = await findUser(f.context.db, v);
  if (u) f.context._editingUserId = u.id;
  return v;
};

const createParams = {
  id: p.uuid('the id of the new user (sysadmins only)').first(sysadminField),
  name: p.name('the login name').required().use(nameAvailable),
  email: p.email('the email address').required().use(emailAvailable),
  password: password('the password (8 characters or more)').required(),
  with_apitoken: p.boolean('also create an API token and return it as "token"').default(false),
  ...profileFields,
};

const updateParams = {
  id: p.string('the id or name of the user').required().use(editingUser),
  name: p.name('a new login name (sysadmins only)').use(nameAvailable),
  email: p.email('the email address').required().use(emailAvailable),
  password: password('a new password (8 characters or more)').ignoreEmpty(),
  old_password: p.string("the current password (needed to change one's own password)"),
  ...profileFields,
};

async function userOr404(ctx: ActionContext, idOrName: string): Promise<UserRow> {
  const user = await findUser(ctx.db, idOrName);
  if (!user) throw new NotFoundError('User not found');
  return user;
}

// --- handlers -------------------------------------------------------------------------------

async function userCreate(ctx: ActionContext, p: ParamValues<typeof createParams>) {
  const user = await insertUser(ctx.db, {
    id: p.id,
    name: p.name,
    email: p.email,
    password_hash: await hashPassword(p.password),
    fullname: p.fullname,
    about: p.about,
    image_url: p.image_url,
    sysadmin: p.sysadmin ?? false,
    state: p.state ?? 'active',
    plugin_extras: p.plugin_extras,
    apikey: ctx.config.bool('svc.auth.create_default_api_keys') ? (await import('node:crypto')).randomUUID() : null,
  });
  const out = await userDict(ctx, user, { self: true });
  if (p.with_apitoken) out.token = (await issueToken(ctx, user, 'default')).token;
  return out;
}

async function userUpdate(ctx: ActionContext, p: ParamValues<typeof updateParams>) {
  const user = await userOr404(ctx, p.id);
  if (p.name !== undefined && p.name !== user.name && !ctx.identity.sysadmin) {
    throw new ValidationError({ name: ['That login name can not be modified.'] });
  }
  const changes: Record<string, unknown> = {
    email: p.email,
    fullname: p.fullname ?? null,
    about: p.about ?? null,
    image_url: p.image_url ?? null,
  };
  if (p.name !== undefined) changes.name = p.name;
  for (const k of ['sysadmin', 'state', 'plugin_extras', 'activity_streams_email_notifications'] as const)
    if (p[k] !== undefined) changes[k] = p[k];
  if (p.password !== undefined) {
    // Changing one's own password needs the old one, so a stolen token cannot take over the account.
    if (!ctx.identity.sysadmin && !(await verifyPassword(p.old_password ?? '', user.password_hash))) {
      throw new ValidationError({ old_password: ['Old Password: incorrect password'] });
    }
    changes.password_hash = await hashPassword(p.password);
  }
  if (ctx.identity.user?.id === user.id && p.sysadmin === false && user.sysadmin) {
    throw new AuthorizationError('Administrators cannot revoke their own admin status');
  }
  return userDict(ctx, await updateUser(ctx.db, user.id, changes));
}

const USER_LIST_ORDER = [...USER_ORDER_BY];

export const userActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'user_create',
    sideEffectFree: false,
    auth: userCreateAuth,
    authBeforeValidation: true,
    description: 'Create a new user. Only sysadmins may, unless svc.auth.create_user_via_api is true.',
    params: createParams,
    returns: { description: 'the new user (with "token" when with_apitoken is true)', rtype: 'dictionary', schema: userSchema },
    handler: userCreate,
  }),
  defineAction({
    name: 'user_show',
    sideEffectFree: true,
    auth: userListAuth,
    description: 'Return a user account. Email and apikey are shown to the user and sysadmins only.',
    params: {
      id: p.string('the id or name of the user (default: the calling user)'),
      include_datasets: p
        .boolean('include up to 50 datasets created by the user (drafts and private ones only for the user and sysadmins)')
        .default(false),
      include_num_followers: p.boolean('include the number of followers').default(false),
      include_password_hash: p.boolean('include the password hash (sysadmins only; ignored for others)').default(false),
      include_plugin_extras: p.boolean('include plugin_extras (sysadmins only; ignored for others)').default(false),
    },
    returns: { description: 'the user', rtype: 'dictionary', schema: userSchema },
    handler: async (ctx, p) => {
      const target = p.id ?? ctx.identity.user?.id;
      if (!target) throw new ValidationError({ id: ['Missing value'] });
      const user = await userOr404(ctx, target);
      if (user.state === 'deleted' && !ctx.identity.sysadmin) throw new NotFoundError('User not found');
      // For anyone but a sysadmin these two are ignored (userDict shows them to sysadmins only).
      const out = await userDict(ctx, user, { includePasswordHash: p.include_password_hash, includePluginExtras: p.include_plugin_extras });
      if (p.include_num_followers) out.num_followers = await ctx.call('user_follower_count', { id: user.id }, { ignoreAuth: true });
      if (p.include_datasets) out.datasets = await createdDatasets(ctx, user);
      return out;
    },
  }),
  defineAction({
    name: 'user_list',
    sideEffectFree: true,
    auth: userListAuth,
    description: 'Return the active users of the site.',
    params: {
      q: p.string('only users whose name, full name or email contains q'),
      email: p.string('only the user with this email (sysadmins only)'),
      order_by: p
        .enum(
          USER_LIST_ORDER,
          'the sort order, ascending: id, name, fullname, display_name (full name, else name), created, about, sysadmin or number_created_packages (public active datasets created)',
        )
        .default('display_name'),
      all_fields: p.boolean('user dicts (true) or names (false)').default(true),
      include_site_user: p.boolean('include the site user').default(false),
      limit: p.natural('at most this many users'),
      offset: p.natural('skip this many users'),
    },
    returns: {
      description: 'user dicts, or names when all_fields is false',
      rtype: 'list',
      schema: Type.Union([listOf(userSchema), listOf(Type.String())]),
    },
    handler: async (ctx, p) => {
      if (p.email && !ctx.identity.sysadmin) throw new AuthorizationError('only sysadmins may filter users by email');
      const rows = await listUsers(ctx.db, {
        q: p.q,
        email: p.email,
        orderBy: p.order_by,
        limit: p.limit,
        offset: p.offset,
        includeSiteUser: p.include_site_user || ctx.identity.sysadmin,
        siteUserName: ctx.config.str('svc.site_id'),
      });
      if (!p.all_fields) return rows.map((r) => r.name);
      const dicts = [];
      // One after another: the queries share the request's connection.
      for (const r of rows) dicts.push(await userDict(ctx, r, { numberCreatedPackages: r.number_created_packages }));
      return dicts;
    },
  }),
  defineAction({
    name: 'user_update',
    sideEffectFree: false,
    auth: selfOnly('user_update'),
    description:
      'Update a user account. This replaces the profile: fields not sent are cleared. The email is required; only sysadmins may rename users; changing your own password needs old_password.',
    params: updateParams,
    returns: { description: 'the updated user', rtype: 'dictionary', schema: userSchema },
    handler: userUpdate,
  }),
  defineAction({
    name: 'user_patch',
    sideEffectFree: false,
    auth: selfOnly('user_patch'),
    description: 'Update some fields of a user account, keeping the others (the fields of user_update).',
    params: { id: p.string('the id or name of the user').required() },
    extras: 'keep',
    returns: { description: 'the updated user', rtype: 'dictionary', schema: userSchema },
    handler: async (ctx, p) => {
      const user = await userOr404(ctx, p.id);
      const merged: Record<string, unknown> = {
        name: user.name,
        email: user.email,
        fullname: user.fullname,
        about: user.about,
        image_url: user.image_url,
        ...p,
        id: user.id,
      };
      return ctx.call('user_update', merged);
    },
  }),
  defineAction({
    name: 'user_delete',
    sideEffectFree: false,
    auth: sysadminOnly,
    description:
      'Delete a user (state deleted). Their memberships and collaborations are removed and their tokens stop working. Sysadmin only.',
    params: { id: p.string('the id or name of the user').required() },
    returns: { description: 'null', schema: Type.Null() },
    handler: async (ctx, p) => {
      const user = await userOr404(ctx, p.id);
      await updateUser(ctx.db, user.id, { state: 'deleted' });
      await removeUserMemberships(ctx.db, user.id);
      await deleteUserTokens(ctx.db, user.id);
      return null;
    },
  }),
  defineAction({
    name: 'user_autocomplete',
    sideEffectFree: true,
    auth: userListAuth,
    description: 'Return users whose name or full name contains q.',
    params: {
      q: p.string('the text to look for').required(),
      limit: p.natural('at most this many').default(20).max(1000),
      ignore_self: p.boolean('leave out the calling user').default(false),
    },
    returns: {
      description: 'list of {id, name, fullname}',
      rtype: 'list',
      schema: listOf(Type.Object({ id: Type.String(), name: Type.String(), fullname: Type.Union([Type.String(), Type.Null()]) })),
    },
    handler: async (ctx, p) => {
      const exceptId = p.ignore_self ? ctx.identity.user?.id : undefined;
      return autocompleteUsers(ctx.db, String(p.q), p.limit, ctx.config.str('svc.site_id'), exceptId);
    },
  }),
];

/**
 * Up to 50 datasets the user created that the caller may see (the visibility rule of authz.ts:
 * yourself, you no longer see the private datasets of an organization you left), through package_show.
 */
async function createdDatasets(ctx: ActionContext, user: UserRow): Promise<unknown[]> {
  const all = ctx.identity.sysadmin || ctx.identity.user?.id === user.id;
  const visible = all ? (params: unknown[], alias: string) => visiblePackagesCondition(ctx, params, alias) : undefined;
  const out: unknown[] = [];
  // The query applied the visibility rule already: package_show need not check it again.
  for (const id of await packagesCreatedBy(ctx.db, user.id, 50, visible))
    out.push(await ctx.call('package_show', { id }, { ignoreAuth: true }));
  return out;
}
