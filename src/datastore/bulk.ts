// Bulk writes to the data store database (the loader): one transaction in which COPY input comes
// from a stream. Pieces are gathered into bounded batches, each sent as one COPY through the
// database's transaction helper (the same on PostgreSQL, PGlite and the PGlite worker thread), so
// memory stays flat whatever the file's size. A schema change is announced to other processes.
import type { Connection, Database, Transaction, TransactionOptions } from '../db/database.ts';
import { SCHEMA_CHANNEL } from './table-cache.ts';

export interface BulkSession extends Connection {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `COPY target FROM STDIN` (text format) with the pieces (whole lines); returns the rows copied. */
  copyFrom(sql: string, pieces: AsyncIterable<Buffer>): Promise<number>;
  /** One COPY of whole records: `COPY target FROM STDIN options` (e.g. WITH (FORMAT csv)); returns the rows copied. */
  copyWith(target: string, options: string, data: Buffer[]): Promise<number>;
  /** Work done once the load has committed (background full-text filling). */
  afterCommit(fn: () => void): void;
  /**
   * PostgreSQL: fn in a transaction of its own on another connection of the pool, committed when it
   * ends (several COPY streams into a table made beforehand); absent on PGlite (one connection).
   */
  elsewhere?: <T>(fn: (tx: Transaction) => Promise<T>, opts?: TransactionOptions) => Promise<T>;
}

/** Bytes of COPY input held at most before they are sent. */
const BATCH_BYTES = 16 << 20;

export async function runBulk<T>(db: Database, onCommitted: () => void, fn: (s: BulkSession) => Promise<T>): Promise<T> {
  const committed: (() => void)[] = [onCommitted];
  const out = await db.transaction(async (tx) => {
    const copyFrom = async (sql: string, pieces: AsyncIterable<Buffer>) => {
      const m = /^\s*COPY\s+([\s\S]+?)\s+FROM\s+STDIN\s*$/i.exec(sql);
      if (!m) throw new Error(`not a COPY ... FROM STDIN statement: ${sql.slice(0, 80)}`);
      let rows = 0;
      let batch: Buffer[] = [];
      let size = 0;
      const flush = async () => {
        if (!size) return;
        rows += await tx.copyIn(m[1], batch);
        batch = [];
        size = 0;
      };
      for await (const piece of pieces) {
        batch.push(piece);
        size += piece.length;
        if (size >= BATCH_BYTES) await flush();
      }
      await flush();
      return rows;
    };
    const afterCommit = (f: () => void) => {
      committed.push(f);
    };
    const copyWith = (target: string, options: string, data: Buffer[]) => tx.copyIn(target, data, options);
    const elsewhere =
      db.kind === 'postgres' ? <R>(f: (t: Transaction) => Promise<R>, o?: TransactionOptions) => db.transaction(f, o) : undefined;
    const result = await fn({
      kind: db.kind,
      query: tx.query.bind(tx),
      exec: tx.exec.bind(tx),
      copyFrom,
      copyWith,
      afterCommit,
      elsewhere,
    });
    if (db.kind === 'postgres') await tx.exec(`NOTIFY ${SCHEMA_CHANNEL}`);
    return result;
  });
  for (const f of committed) f();
  return out;
}
