// Reads on PostgreSQL streaming replicas (svc.database_read_urls): which replica may serve a read,
// how far behind each one is, and read-your-writes. A background check asks the primary for its
// WAL position and each replica for the position it has replayed, every CHECK_MS; a replica that
// does not answer, or is further behind than svc.database_replica_max_lag, serves nothing until a
// later check finds it well again. A caller who wrote reads on a replica only once that replica has
// replayed the write's commit position (a bounded wait), else on the primary.
// The data store uses it too, for its read URL (src/plugins/datastore/replica.ts): there the check
// also tells whether the server is a streaming replica at all (in recovery) or the primary itself.
import pg from 'pg';
import type { Logger } from 'pino';
import { absorbConnectionLoss, PostgresDatabase, type Database } from './database.ts';

const CHECK_MS = 1_000;
/** How often a read that waits for its caller's write asks the replica again. */
const POLL_MS = 15;
/** A replica that does not answer within this is down for this check. */
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * The replica's replayed WAL position, and whether it is a streaming replica (in recovery); a server
 * not in recovery (a primary named as replica, tests) answers its own position.
 */
const REPLAYED_SQL = `SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn,
  pg_is_in_recovery() AS recovery`;
const PRIMARY_SQL = 'SELECT pg_current_wal_lsn()::text AS lsn';

/** A WAL position ("16/B374D848") as a number; null for anything else. */
export function parseLsn(text: unknown): bigint | null {
  if (typeof text !== 'string') return null;
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  return m ? (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`) : null;
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

export interface ReplicaStatus {
  /** replica1, replica2, ... in the order of svc.database_read_urls (their URLs hold passwords). */
  name: string;
  /** host:port/database of the URL. */
  address: string;
  up: boolean;
  /** Seconds since the primary first had WAL this replica has not replayed (0: caught up); null while down. */
  lagSeconds: number | null;
  /** WAL bytes the replica has still to replay at the last check; null while down. */
  lagBytes: number | null;
  /** Serves reads now: up, and not further behind than the limit. */
  serving: boolean;
  /** A server in recovery (a streaming replica); false: a primary named as replica; null: not known (down). */
  inRecovery: boolean | null;
  /** Why it does not serve. */
  problem?: string;
}

/** Where the reads went: the replica's name or 'primary'; how read-your-writes was answered. */
interface ReadCounts {
  byTarget: Map<string, number>;
  /** replica: already caught up; waited: caught up within the wait; primary: not in time. */
  afterWrite: { replica: number; waited: number; primary: number };
}

interface Replica {
  name: string;
  address: string;
  db: Database;
  up: boolean;
  replayed: bigint | null;
  inRecovery: boolean | null;
  lagSeconds: number | null;
  lagBytes: number | null;
  problem?: string;
}

/** Errors after which a read is run again on the primary: the replica went away, or cancelled the read. */
function replicaFailure(e: unknown): 'down' | 'retry' | null {
  const err = e as { code?: string };
  const code = typeof err?.code === 'string' ? err.code : '';
  if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH)$/.test(code) || /^(08|57P0)/.test(code)) return 'down';
  // 40001: cancelled by a conflict with recovery (hot standby); 25006: an action wrote in a read (a bug, logged).
  if (code === '40001' || code === '25006') return 'retry';
  if (!code && e instanceof Error && /Connection terminated|timeout exceeded when trying to connect/i.test(e.message)) return 'down';
  return null;
}

function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** What one request's reads must see: its caller's last write; primaryOnly once a wait for it failed. */
interface ReadConsistency {
  readAfter?: bigint | null;
  primaryOnly?: boolean;
}

/** The pools a read may run on: the primary's, and one per replica in the order of the URLs. */
interface ReadPools {
  primary: Database;
  replicas: Database[];
}

interface ReadReplicaOptions {
  maxLagSeconds: number;
  /** How long a caller's read waits for a replica to replay the caller's write. */
  waitMs: number;
  poolSize: number;
  logger: Logger;
  /** What the replicas are, in log lines (default: "read replica"). */
  label?: string;
  /** Session settings of the replicas' connections (name -> value), with the default open. */
  settings?: Record<string, string>;
  /** Opens a replica's pool (default: poolSize connections with default_transaction_read_only). */
  open?: (url: string) => Database;
}

export class ReadReplicas {
  private readonly replicas: Replica[];
  /** The primary's WAL position at recent checks, oldest first: how long a replica has been behind. */
  private samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private next = 0;
  readonly counts: ReadCounts = { byTarget: new Map(), afterWrite: { replica: 0, waited: 0, primary: 0 } };

  constructor(
    readonly primary: Database,
    urls: string[],
    private readonly opts: ReadReplicaOptions,
  ) {
    this.replicas = urls.map((url, i) => {
      return {
        name: `replica${i + 1}`,
        address: addressOf(url),
        db: opts.open?.(url) ?? this.openReadOnly(url),
        up: false,
        replayed: null,
        inRecovery: null,
        lagSeconds: null,
        lagBytes: null,
        problem: 'not checked yet',
      };
    });
  }

  private get label(): string {
    return this.opts.label ?? 'read replica';
  }

  private openReadOnly(url: string): Database {
    const pool = new pg.Pool({
      connectionString: url,
      max: this.opts.poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // A replica refuses writes anyway; a primary named as a replica must refuse them too.
      options: [
        '-c default_transaction_read_only=on',
        ...Object.entries(this.opts.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`),
      ].join(' '),
    });
    absorbConnectionLoss(pool);
    return new PostgresDatabase(pool);
  }

  /** Checks every replica once (a replica that is down is logged, not fatal), then every CHECK_MS. */
  async start(): Promise<void> {
    await this.check();
    for (const r of this.replicas) {
      if (!r.up)
        this.opts.logger.warn(
          { replica: r.name, address: r.address, problem: r.problem },
          `${this.label} not usable at start; its reads go to the primary`,
        );
    }
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking?.catch(() => undefined);
    await Promise.all(this.replicas.map((r) => r.db.close().catch(() => undefined)));
  }

  /** One round of checks (concurrent calls share it). */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    const now = Date.now();
    try {
      const lsn = parseLsn((await this.primary.query<{ lsn: string }>(PRIMARY_SQL)).rows[0]?.lsn);
      if (lsn !== null) this.samples.push({ at: now, lsn });
    } catch {
      // the primary's own problems show in /readyz; the replicas are measured against older samples
    }
    const keepMs = Math.max(60_000, this.opts.maxLagSeconds * 2_000);
    while (this.samples.length > 2 && now - this.samples[1].at > keepMs) this.samples.shift();
    await Promise.all(this.replicas.map((r) => this.checkReplica(r, now)));
  }

  private async checkReplica(r: Replica, now: number): Promise<void> {
    try {
      const row = (await r.db.query<{ lsn: string | null; recovery: boolean }>(REPLAYED_SQL)).rows[0];
      const replayed = parseLsn(row?.lsn);
      if (replayed === null) throw new Error('the server reports no replayed WAL position');
      r.replayed = replayed;
      r.inRecovery = row.recovery === true;
      r.up = true;
      const behind = this.samples.find((s) => s.lsn > replayed);
      const latest = this.samples.at(-1);
      r.lagSeconds = behind ? (now - behind.at) / 1000 : 0;
      r.lagBytes = latest && latest.lsn > replayed ? Number(latest.lsn - replayed) : 0;
      r.problem =
        r.lagSeconds > this.opts.maxLagSeconds
          ? `${r.lagSeconds.toFixed(1)} s behind the primary (svc.database_replica_max_lag = ${this.opts.maxLagSeconds})`
          : undefined;
    } catch (e) {
      this.markDown(r, e);
    }
  }

  private markDown(r: Replica, e: unknown): void {
    if (r.up) this.opts.logger.warn({ replica: r.name, address: r.address, err: (e as Error).message }, `${this.label} down`);
    r.up = false;
    r.lagSeconds = null;
    r.lagBytes = null;
    r.problem = `down: ${(e as Error).message}`;
  }

  private serving(): Replica[] {
    return this.replicas.filter((r) => r.up && r.problem === undefined);
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      name: r.name,
      address: r.address,
      up: r.up,
      lagSeconds: r.lagSeconds,
      lagBytes: r.lagBytes,
      serving: r.up && r.problem === undefined,
      inRecovery: r.inRecovery,
      ...(r.problem ? { problem: r.problem } : {}),
    }));
  }

  /** Whether a replica may be behind the primary: one is in recovery, or not known (down); false when all are primaries. */
  mayLag(): boolean {
    return this.replicas.some((r) => r.inRecovery !== false);
  }

  /** The primary's WAL position now: at or after the commit of every write this process has finished. */
  async primaryLsn(): Promise<bigint | null> {
    return parseLsn((await this.primary.query<{ lsn: string }>(PRIMARY_SQL)).rows[0]?.lsn);
  }

  /**
   * Runs a read on a serving replica (in turn), or on the primary when none serves. readAfter: the
   * WAL position of the caller's last write; the replica must have replayed it, within waitMs, else
   * the read (and the request's later reads: primaryOnly) goes to the primary. A replica that fails
   * the read is left and the read run on the primary.
   */
  read<T>(consistency: ReadConsistency | undefined, fn: (db: Database) => Promise<T>): Promise<T> {
    return this.readWith(consistency, { primary: this.primary, replicas: this.replicas.map((r) => r.db) }, fn);
  }

  /**
   * read() on other pools to the same servers (e.g. with other session settings or sizes than the
   * checks use). mayRetry: whether a read the replica failed may run again on the primary (not
   * once it has handed rows on: a dump would repeat them).
   */
  async readWith<T>(
    consistency: ReadConsistency | undefined,
    pools: ReadPools,
    fn: (db: Database) => Promise<T>,
    mayRetry: () => boolean = () => true,
  ): Promise<T> {
    const replica = consistency?.primaryOnly ? null : await this.choose(consistency?.readAfter ?? null);
    if (!replica && consistency?.readAfter != null) consistency.primaryOnly = true;
    const onPrimary = () => {
      this.count('primary');
      return fn(pools.primary);
    };
    if (!replica) return onPrimary();
    this.count(replica.name);
    try {
      return await fn(pools.replicas[this.replicas.indexOf(replica)]);
    } catch (e) {
      const failure = replicaFailure(e);
      if (!failure) throw e;
      if (failure === 'down') this.markDown(replica, e);
      else if ((e as { code?: string }).code === '25006')
        this.opts.logger.error({ err: (e as Error).message }, 'a side-effect-free action wrote to the database');
      if (!mayRetry()) throw e;
      return onPrimary();
    }
  }

  private count(target: string): void {
    this.counts.byTarget.set(target, (this.counts.byTarget.get(target) ?? 0) + 1);
  }

  private async choose(after: bigint | null): Promise<Replica | null> {
    const serving = this.serving();
    if (!serving.length) return null;
    const start = this.next++ % serving.length;
    const inTurn = [...serving.slice(start), ...serving.slice(0, start)];
    if (after === null) return inTurn[0];
    const ready = inTurn.find((r) => r.replayed !== null && r.replayed >= after);
    if (ready) {
      this.counts.afterWrite.replica++;
      return ready;
    }
    const deadline = Date.now() + this.opts.waitMs;
    const candidate = inTurn[0];
    while (Date.now() < deadline) {
      try {
        const replayed = parseLsn((await candidate.db.query<{ lsn: string | null }>(REPLAYED_SQL)).rows[0]?.lsn);
        if (replayed !== null && (candidate.replayed === null || replayed > candidate.replayed)) candidate.replayed = replayed;
        if (replayed !== null && replayed >= after) {
          this.counts.afterWrite.waited++;
          return candidate;
        }
      } catch (e) {
        if (replicaFailure(e) === 'down') this.markDown(candidate, e);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
    }
    this.counts.afterWrite.primary++;
    return null;
  }
}
