// /metrics and /healthz of a job worker process (`svc jobs worker --metrics-port`): the same
// Prometheus registry a server has (job queues, the loader's throughput, the pool, the process),
// on a plain HTTP listener since a worker serves nothing else.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Services } from '../context.ts';
import { serverMetrics } from '../metrics/metrics.ts';
import { metricsAuthorization } from './operations.ts';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

export async function serveWorkerMetrics(services: Services, port: number, host: string): Promise<MetricsListener> {
  const metrics = serverMetrics(services);
  const authorized = metricsAuthorization(services.config);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end('{"status":"ok"}');
    } else if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: /metrics and /healthz are served here');
    } else if (!authorized(req.headers.authorization)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain; charset=utf-8' }).end('A bearer token is required');
    } else {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
        (e) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${(e as Error).message}`),
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        metrics.registry.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
