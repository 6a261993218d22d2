// A loaded table comes without the key on its `_id` (the loader copies rows and nothing else): the
// key is made once the load has committed, first as a unique index (searches go on meanwhile,
// writes wait for it; the table's sequence keeps new rows apart), then made the primary key.
import type { Queryable } from '../db/database.ts';
import { isDbError } from './db-errors.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { readTable } from './catalog.ts';

/**
 * The unique index on `_id`; returns its name, or null when there is nothing to do (the table is
 * gone, is a view, or has its primary key).
 */
export async function buildIdIndex(q: Queryable, name: string): Promise<string | null> {
  const t = await readTable(q, name);
  if (!t || t.relkind !== 'r' || !t.columns.some((c) => c.id === '_id')) return null;
  const keyed = await q.query('SELECT 1 FROM pg_index WHERE indrelid = $1 AND indisprimary', [t.oid]);
  if (keyed.rows.length) return null;
  const index = `ds_${t.oid}_id`;
  await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS ${qi(index)} ON ${qi(name)} ("_id")`);
  return index;
}

/**
 * In a transaction of its own: the index becomes the primary key. That takes the table's exclusive
 * lock for a moment, waiting at most a second for reads that hold the table (lockTimedOut: then it
 * is left as a unique index, which serves the same).
 */
export async function makeIdIndexPrimary(q: Queryable, name: string, index: string): Promise<void> {
  await q.query(`SET LOCAL lock_timeout = '1s'`);
  await q.query(`ALTER TABLE ${qi(name)} ADD CONSTRAINT ${qi(index)} PRIMARY KEY USING INDEX ${qi(index)}`);
}

export const lockTimedOut = (e: unknown) => isDbError(e) && e.code === '55P03';
