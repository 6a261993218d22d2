// API token actions: api_token_create, api_token_list, api_token_revoke.
import type { ActionContext } from './context.ts';
import type { ActionDefinition, AuthFunction } from './registry.ts';
import { newTokenId, signToken, tokenSecret, verifyToken } from '../auth/tokens.ts';
import { denied } from '../auth/rules.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../errors.ts';
import { deleteToken, findToken, insertToken, listTokens } from '../model/api-tokens.ts';
import { findUser, type UserRow } from '../model/users.ts';
import { ignoreMissing, notEmpty, unicodeString, maxLength } from '../validation/validators.ts';

export async function issueToken(ctx: ActionContext, user: UserRow, name: string, expiresAt?: Date | null): Promise<{ token: string; id: string }> {
  const id = newTokenId();
  await insertToken(ctx.db, { id, userId: user.id, name, expiresAt });
  return { token: await signToken(await tokenSecret(ctx.db, ctx.config), id, expiresAt), id };
}

function tokenDict(t: { id: string; name: string; user_id: string; created_at: string; last_access: string | null; expires_at: string | null }) {
  const out: Record<string, unknown> = { id: t.id, name: t.name, user_id: t.user_id, created_at: t.created_at, last_access: t.last_access };
  if (t.expires_at) out.expires_at = t.expires_at;
  return out;
}

/** The caller acts on their own tokens; sysadmins on anyone's. */
const ownTokens = (action: string): AuthFunction => async (ctx, params) => {
  if (!ctx.identity.user) throw new AuthorizationError(`Action ${action} requires an authenticated user`);
  const target = params.user ?? params.user_id;
  if (target === undefined) return;
  const user = await findUser(ctx.db, String(target));
  if (!user || user.id !== ctx.identity.user.id) throw denied(ctx, `manage the API tokens of user ${target}`);
};

async function targetUser(ctx: ActionContext, idOrName: string | undefined): Promise<UserRow> {
  if (idOrName === undefined) {
    if (!ctx.identity.user) throw new ValidationError({ user: ['Missing value'] });
    return ctx.identity.user;
  }
  const user = await findUser(ctx.db, idOrName);
  if (!user || user.state === 'deleted') throw new NotFoundError('User not found');
  return user;
}

export const apiTokenActions: ActionDefinition<any, any>[] = [
  {
    name: 'api_token_create',
    sideEffectFree: false,
    auth: ownTokens('api_token_create'),
    schema: {
      user: [notEmpty, unicodeString],
      name: [notEmpty, unicodeString, maxLength(200)],
    },
    help: 'Create a new API token for a user. The token is shown only in this response: store it.\n\n:param user: name or id of the user the token is for\n:param name: a name for the token\n:returns: {"token": "<JWT>"}\n:rtype: dictionary',
    handler: async (ctx, p: { user: string; name: string; expires_at?: Date }) => {
      const user = await targetUser(ctx, p.user);
      return { token: (await issueToken(ctx, user, p.name, p.expires_at ?? null)).token };
    },
  },
  {
    name: 'api_token_list',
    sideEffectFree: true,
    auth: ownTokens('api_token_list'),
    schema: { user_id: [ignoreMissing, unicodeString], user: [ignoreMissing, unicodeString] },
    help: 'Return the API tokens of a user (the calling user by default).\n\n:param user_id: name or id of the user (optional; also accepted as "user")\n:returns: list of {id, name, user_id, created_at, last_access}\n:rtype: list',
    handler: async (ctx, p) => {
      const user = await targetUser(ctx, p.user_id ?? p.user);
      return (await listTokens(ctx.db, user.id)).map(tokenDict);
    },
  },
  {
    name: 'api_token_revoke',
    sideEffectFree: false,
    auth: async (ctx, params) => {
      if (!ctx.identity.user) throw new AuthorizationError('Action api_token_revoke requires an authenticated user');
      const jti = params.jti ?? params.token_id;
      if (!jti) return;
      const token = await findToken(ctx.db, jti);
      if (token && token.user_id !== ctx.identity.user.id) throw denied(ctx, 'revoke this API token');
    },
    schema: { jti: [ignoreMissing, unicodeString], token: [ignoreMissing, unicodeString] },
    help: 'Revoke an API token. Send its id (jti) or the token itself.\n\n:param jti: the id of the token\n:param token: the token\n:returns: null',
    handler: async (ctx, p) => {
      let jti: string | undefined = p.jti;
      if (!jti && p.token) {
        const check = await verifyToken(await tokenSecret(ctx.db, ctx.config), p.token);
        if (!check.ok) throw new ValidationError({ token: ['Invalid token'] });
        jti = check.jti;
        const token = await findToken(ctx.db, jti);
        if (token && !ctx.identity.sysadmin && token.user_id !== ctx.identity.user?.id) throw denied(ctx, 'revoke this API token');
      }
      if (!jti) throw new ValidationError({ jti: ['Missing value'] });
      if (!(await deleteToken(ctx.db, jti))) throw new NotFoundError('API token not found');
      return null;
    },
  },
];
