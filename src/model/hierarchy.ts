// The group/organization hierarchy as trees (group_tree, group_tree_section). Links are the
// 'group' memberships of src/model/members.ts (group_id = the sub-group, table_id = its parent).
import type { Queryable } from '../db/database.ts';

export interface TreeNode {
  id: string;
  name: string;
  title: string;
  highlighted: boolean;
  children: TreeNode[];
}

interface GroupFacts {
  id: string;
  name: string;
  title: string;
}

/** The active groups of one type and the links between them, ready to walk up and down. */
export class Hierarchy {
  private readonly groups = new Map<string, GroupFacts>();
  private readonly childrenOf = new Map<string, string[]>();
  private readonly parentsOf = new Map<string, string[]>();

  static async load(db: Queryable, type: string): Promise<Hierarchy> {
    const groups = await db.query<GroupFacts>(
      "SELECT id, name, coalesce(title, '') AS title FROM groups WHERE type = $1 AND state = 'active'",
      [type],
    );
    const links = await db.query<{ child: string; parent: string }>(
      `SELECT m.group_id AS child, m.table_id AS parent FROM members m
       JOIN groups c ON c.id = m.group_id AND c.type = $1 AND c.state = 'active'
       JOIN groups p ON p.id = m.table_id AND p.type = $1 AND p.state = 'active'
       WHERE m.table_name = 'group' AND m.state = 'active'`,
      [type],
    );
    return new Hierarchy(groups.rows, links.rows);
  }

  private constructor(groups: GroupFacts[], links: { child: string; parent: string }[]) {
    for (const g of groups) this.groups.set(g.id, g);
    for (const { child, parent } of links) {
      push(this.childrenOf, parent, child);
      push(this.parentsOf, child, parent);
    }
    const order = (a: string, b: string) => compareGroups(this.groups.get(a)!, this.groups.get(b)!);
    for (const list of this.childrenOf.values()) list.sort(order);
    for (const list of this.parentsOf.values()) list.sort(order);
  }

  has(id: string): boolean {
    return this.groups.has(id);
  }

  /** Every group without a parent, as a tree, by title. */
  forest(): TreeNode[] {
    return [...this.groups.values()]
      .filter((g) => !this.parentsOf.has(g.id))
      .sort(compareGroups)
      .map((g) => this.branch(g.id, undefined));
  }

  /** The group and everything under it; highlight marks one node. */
  branch(id: string, highlight: string | undefined, path: Set<string> = new Set()): TreeNode {
    const node = this.node(id, highlight);
    path.add(id);
    // A loop cannot be written (loop check under a lock), but a tree must end even if one existed.
    for (const c of this.childrenOf.get(id) ?? []) if (!path.has(c)) node.children.push(this.branch(c, highlight, path));
    path.delete(id);
    return node;
  }

  /** The ancestors of a group from the top down (following the first parent by title at each step). */
  ancestors(id: string): string[] {
    const out: string[] = [];
    const seen = new Set([id]);
    let cur = this.parentsOf.get(id)?.[0];
    while (cur && !seen.has(cur)) {
      out.unshift(cur);
      seen.add(cur);
      cur = this.parentsOf.get(cur)?.[0];
    }
    return out;
  }

  node(id: string, highlight?: string): TreeNode {
    const g = this.groups.get(id)!;
    return { id: g.id, name: g.name, title: g.title, highlighted: g.id === highlight, children: [] };
  }
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function compareGroups(a: GroupFacts, b: GroupFacts): number {
  if (a.title !== b.title) return a.title < b.title ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
