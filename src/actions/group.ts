// Group and organization actions. Groups and organizations share one table and one implementation,
// parametrised by isOrganization: groupActions(false) gives group_*, groupActions(true) (see
// organization.ts) organization_*. Permissions are decided in src/auth/authz.ts. The parts:
// group-dict.ts (dicts, counts), group-save.ts (create/update/delete), group-list.ts (lists),
// group-auth.ts (auth rules).
import { defineAction, type ActionDefinition } from './registry.ts';
import { Type } from '@sinclair/typebox';
import { p } from '../validation/params.ts';
import { groupSchema, listOf } from './result-schemas.ts';
import { anyone } from '../auth/rules.ts';
import { autocompleteGroups } from '../model/groups.ts';
import { validateOrThrow } from '../validation/validate.ts';
import { booleanValidator, defaultValue } from '../validation/validators.ts';
import { groupDict, groupOr404, kindOf, titleKind } from './group-dict.ts';
import { createAuth, deleteAuth, purgeAuth, showAuth, updateAuth } from './group-auth.ts';
import {
  createGroup,
  createParams,
  deleteGroupAction,
  updateGroupFromDict,
  updateParams,
  updateSchema,
  type UpdateParams,
} from './group-save.ts';
import { listGroupsAction, listParams } from './group-list.ts';

// --- definitions ------------------------------------------------------------------------------

const showParams = {
  id: p.string('id or name').required(),
  include_datasets: p.boolean('list up to 1000 (organizations: 10) of its datasets you may see').default(false),
  include_dataset_count: p.boolean('package_count (private datasets count only for members)').default(true),
  include_extras: p.boolean('include the extras').default(true),
  // Missing or null: the configuration decides (svc.auth.public_user_details); "" is true.
  include_users: p.custom<boolean>(
    'include the users (default svc.auth.public_user_details)',
    [defaultValue(true), booleanValidator],
    Type.Boolean(),
    'bool',
  ),
  include_groups: p.boolean('include the parent groups (groups)').default(true),
  include_tags: p.boolean('include the tags').default(true),
  include_followers: p.boolean('include num_followers').default(true),
  include_member_count: p.boolean('include member_count').default(false),
};

const groupReturns = (k: string) => ({ description: `the ${k} (as ${k}_show)`, rtype: 'dictionary', schema: groupSchema });
const nullReturns = { description: 'null', schema: Type.Null() };

export function groupActions(isOrg: boolean): ActionDefinition<any, any>[] {
  const k = kindOf(isOrg);
  const ks = `${k}s`;
  return [
    defineAction({
      name: `${k}_create`,
      sideEffectFree: false,
      auth: createAuth(isOrg),
      authBeforeValidation: true,
      description: `Create a new ${k}. You become its admin. Needs a login${isOrg ? ' and svc.auth.user_create_organizations (default true)' : ' and svc.auth.user_create_groups (default true)'}.`,
      params: createParams,
      // other keys: the custom fields of a group or organization schema
      extras: 'keep',
      returns: groupReturns(k),
      handler: (ctx, p) => createGroup(ctx, p, isOrg),
    }),
    defineAction({
      name: `${k}_show`,
      sideEffectFree: true,
      auth: showAuth(isOrg),
      description: `Return a ${k}. Active ${ks} are public (their users only when svc.auth.public_user_details); deleted ones are shown to their members and sysadmins.`,
      params: showParams,
      returns: { description: `the ${k}`, rtype: 'dictionary', schema: groupSchema },
      handler: async (ctx, p) => {
        const g = await groupOr404(ctx, p.id, isOrg);
        const includeUsers = p.include_users ?? ctx.config.bool('svc.auth.public_user_details');
        return groupDict(ctx, g, {
          includeDatasets: p.include_datasets,
          includeDatasetCount: p.include_dataset_count,
          includeExtras: p.include_extras,
          includeUsers,
          includeGroups: p.include_groups,
          includeTags: p.include_tags,
          includeFollowers: p.include_followers,
          includeMemberCount: p.include_member_count,
        });
      },
    }),
    defineAction({
      name: `${k}_update`,
      sideEffectFree: false,
      auth: updateAuth(isOrg, `${k}_update`),
      description: `Replace a ${k} (admins of the ${k}). This is a full replace: users and groups not sent are removed (admins too, you included), title, description and image_url not sent are cleared; extras are replaced only when a non-empty list is sent${isOrg ? '' : '; datasets only when packages is sent'}. The type cannot change. Use ${k}_patch to change some fields only.`,
      params: updateParams,
      extras: 'keep',
      returns: groupReturns(k),
      handler: (ctx, p) => updateGroupFromDict(ctx, p, isOrg, false),
    }),
    defineAction({
      name: `${k}_patch`,
      sideEffectFree: false,
      auth: updateAuth(isOrg, `${k}_patch`),
      description: `Change some fields of a ${k} (those of ${k}_update), keeping the others (member lists not sent are kept). Admins of the ${k}.`,
      params: { id: p.string('id or name').required() },
      extras: 'keep',
      returns: groupReturns(k),
      handler: async (ctx, p) => {
        // The other fields are checked against update's declarations once the id is resolved.
        const g = await groupOr404(ctx, p.id, isOrg, `${titleKind(isOrg)} was not found.`);
        const data = await validateOrThrow<UpdateParams>(updateSchema, { ...p, id: g.id }, ctx);
        return updateGroupFromDict(ctx, data, isOrg, true);
      },
    }),
    defineAction({
      name: `${k}_delete`,
      sideEffectFree: false,
      auth: deleteAuth(isOrg),
      description: `Delete a ${k} (state deleted; its memberships end). Admins of the ${k}, when svc.auth.user_delete_${ks} (default true).${isOrg ? ' An organization that still has datasets cannot be deleted, unless svc.auth.create_unowned_dataset is true: its datasets then become unowned.' : ''}`,
      params: { id: p.string('id or name').required() },
      returns: nullReturns,
      handler: (ctx, p) => deleteGroupAction(ctx, p, isOrg, false),
    }),
    defineAction({
      name: `${k}_purge`,
      sideEffectFree: false,
      auth: purgeAuth(isOrg),
      description: `Remove a ${k} for good, with its extras and memberships. Sysadmin only.${isOrg ? ' As for organization_delete, datasets must be gone first unless svc.auth.create_unowned_dataset.' : ''}`,
      params: { id: p.string('id or name').required() },
      returns: nullReturns,
      handler: (ctx, p) => deleteGroupAction(ctx, p, isOrg, true),
    }),
    defineAction({
      name: `${k}_list`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return the active ${ks}: names, or dicts with all_fields.`,
      params: listParams(isOrg),
      returns: {
        description: `names, or ${k} dicts with all_fields`,
        rtype: 'list',
        schema: Type.Union([listOf(Type.String()), listOf(groupSchema)]),
      },
      handler: (ctx, p) => listGroupsAction(ctx, p, isOrg),
    }),
    defineAction({
      name: `${k}_autocomplete`,
      sideEffectFree: true,
      auth: anyone,
      description: `Return active ${ks} whose name or title contains q.`,
      params: {
        q: p.string('the text').required(),
        limit: p.natural('at most this many').default(20).max(1000),
      },
      returns: {
        description: 'list of {id, name, title}',
        rtype: 'list',
        schema: listOf(Type.Object({ id: Type.String(), name: Type.String(), title: Type.String() }, { additionalProperties: true })),
      },
      handler: (ctx, p) => autocompleteGroups(ctx.db, isOrg, p.q, p.limit),
    }),
  ];
}

// collaborator.ts and hierarchy.ts use it from here.
export { validationMessage } from './group-dict.ts';
