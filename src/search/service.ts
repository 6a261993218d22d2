// The search engine of a running service: created once per Services, kept up to date by the
// catalog's dataset change notifications (same transaction as the write), rebuilt in batches.
import type { Services } from '../context.ts';
import type { Queryable } from '../db/database.ts';
import { onPackageChange } from '../model/packages.ts';
import type { SearchEngine } from './engine.ts';
import { PostgresSearchEngine } from './postgres-engine.ts';
import { searchSchemaFields } from './schema-fields.ts';
import { CountMerger } from './count-merge.ts';

const engines = new WeakMap<object, SearchEngine>();

/** Creates the engine of these services and subscribes it to dataset changes. */
export function setupSearch(services: Services): SearchEngine {
  const config = services.config;
  const merger = new CountMerger(services.db);
  services.onClose.push(() => merger.close());
  const engine = new PostgresSearchEngine({
    // collaborator labels are always indexed: callers hold them only while collaborators are enabled
    collaborators: () => true,
    removeDeleted: () => config.bool('svc.search.remove_deleted_packages'),
    rankWindow: () => config.int('svc.search.rank_window'),
    countedWordMin: () => config.int('svc.search.counted_word_min'),
    // read at each query: services.scheming is set at start (tests may set it after)
    schemaFields: () => searchSchemaFields(services.scheming),
    merger,
  });
  engines.set(services, engine);
  // final: the index row is written last, after the other listeners' work
  onPackageChange(
    services,
    async (db, packageId, change, afterCommit) => {
      if (change === 'purged') await engine.remove(db, [packageId]);
      else await engine.index(db, [packageId]);
      afterCommit(() => engine.changed(services.db));
    },
    { final: true },
  );
  return engine;
}

export function searchEngine(services: Services): SearchEngine {
  const engine = engines.get(services);
  if (!engine) throw new Error('search is not set up for these services');
  return engine;
}

export interface RebuildOptions {
  /** Only datasets that have no index row yet. */
  onlyMissing?: boolean;
  batchSize?: number;
  /** Called with (done, total) after each batch. */
  progress?: (done: number, total: number) => void;
}

/**
 * Rebuilds the index in batches, each its own short transaction, so a running server keeps
 * writing (a dataset written meanwhile is indexed by its own transaction; a batch that reads it
 * later writes the same row). Rows of datasets that no longer exist are removed first.
 */
export async function rebuildSearchIndex(services: Services, opts: RebuildOptions = {}): Promise<number> {
  const db = services.db;
  const engine = searchEngine(services);
  const batch = opts.batchSize ?? 500;
  if (!opts.onlyMissing) {
    await db.query('DELETE FROM package_search_index s WHERE NOT EXISTS (SELECT 1 FROM packages p WHERE p.id = s.package_id)');
    await engine.changed(db);
  }
  const missing = opts.onlyMissing ? 'AND NOT EXISTS (SELECT 1 FROM package_search_index s WHERE s.package_id = p.id)' : '';
  const total = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM packages p WHERE true ${missing}`)).rows[0].n);
  let done = 0;
  let after = '';
  opts.progress?.(0, total);
  for (;;) {
    const ids = (
      await db.query<{ id: string }>(`SELECT p.id FROM packages p WHERE p.id > $1 ${missing} ORDER BY p.id LIMIT $2`, [after, batch])
    ).rows.map((r) => r.id);
    if (!ids.length) break;
    await db.transaction((tx: Queryable) => engine.index(tx, ids));
    await engine.changed(db);
    after = ids[ids.length - 1];
    done += ids.length;
    opts.progress?.(Math.min(done, total), total);
  }
  return done;
}

/**
 * A group or organization was renamed or retitled: its datasets carry its name (organization,
 * groups) and title (text) in the index, so they are indexed again in the caller's transaction.
 */
export async function reindexGroupDatasets(
  services: Services,
  db: Queryable,
  groupId: string,
  afterCommit: (fn: () => Promise<void>) => unknown,
): Promise<void> {
  const ids = (
    await db.query<{ id: string }>(
      `SELECT id FROM packages WHERE owner_org = $1
     UNION SELECT table_id FROM members WHERE group_id = $1 AND table_name = 'package' AND state = 'active'`,
      [groupId],
    )
  ).rows.map((r) => r.id);
  await reindexDatasets(services, db, ids, afterCommit);
}

/** Indexes the datasets again in the caller's transaction (batches of 500); the index changes when it commits. */
export async function reindexDatasets(
  services: Services,
  db: Queryable,
  ids: string[],
  afterCommit: (fn: () => Promise<void>) => unknown,
): Promise<void> {
  const engine = searchEngine(services);
  for (let i = 0; i < ids.length; i += 500) await engine.index(db, ids.slice(i, i + 500));
  await afterCommit(() => engine.changed(services.db));
}
