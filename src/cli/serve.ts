// svc serve: open the services, start the HTTP server, stop cleanly on SIGINT/SIGTERM.
import type { Config } from '../config/load.ts';
import { buildApp } from '../http/app.ts';
import { closeServices, createServices } from '../services.ts';
import { listenAdminSocket } from './admin-socket.ts';
import { createLogger } from '../log.ts';
import { countActiveSysadmins } from '../model/user-lists.ts';

export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config);
  const embedded = !config.str('svc.database_url');
  logger.info(
    { mode: embedded ? 'embedded' : 'postgresql', storage: config.str('svc.storage_path'), config: config.file ?? null },
    'starting svc',
  );
  const services = await createServices(config, { logger });
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
    logger.info({ signal }, 'stopping');
    await closeAdminSocket?.();
    await app.close();
    await closeServices(services);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
