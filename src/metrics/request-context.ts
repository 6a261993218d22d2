// The request a piece of code runs for, across awaits: its id goes into every log line written
// while the request runs (the logger's mixin, src/log.ts) and into the X-Request-Id answer header;
// with read replicas, the WAL position the caller's reads must see and the one its write left
// (the catalog's; the data store's apart, as its database is another cluster or may be).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestScope {
  requestId: string;
  /** The caller's last write (WAL position): reads must see it (src/db/replicas.ts). */
  readAfter?: bigint | null;
  /** No replica had the caller's write in time: the request's reads go to the primary. */
  primaryOnly?: boolean;
  /** The primary's WAL position after a write of this request committed. */
  wroteAt?: bigint;
  /** The same for the data store's database, when svc.datastore.read_url is a streaming replica. */
  datastore?: ReadAfterWrite;
}

/** What reads of one database must see (the caller's last write) and what this request wrote there. */
export interface ReadAfterWrite {
  readAfter?: bigint | null;
  primaryOnly?: boolean;
  wroteAt?: bigint;
  /** A write transaction ran: its WAL position is taken once the call has committed. */
  wrote?: boolean;
}

const current = new AsyncLocalStorage<RequestScope>();

/** Runs fn (and everything it starts) as part of the request with this id. */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return current.run({ requestId }, fn);
}

/** The request the running code belongs to, if any. */
export function currentRequest(): RequestScope | undefined {
  return current.getStore();
}

/** A pino mixin adding reqId to the lines written during a request. */
export function requestIdMixin(): { reqId?: string } {
  const id = current.getStore()?.requestId;
  return id ? { reqId: id } : {};
}
