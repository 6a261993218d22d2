// Followers: follow_*/unfollow_*, *_follower_count/_list, am_following_*, followee counts and lists.
// A dataset the caller may not read is treated as not existing: following it, counting its
// followers and listing it among someone's followees all behave as for an unknown id.
import { Type } from '@sinclair/typebox';
import type { ActionContext } from './context.ts';
import { defineAction, type ActionDefinition, type AuthFunction } from './registry.ts';
import { p } from '../validation/params.ts';
import { anyone, sysadminOnly } from '../auth/rules.ts';
import { canReadPackage, visiblePackagesCondition } from '../auth/authz.ts';
import { AuthorizationError, ValidationError } from '../errors.ts';
import {
  follow,
  followedGroupIds,
  followedPackageIds,
  followedUserIds,
  followerCount,
  followerIds,
  isFollowing,
  unfollow,
  type FollowType,
} from '../model/follows.ts';
import { findGroup, findPackage } from '../model/packages.ts';
import { findUser } from '../model/users.ts';
import { packageDicts } from '../model/package-dict.ts';
import { userDict } from './user-dict.ts';
import { datasetSchema, groupSchema, listOf, userSchema } from './result-schemas.ts';

/** What can be followed, as the action names call it. */
type Kind = 'user' | 'dataset' | 'group' | 'organization';

const TABLE: Record<Kind, FollowType> = { user: 'user', dataset: 'package', group: 'group', organization: 'group' };
const LABEL: Record<Kind, string> = { user: 'User', dataset: 'Dataset', group: 'Group', organization: 'Organization' };
const PLURAL: Record<Kind, string> = { user: 'users', dataset: 'datasets', group: 'groups', organization: 'organizations' };

const followSchema = Type.Object({ follower_id: Type.String(), object_id: Type.String(), datetime: Type.String() }, { title: 'Follower' });
const followeeSchema = Type.Object(
  {
    type: Type.String({ description: "'user', 'dataset', 'group' or 'organization'" }),
    display_name: Type.String(),
    dict: Type.Record(Type.String(), Type.Unknown(), { description: 'what the show action of the object returns' }),
  },
  { title: 'Followee' },
);

/** The id of the followed object; an unknown (or, for datasets, unreadable) one is a validation error on id. */
async function objectId(ctx: ActionContext, kind: Kind, ref: string): Promise<string> {
  let id: string | undefined;
  if (kind === 'user') id = (await findUser(ctx.db, ref))?.id;
  else if (kind === 'dataset') {
    const pkg = await findPackage(ctx.db, ref);
    if (pkg && (await canReadPackage(ctx, pkg))) id = pkg.id;
  } else id = (await findGroup(ctx.db, ref))?.id;
  if (!id) throw new ValidationError({ id: [`Not found: ${LABEL[kind]}`] });
  return id;
}

const loginTo =
  (what: string): AuthFunction =>
  (ctx) => {
    if (!ctx.identity.user) throw new AuthorizationError(`You must be logged in to ${what}`);
  };

/** The user named by id, for self-or-sysadmin lists. */
const selfOrSysadmin =
  (action: string): AuthFunction =>
  async (ctx, prm) => {
    const me = ctx.identity.user;
    if (!me) throw new AuthorizationError(`Action ${action} requires an authenticated user`);
    const target = typeof prm.id === 'string' ? await findUser(ctx.db, prm.id) : undefined;
    if (target && target.id !== me.id)
      throw new AuthorizationError(`User ${me.name} not authorized to see the followees of user ${prm.id}`);
  };

async function userOrInvalid(ctx: ActionContext, ref: string) {
  const user = await findUser(ctx.db, ref);
  if (!user) throw new ValidationError({ id: ['Not found: User'] });
  return user;
}

/** The ids a user follows, of one kind (datasets: those the caller may read). */
async function followeeIds(ctx: ActionContext, followerId: string, kind: Kind): Promise<string[]> {
  if (kind === 'user') return followedUserIds(ctx.db, followerId);
  if (kind === 'group' || kind === 'organization') return followedGroupIds(ctx.db, followerId, kind === 'organization');
  const params: unknown[] = [];
  const visible = await visiblePackagesCondition(ctx, params, 'p');
  return followedPackageIds(ctx.db, followerId, visible, params);
}

async function followeeDicts(ctx: ActionContext, followerId: string, kind: Kind): Promise<Record<string, any>[]> {
  const ids = await followeeIds(ctx, followerId, kind);
  if (kind === 'dataset') return packageDicts(ctx, ids);
  const out: Record<string, any>[] = [];
  for (const id of ids) {
    if (kind === 'user') out.push(await userDict(ctx, (await findUser(ctx.db, id))!));
    else out.push(await ctx.call(`${kind}_show`, { id, include_users: false, include_datasets: false }, { ignoreAuth: true }));
  }
  return out;
}

const displayName = (d: Record<string, any>): string => d.display_name || d.fullname || d.title || d.name || '';

const idParam = (what: string) => ({ id: p.string(what).required() });

function kindActions(kind: Kind): ActionDefinition<any, any>[] {
  const table = TABLE[kind];
  const defs: ActionDefinition<any, any>[] = [
    defineAction({
      name: `${kind}_follower_count`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return the number of users following the ${kind}.`,
      params: idParam(`the id or name of the ${kind}`),
      returns: { description: 'the number of followers', rtype: 'int', schema: Type.Integer() },
      handler: async (ctx, prm) => followerCount(ctx.db, table, await objectId(ctx, kind, prm.id)),
    }),
    defineAction({
      name: `${kind}_follower_list`,
      sideEffectFree: true,
      auth: sysadminOnly,
      description: `Return the users following the ${kind}. Sysadmin only.`,
      params: idParam(`the id or name of the ${kind}`),
      returns: { description: 'user dicts', rtype: 'list', schema: listOf(userSchema) },
      handler: async (ctx, prm) => {
        const out: Record<string, unknown>[] = [];
        for (const id of await followerIds(ctx.db, table, await objectId(ctx, kind, prm.id)))
          out.push(await userDict(ctx, (await findUser(ctx.db, id))!));
        return out;
      },
    }),
    defineAction({
      name: `${kind}_followee_list`,
      sideEffectFree: true,
      auth: selfOrSysadmin(`${kind}_followee_list`),
      description: `Return the ${PLURAL[kind]} a user follows (only to that user and sysadmins).`,
      params: idParam('the id or name of the user'),
      returns: {
        description: `${kind} dicts`,
        rtype: 'list',
        schema: listOf(kind === 'user' ? userSchema : kind === 'dataset' ? datasetSchema : groupSchema),
      },
      handler: async (ctx, prm) => followeeDicts(ctx, (await userOrInvalid(ctx, prm.id)).id, kind),
    }),
  ];
  if (kind !== 'user') {
    defs.push(
      defineAction({
        name: `${kind}_followee_count`,
        sideEffectFree: true,
        auth: anyone,
        description: `Return the number of ${PLURAL[kind]} a user follows.`,
        params: idParam('the id or name of the user'),
        returns: { description: 'a count', rtype: 'int', schema: Type.Integer() },
        handler: async (ctx, prm) => (await followeeIds(ctx, (await userOrInvalid(ctx, prm.id)).id, kind)).length,
      }),
    );
  }
  if (kind === 'organization') return defs;
  defs.push(
    defineAction({
      name: `follow_${kind}`,
      sideEffectFree: false,
      auth: loginTo(`follow ${PLURAL[kind]}`),
      description: `Start following a ${kind} (following it again returns the same record).`,
      params: idParam(`the id or name of the ${kind}`),
      returns: { description: 'the follower record', rtype: 'dictionary', schema: followSchema },
      handler: async (ctx, prm) => {
        const me = ctx.identity.user!;
        const id = await objectId(ctx, kind, prm.id);
        if (kind === 'user' && id === me.id)
          throw new ValidationError({ id: ['You cannot follow yourself'] }, 'You cannot follow yourself');
        return follow(ctx.db, me.id, table, id);
      },
    }),
    defineAction({
      name: `unfollow_${kind}`,
      sideEffectFree: false,
      auth: loginTo(`unfollow ${PLURAL[kind]}`),
      description: `Stop following a ${kind} (nothing happens when you do not follow it).`,
      params: idParam(`the id or name of the ${kind}`),
      returns: { description: 'null', schema: Type.Null() },
      handler: async (ctx, prm) => {
        await unfollow(ctx.db, ctx.identity.user!.id, table, await objectId(ctx, kind, prm.id));
        return null;
      },
    }),
    defineAction({
      name: `am_following_${kind}`,
      sideEffectFree: true,
      auth: loginTo(`determine if you are following a ${kind}`),
      description: `Return whether you follow the ${kind}.`,
      params: idParam(`the id or name of the ${kind}`),
      returns: { description: 'true when you follow it', rtype: 'bool', schema: Type.Boolean() },
      handler: async (ctx, prm) => isFollowing(ctx.db, ctx.identity.user!.id, table, await objectId(ctx, kind, prm.id)),
    }),
  );
  if (kind === 'user') {
    defs.push(
      defineAction({
        name: 'user_followee_count',
        sideEffectFree: true,
        auth: anyone,
        description: 'Return the number of users a user follows.',
        params: idParam('the id or name of the user'),
        returns: { description: 'a count', rtype: 'int', schema: Type.Integer() },
        handler: async (ctx, prm) => (await followeeIds(ctx, (await userOrInvalid(ctx, prm.id)).id, 'user')).length,
      }),
    );
  }
  return defs;
}

const KINDS: Kind[] = ['user', 'dataset', 'group', 'organization'];
const TYPE_OF: Record<Kind, string> = { user: 'user', dataset: 'dataset', group: 'group', organization: 'organization' };

export const followActions: ActionDefinition<any, any>[] = [
  ...KINDS.flatMap(kindActions),
  defineAction({
    name: 'followee_count',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the number of objects of any kind (users, datasets, groups, organizations) a user follows.',
    params: idParam('the id or name of the user'),
    returns: { description: 'a count', rtype: 'int', schema: Type.Integer() },
    handler: async (ctx, prm) => {
      const user = await userOrInvalid(ctx, prm.id);
      let n = 0;
      for (const kind of KINDS) n += (await followeeIds(ctx, user.id, kind)).length;
      return n;
    },
  }),
  defineAction({
    name: 'followee_list',
    sideEffectFree: true,
    auth: selfOrSysadmin('followee_list'),
    description: 'Return everything a user follows, sorted by display name (only to that user and sysadmins).',
    params: {
      id: p.string('the id or name of the user').required(),
      q: p.string('only objects whose display name begins with this (case-insensitive)'),
    },
    returns: { description: 'followee entries: type, display_name and dict', rtype: 'list', schema: listOf(followeeSchema) },
    handler: async (ctx, prm) => {
      const user = await userOrInvalid(ctx, prm.id);
      const out: { type: string; display_name: string; dict: Record<string, any> }[] = [];
      for (const kind of KINDS) {
        for (const d of await followeeDicts(ctx, user.id, kind)) out.push({ type: TYPE_OF[kind], display_name: displayName(d), dict: d });
      }
      out.sort((a, b) => (a.display_name < b.display_name ? -1 : a.display_name > b.display_name ? 1 : 0));
      const q = prm.q?.trim().toLowerCase();
      return q ? out.filter((f) => f.display_name.trim().toLowerCase().startsWith(q)) : out;
    },
  }),
];
