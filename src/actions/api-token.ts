// API token actions: api_token_create, api_token_list, api_token_revoke.
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { p, type ParamValues } from '../validation/params.ts';
import { apiTokenSchema, listOf } from './result-schemas.ts';
import { newTokenId, signToken, tokenSecret, verifyToken } from '../auth/tokens.ts';
import { denied } from '../auth/rules.ts';
import { AuthorizationError, NotFoundError, ValidationError } from '../errors.ts';
import { deleteToken, findToken, insertToken, listTokens } from '../model/api-tokens.ts';
import { findUser, type UserRow } from '../model/users.ts';

export async function issueToken(
  ctx: ActionContext,
  user: UserRow,
  name: string,
  expiresAt?: Date | null,
): Promise<{ token: string; id: string }> {
  const id = newTokenId();
  await insertToken(ctx.db, { id, userId: user.id, name, expiresAt });
  return { token: await signToken(await tokenSecret(ctx.db, ctx.config), id, expiresAt), id };
}

function tokenDict(t: {
  id: string;
  name: string;
  user_id: string;
  created_at: string;
  last_access: string | null;
  expires_at: string | null;
}) {
  const out: Record<string, unknown> = { id: t.id, name: t.name, user_id: t.user_id, created_at: t.created_at, last_access: t.last_access };
  if (t.expires_at) out.expires_at = t.expires_at;
  return out;
}

/** The caller acts on their own tokens; sysadmins on anyone's. */
const ownTokens =
  (action: string): AuthFunction =>
  async (ctx, params) => {
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

const createParams = {
  user: p.string('name or id of the user the token is for').required(),
  name: p.string('a name for the token').required().maxLength(200),
};

export const apiTokenActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'api_token_create',
    sideEffectFree: false,
    auth: ownTokens('api_token_create'),
    description: 'Create a new API token for a user. The token is shown only in this response: store it.',
    params: createParams,
    returns: { description: '{"token": "<JWT>"}', rtype: 'dictionary', schema: Type.Object({ token: Type.String() }) },
    // expires_at comes from the expire_api_token plugin, which wraps this handler.
    handler: async (ctx, p: ParamValues<typeof createParams> & { expires_at?: Date }) => {
      const user = await targetUser(ctx, p.user);
      return { token: (await issueToken(ctx, user, p.name, p.expires_at ?? null)).token };
    },
  }),
  defineAction({
    name: 'api_token_list',
    sideEffectFree: true,
    auth: ownTokens('api_token_list'),
    description: 'Return the API tokens of a user (the calling user by default).',
    params: {
      user_id: p.string('name or id of the user'),
      user: p.string('name or id of the user (another name of user_id)'),
    },
    returns: { description: 'the tokens', rtype: 'list', schema: listOf(apiTokenSchema) },
    handler: async (ctx, p) => {
      const user = await targetUser(ctx, p.user_id ?? p.user);
      return (await listTokens(ctx.db, user.id)).map(tokenDict);
    },
  }),
  defineAction({
    name: 'api_token_revoke',

    sideEffectFree: false,
    auth: async (ctx, params) => {
      if (!ctx.identity.user) throw new AuthorizationError('Action api_token_revoke requires an authenticated user');
      const jti = params.jti ?? params.token_id;
      if (!jti) return;
      const token = await findToken(ctx.db, jti);
      if (token && token.user_id !== ctx.identity.user.id) throw denied(ctx, 'revoke this API token');
    },
    description: 'Revoke an API token. Send its id (jti) or the token itself.',
    params: {
      jti: p.string('the id of the token'),
      token: p.string('the token'),
    },
    returns: { description: 'null', schema: Type.Null() },
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
  }),
];
