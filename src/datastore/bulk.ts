// Bulk writes to the data store database (the loader): one transaction with COPY fed from a
// stream (constant memory: pieces are sent as they come, with backpressure on PostgreSQL; PGlite
// takes them as bounded COPY batches). A schema change is announced to other processes.
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { Connection, Database } from '../db/database.ts';
import { SCHEMA_CHANNEL } from './table-cache.ts';

export interface BulkSession extends Connection {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `COPY ... FROM STDIN` (text format) with the pieces; returns the rows copied. */
  copyFrom(sql: string, pieces: AsyncIterable<Buffer>): Promise<number>;
}

/** PGlite takes a COPY's input as one blob: batches of this many bytes keep memory bounded. */
const PGLITE_BATCH = 16 << 20;

export async function runBulk<T>(db: Database, onCommitted: () => void, fn: (s: BulkSession) => Promise<T>): Promise<T> {
  const run = async (conn: Connection, copyFrom: BulkSession['copyFrom']) => {
    await conn.exec('BEGIN');
    try {
      const out = await fn({ kind: db.kind, query: conn.query, exec: conn.exec, copyFrom });
      if (db.kind === 'postgres') await conn.exec(`NOTIFY ${SCHEMA_CHANNEL}`);
      await conn.exec('COMMIT');
      onCommitted();
      return out;
    } catch (e) {
      await conn.exec('ROLLBACK').catch(() => undefined);
      throw e;
    }
  };
  if (db.kind === 'pglite') {
    const raw = db.raw as PGlite;
    return db.withConnection((conn) => run(conn, async (sql, pieces) => {
      // PGlite reads COPY input from its virtual /dev/blob file.
      const pgliteSql = sql.replace(/\bFROM STDIN\b/i, "FROM '/dev/blob'");
      let rows = 0;
      let batch: Buffer[] = [];
      let size = 0;
      const flush = async () => {
        if (!size) return;
        const r = await raw.query(pgliteSql, [], { blob: new Blob(batch as Uint8Array<ArrayBuffer>[]) });
        rows += r.affectedRows ?? 0;
        batch = [];
        size = 0;
      };
      for await (const piece of pieces) {
        batch.push(piece);
        size += piece.length;
        // Batches end at a row boundary: pieces are whole lines.
        if (size >= PGLITE_BATCH) await flush();
      }
      await flush();
      return rows;
    }));
  }
  const withClient = db.withConnection as unknown as (f: (c: Connection, client: pg.PoolClient) => Promise<T>) => Promise<T>;
  return withClient.call(db, async (conn, client) => {
    const { from: copyFromStream } = await import('pg-copy-streams');
    return run(conn, async (sql, pieces) => {
      const stream = client.query(copyFromStream(sql));
      const settled = finished(stream);
      settled.catch(() => undefined);
      try {
        for await (const piece of pieces) {
          if (stream.destroyed) break;
          if (!stream.write(piece)) await new Promise((r) => { stream.once('drain', r); stream.once('error', r); });
        }
      } catch (e) {
        stream.destroy(e as Error);
        await settled.catch(() => undefined);
        throw e;
      }
      if (!stream.destroyed) stream.end();
      await settled;
      return Number(stream.rowCount ?? 0);
    });
  });
}
