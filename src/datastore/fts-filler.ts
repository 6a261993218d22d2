// Computes the stored full-text vectors that writes left NULL (fts.ts), in the background, in
// batches of their own transactions, once writes pause: a bulk load is not slowed by it, and the
// work is done in bulk (one UPDATE per batch keeps the indexes, GIN's pending list merging them).
// A table that keeps being written is filled anyway once it has waited MAX_DEFER_MS, but gently
// while writes go on (a pause of FORCED_PAUSE times each batch's duration after it): a long load
// keeps most of the machine. Most of a big table still to fill (a load's end) is filled in bulk:
// full-text indexes dropped, ranges of rows filled, indexes built again (fts.ts, "bulk fill").
import type { Database } from '../db/database.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { dropFullTextIndexes, fillBatch, fillPlan, fillRange, restoreFullTextIndexes, withBulkFillLock } from './fts.ts';

/**
 * Quiet time after the last write before filling starts: a client sending batch after batch
 * (ckanapi, the loader) pauses less between two; a load that ended waits no longer than this.
 */
const IDLE_MS = 500;
const MAX_DEFER_MS = 600_000;
/** While writes go on, a batch filled anyway is followed by a pause of this many times its duration. */
const FORCED_PAUSE = 3;
const RETRY_MS = 5_000;
/** After filling this many rows the table is vacuumed (dead row versions out of the partial index) and analyzed. */
const VACUUM_AFTER = 10_000;
/** Times a bulk fill tries to drop the table's full-text indexes (each waiting up to 2 s for its lock). */
const DROP_ATTEMPTS = 5;
/** Rows of `_id` per statement of a bulk fill, in batches. */
const BULK_RANGE_BATCHES = 5;

export interface BulkFillSettings {
  /** A table with at least this many rows to fill, and at least half of its rows, is filled in bulk (0: never). */
  minRows: number;
  /** maintenance_work_mem of each index build, in MB. */
  buildMemoryMb: number;
}

export class FullTextFiller {
  /** Tables with rows to fill, with the time they first were. */
  private readonly dirty = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastWrite = 0;
  private closed = false;
  private readonly waiters: (() => void)[] = [];
  /** Rows whose text makes no vector, by table: not tried again by this process. */
  private readonly unfillable = new Map<string, number[]>();
  /** Tables whose load has ended: filled at once, without waiting for writes to pause. */
  private readonly loaded = new Set<string>();

  /**
   * batch: rows per transaction (small on PGlite, whose one connection the batch holds);
   * parallel: batches at once (1 on PGlite).
   */
  constructor(
    private readonly db: Database,
    private readonly batch: number,
    private readonly onError: (e: unknown) => void = () => undefined,
    private readonly parallel = 1,
    private readonly bulk: BulkFillSettings = { minRows: 0, buildMemoryMb: 64 },
  ) {}

  /** Tables being filled in bulk by this process (their full-text indexes are being made again). */
  private readonly bulkFilling = new Set<string>();

  /** Whether this process is filling the table in bulk (its indexes are dropped on purpose). */
  isBulkFilling(table: string): boolean {
    return this.bulkFilling.has(table);
  }

  /** Writes in progress: the filler does not start a batch while there are any. */
  private writing = 0;

  /** A write transaction starts (end() when it is over): loads are not slowed by the filler. */
  writeStarted(): () => void {
    this.writing++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.writing--;
      this.lastWrite = Date.now();
    };
  }

  /**
   * A write committed rows whose vectors are to be computed (or a table was set up). loadEnded: the
   * table's load is over (its searches are slow until it is filled): filling starts at once.
   */
  wrote(table: string, loadEnded = false): void {
    if (this.closed) return;
    this.lastWrite = Date.now();
    if (!this.dirty.has(table)) this.dirty.set(table, this.lastWrite);
    if (loadEnded) this.loaded.add(table);
    this.arm(loadEnded ? 0 : IDLE_MS);
  }

  /** Resolves when nothing is left to fill (tests, the benchmark, the CLI). */
  idle(): Promise<void> {
    if (!this.dirty.size && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    for (const w of this.waiters.splice(0)) w();
  }

  private arm(ms: number): void {
    if (this.closed || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.start();
    }, ms);
    this.timer.unref();
  }

  private start(): void {
    if (this.running || this.closed) return;
    let failed = false;
    this.running = this.fillAll()
      .catch((e) => {
        failed = true;
        this.onError(e);
      })
      .finally(() => {
        this.running = null;
        if (this.dirty.size) this.arm(failed ? RETRY_MS : IDLE_MS);
        else for (const w of this.waiters.splice(0)) w();
      });
  }

  private async fillAll(): Promise<void> {
    for (const [table, since] of [...this.dirty]) {
      this.dirty.delete(table);
      const bulk = await this.bulkFill(table, since);
      // Analyzed before its indexes were built (restoreFullTextIndexes); now the per-column indexes' expressions get their statistics.
      if (bulk && !this.closed) await this.db.exec(`ANALYZE ${qi(table)}`).catch(this.onError);
      if (this.closed) return;
      // Several batches at once where the database has the connections (SKIP LOCKED keeps them apart).
      const filled = (await Promise.all(Array.from({ length: this.parallel }, () => this.fillTable(table, since)))).reduce(
        (a, b) => a + b,
        0,
      );
      if (filled >= VACUUM_AFTER && !this.closed) await this.db.exec(`VACUUM (ANALYZE) ${qi(table)}`).catch(this.onError);
    }
  }

  /**
   * Fills most of a big table at once, when it is that (bulk settings) and no write is in progress:
   * its full-text indexes dropped, ranges of `_id` filled by `parallel` connections, the indexes
   * built again. Returns the rows filled (0: not done in bulk; rows left, e.g. a row whose vector
   * fails, are the batch filler's).
   */
  private async bulkFill(table: string, since: number): Promise<number> {
    if (!this.bulk.minRows || this.closed || this.waitForWrites(table, since)) return 0;
    // A table gone meanwhile: nothing to fill.
    const plan = await fillPlan(this.db, table).catch(() => null);
    if (!plan || plan.pending < this.bulk.minRows || plan.pending * 2 < plan.rows) return 0;
    return (await withBulkFillLock(this.db, table, () => this.fillInBulk(table, since, plan))) ?? 0;
  }

  /**
   * Whether filling the table waits: a load is going on (writes in progress, or one ended less than
   * IDLE_MS ago), unless the table's load has ended (only writes in progress count) or it has
   * waited MAX_DEFER_MS.
   */
  private waitForWrites(table: string, since: number): boolean {
    return this.loading(table) && Date.now() - since < MAX_DEFER_MS;
  }

  private loading(table: string): boolean {
    return this.writing > 0 || (!this.loaded.has(table) && Date.now() - this.lastWrite < IDLE_MS);
  }

  private async fillInBulk(table: string, since: number, first: { minId: number; maxId: number }): Promise<number> {
    // Dropping takes the table's lock from the searches reading it (each a sequential scan while
    // the table is mostly unfilled, seconds on a busy machine): tried again before filling row by row.
    let defs: string[] | null = null;
    for (let i = 0; i < DROP_ATTEMPTS && !defs && !this.closed; i++) defs = await dropFullTextIndexes(this.db, table);
    if (!defs) return 0;
    this.bulkFilling.add(table);
    let filled = 0;
    try {
      // Passes over the pending rows' range of `_id`: writes during a pass (a load that went on)
      // may have emptied rows already passed, and those are many: another pass, while the
      // indexes are still dropped.
      for (let plan = first; ; ) {
        const pass = await this.fillPass(table, since, plan);
        filled += pass;
        if (this.closed || !pass) break;
        const again = await fillPlan(this.db, table);
        if (again.pending < this.batch) break;
        plan = again;
      }
    } finally {
      // Closing: the indexes are made again by the next search (rebuildDroppedIndexes).
      if (!this.closed) await restoreFullTextIndexes(this.db, table, defs, this.parallel, this.bulk.buildMemoryMb).catch(this.onError);
      this.bulkFilling.delete(table);
    }
    return filled;
  }

  /** One pass of a bulk fill: ranges of `_id` from minId to maxId, `parallel` at once; the rows filled. */
  private async fillPass(table: string, since: number, plan: { minId: number; maxId: number }): Promise<number> {
    const step = this.batch * BULK_RANGE_BATCHES;
    let next = plan.minId;
    let filled = 0;
    const worker = async () => {
      while (!this.closed && next <= plan.maxId) {
        // A load started again (the indexes stay dropped meanwhile: the load is not slowed by them).
        if (this.waitForWrites(table, since)) {
          await new Promise((resolve) => setTimeout(resolve, IDLE_MS).unref());
          continue;
        }
        const from = next;
        next += step;
        // A range that fails (a row whose text makes no vector) is left to the batch filler.
        const n = await fillRange(this.db, table, from, from + step).catch(() => 0);
        filled += n;
      }
    };
    await Promise.all(Array.from({ length: this.parallel }, worker));
    return filled;
  }

  /** Fills batch after batch until the table has no row left (or writes go on: it stays dirty). */
  private async fillTable(table: string, since: number): Promise<number> {
    let filled = 0;
    for (;;) {
      if (this.closed) return filled;
      // A load is going on: wait for it to pause (unless the table has waited long enough).
      const busy = this.loading(table);
      if (busy && Date.now() - since < MAX_DEFER_MS) {
        this.dirty.set(table, since);
        return filled;
      }
      const started = Date.now();
      let n: number;
      try {
        const r = await fillBatch(this.db, table, this.batch, this.unfillable.get(table));
        n = r.taken;
        if (r.failed.length) this.unfillable.set(table, [...(this.unfillable.get(table) ?? []), ...r.failed].slice(-10_000));
      } catch (e) {
        this.dirty.set(table, since);
        throw e;
      }
      filled += n;
      if (n < this.batch) {
        this.loaded.delete(table);
        return filled;
      }
      if (busy) await new Promise((resolve) => setTimeout(resolve, FORCED_PAUSE * (Date.now() - started)).unref());
    }
  }
}
