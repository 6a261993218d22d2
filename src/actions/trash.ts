// trash_list: the deleted datasets, organizations and groups a sysadmin may purge (the sysadmin
// trash page; CKAN reads them from its model, svc through this action).
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { sysadminOnly } from '../auth/rules.ts';
import { p } from '../validation/params.ts';
import { deletedGroups, deletedPackages } from '../model/trash.ts';

const item = Type.Object({
  id: Type.String(),
  name: Type.String(),
  title: Type.Union([Type.String(), Type.Null()]),
  changed: Type.String(),
});

export const trashActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'trash_list',
    sideEffectFree: true,
    auth: sysadminOnly,
    description:
      'Return the deleted datasets, organizations and groups (state deleted), which dataset_purge, organization_purge and group_purge remove for good. Sysadmins only.',
    params: {
      limit: p.natural('at most this many of each kind').default(1000),
    },
    returns: {
      description: '{"package": [...], "organization": [...], "group": [...]}, each item {id, name, title, changed}',
      rtype: 'dictionary',
      schema: Type.Object({ package: Type.Array(item), organization: Type.Array(item), group: Type.Array(item) }),
    },
    handler: async (ctx, prm) => ({
      package: await deletedPackages(ctx.db, prm.limit),
      organization: await deletedGroups(ctx.db, true, prm.limit),
      group: await deletedGroups(ctx.db, false, prm.limit),
    }),
  }),
];
