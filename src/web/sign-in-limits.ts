// Failed web sign-ins, counted per account and per client address over a sliding window: past the
// limit, sign-in is refused (the password not even checked) until the oldest failure leaves the
// window. Kept in this process's memory: a restart forgets them, and several server processes
// each count their own.

/** Failures of one account (any address) before it is refused for a while. */
const ACCOUNT_FAILURES = 10;
/** Failures from one address (any account) before it is refused for a while. */
const ADDRESS_FAILURES = 30;
const WINDOW_MS = 15 * 60 * 1000;
/** Keys remembered per kind; the oldest go first (bounded memory whatever the traffic). */
const MAX_KEYS = 10_000;

class FailureWindow {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly max: number) {}

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    if (times.length) this.failures.set(key, times);
    else this.failures.delete(key);
    return times;
  }

  /** Milliseconds until the key may try again (0: it may now). */
  waitMs(key: string, now: number): number {
    const times = this.recent(key, now);
    return times.length < this.max ? 0 : times[times.length - this.max] + WINDOW_MS - now;
  }

  fail(key: string, now: number): void {
    const times = this.recent(key, now);
    this.failures.delete(key); // re-inserted last: the map's order is the eviction order
    this.failures.set(key, [...times, now].slice(-this.max));
    if (this.failures.size > MAX_KEYS) this.failures.delete(this.failures.keys().next().value!);
  }

  clear(key: string): void {
    this.failures.delete(key);
  }
}

export class SignInLimits {
  private readonly accounts = new FailureWindow(ACCOUNT_FAILURES);
  private readonly addresses = new FailureWindow(ADDRESS_FAILURES);

  /** Milliseconds this account or address must wait before signing in again (0: it may now). */
  waitMs(account: string, address: string, now = Date.now()): number {
    return Math.max(this.accounts.waitMs(account, now), this.addresses.waitMs(address, now));
  }

  failed(account: string, address: string, now = Date.now()): void {
    this.accounts.fail(account, now);
    this.addresses.fail(address, now);
  }

  succeeded(account: string): void {
    this.accounts.clear(account);
  }
}
