// What one process keeps in memory from the catalog database (runtime configuration options) stays
// correct when another process on the same PostgreSQL database changes it: the change sends
// NOTIFY on CHANNEL in its transaction (delivered once it commits), and every process follows the
// channel on one connection of its own and reloads what the notification names. While that
// connection is down a process cannot know what changed: on reconnecting it reloads everything.
import pg from 'pg';
import type { Logger } from 'pino';
import type { Queryable } from './database.ts';

const CHANGE_CHANNEL = 'svc_catalog_changes';
const RECONNECT_MS = 1_000;
/** The listening connection's application_name (pg_stat_activity). */
export const LISTENER_NAME = 'svc catalog changes';

/** What was changed: the kind of thing a process may hold in memory. */
type ChangeTopic = 'config';

/** Sends the change to every process, when the caller's transaction commits. */
export async function announceChange(db: Queryable, topic: ChangeTopic): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, topic]);
}

export class CatalogChanges {
  private readonly handlers = new Map<ChangeTopic, () => Promise<void>>();
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** Notifications received (tests and metrics see that the connection works). */
  received = 0;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  /** What to reload when the topic changes (and after the connection was lost). */
  on(topic: ChangeTopic, reload: () => Promise<void>): void {
    this.handlers.set(topic, reload);
  }

  get listening(): boolean {
    return this.client !== null;
  }

  /** Connects and listens; a failure is retried in the background (it never stops the start). */
  async start(): Promise<void> {
    await this.listen(false);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }

  private async reload(topics: Iterable<ChangeTopic>): Promise<void> {
    for (const topic of topics) {
      try {
        await this.handlers.get(topic)?.();
      } catch (e) {
        this.logger.error({ err: e, topic }, 'reloading after a change of another process failed');
      }
    }
  }

  private async listen(reconnect: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: LISTENER_NAME });
    const lost = () => this.lost(client);
    client.on('notification', (n) => {
      this.received++;
      const topic = n.payload as ChangeTopic;
      if (this.handlers.has(topic)) void this.reload([topic]);
    });
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (e) {
      this.logger.warn({ err: (e as Error).message }, 'cannot follow the changes of other processes yet; retrying');
      lost();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    // Changes sent while nobody listened are lost: take everything again.
    if (reconnect) await this.reload(this.handlers.keys());
  }

  private lost(client: pg.Client): void {
    if (this.client && this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.listen(true);
    }, RECONNECT_MS);
    this.retry.unref();
  }
}
