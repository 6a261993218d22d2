// How many datastore_search_sql queries run at once: at most maxRunning in all (on PostgreSQL
// their own connections, so that datastore_search never waits behind them), at most perCaller
// running or waiting per caller (all anonymous callers count as one), and at most maxWaiting in
// line. A query beyond a limit is refused at once, with a message saying which.
import { ValidationError } from '../../errors.ts';

export interface SqlSearchLimits {
  maxRunning: number;
  maxWaiting: number;
  perCaller: number;
}

export class SqlSearchGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly byCaller = new Map<string, number>();

  constructor(private readonly limits: SqlSearchLimits) {}

  /** Runs fn when a place is free; caller is the user's id, or one key for all anonymous callers. */
  async run<T>(caller: string, fn: () => Promise<T>): Promise<T> {
    const mine = this.byCaller.get(caller) ?? 0;
    if (mine >= this.limits.perCaller)
      throw new ValidationError({
        query: [
          `Too many SQL searches at once from ${caller === ANONYMOUS_CALLER ? 'anonymous callers' : 'you'}: wait for the running one`,
        ],
      });
    if (this.running >= this.limits.maxRunning && this.waiting.length >= this.limits.maxWaiting)
      throw new ValidationError({ query: ['The server is busy with other SQL searches: try again later'] });
    this.byCaller.set(caller, mine + 1);
    try {
      if (this.running >= this.limits.maxRunning) await new Promise<void>((resolve) => this.waiting.push(resolve));
      else this.running++;
      try {
        return await fn();
      } finally {
        // The place passes to the next in line, or is freed.
        const next = this.waiting.shift();
        if (next) next();
        else this.running--;
      }
    } finally {
      const n = (this.byCaller.get(caller) ?? 1) - 1;
      if (n) this.byCaller.set(caller, n);
      else this.byCaller.delete(caller);
    }
  }
}

export const ANONYMOUS_CALLER = 'anonymous';
