// The request a piece of code runs for, across awaits: its id goes into every log line written
// while the request runs (the logger's mixin, src/log.ts) and into the X-Request-Id answer header.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<{ requestId: string }>();

/** Runs fn (and everything it starts) as part of the request with this id. */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return current.run({ requestId }, fn);
}

/** A pino mixin adding reqId to the lines written during a request. */
export function requestIdMixin(): { reqId?: string } {
  const id = current.getStore()?.requestId;
  return id ? { reqId: id } : {};
}
