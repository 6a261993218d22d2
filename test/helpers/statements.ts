// The text of every statement run in the transactions the app opens from now on, noted in
// `into` (statement-count tests: how many round trips a call makes).
import type { Database, Queryable } from '../../src/db/database.ts';

/** The connection, with the text of each statement it runs pushed onto `into`. */
export function recordingQueries<C extends Queryable>(c: C, into: string[]): C {
  return new Proxy(c, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop !== 'query' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
      return (q: unknown, params?: unknown[]) => {
        into.push(typeof q === 'string' ? q : String((q as { text?: string }).text));
        return v.call(target, q, params);
      };
    },
  });
}

export function noteTransactionStatements(db: Database, into: string[]): void {
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (tx: Queryable) => Promise<unknown>, opts?: unknown) =>
    transaction((tx: Queryable) => fn(recordingQueries(tx, into)), opts as never)) as Database['transaction'];
}

/** What fn returns, and the statements noted in `statements` while it ran (the list is emptied). */
export async function countedStatements<T>(statements: string[], fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  statements.length = 0;
  const result = await fn();
  return { result, sql: statements.splice(0) };
}
