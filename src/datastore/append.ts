// A keyed upsert whose records are all new rows (a load into a table with a primary key, batch
// after batch): one COPY straight into the table instead of a scratch table and an
// INSERT ... ON CONFLICT. Whether every key is new is learnt by trying: the COPY runs in a
// savepoint, and a key already there (or written twice) stops it at that row; then everything is
// undone and the usual upsert (write.ts) runs, which also gives every error its usual answer.
//
// Only where the try is safe and cheap: one integer key column, the records in strictly ascending
// key order (the rows are locked in key order, as the usual upsert locks them: two writes never
// wait for each other in a circle), every record with the same fields, and more records than a
// write fills the full-text vectors of before its commit (fts.ts fillOwnRows finds its rows by
// the transaction id, and rows written in a savepoint carry the savepoint's). A table where the
// try failed is not tried for the next 1, 2, 4 ... 64 requests (in this process).
import { inSavepoint } from '../db/database.ts';
import type { RecordInput } from './backend.ts';
import type { Table } from './catalog.ts';
import { isDbError, isRace } from './db-errors.ts';
import { copyRecords, copyTarget, moreRecordsThan, nextChecked, recordReader } from './records.ts';
import type { WriteSession } from './sessions.ts';

const INTEGER_TYPES = new Set(['int2', 'int4', 'int8']);
/** A key's COPY text that is an integer JavaScript holds exactly. */
const SAFE_INTEGER = /^-?\d{1,15}$/;

/** The records are not a run of new, ascending keys with the same fields. */
class NotAppendable extends Error {}

/** Per table: requests left to skip, and the skip after the next failure. */
const backoff = new Map<string, { skip: number; next: number }>();
const MAX_SKIP = 64;
const MAX_TABLES = 1000;

function failed(table: string): void {
  const b = backoff.get(table);
  const next = Math.min((b?.next ?? 1) * 2, MAX_SKIP);
  if (!b && backoff.size >= MAX_TABLES) backoff.delete(backoff.keys().next().value!);
  backoff.set(table, { skip: b?.next ?? 1, next });
}

/**
 * Writes the records as new rows by one COPY when they all are (see above); false when it did not
 * (nothing written: the caller upserts them as usual).
 */
export async function appendNewKeys(s: WriteSession, t: Table, records: RecordInput, pk: string[]): Promise<boolean> {
  if (pk.length !== 1) return false;
  const keyCol = t.columns.findIndex((c) => c.id === pk[0]);
  if (keyCol < 0 || !INTEGER_TYPES.has(t.columns[keyCol].typname)) return false;
  const b = backoff.get(t.name);
  if (b && b.skip > 0) {
    b.skip--;
    return false;
  }
  if (!moreRecordsThan(records, s.fts.inlineMaxRows)) return false;
  let written: number;
  try {
    const reader = recordReader(t, records);
    if (!nextChecked(reader) || !reader.has(keyCol)) return false;
    const cols = t.columns.map((_, i) => i).filter((i) => reader.has(i));
    let last = -Infinity;
    const take = () => {
      if (reader.count !== cols.length || !cols.every((c) => reader.has(c)) || reader.isNull(keyCol)) throw new NotAppendable();
      const key = reader.copyText(keyCol);
      if (!SAFE_INTEGER.test(key)) throw new NotAppendable();
      const k = Number(key);
      if (!(k > last)) throw new NotAppendable();
      last = k;
      return true;
    };
    const target = copyTarget(
      t.name,
      cols.map((i) => t.columns[i]),
    );
    written = await inSavepoint(s, () => copyRecords(s, target, reader, cols, take));
  } catch (e) {
    if (isRace(e)) throw e;
    if (e instanceof NotAppendable || (isDbError(e) && e.code === '23505')) failed(t.name);
    return false;
  }
  backoff.delete(t.name);
  s.addCount(t.name, written);
  s.wroteRows(t, written);
  return true;
}
