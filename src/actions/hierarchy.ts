// group_tree and group_tree_section (the actions of CKAN's hierarchy extension): the hierarchy of
// active groups or organizations as nested nodes {id, name, title, highlighted, children}.
import type { ActionDefinition } from './registry.ts';
import { NotFoundError } from '../errors.ts';
import { anyone } from '../auth/rules.ts';
import { findGroup } from '../model/groups.ts';
import { Hierarchy, type TreeNode } from '../model/hierarchy.ts';
import { bool, defaultValue, notEmpty, unicodeString, ignoreMissing } from '../validation/validators.ts';
import { validationMessage } from './group.ts';

export const hierarchyActions: ActionDefinition<any, any>[] = [
  {
    name: 'group_tree',
    sideEffectFree: true,
    auth: anyone,
    schema: { type: [defaultValue('group'), unicodeString] },
    help: "Return the hierarchy of the active groups (or organizations) of a type: the top-level ones (without a parent), each with its sub-groups nested in `children`, all by title.\n\n:param type: group type: 'group' (default) or 'organization'\n:returns: list of {id, name, title, highlighted, children}\n:rtype: list",
    handler: async (ctx, p) => (await Hierarchy.load(ctx.db, p.type)).forest(),
  },
  {
    name: 'group_tree_section',
    sideEffectFree: true,
    auth: anyone,
    schema: {
      id: [notEmpty, unicodeString],
      type: [ignoreMissing, unicodeString],
      include_parents: bool(true),
      include_siblings: bool(true),
    },
    help: "Return the part of the hierarchy that holds a group: from its top-level ancestor down, the group itself marked `highlighted`.\n\n:param id: the group's id or name\n:param type: group type: 'group' (default) or 'organization'; it must be the group's type\n:param include_parents: start at the top-level ancestor (default true) or at the group\n:param include_siblings: with include_parents, the whole tree under the top-level ancestor (default true), or only the line of ancestors down to the group and the group's own sub-groups\n:returns: {id, name, title, highlighted, children}\n:rtype: dictionary",
    handler: async (ctx, p) => {
      const group = await findGroup(ctx.db, p.id);
      if (!group || group.state !== 'active') throw new NotFoundError('Group was not found.');
      const type = p.type ?? 'group';
      if (group.type !== type) {
        throw validationMessage(`Group type is "${group.type}" not "${type}" that ${p.type === undefined ? 'is filtered by default' : 'was specified'}`);
      }
      const tree = await Hierarchy.load(ctx.db, type);
      const ancestors = p.include_parents ? tree.ancestors(group.id) : [];
      if (!ancestors.length) return tree.branch(group.id, group.id);
      if (p.include_siblings) return tree.branch(ancestors[0], group.id);
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
  },
];
