// Prometheus metrics of one server (prom-client, a registry per app): requests and their latency
// per action and per route pattern, errors by type, the catalog database's connection pool, the
// job queues, and the process itself. Every label value comes from a bounded set: action names
// the registry knows, route patterns (never the address requested), error types, queue names.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Services } from '../context.ts';
import { queueStats, type QueueStats } from '../jobs/queue.ts';
import type { ReadReplicas, ReplicaStatus } from '../db/replicas.ts';
import { loaderTotals } from './throughput.ts';

/** Label of requests that matched no route (their addresses are not labels). */
export const UNMATCHED = 'unmatched';

export interface RequestSample {
  method: string;
  /** The route pattern (/dataset/:id), or UNMATCHED. */
  route: string;
  /** The action called, when the route is the Action API and the registry knows it. */
  action: string;
  status: number;
  seconds: number;
  /** The envelope's __type (API) or "HTTP <status>" (pages, files) of an error answer. */
  errorType?: string;
}

export interface ServerMetrics {
  registry: Registry;
  observe(sample: RequestSample): void;
}

export function serverMetrics(services: Services): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const labelNames = ['method', 'route', 'action', 'status'] as const;
  const requests = new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer',
    labelNames: ['method', 'route', 'action'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'svc_http_errors_total',
    help: 'Error answers by type (the envelope __type under /api/, else the HTTP status)',
    labelNames: ['type', 'route', 'action'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'svc_db_pool_connections',
    help: 'Connections of the catalog database pool (PostgreSQL): total, idle, and requests waiting for one',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const pool = services.db.kind === 'postgres' ? (services.db as unknown as { raw: PoolCounts }).raw : undefined;
      if (!pool) return;
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  const jobGauge = (name: string, help: string, pick: (r: QueueStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        const rows = await queueStats(services.db).catch(() => null);
        if (!rows) return;
        this.reset();
        for (const queue of services.config.list('svc.jobs.queues')) this.set({ queue }, 0);
        for (const r of rows) this.set({ queue: r.queue }, pick(r));
      },
    });
  jobGauge('svc_jobs_queued', 'Jobs waiting in each queue', (r) => r.queued);
  jobGauge('svc_jobs_running', 'Jobs running from each queue', (r) => r.running);
  jobGauge('svc_jobs_oldest_queued_seconds', 'How long the oldest waiting job of each queue has waited', (r) => r.oldest_seconds);

  if (services.reads) replicaMetrics(registry, services.reads, CATALOG_METRICS);
  if (services.datastoreReads) replicaMetrics(registry, services.datastoreReads, DATASTORE_METRICS);
  const loaderCounter = (name: string, help: string, pick: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(pick());
      },
    });
  loaderCounter('svc_loader_loads_total', 'Files loaded into the data store by this process', () => loaderTotals.loads);
  loaderCounter('svc_loader_rows_total', 'Rows loaded into the data store by this process', () => loaderTotals.rows);
  loaderCounter('svc_loader_bytes_total', 'Bytes of the files loaded into the data store by this process', () => loaderTotals.bytes);
  loaderCounter(
    'svc_loader_seconds_total',
    'Seconds spent on loads into the data store (rows_total / seconds_total: rows per second)',
    () => loaderTotals.seconds,
  );

  return {
    registry,
    observe(s) {
      requests.inc({ method: s.method, route: s.route, action: s.action, status: String(s.status) });
      latency.observe({ method: s.method, route: s.route, action: s.action }, s.seconds);
      if (s.errorType) errors.inc({ type: s.errorType, route: s.route, action: s.action });
    },
  };
}

interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** Names and words of one database's replica metrics. */
interface ReplicaMetricNames {
  /** svc_db or svc_datastore */
  prefix: string;
  /** What the replica is, in help texts. */
  replica: string;
  /** What is counted by svc_..._reads_total. */
  reads: string;
}

const CATALOG_METRICS: ReplicaMetricNames = {
  prefix: 'svc_db',
  replica: 'read replica',
  reads: 'Side-effect-free action calls',
};
const DATASTORE_METRICS: ReplicaMetricNames = {
  prefix: 'svc_datastore',
  replica: 'data store read URL (svc.datastore.read_url)',
  reads: 'Data store reads (searches, lookups, dumps, SQL searches)',
};

/** Lag and health of each read replica, and where reads were served. */
function replicaMetrics(registry: Registry, reads: ReadReplicas, names: ReplicaMetricNames): void {
  const { prefix, replica } = names;
  const perReplica = (name: string, help: string, pick: (r: ReplicaStatus) => number | null) =>
    new Gauge({
      name: `${prefix}_${name}`,
      help,
      labelNames: ['replica'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const r of reads.status()) {
          const v = pick(r);
          if (v !== null) this.set({ replica: r.name }, v);
        }
      },
    });
  perReplica('replica_up', `Whether the ${replica} answers (1) or not (0)`, (r) => (r.up ? 1 : 0));
  perReplica('replica_serving', `Whether the ${replica} serves reads (up and within svc.database_replica_max_lag)`, (r) =>
    r.serving ? 1 : 0,
  );
  perReplica('replica_lag_seconds', `Seconds the ${replica} is behind the primary`, (r) => r.lagSeconds);
  perReplica('replica_lag_bytes', `WAL bytes the ${replica} has still to replay`, (r) => r.lagBytes);
  new Counter({
    name: `${prefix}_reads_total`,
    help: `${names.reads} by the database that served them (primary or a replica)`,
    labelNames: ['target'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [target, n] of reads.counts.byTarget) this.inc({ target }, n);
    },
  });
  new Counter({
    name: `${prefix}_reads_after_write_total`,
    help: 'Reads of callers who had written, by how they saw their write: on a replica already there, after waiting, or on the primary',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(reads.counts.afterWrite)) this.inc({ outcome }, n);
    },
  });
}
