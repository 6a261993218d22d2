// resource_search and tag_search: plain SQL over the catalog tables (no index of their own).
import type { Queryable } from '../db/database.ts';
import { quoteIdent, escapeLike } from '../db/sql.ts';
import { RESOURCE_FIELDS, type ResourceRow } from '../model/resources.ts';

/** Resource columns resource_search may match and order by. */
export const RESOURCE_SEARCH_COLUMNS: readonly string[] = [
  ...RESOURCE_FIELDS,
  'id',
  'package_id',
  'metadata_modified',
  'position',
  'state',
];

export interface ResourceCriterion {
  field: string;
  term: string;
  /** an extra field (svc.extra_resource_fields): matched in the extras */
  extra: boolean;
}

/** Active resources of active public datasets matching every criterion (case-insensitive; hash by prefix). */
export async function searchResources(
  db: Queryable,
  criteria: ResourceCriterion[],
  opts: { orderBy?: string; extraOrder?: boolean; offset?: number; limit?: number },
): Promise<{ count: number; rows: ResourceRow[] }> {
  const params: unknown[] = [];
  const conds = [`r.state = 'active'`, `p.state = 'active'`, 'NOT p.private'];
  for (const c of criteria) {
    if (c.extra) {
      params.push(c.field, `%${escapeLike(c.term)}%`);
      conds.push(`(r.extras ->> $${params.length - 1}::text) ILIKE $${params.length}`);
    } else if (c.field === 'hash') {
      params.push(`${escapeLike(c.term)}%`);
      conds.push(`r.hash ILIKE $${params.length}`);
    } else {
      params.push(`%${escapeLike(c.term)}%`);
      conds.push(`r.${quoteIdent(c.field)}::text ILIKE $${params.length}`);
    }
  }
  const where = conds.join(' AND ');
  const from = 'resources r JOIN packages p ON p.id = r.package_id';
  const count = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${from} WHERE ${where}`, params)).rows[0].n);
  let order = 'r.package_id, r.position';
  if (opts.orderBy) {
    if (opts.extraOrder) {
      params.push(opts.orderBy);
      order = `(r.extras ->> $${params.length}::text), ${order}`;
    } else order = `r.${quoteIdent(opts.orderBy)}, ${order}`;
  }
  params.push(opts.limit ?? null, opts.offset ?? 0);
  const rows = (
    await db.query<ResourceRow>(
      `SELECT r.* FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    )
  ).rows;
  return { count, rows };
}

/**
 * Tags whose names contain every term (case-insensitive), free tags or those of one vocabulary,
 * used by at least one dataset the caller may see (visible: a condition over packages p, with its
 * parameters already in params).
 */
export async function searchTags(
  db: Queryable,
  terms: string[],
  vocabularyId: string | null,
  visible: string,
  params: unknown[],
  limit: number,
  offset: number,
): Promise<{ count: number; rows: { id: string; name: string; vocabulary_id: string | null }[] }> {
  const p = [...params];
  const conds: string[] = [];
  for (const t of terms) {
    p.push(`%${escapeLike(t)}%`);
    conds.push(`t.name ILIKE $${p.length}`);
  }
  if (vocabularyId) {
    p.push(vocabularyId);
    conds.push(`t.vocabulary_id = $${p.length}`);
  } else conds.push('t.vocabulary_id IS NULL');
  conds.push(`EXISTS (SELECT 1 FROM package_tags pt JOIN packages p ON p.id = pt.package_id
    WHERE pt.tag_id = t.id AND pt.state = 'active' AND ${visible})`);
  const where = conds.join(' AND ');
  const count = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM tags t WHERE ${where}`, p)).rows[0].n);
  p.push(limit, offset);
  const rows = (
    await db.query(
      `SELECT t.id, t.name, t.vocabulary_id FROM tags t WHERE ${where} ORDER BY t.name LIMIT $${p.length - 1} OFFSET $${p.length}`,
      p,
    )
  ).rows;
  return { count, rows };
}
