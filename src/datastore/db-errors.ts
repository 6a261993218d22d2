// Database errors -> the data store's API errors.
import { ValidationError } from '../errors.ts';

export type DbError = Error & { code?: string; where?: string; detail?: string; column?: string; constraint?: string };

export const isDbError = (e: unknown): e is DbError =>
  e instanceof Error && typeof (e as DbError).code === 'string' && /^[0-9A-Z]{5}$/.test((e as DbError).code!);

/**
 * A conflict with a concurrent transaction, not the caller's mistake: a deadlock, a serialization
 * failure, or another transaction creating the same table, view or type first (its catalog row
 * appears when it commits). The write is run again (Sessions.writeTx).
 */
export function isRace(e: unknown): boolean {
  if (!isDbError(e)) return false;
  const message = e.message;
  switch (e.code) {
    // deadlock, serialization failure; duplicate table, object, column (checked absent before)
    case '40P01':
    case '40001':
    case '42P07':
    case '42710':
    case '42701':
      return true;
    case '23505':
      return (e.constraint ?? '').startsWith('pg_');
    case 'XX000':
      return message.includes('tuple concurrently updated');
    default:
      return false;
  }
}

/** The CKAN message for a uniqueness violation while writing records (sic: "indexbecause"). */
export const UNIQUE_MSG = 'Cannot insert records or create indexbecause of uniqueness constraint';

export const uniqueError = (e: DbError) => new ValidationError({ constraints: [UNIQUE_MSG], info: { orig: [e.message], pgcode: e.code } });

/** A database error while writing records -> Validation Error naming the row (0-based) and field. */
export function recordError(e: unknown, named = false): unknown {
  if (!isDbError(e) || isRace(e)) return e;
  if (e.code === '23505') return uniqueError(e);
  const m = /COPY .*?, line (\d+)(?:, column ([^:]+))?/.exec(e.where ?? '');
  if (m) {
    const field = m[2] ?? (named && e.column) ?? undefined;
    const msg = field && !e.message.includes(`"${field}"`) ? `${e.message} (field "${field}")` : e.message;
    return new ValidationError({ records: [msg], records_row: Number(m[1]) - 1 });
  }
  return new ValidationError({ records: [e.message] });
}

/** A database error of a search -> Validation Error (a timeout: "Query took too long"); the cause is kept. */
export function queryError(e: unknown): unknown {
  if (!isDbError(e)) return e;
  if (e.code === '57014') return new ValidationError({ query: ['Query took too long'] });
  return Object.assign(new ValidationError({ query: [e.message] }), { cause: e });
}
