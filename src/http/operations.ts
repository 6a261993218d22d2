// What operators and load balancers ask a server: /healthz (the process answers), /readyz (its
// database answers and its schema is current: send it traffic), /metrics (Prometheus), and the
// request id of every request (X-Request-Id: a trusted proxy's, else a new one) in the answer
// header and in every log line written while the request runs.
import { AsyncResource } from 'node:async_hooks';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../context.ts';
import { pendingMigrations } from '../db/migrate.ts';
import type { ReplicaStatus } from '../db/replicas.ts';
import { runWithRequestId } from '../metrics/request-context.ts';
import { serverMetrics, UNMATCHED } from '../metrics/metrics.ts';

/** A request id a proxy may hand over: short, and nothing a log line could be forged with. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The named ranges svc.trust_proxy accepts besides addresses and CIDR ranges (as proxy-addr). */
const NAMED_RANGES: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  linklocal: [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  uniquelocal: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

function trustedProxies(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    for (const [net, bits, family] of NAMED_RANGES[entry] ?? []) list.addSubnet(net, bits, family);
    const [address, bits] = entry.split('/');
    const family = isIP(address);
    if (!family) continue;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** Fastify's request id options: a trusted proxy's X-Request-Id, else a new uuid. */
export function requestIdOptions(services: Services) {
  const trusted = trustedProxies(services.config.list('svc.trust_proxy'));
  const fromTrusted = (address: string | undefined) => {
    if (!address) return false;
    const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
    return trusted.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
  };
  return {
    requestIdHeader: false as const,
    genReqId: (req: IncomingMessage) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) && fromTrusted(req.socket?.remoteAddress) ? given : randomUUID();
    },
  };
}

const scope = Symbol('svc request scope');
type Scoped = FastifyRequest & { [scope]?: AsyncResource };

/** The type of an error answer: the envelope's __type under /api/, else its status. */
function errorType(request: FastifyRequest, reply: FastifyReply, payload: unknown): string {
  const type = String(reply.getHeader('content-type') ?? '');
  if (request.url.startsWith('/api/') && type.startsWith('application/json')) {
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    if (text && text.length < 1 << 20) {
      try {
        const t = JSON.parse(text)?.error?.__type;
        if (typeof t === 'string' && t.length < 50) return t;
      } catch {
        /* not an envelope */
      }
    }
  }
  return `HTTP ${reply.statusCode}`;
}

/** Whether an Authorization header may read /metrics (svc.metrics.token; none set: anyone). */
export function metricsAuthorization(config: Services['config']): (header: string | undefined) => boolean {
  const token = config.str('svc.metrics.token');
  const expected = Buffer.from(`Bearer ${token}`);
  return (header) => {
    if (!token) return true;
    const given = Buffer.from(String(header ?? ''));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
}

function replicaCheck(r: ReplicaStatus): string {
  if (r.serving) return `ok (${r.address}, ${r.lagSeconds?.toFixed(1)} s behind)`;
  return `skipped (${r.address}): ${r.problem}`;
}

/**
 * Registers the operations routes and the request id and metrics hooks on the app (first, so the
 * request's scope covers every later hook and the handler). A closing app answers every request,
 * /readyz included, with 503 (Fastify's return503OnClosing): the load balancer stops sending.
 */
export function registerOperations(app: FastifyInstance, services: Services): void {
  const { config } = services;
  const metrics = serverMetrics(services);
  const errorTypes = new WeakMap<FastifyRequest, string>();

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Body events come from the socket, outside this scope: the handler re-enters it (preValidation).
    runWithRequestId(request.id, () => {
      const resource = new AsyncResource('svc-request');
      (request as Scoped)[scope] = resource;
      resource.runInAsyncScope(done);
    });
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const resource = (request as Scoped)[scope];
    if (resource) resource.runInAsyncScope(done);
    else done();
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400) errorTypes.set(request, errorType(request, reply, payload));
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const name = request.actionName;
    const action = name ? (services.registry.has(name) ? name : 'unknown') : '';
    metrics.observe({
      method: request.method,
      route,
      action,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      errorType: reply.statusCode >= 400 ? (errorTypes.get(request) ?? `HTTP ${reply.statusCode}`) : undefined,
    });
  });
  app.addHook('onClose', async () => metrics.registry.clear());

  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    let database = 'ok';
    let migrations = 'ok';
    try {
      await services.db.query('SELECT 1');
      const pending = await pendingMigrations(services.db);
      if (pending.length) migrations = `pending: ${pending.join(', ')} (run svc db upgrade)`;
    } catch (e) {
      database = `unreachable: ${(e as Error).message}`;
      migrations = 'unknown';
    }
    const ready = database === 'ok' && migrations === 'ok';
    // A replica that is down or behind does not make the node unready: its reads go to the primary.
    const replicas = services.reads ? { replicas: Object.fromEntries(services.reads.status().map((r) => [r.name, replicaCheck(r)])) } : {};
    const datastoreRead = services.datastoreReads?.status()[0];
    const datastore = datastoreRead ? { datastore_read_replica: replicaCheck(datastoreRead) } : {};
    return reply
      .code(ready ? 200 : 503)
      .send({ status: ready ? 'ready' : 'not ready', checks: { database, migrations, ...replicas, ...datastore } });
  });

  if (config.bool('svc.metrics.enabled')) {
    const authorized = metricsAuthorization(config);
    app.get('/metrics', async (request, reply) => {
      if (!authorized(request.headers.authorization)) {
        return reply.code(401).header('www-authenticate', 'Bearer').type('text/plain; charset=utf-8').send('A bearer token is required');
      }
      const text = await metrics.registry.metrics();
      return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(text);
    });
  }
}
