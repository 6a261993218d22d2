// `svc search-index check` and `svc search-index clear`: which datasets the package_search index
// lacks or holds in an older version, and emptying it (CKAN's commands of the same names).
import type { Services } from '../context.ts';
import { searchEngine } from './service.ts';

interface IndexCheck {
  /** Names of datasets that have no index row (deleted ones only when deleted datasets are kept in the index). */
  missing: string[];
  /**
   * Names of datasets whose index row is older than the dataset, or disagrees with it on name,
   * state, visibility or spatial extent (migration 022: the row's copy of package_spatial_extents).
   */
  stale: string[];
  /** Index rows of datasets that no longer exist. */
  orphans: number;
}

export async function checkSearchIndex(services: Services): Promise<IndexCheck> {
  const db = services.db;
  const keepDeleted = !services.config.bool('svc.search.remove_deleted_packages');
  const missing = await db.query<{ name: string }>(
    `SELECT p.name FROM packages p
      WHERE (p.state <> 'deleted' OR $1) AND NOT EXISTS (SELECT 1 FROM package_search_index s WHERE s.package_id = p.id)
      ORDER BY p.name`,
    [keepDeleted],
  );
  const stale = await db.query<{ name: string }>(
    // boxes are compared with ~= (same corners): a box's = compares areas only
    `SELECT p.name FROM packages p JOIN package_search_index s ON s.package_id = p.id
        LEFT JOIN package_spatial_extents e ON e.package_id = p.id
      WHERE s.metadata_modified IS DISTINCT FROM p.metadata_modified OR s.name <> p.name OR s.state <> p.state
         OR s.private <> p.private OR s.owner_org IS DISTINCT FROM p.owner_org
         OR (s.extent IS NULL) <> (e.extent IS NULL) OR NOT (s.extent ~= e.extent)
      ORDER BY p.name`,
  );
  const orphans = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM package_search_index s WHERE NOT EXISTS (SELECT 1 FROM packages p WHERE p.id = s.package_id)',
  );
  return { missing: missing.rows.map((r) => r.name), stale: stale.rows.map((r) => r.name), orphans: orphans.rows[0].n };
}

/** Empties the index; returns how many rows it held. Searches find nothing until a rebuild. */
export async function clearSearchIndex(services: Services): Promise<number> {
  const n = await services.db.transaction(async (tx) => {
    const r = await tx.query<{ n: number }>(
      'WITH gone AS (DELETE FROM package_search_index RETURNING 1) SELECT count(*)::int AS n FROM gone',
    );
    return r.rows[0].n;
  });
  await searchEngine(services).changed(services.db);
  return n;
}
