// Failed web sign-ins, counted per account and per client address over a sliding window: past the
// limit, sign-in is refused (the password not even checked) until the failure that reached it
// leaves the window. Counted in the catalog, so several server processes share the counts.
import type { Queryable } from '../db/database.ts';
import { clearSignInFailures, recordSignInFailure, signInWaitMs, type FailureLimits } from '../model/sign-in-failures.ts';

const LIMITS: FailureLimits = { account: 10, address: 30, windowSeconds: 15 * 60 };

/** Milliseconds this account or address must wait before signing in again (0: it may now). */
export const signInWait = (db: Queryable, account: string, address: string) => signInWaitMs(db, account, address, LIMITS);

export const signInFailed = (db: Queryable, account: string, address: string) => recordSignInFailure(db, account, address, LIMITS);

/** A successful sign-in forgets the account's failures (not the address's). */
export const signInSucceeded = (db: Queryable, account: string) => clearSignInFailures(db, account);
