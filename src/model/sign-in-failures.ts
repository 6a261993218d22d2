// Failed web sign-ins in the catalog: every server process on one database sees the same counts,
// so a load balancer in front of several nodes does not multiply the attempts an attacker gets.
import type { Queryable } from '../db/database.ts';

export interface FailureLimits {
  /** Failures of one account (any address) before it must wait. */
  account: number;
  /** Failures from one address (any account) before it must wait. */
  address: number;
  windowSeconds: number;
}

/**
 * Milliseconds the account or the address must wait before signing in again (0: it may now): until
 * the failure that reached the limit leaves the window.
 */
export async function signInWaitMs(db: Queryable, account: string, address: string, limits: FailureLimits): Promise<number> {
  const { rows } = await db.query<{ wait: number | null }>(
    `SELECT max(extract(epoch FROM (f.at + make_interval(secs => $5) - clock_timestamp())) * 1000)::float8 AS wait
     FROM (SELECT kind, at, row_number() OVER (PARTITION BY kind ORDER BY at DESC) AS n
           FROM sign_in_failures
           WHERE ((kind = 'account' AND key = $1) OR (kind = 'address' AND key = $2))
             AND at > clock_timestamp() - make_interval(secs => $5)) f
     WHERE (f.kind = 'account' AND f.n = $3) OR (f.kind = 'address' AND f.n = $4)`,
    [account, address, limits.account, limits.address, limits.windowSeconds],
  );
  return Math.max(0, Math.ceil(rows[0]?.wait ?? 0));
}

/** Records a failure of the account from the address, and forgets failures past the window. */
export async function recordSignInFailure(db: Queryable, account: string, address: string, limits: FailureLimits): Promise<void> {
  await db.query(
    `WITH old AS (DELETE FROM sign_in_failures WHERE at < clock_timestamp() - make_interval(secs => $3))
     INSERT INTO sign_in_failures (kind, key) VALUES ('account', $1), ('address', $2)`,
    [account, address, limits.windowSeconds],
  );
}

/** A successful sign-in forgets the account's failures (not the address's). */
export async function clearSignInFailures(db: Queryable, account: string): Promise<void> {
  await db.query(`DELETE FROM sign_in_failures WHERE kind = 'account' AND key = $1`, [account]);
}
