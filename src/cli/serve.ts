// svc serve: open the services, start the HTTP server, stop gracefully on SIGINT/SIGTERM (no new
// requests, those in flight finish up to svc.shutdown_timeout, running jobs go back to the queue).
// `--no-workers` runs the web side only: jobs are left to `svc jobs worker` processes.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/load.ts';
import type { Services } from '../context.ts';
import { buildApp } from '../http/app.ts';
import { closeServices, createServices } from '../services.ts';
import { listenAdminSocket } from './admin-socket.ts';
import { createLogger } from '../log.ts';
import { countActiveSysadmins } from '../model/user-lists.ts';

export interface ServeOptions {
  /** Run the in-process job worker (svc.jobs.in_process_worker); false: web only. */
  workers?: boolean;
}

export async function serve(config: Config, opts: ServeOptions = {}): Promise<void> {
  const logger = createLogger(config);
  const embedded = !config.str('svc.database_url');
  const workers = opts.workers !== false;
  logger.info(
    { mode: embedded ? 'embedded' : 'postgresql', storage: config.str('svc.storage_path'), config: config.file ?? null, workers },
    'starting svc',
  );
  if (!workers && embedded)
    logger.warn('--no-workers on the embedded database: no process will run background jobs (loads) until a server runs with workers');
  const services = await createServices(config, { logger, worker: workers });
  const app = await buildApp(services);
  if ((await countActiveSysadmins(services.db, config.str('svc.site_id'))) === 0) {
    logger.warn(
      "no sysadmin yet: run `npx svc sysadmin add NAME --email you@example.org --password '...'` to sign in on the web, and `npx svc user token add NAME cli` for an API token (in another terminal; the server may keep running)",
    );
  }
  const closeAdminSocket = await listenAdminSocket(services);
  await app.listen({ port: config.int('svc.port'), host: config.str('svc.host') });
  logger.info(`svc listening on http://${config.str('svc.host')}:${config.int('svc.port')} (Action API: /api/3/action/)`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeout_s: config.int('svc.shutdown_timeout') }, 'stopping: finishing the requests in flight');
    await closeAdminSocket?.();
    const { cut } = await stopServing(app, services, config.int('svc.shutdown_timeout') * 1000);
    if (cut) logger.warn('requests still running at svc.shutdown_timeout were cut off');
    await closeServices(services);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/**
 * Stops serving: no new connections, new requests on open ones answered 503, requests in flight
 * finish (after timeoutMs their connections are closed: `cut`); running jobs are asked to stop and
 * handed back to the queue. The services stay open (the caller closes them).
 */
export async function stopServing(app: FastifyInstance, services: Services, timeoutMs: number): Promise<{ cut: boolean }> {
  let cut = false;
  let served = false;
  let giveUp!: () => void;
  const limit = new Promise<void>((resolve) => (giveUp = resolve));
  const timer = setTimeout(() => {
    if (!served) {
      cut = true;
      app.server.closeAllConnections();
    }
    giveUp();
  }, timeoutMs);
  try {
    // A job that ignores its stop signal is not waited for past the limit: its lease expires and
    // another worker takes it again (svc.jobs.lease).
    const closed = app.close().then(() => {
      served = true;
    });
    await Promise.all([closed, Promise.race([services.jobs.stop(), limit])]);
  } finally {
    clearTimeout(timer);
  }
  return { cut };
}
