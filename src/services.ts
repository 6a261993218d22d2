// Builds everything a process needs from the configuration: databases (embedded or PostgreSQL),
// migrations, the action registry with core actions and the enabled plugins.
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { Services } from './context.ts';
import { Registry } from './actions/registry.ts';
import { coreActions } from './actions/index.ts';
import { ConfigError, type Config } from './config/load.ts';
import { PGliteDatabase, PostgresDatabase, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { ReadReplicas } from './db/replicas.ts';
import { CatalogChanges } from './db/notifications.ts';
import { PGliteWorkerDatabase } from './db/pglite-worker.ts';
import { acquireDataDirLock } from './db/lock.ts';
import { existingEmbeddedTemplate } from './db/embedded-template.ts';
import { loadPersistedOptions } from './actions/config.ts';
import { availablePlugins } from './plugins/index.ts';
import { setupSearch } from './search/service.ts';
import { setupSpatial } from './search/spatial.ts';
import { JobService } from './jobs/service.ts';
import { loadSchemingSchemas } from './scheming/load.ts';

type EmbeddedOpener = (name: string) => Promise<PGliteDatabase>;

/** Opens an embedded PGlite data dir under svc.storage_path; a data dir used by a running server is reported clearly. */
export function embeddedOpener(config: Config): EmbeddedOpener {
  return async (name) => {
    const dir = path.join(config.str('svc.storage_path'), name);
    acquireDataDirLock(dir);
    return PGliteDatabase.open({ dataDir: dir, template: existingEmbeddedTemplate(name) });
  };
}

/**
 * Opens an embedded data dir under svc.storage_path in a worker thread: its queries leave the
 * server's thread free, and a statement past its time bound is stopped (the thread is ended and
 * the data dir opened again).
 */
export function embeddedWorkerOpener(config: Config): (name: string) => Promise<Database> {
  return async (name) => {
    const dir = path.join(config.str('svc.storage_path'), name);
    acquireDataDirLock(dir);
    return PGliteWorkerDatabase.open({ dataDir: dir, template: existingEmbeddedTemplate(name) });
  };
}

/**
 * Opens the catalog database: PostgreSQL at svc.database_url, else PGlite under svc.storage_path,
 * in a worker thread (package_search's statements are bounded by svc.search.timeout).
 */
export async function openCatalogDatabase(
  config: Config,
  openEmbedded: (name: string) => Promise<Database> = embeddedWorkerOpener(config),
): Promise<Database> {
  const url = config.str('svc.database_url');
  if (url) return PostgresDatabase.open(url, { max: config.int('svc.database_pool_size'), settings: CATALOG_SESSION_SETTINGS });
  return openEmbedded('catalog');
}

/**
 * Session settings of the catalog's connections (primary and replicas). No JIT: the catalog's
 * statements are short, and those whose estimated cost crosses jit_above_cost (a search counting
 * or faceting ~10,000 matches) spent ~20 ms compiling, more than the JIT-compiled plan saved.
 */
const CATALOG_SESSION_SETTINGS = { jit: 'off' };

export interface ServiceOptions {
  logger?: Logger;
  /** An already open catalog database (tests). */
  db?: Database;
  /** Skip migrations (the database is known to be current). */
  migrate?: boolean;
  /** How embedded databases are opened in the server's thread (tests load a prepared template instead of creating one). */
  openEmbedded?: EmbeddedOpener;
  /** How embedded databases that run in a worker thread are opened (the catalog unless opts.db is given, the data store). */
  openEmbeddedWorker?: (name: string) => Promise<Database>;
  /** Start the in-process job worker when svc.jobs.in_process_worker is on (default true; one-shot CLI commands pass false). */
  worker?: boolean;
}

/**
 * Starts opening an embedded database on its own thread at once; the first open of that name takes
 * it. What is not taken is closed by discard().
 */
function openedAhead(open: (name: string) => Promise<Database>, name: string) {
  let pending: Promise<Database> | undefined = open(name);
  pending.catch(() => undefined);
  return {
    open: (n: string): Promise<Database> => {
      const ready = n === name ? pending : undefined;
      if (!ready) return open(n);
      pending = undefined;
      return ready;
    },
    discard: async () => {
      const left = pending;
      pending = undefined;
      await (await left?.catch(() => undefined))?.close();
    },
  };
}

/** The data store plugin will open its embedded database (no svc.datastore.write_url). */
const embeddedDataStore = (config: Config) => config.list('svc.plugins').includes('datastore') && !config.str('svc.datastore.write_url');

export async function createServices(config: Config, opts: ServiceOptions = {}): Promise<Services> {
  const logger = opts.logger ?? pino({ level: config.str('svc.log_level') });
  const openEmbedded = opts.openEmbedded ?? embeddedOpener(config);
  const openWorker = opts.openEmbeddedWorker ?? embeddedWorkerOpener(config);
  // The embedded data store opens on its thread while the catalog opens and migrates on this one.
  const ahead = embeddedDataStore(config) ? openedAhead(openWorker, 'datastore') : undefined;
  let db: Database;
  try {
    db = opts.db ?? (await openCatalogDatabase(config, openWorker));
  } catch (e) {
    await ahead?.discard();
    throw e;
  }
  const jobs = new JobService(db, config, logger);
  const services: Services = {
    config,
    db,
    registry: new Registry(),
    logger,
    plugins: {},
    onClose: [],
    openEmbedded,
    jobs,
    openEmbeddedWorker: ahead?.open ?? openWorker,
  };
  try {
    services.scheming = await loadSchemingSchemas(config, logger);
    if (opts.migrate !== false) await migrate(db);
    await openReadReplicas(services);
    services.registry.defineAll(coreActions);
    setupSpatial(services);
    setupSearch(services);
    await loadPersistedOptions(services);
    await followCatalogChanges(services);
    const enabled = config.list('svc.plugins');
    for (const name of enabled) {
      const plugin = availablePlugins[name];
      if (!plugin)
        throw new ConfigError(`unknown plugin "${name}" in svc.plugins (available: ${Object.keys(availablePlugins).join(', ')})`);
      await plugin.setup(services);
    }
    // Registered last, so it runs first on close: no job runs while the plugins shut down.
    services.onClose.push(() => jobs.stop());
    if (opts.worker !== false && config.bool('svc.jobs.in_process_worker')) jobs.startWorker();
  } catch (e) {
    await ahead?.discard();
    await closeServices(services).catch(() => undefined);
    throw e;
  }
  await ahead?.discard();
  return services;
}

/** Several processes on one PostgreSQL catalog: what one changes, the others reload (src/db/notifications.ts). */
async function followCatalogChanges(services: Services): Promise<void> {
  const url = services.config.str('svc.database_url');
  if (services.db.kind !== 'postgres' || !url) return;
  const changes = new CatalogChanges(url, services.logger);
  changes.on('config', () => loadPersistedOptions(services));
  services.onClose.push(() => changes.close());
  await changes.start();
  services.changes = changes;
}

/** Read replicas for the catalog (svc.database_read_urls); the embedded database has none and ignores them. */
async function openReadReplicas(services: Services): Promise<void> {
  const { config, db, logger } = services;
  const urls = config.list('svc.database_read_urls');
  if (!urls.length) return;
  if (db.kind !== 'postgres') {
    logger.warn('svc.database_read_urls is ignored: the catalog is the embedded database');
    return;
  }
  const reads = new ReadReplicas(db, urls, {
    maxLagSeconds: config.get<number>('svc.database_replica_max_lag'),
    waitMs: config.int('svc.database_replica_wait'),
    poolSize: config.int('svc.database_pool_size'),
    settings: CATALOG_SESSION_SETTINGS,
    logger,
  });
  services.onClose.push(() => reads.close());
  await reads.start();
  services.reads = reads;
}

export async function closeServices(services: Services): Promise<void> {
  for (const fn of services.onClose.reverse()) await fn().catch(() => undefined);
  services.onClose = [];
  await services.db.close();
}
