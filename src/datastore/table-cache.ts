// Descriptions of data store tables (columns, alias target) kept between requests, so that a search
// costs the statements it needs and no catalog lookups (PostgREST's schema cache, in small).
// Writes through this process clear it after they commit; on PostgreSQL the writes of other
// processes reach it by NOTIFY on a dedicated connection, and while that connection is down nothing
// is cached. Entries also age out after MAX_AGE_MS, for reads served by a lagging replica.
import pg from 'pg';

export const SCHEMA_CHANNEL = 'svc_datastore_schema';
const MAX_AGE_MS = 10_000;
const MAX_ENTRIES = 5_000;
const RECONNECT_MS = 1_000;

export class TableCache<T> {
  private readonly entries = new Map<string, { value: T; at: number }>();
  private enabled: boolean;
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** Bumped by every clear: a description read before a clear is not stored after it. */
  generation = 0;

  /** listenUrl: the PostgreSQL database whose schema notifications to follow (null: one process, no listening). */
  constructor(private readonly listenUrl: string | null) {
    this.enabled = listenUrl === null;
  }

  async start(): Promise<void> {
    if (this.listenUrl) await this.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    this.enabled = false;
    await c?.end().catch(() => undefined);
  }

  get(name: string): T | undefined {
    if (!this.enabled) return undefined;
    const e = this.entries.get(name);
    if (!e) return undefined;
    if (Date.now() - e.at > MAX_AGE_MS) {
      this.entries.delete(name);
      return undefined;
    }
    return e.value;
  }

  set(name: string, value: T, generation: number): void {
    if (!this.enabled || generation !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(name, { value, at: Date.now() });
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.listenUrl! });
    const lost = () => this.lost(client);
    client.on('notification', () => this.clear());
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${SCHEMA_CHANNEL}`);
    } catch {
      lost();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.clear();
    this.enabled = true;
  }

  private lost(client: pg.Client): void {
    if (this.client && this.client !== client) return;
    this.client = null;
    this.enabled = false;
    this.clear();
    client.end().catch(() => undefined);
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.listen();
    }, RECONNECT_MS);
    this.retry.unref();
  }
}
