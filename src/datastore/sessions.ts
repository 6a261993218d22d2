// The data store's transactions: writes on the write database, reads as the read-only role (a
// separate read pool in server mode, SET LOCAL ROLE on the one database in embedded mode), and
// the cache of table descriptions that reads use.
import type { Connection, Database, Queryable, Transaction } from '../db/database.ts';
import { quoteLiteral } from '../db/sql.ts';
import { ValidationError } from '../errors.ts';
import { COUNTS_TABLE, readTable, type Table } from './catalog.ts';
import { isRace } from './db-errors.ts';
import { SCHEMA_CHANNEL, TableCache } from './table-cache.ts';
import {
  defaultFtsSettings,
  fillOwnRows,
  FTS_COLUMN,
  rebuildDroppedIndexes,
  rebuildPendingSince,
  rowIndexSplit,
  setUpFullText,
  storedLanguage,
  tablesMarkedForRebuild,
  type FtsSettings,
} from './fts.ts';
import type { TextSearchSetting } from './select.ts';
import { FullTextFiller } from './fts-filler.ts';
import { buildIdIndex, lockTimedOut, makeIdIndexPrimary } from './id-key.ts';

export const SEARCH_TIMEOUT_MS = 60000;
/** How many times a write that lost a race with another transaction is run (see writeTx). */
const WRITE_ATTEMPTS = 6;

/** Session settings of a PostgreSQL read pool (see readSession). */
/**
 * Settings of every read: a sequential scan starts at the table's first page, not where another
 * scan is (synchronized scans), so a search whose rows come in table order (the rank window of
 * select.ts) finds the same rows each time.
 */
const READ_SETTINGS = { synchronize_seqscans: 'off' };

export const readPoolOptions = { statementTimeoutMs: SEARCH_TIMEOUT_MS, timeZone: 'UTC', settings: READ_SETTINGS };

export interface WriteSession extends Transaction {
  readonly fts: FtsSettings;
  /** Rows of a table were written (their full-text vectors are to be computed: fts.ts). */
  wroteRows(t: Table, n: number): void;
  /** Rows added (or removed) to a table's stored count: written with the COMMIT (one round trip). */
  addCount(name: string, n: number): void;
  /** Writes the counts added so far (before a statement that reads or replaces them). */
  flushCounts(): Promise<void>;
  /** Tables or aliases change: cached descriptions go when this commits, here and in other processes. */
  schemaChanged(): Promise<void>;
}

export interface SessionsOptions {
  write: Database;
  /** A separate read-only connection (server mode); when absent reads use `write` with readerRole. */
  read?: Database;
  /** Role switched to (SET LOCAL ROLE) for reads on the write database (embedded mode). */
  readerRole?: string;
  /** PostgreSQL: the write database's URL, to hear of schema changes made by other processes. */
  listenUrl?: string;
  /** Full-text search settings (defaults: defaultFtsSettings). */
  fts?: Partial<FtsSettings>;
  /** Errors of background work (the full-text filler). */
  onBackgroundError?: (e: unknown) => void;
}

export class Sessions {
  readonly write: Database;
  readonly read: Database;
  private readonly readerRole?: string;
  readonly tables: TableCache<Table>;
  /** Type names by oid, for results of read-only queries. */
  readonly typeNames = new Map<number, string>();
  /** Whether other processes follow schema changes (NOTIFY): only with a listening PostgreSQL. */
  private readonly notify: boolean;

  readonly fts: FtsSettings;
  /** Computes the full-text vectors that larger writes leave to it. */
  readonly filler: FullTextFiller;
  private readonly upgrading = new Set<string>();
  private readonly onBackgroundError: (e: unknown) => void;

  constructor(opts: SessionsOptions) {
    this.fts = { ...defaultFtsSettings, ...opts.fts };
    this.onBackgroundError = opts.onBackgroundError ?? (() => undefined);
    // PGlite runs one statement at a time, on this thread: small batches let requests in between.
    const embedded = opts.write.kind === 'pglite';
    // Bulk fills (indexes dropped and built again) only where index builds do not hold the only connection.
    this.filler = new FullTextFiller(opts.write, embedded ? 500 : 10000, this.onBackgroundError, embedded ? 1 : 2, {
      minRows: embedded ? 0 : this.fts.bulkFillMinRows,
      buildMemoryMb: this.fts.indexBuildMemoryMb,
    });
    this.write = opts.write;
    this.read = opts.read ?? opts.write;
    this.readerRole = opts.read ? undefined : opts.readerRole;
    this.notify = opts.write.kind === 'postgres';
    this.tables = new TableCache(this.notify ? (opts.listenUrl ?? null) : null);
  }

  /**
   * One write transaction on the write database; dryRun rolls it back. A transaction that lost a
   * race with another (isRace: a deadlock, the same table created at once) runs again, after a
   * short random pause, up to WRITE_ATTEMPTS times: fn must be safe to run again.
   */
  async writeTx<T>(fn: (s: WriteSession) => Promise<T>, dryRun = false): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writeOnce(fn, dryRun);
      } catch (e) {
        if (!isRace(e)) throw e;
        if (attempt >= WRITE_ATTEMPTS)
          throw new ValidationError({ database: [`${(e as Error).message} (concurrent writes; tried ${attempt} times)`] });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * attempt));
      }
    }
  }

  private async writeOnce<T>(fn: (s: WriteSession) => Promise<T>, dryRun: boolean): Promise<T> {
    let changed = false;
    const counts = new Map<string, number>();
    const written = new Map<string, { t: Table; n: number }>();
    // Tables whose indexes a bulk fill dropped: made again after this write if no process is filling them.
    const marked = new Set<string>();
    const ended = this.filler.writeStarted();
    const out = await this.write
      .transaction(
        async (tx) => {
          const session: WriteSession = {
            ...tx,
            fts: this.fts,
            schemaChanged: async () => {
              if (!changed && this.notify) await tx.exec(`NOTIFY ${SCHEMA_CHANNEL}`);
              changed = true;
            },
            addCount: (name, n) => {
              counts.set(name, (counts.get(name) ?? 0) + n);
            },
            flushCounts: async () => {
              const sql = countsSql(counts);
              counts.clear();
              if (sql) await tx.exec(sql);
            },
            wroteRows: (t, n) => {
              if (rebuildPendingSince(t)) marked.add(t.name);
              if (!counts.has(t.name)) counts.set(t.name, 0);
              const w = written.get(t.name);
              if (w) w.n += n;
              else if (n > 0 && storedLanguage(t)) written.set(t.name, { t, n });
            },
          };
          const result = await fn(session);
          // Small writes fill their rows' vectors now; the filler takes the larger ones after the commit.
          for (const [name, w] of written) {
            if (dryRun || w.n > this.fts.inlineMaxRows) continue;
            if (await fillOwnRows(tx, w.t)) written.delete(name);
          }
          return result;
        },
        { rollback: dryRun, beforeCommit: () => countsSql(counts) },
      )
      .finally(ended);
    if (changed) this.tables.clear();
    if (!dryRun) for (const name of written.keys()) this.filler.wrote(name);
    for (const name of marked) if (!this.filler.isBulkFilling(name)) this.rebuildIndexesLater(name);
    return out;
  }

  /**
   * A table made before stored full-text vectors: given them in the background (its searches
   * compute them meanwhile). Once per table and process.
   */
  upgradeLater(name: string): void {
    if (this.upgrading.has(name)) return;
    this.upgrading.add(name);
    this.setUpInBackground(name, () => this.upgrading.delete(name));
  }

  /** A table whose full-text indexes a bulk fill dropped and no process is making again (it died): made again now. */
  private rebuildIndexesLater(name: string): void {
    if (this.upgrading.has(name)) return;
    this.upgrading.add(name);
    // Writes go on while another process fills the table in bulk: only a rebuild tells every process.
    this.writeTx(async (s) => {
      if (await rebuildDroppedIndexes(s, name, this.fts)) await s.schemaChanged();
    })
      .catch(this.onBackgroundError)
      .finally(() => this.upgrading.delete(name));
  }

  /**
   * At start-up: tables whose full-text indexes a bulk fill dropped and no process is making
   * again (it died) get them now, in the background, without waiting for a search or a write.
   */
  recoverInterruptedFills(): void {
    tablesMarkedForRebuild(this.write)
      .then((names) => {
        for (const name of names) if (!this.filler.isBulkFilling(name)) this.rebuildIndexesLater(name);
      })
      .catch(this.onBackgroundError);
  }

  /**
   * A table just loaded, with its full-text column but no indexes: its `_id` key and full-text
   * indexes are made now (id-key.ts), then its vectors filled.
   */
  indexLater(name: string): void {
    this.setUpInBackground(
      name,
      undefined,
      async () => {
        const index = await this.writeTx((s) => buildIdIndex(s, name));
        if (index)
          await this.writeTx((s) => makeIdIndexPrimary(s, name, index)).catch((e) => {
            if (!lockTimedOut(e)) throw e;
          });
      },
      true,
    );
  }

  private setUpInBackground(name: string, onError?: () => void, first?: () => Promise<void>, loadEnded = false): void {
    (first?.() ?? Promise.resolve())
      .then(() =>
        this.writeTx(async (s) => {
          await s.schemaChanged();
          await setUpFullText(s, name, this.fts);
        }),
      )
      .then(
        () => this.filler.wrote(name, loadEnded),
        (e) => {
          onError?.();
          this.onBackgroundError(e);
        },
      );
  }

  /** One read-only transaction as the read-only role (settings: further SET LOCAL ones). */
  readTx<T>(fn: (q: Transaction) => Promise<T>, timeoutMs = SEARCH_TIMEOUT_MS, settings: Record<string, string> = {}): Promise<T> {
    return this.read.transaction(fn, {
      readOnly: true,
      role: this.readerRole,
      statementTimeoutMs: timeoutMs,
      settings: { TimeZone: 'UTC', ...READ_SETTINGS, ...settings },
    });
  }

  /**
   * Reads built by the backend itself (search, lookups). A separate PostgreSQL read pool already
   * connects as the read-only user with the search timeout and UTC (readPoolOptions), so its
   * statements need no transaction around them; otherwise a read-only transaction.
   */
  readSession<T>(fn: (q: Connection) => Promise<T>): Promise<T> {
    if (this.read !== this.write && this.read.kind === 'postgres') return this.read.withConnection(fn);
    return this.readTx(fn);
  }

  /** Whether a search of this table or alias can use stored full-text vectors (a table without them is upgraded). */
  async textSearch(q: Queryable, t: Table): Promise<TextSearchSetting> {
    let stored: string | null = null;
    let split: number | null = null;
    if (t.relkind === 'r') {
      stored = storedLanguage(t);
      split = rowIndexSplit(t);
      if (!stored && !t.name.startsWith('_')) this.upgradeLater(t.name);
      else if (stored && rebuildPendingSince(t) && !this.filler.isBulkFilling(t.name)) this.rebuildIndexesLater(t.name);
    } else if (t.aliasOf && t.columns.some((c) => c.id === FTS_COLUMN)) {
      const base = await this.describe(q, t.aliasOf);
      stored = base ? storedLanguage(base) : null;
      split = base ? rowIndexSplit(base) : null;
    }
    return { stored, defaultLanguage: this.fts.language, rankWindow: this.fts.rankWindow, rowIndexSplit: split };
  }

  /** readTable(), from the cache when it has it: for reads only (writes describe inside their transaction). */
  async describe(q: Queryable, name: string): Promise<Table | null> {
    const hit = this.tables.get(name);
    if (hit) return hit;
    const generation = this.tables.generation;
    const t = await readTable(q, name);
    if (t) this.tables.set(name, t, generation);
    return t;
  }
}

/** Statements adding to stored row counts (names quoted as literals, counts are integers). */
function countsSql(counts: Map<string, number>): string {
  let sql = '';
  for (const [name, n] of counts) {
    if (!Number.isSafeInteger(n)) throw new Error(`bad row count ${n}`);
    // A write that adds no rows still touches the row: its xmin is the table's write marker (catalog.ts writeMarker).
    if (!n) sql += `UPDATE ${COUNTS_TABLE} SET n = n WHERE id = ${quoteLiteral(name)}; `;
    else
      sql += `INSERT INTO ${COUNTS_TABLE} (id, n) VALUES (${quoteLiteral(name)}, ${n}) ON CONFLICT (id) DO UPDATE SET n = ${COUNTS_TABLE}.n + EXCLUDED.n; `;
  }
  return sql;
}
