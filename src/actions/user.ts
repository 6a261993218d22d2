// User actions: user_create, user_show, user_list, user_update, user_patch, user_delete, user_autocomplete.
import type { ActionContext } from './context.ts';
import type { ActionDefinition, AuthFunction } from './registry.ts';
import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import { denied, sysadminOnly } from '../auth/rules.ts';
import { visiblePackagesCondition } from '../auth/authz.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../errors.ts';
import {
  findUser, findUserByEmail, insertUser, listUsers, removeUserMemberships, updateUser, USER_ORDER_BY, type UserRow,
} from '../model/users.ts';
import { Invalid, type Schema, type Validator } from '../validation/validate.ts';
import {
  bool, booleanValidator, defaultValue, emailValidator, ignoreMissing, intValidator, jsonObject, naturalNumber, nameValidator,
  notEmpty, oneOf, unicodeString, uuidValidator, clampTo,
} from '../validation/validators.ts';
import { userDict } from './user-dict.ts';
import { issueToken } from './api-token.ts';

// --- auth rules -----------------------------------------------------------------------------

const userListAuth: AuthFunction = (ctx) => {
  if (!ctx.config.bool('svc.auth.public_user_details') && !ctx.identity.user) throw new AuthorizationError('Action user_list requires an authenticated user');
};

const userCreateAuth: AuthFunction = (ctx) => {
  if (!ctx.config.bool('svc.auth.create_user_via_api')) throw denied(ctx, 'create users via the API');
};

/** Self or sysadmin (the target is given as id/name in params). */
const selfOnly = (action: string): AuthFunction => async (ctx, params) => {
  if (!ctx.identity.user) throw new AuthorizationError(`Action ${action} requires an authenticated user`);
  const target = params.id ?? params.user_id ?? params.user;
  if (target === undefined) return;
  const user = await findUser(ctx.db, String(target));
  if (!user || user.id !== ctx.identity.user.id) throw denied(ctx, `edit user ${target}`);
};

// --- validators -----------------------------------------------------------------------------

const passwordValidator: Validator = (v) => {
  if (typeof v !== 'string' || v.length < 8) throw new Invalid('Your password must be 8 characters or longer');
  return v;
};

const nameAvailable: Validator = async (v, f) => {
  const existing = await findUser(f.context.db, v);
  const own = f.data.id ?? f.context._editingUserId;
  if (existing && existing.name === v && existing.id !== own) throw new Invalid('That login name is not available.');
  return v;
};

const emailAvailable: Validator = async (v, f) => {
  const existing = await findUserByEmail(f.context.db, v);
  if (existing && existing.id !== f.context._editingUserId) throw new Invalid(`The email address '${v}' belongs to a registered user.`);
  return v;
};

/** Only sysadmins may set these; for anyone else the key is refused by name. */
const sysadminField: Validator = (v, f) => {
  if (!f.context.identity.sysadmin && !f.context.ignoreAuth) throw new Invalid(`The input field ${f.key} was not expected.`);
  return v;
};

const profileFields: Schema = {
  fullname: [ignoreMissing, unicodeString],
  about: [ignoreMissing, unicodeString],
  image_url: [ignoreMissing, unicodeString],
  activity_streams_email_notifications: [ignoreMissing, booleanValidator],
  sysadmin: [ignoreMissing, sysadminField, booleanValidator],
  state: [ignoreMissing, sysadminField, oneOf(['active', 'pending', 'deleted'])],
  plugin_extras: [ignoreMissing, sysadminField, jsonObject],
};

const createSchema: Schema = {
  id: [ignoreMissing, sysadminField, uuidValidator],
  name: [notEmpty, nameValidator, nameAvailable],
  email: [notEmpty, unicodeString, (v: string) => v.trim(), emailValidator, emailAvailable],
  password: [notEmpty, passwordValidator],
  with_apitoken: bool(false),
  ...profileFields,
};

const updateSchema: Schema = {
  id: [notEmpty, unicodeString],
  name: [ignoreMissing, nameValidator, nameAvailable],
  email: [notEmpty, unicodeString, (v: string) => v.trim(), emailValidator, emailAvailable],
  password: [ignoreMissing, (v) => (v === '' ? undefined : v), ignoreMissing, passwordValidator],
  old_password: [ignoreMissing, unicodeString],
  ...profileFields,
};

async function userOr404(ctx: ActionContext, idOrName: string): Promise<UserRow> {
  const user = await findUser(ctx.db, idOrName);
  if (!user) throw new NotFoundError('User not found');
  return user;
}

// --- handlers -------------------------------------------------------------------------------

async function userCreate(ctx: ActionContext, p: Record<string, any>) {
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

async function userUpdate(ctx: ActionContext, p: Record<string, any>) {
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
  for (const k of ['sysadmin', 'state', 'plugin_extras', 'activity_streams_email_notifications']) if (p[k] !== undefined) changes[k] = p[k];
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

/** Sets the context's editing target before validation runs its uniqueness checks. */
function editing(schema: Schema): Schema {
  return {
    ...schema,
    id: [
      ...(schema.id as Validator[]),
      async (v, f) => {
        const u = await findUser(f.context.db, v);
        if (u) f.context._editingUserId = u.id;
        return v;
      },
    ],
  };
}

const USER_LIST_ORDER = [...USER_ORDER_BY];

export const userActions: ActionDefinition<any, any>[] = [
  {
    name: 'user_create',
    sideEffectFree: false,
    auth: userCreateAuth,
    authBeforeValidation: true,
    schema: createSchema,
    help: 'Create a new user. Only sysadmins may, unless svc.auth.create_user_via_api is true.\n\n:param name: the login name (2-100 characters, lowercase alphanumerics, - and _)\n:param email: the email address\n:param password: at least 8 characters\n:param fullname: (optional)\n:param about: (optional)\n:param image_url: (optional)\n:param sysadmin, state, plugin_extras, id: (optional, sysadmin only)\n:param with_apitoken: also create an API token and return it as "token" (default false)\n:returns: the new user\n:rtype: dictionary',
    handler: userCreate,
  },
  {
    name: 'user_show',
    sideEffectFree: true,
    auth: userListAuth,
    schema: {
      id: [ignoreMissing, unicodeString],
      include_datasets: bool(false),
      include_num_followers: bool(false),
      include_password_hash: bool(false),
      include_plugin_extras: bool(false),
    },
    help: 'Return a user account. Email and apikey are shown to the user and sysadmins only.\n\n:param id: the id or name of the user (optional, default: the calling user)\n:param include_datasets: include up to 50 datasets created by the user (drafts and private ones only for the user and sysadmins; default false)\n:param include_num_followers: (default false)\n:param include_password_hash: add password_hash (default false; sysadmins only, ignored for others)\n:param include_plugin_extras: add plugin_extras (default false; sysadmins only, ignored for others)\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const target = p.id ?? ctx.identity.user?.id;
      if (!target) throw new ValidationError({ id: ['Missing value'] });
      const user = await userOr404(ctx, target);
      if (user.state === 'deleted' && !ctx.identity.sysadmin) throw new NotFoundError('User not found');
      // For anyone but a sysadmin these two are ignored (userDict shows them to sysadmins only).
      const out = await userDict(ctx, user, { includePasswordHash: p.include_password_hash, includePluginExtras: p.include_plugin_extras });
      if (p.include_num_followers) out.num_followers = 0;
      if (p.include_datasets) out.datasets = await createdDatasets(ctx, user);
      return out;
    },
  },
  {
    name: 'user_list',
    sideEffectFree: true,
    auth: userListAuth,
    schema: {
      q: [ignoreMissing, unicodeString],
      email: [ignoreMissing, unicodeString],
      order_by: [defaultValue('display_name'), oneOf(USER_LIST_ORDER)],
      all_fields: bool(true),
      include_site_user: bool(false),
      limit: [ignoreMissing, naturalNumber],
      offset: [ignoreMissing, naturalNumber],
    },
    help: 'Return the active users of the site.\n\n:param q: only users whose name, full name or email contains q (optional)\n:param email: only the user with this email (sysadmin only)\n:param order_by: one of id, name, fullname, display_name (full name, else name), created, about, sysadmin, number_created_packages (public active datasets created), all ascending (default display_name)\n:param all_fields: user dicts (true, default) or names (false)\n:param limit, offset: paging (optional)\n:rtype: list',
    handler: async (ctx, p) => {
      if (p.email && !ctx.identity.sysadmin) throw new AuthorizationError('only sysadmins may filter users by email');
      const rows = await listUsers(ctx.db, {
        q: p.q, email: p.email, orderBy: p.order_by, limit: p.limit, offset: p.offset,
        includeSiteUser: p.include_site_user || ctx.identity.sysadmin, siteUserName: ctx.config.str('svc.site_id'),
      });
      if (!p.all_fields) return rows.map((r) => r.name);
      const dicts = [];
      // One after another: the queries share the request's connection.
      for (const r of rows) dicts.push(await userDict(ctx, r, { numberCreatedPackages: r.number_created_packages }));
      return dicts;
    },
  },
  {
    name: 'user_update',
    sideEffectFree: false,
    auth: selfOnly('user_update'),
    schema: editing(updateSchema),
    help: 'Update a user account. This replaces the profile: fields not sent are cleared. The email is required; only sysadmins may rename users; changing your own password needs old_password.\n\n:param id: the id or name of the user\n:param email, fullname, about, image_url, password, old_password\n:rtype: dictionary',
    handler: userUpdate,
  },
  {
    name: 'user_patch',
    sideEffectFree: false,
    auth: selfOnly('user_patch'),
    schema: { id: [notEmpty, unicodeString], $extras: 'keep' },
    help: 'Update some fields of a user account, keeping the others.\n\n:param id: the id or name of the user\n:rtype: dictionary',
    handler: async (ctx, p) => {
      const user = await userOr404(ctx, p.id);
      const merged: Record<string, unknown> = {
        id: user.id, name: user.name, email: user.email, fullname: user.fullname, about: user.about, image_url: user.image_url,
        ...p,
      };
      if (merged.id !== user.id) merged.id = user.id;
      return ctx.call('user_update', merged);
    },
  },
  {
    name: 'user_delete',
    sideEffectFree: false,
    auth: sysadminOnly,
    schema: { id: [notEmpty, unicodeString] },
    help: 'Delete a user (state deleted). Their memberships and collaborations are removed and their tokens stop working. Sysadmin only.\n\n:param id: the id or name of the user',
    handler: async (ctx, p) => {
      const user = await userOr404(ctx, p.id);
      await updateUser(ctx.db, user.id, { state: 'deleted' });
      await removeUserMemberships(ctx.db, user.id);
      await ctx.db.query('DELETE FROM api_tokens WHERE user_id = $1', [user.id]);
      return null;
    },
  },
  {
    name: 'user_autocomplete',
    sideEffectFree: true,
    auth: userListAuth,
    schema: {
      q: [notEmpty, unicodeString],
      limit: [defaultValue(20), intValidator, clampTo(() => 1000)],
      ignore_self: bool(false),
    },
    help: 'Return users whose name or full name contains q.\n\n:param q: the text to look for\n:param limit: at most this many (default 20)\n:param ignore_self: leave out the calling user (default false)\n:returns: list of {id, name, fullname}\n:rtype: list',
    handler: async (ctx, p) => {
      const params: unknown[] = [`%${String(p.q).replace(/[\\%_]/g, (c) => '\\' + c)}%`, Math.max(0, p.limit), ctx.config.str('svc.site_id')];
      let extra = '';
      if (p.ignore_self && ctx.identity.user) {
        params.push(ctx.identity.user.id);
        extra = ` AND id <> $${params.length}`;
      }
      const r = await ctx.db.query(
        `SELECT id, name, fullname FROM users WHERE state = 'active' AND name <> $3 AND (name ILIKE $1 OR fullname ILIKE $1)${extra}
         ORDER BY (name ILIKE $1) DESC, name LIMIT $2`,
        params,
      );
      return r.rows;
    },
  },
];

/**
 * Up to 50 datasets the user created that the caller may see (the visibility rule of authz.ts:
 * yourself, you no longer see the private datasets of an organization you left), through package_show.
 */
async function createdDatasets(ctx: ActionContext, user: UserRow): Promise<unknown[]> {
  const all = ctx.identity.sysadmin || ctx.identity.user?.id === user.id;
  const params: unknown[] = [user.id];
  const visible = all ? await visiblePackagesCondition(ctx, params, 'p') : "(p.state = 'active' AND NOT p.private)";
  const r = await ctx.db.query<{ id: string }>(
    `SELECT p.id FROM packages p WHERE p.creator_user_id = $1 AND p.state <> 'deleted' AND ${visible}
     ORDER BY p.metadata_modified DESC LIMIT 50`,
    params,
  );
  const out: unknown[] = [];
  // The query applied the visibility rule already: package_show need not check it again.
  for (const row of r.rows) out.push(await ctx.call('package_show', { id: row.id }, { ignoreAuth: true }));
  return out;
}

