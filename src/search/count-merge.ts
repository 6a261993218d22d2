// Folding the pending count changes (migration 023) into the kept counts. Writers only append to
// the change tables; readers sum kept and pending (value-counts.ts), so a merge changes no count:
// it keeps the pending rows few, which keeps reads fast.
import { isPool, type Queryable } from '../db/database.ts';

/**
 * One statement (one transaction, one snapshot): the committed changes are deleted and their sums
 * added to the kept rows, in key order. A merge already running holds the lock: this one then
 * merges nothing (the running one, or the next, takes what is left). Returns the rows merged.
 * `also` is SQL selected in the same statement (the caller's own round trip).
 */
export function mergeSql(also = 'NULL'): string {
  return `WITH go AS (SELECT pg_try_advisory_xact_lock(hashtextextended('svc.search_count_merge', 0)) AS ok),
  v AS (DELETE FROM package_search_value_deltas WHERE (SELECT ok FROM go) RETURNING class, field, value, n),
  f AS (DELETE FROM package_search_field_deltas WHERE (SELECT ok FROM go) RETURNING class, field, value, n),
  kv AS (INSERT INTO package_search_value_counts AS c (class, field, value, n)
    SELECT class, field, value, sum(n) FROM v GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n),
  kf AS (INSERT INTO package_search_field_counts AS c (class, field, value, n)
    SELECT class, field, value, sum(n) FROM f GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (class, field, value) DO UPDATE SET n = c.n + EXCLUDED.n)
  SELECT ((SELECT count(*) FROM v) + (SELECT count(*) FROM f))::int AS merged, ${also} AS also`;
}

export async function mergeCounts(db: Queryable): Promise<number> {
  return (await db.query<{ merged: number }>(mergeSql())).rows[0].merged;
}

/**
 * When merges run. On one connection (the embedded database) the caller merges after each
 * change itself, in the statement it sends anyway (mergeSql's `also`). On a pool a merge runs
 * delayMs after the first change since the last one, off the writers' path, so that one merge
 * takes the changes of many writes (their common keys summed: the totals, frequent words).
 */
export class CountMerger {
  private timer: NodeJS.Timeout | null = null;
  /** A change came since the running (or last) merge took its snapshot. */
  private dirty = false;
  private closed = false;
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Queryable,
    private readonly delayMs = 200,
  ) {}

  /** On one connection: true, the caller merges now. On a pool: a merge is scheduled; false. */
  changed(): boolean {
    if (!isPool(this.db)) return true;
    this.dirty = true;
    this.schedule();
    return false;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(async () => {
      this.dirty = false;
      this.inflight = this.run();
      await this.inflight;
      this.timer = null;
      if (this.dirty) this.schedule();
    }, this.delayMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    try {
      await mergeCounts(this.db);
    } catch {
      // the next change schedules another; the counts are right without it
    }
  }

  /** Stops the timer, and merges what is pending (a process that ends leaves little behind). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inflight;
    await this.run();
  }
}
