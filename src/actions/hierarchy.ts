// group_tree and group_tree_section (the actions of CKAN's hierarchy extension): the hierarchy of
// active groups or organizations as nested nodes {id, name, title, highlighted, children}.
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { NotFoundError } from '../errors.ts';
import { anyone } from '../auth/rules.ts';
import { findGroup } from '../model/groups.ts';
import { Hierarchy, type TreeNode } from '../model/hierarchy.ts';
import { validationMessage } from './group.ts';

const treeNode = Type.Object({
  id: Type.String(),
  name: Type.String(),
  title: Type.String(),
  highlighted: Type.Boolean({ description: 'the group asked for (group_tree_section)' }),
  children: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'sub-groups: nodes of the same shape, by title' }),
});

export const hierarchyActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'group_tree',
    sideEffectFree: true,
    auth: anyone,
    description:
      'Return the hierarchy of the active groups (or organizations) of a type: the top-level ones (without a parent), each with its sub-groups nested in `children`, all by title.',
    params: {
      type: p.string("group type: 'group' or 'organization'").default('group'),
    },
    returns: { description: 'the top-level nodes {id, name, title, highlighted, children}', rtype: 'list', schema: Type.Array(treeNode) },
    handler: async (ctx, params) => (await Hierarchy.load(ctx.db, params.type)).forest(),
  }),
  defineAction({
    name: 'group_tree_section',
    sideEffectFree: true,
    auth: anyone,
    description:
      'Return the part of the hierarchy that holds a group: from its top-level ancestor down, the group itself marked `highlighted`.',
    params: {
      id: p.string("the group's id or name").required(),
      type: p.string("group type: 'group' (when not given) or 'organization'; it must be the group's type"),
      include_parents: p.boolean('start at the top-level ancestor (true) or at the group (false)').default(true),
      include_siblings: p
        .boolean(
          "with include_parents, the whole tree under the top-level ancestor (true), or only the line of ancestors down to the group and the group's own sub-groups (false)",
        )
        .default(true),
    },
    returns: { description: 'the top node {id, name, title, highlighted, children}', rtype: 'dictionary', schema: treeNode },
    handler: async (ctx, params) => {
      const group = await findGroup(ctx.db, params.id);
      if (!group || group.state !== 'active') throw new NotFoundError('Group was not found.');
      const type = params.type ?? 'group';
      if (group.type !== type) {
        throw validationMessage(
          `Group type is "${group.type}" not "${type}" that ${params.type === undefined ? 'is filtered by default' : 'was specified'}`,
        );
      }
      const tree = await Hierarchy.load(ctx.db, type);
      const ancestors = params.include_parents ? tree.ancestors(group.id) : [];
      if (!ancestors.length) return tree.branch(group.id, group.id);
      if (params.include_siblings) return tree.branch(ancestors[0], group.id);
      // Only the line down to the group: each ancestor holds just the next one.
      const top = tree.node(ancestors[0]);
      let last = top;
      for (const id of ancestors.slice(1)) {
        const n: TreeNode = tree.node(id);
        last.children.push(n);
        last = n;
      }
      last.children.push(tree.branch(group.id, group.id));
      return top;
    },
  }),
];
