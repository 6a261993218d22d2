// One load of a resource into the data store: get the file (the upload, or the link fetched safely),
// skip it when unchanged, read it (pass one), COPY it into a new table that replaces the old one
// (pass two), then mark the resource datastore_active, update the dataset and create the default
// data store views. The task status records each step's log lines and the outcome.
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Services } from '../../actions/context.ts';
import { callAction } from '../../actions/registry.ts';
import { SYSADMIN_INTERNAL } from '../../auth/identity.ts';
import { uploadTmpDir } from '../../files/storage.ts';
import { openFileStore } from '../../files/store.ts';
import { findResource } from '../../model/resources.ts';
import { findUser, type UserRow } from '../../model/users.ts';
import { notifyPackageChange, touchPackage } from '../../model/packages.ts';
import { setDatastoreActiveFlag } from '../../model/datastore-flags.ts';
import { fetchToFile, FetchError, type LookupAll } from '../../loader/fetch.ts';
import { LoadError, prepareTable, type PreparedColumn } from '../../loader/prepare.ts';
import { loadDirect, NotDirect, planDirect } from '../../loader/direct.ts';
import { replaceTable, type BulkLoadBackend, type LoadOptions } from '../../loader/load.ts';
import { loadTmpFiles, sweepStaleLoadFiles } from './tmp-files.ts';
import { loadTask, nowIso, parseValue, saveLoadTask, type LoadTaskValue, type LogLine } from './status.ts';
import { countLoad } from '../../metrics/throughput.ts';

export interface LoadProgress {
  phase: 'download' | 'read' | 'copy';
  rows: number;
  bytes: number;
  /** Bytes of the whole file when known. */
  total?: number;
}

export interface LoadRunOptions {
  jobId: string | null;
  ignoreHash?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: LoadProgress) => void;
  /** The user who asked for the load: its changes are recorded as theirs (none: the site user's). */
  userId?: string | null;
  /** Name resolution for links (tests). */
  resolve?: LookupAll;
}

export interface LoadOutcome {
  rows: number;
  columns: { id: string; type: string }[];
  skipped?: boolean;
}

/** Errors that are the file's or the link's fault: reported as they are, without a stack. */
const expected = (e: unknown) => e instanceof LoadError || e instanceof FetchError;

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

export function datastoreBackend(services: Services): BulkLoadBackend {
  const backend = services.plugins.datastore as BulkLoadBackend | undefined;
  if (!backend || typeof backend.bulkWrite !== 'function') throw new LoadError('the data store does not support bulk loads');
  return backend;
}

export async function runLoad(services: Services, resourceId: string, opts: LoadRunOptions): Promise<LoadOutcome> {
  const { config } = services;
  const value: LoadTaskValue = {
    ...parseValue(await loadTask(services.db, resourceId)),
    job_id: opts.jobId,
    logs: [],
    finished_timestamp: null,
  };
  value.requested_timestamp ??= nowIso();
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(2)} s`;
  const log = (message: string, level: LogLine['level'] = 'INFO') => value.logs.push({ timestamp: nowIso(), message, level });
  const save = (state: 'running' | 'complete' | 'error', error: string | null = null) =>
    saveLoadTask(services.db, resourceId, state, value, error);
  let lastSaved = 0;
  const progress = (p: LoadProgress) => {
    opts.onProgress?.(p);
    value.progress = { rows: p.rows, bytes: p.bytes };
    if (Date.now() - lastSaved > 2000) {
      lastSaved = Date.now();
      save('running').catch(() => undefined);
    }
  };
  const tmpDir = uploadTmpDir(config);
  fs.mkdirSync(tmpDir, { recursive: true });
  // A load run again after its process was killed finds that process's files here.
  const stale = sweepStaleLoadFiles(tmpDir);
  if (stale.length) services.logger.info({ files: stale }, 'removed temporary files of loads that stopped');
  const { download, spool, release } = loadTmpFiles(tmpDir, resourceId);
  try {
    log('load started');
    await save('running');
    const res = await findResource(services.db, resourceId);
    if (!res || res.state !== 'active') throw new LoadError(`resource ${resourceId} was not found`);
    if (res.url_type === 'datastore')
      throw new LoadError('the resource is a data store table (url_type "datastore"): there is no file to load');
    let file: string;
    // An upload's checksum as recorded when it was stored, else computed while it loads (it is only
    // needed first to skip a reload)
    let hashing: Promise<string>;
    let total: number | undefined;
    if (res.url_type === 'upload') {
      const stored = await (await openFileStore(config)).localFile(resourceId, download, 10000);
      if (!stored) throw new LoadError('the uploaded file of the resource is missing');
      const local = stored.path;
      file = local;
      total = stored.size;
      hashing = stored.sha256 ? Promise.resolve(stored.sha256) : sha256File(local);
      hashing.catch(() => undefined); // awaited below; a load that fails first must not leave it unhandled
      log(`uploaded file, ${total} bytes (${elapsed()})`);
    } else {
      if (!res.url) throw new LoadError('the resource has no URL to load from');
      log(`fetching ${res.url}`);
      let got = 0;
      const r = await fetchToFile(res.url, download, {
        maxBytes: config.int('svc.loader.max_size') * 1024 * 1024,
        timeoutMs: config.int('svc.loader.timeout') * 1000,
        allowPrivate: config.bool('svc.loader.allow_private_urls'),
        signal: opts.signal,
        resolve: opts.resolve,
        onBytes: (n) => {
          got += n;
          progress({ phase: 'download', rows: 0, bytes: got });
        },
      });
      file = download;
      hashing = Promise.resolve(r.sha256);
      total = r.bytes;
      log(`downloaded ${r.bytes} bytes${r.contentType ? ` (${r.contentType})` : ''}`);
    }
    const backend = datastoreBackend(services);
    const exists = await backend.resource_exists(resourceId);
    if (!opts.ignoreHash && value.hash && exists && value.hash === (await hashing)) {
      log('the file has not changed since the last load: nothing to do (submit with ignore_hash to load it again)');
      value.finished_timestamp = nowIso();
      await save('complete');
      return { rows: 0, columns: [], skipped: true };
    }
    const fields = exists ? await backend.resource_fields(resourceId) : [];
    const overrides = new Map<string, string>();
    for (const f of fields) {
      const o = f.info?.type_override;
      if (typeof o === 'string' && o.trim()) overrides.set(f.id, o.trim());
    }
    const loaded =
      (config.bool('svc.loader.direct_copy') &&
        (await loadPlainCsv(backend, resourceId, file, overrides, log, {
          signal: opts.signal,
          streams: config.int('svc.loader.copy_streams'),
          onProgress: (p) => progress({ phase: 'copy', ...p, total }),
        }))) ||
      (await loadInTwoPasses(backend, resourceId, file, spool, overrides, log, opts.signal, progress, total, elapsed));
    const rows = loaded.rows;
    log(`${rows} row(s) loaded into the data store (${elapsed()})`);
    countLoad(rows, total ?? 0, (performance.now() - started) / 1000);
    // The catalog: the resource is active in the data store, the dataset changed.
    const later: (() => void | Promise<void>)[] = [];
    const actor = await loadActor(services, opts.userId);
    await services.db.transaction(async (tx) => {
      await setDatastoreActiveFlag(tx, resourceId, true);
      await touchPackage(tx, res.package_id);
      await notifyPackageChange({ services, db: tx, afterCommit: (fn) => later.push(fn), identity: actor }, res.package_id);
    });
    for (const fn of later) await fn();
    if (services.registry.has('package_create_default_resource_views')) {
      try {
        const pkg = await callAction(services, 'package_show', { id: res.package_id }, { identity: SYSADMIN_INTERNAL });
        await callAction(
          services,
          'package_create_default_resource_views',
          { package: pkg, create_datastore_views: true },
          { identity: { ...SYSADMIN_INTERNAL, user: actor.user } },
        );
      } catch (e) {
        log(`the default views could not be created: ${(e as Error).message}`, 'WARNING');
      }
    }
    value.hash = await hashing;
    log(`done (${elapsed()})`);
    value.finished_timestamp = nowIso();
    await save('complete');
    return { rows, columns: loaded.columns.map((c) => ({ id: c.id, type: c.type })) };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (!expected(e) && !opts.signal?.aborted) services.logger.error({ err: e, resource: resourceId }, 'load failed');
    log(message, 'ERROR');
    value.finished_timestamp = nowIso();
    await save('error', message).catch(() => undefined);
    throw e instanceof Error ? e : new Error(message);
  } finally {
    release();
  }
}

/** Who the load's changes are recorded as: the user who asked for it if still there, else the site user. */
async function loadActor(services: Services, userId: string | null | undefined): Promise<{ user: UserRow }> {
  const user = userId ? await findUser(services.db, userId) : undefined;
  if (user && user.state !== 'deleted') return { user };
  const site = (await callAction(services, 'get_site_user', {}, { identity: SYSADMIN_INTERNAL })) as { id: string };
  return { user: (await findUser(services.db, site.id))! };
}

type Log = (message: string, level?: LogLine['level']) => void;
const logLevel = (l: string): LogLine['level'] =>
  /loaded as text|dropped|skipped|made-up name|this one is named/.test(l) ? 'WARNING' : 'INFO';

/** Plain UTF-8 CSV straight to COPY (loader/direct.ts); null when the file needs the general path. */
async function loadPlainCsv(
  backend: BulkLoadBackend,
  resourceId: string,
  file: string,
  overrides: Map<string, string>,
  log: Log,
  opts: LoadOptions,
): Promise<{ rows: number; columns: PreparedColumn[] } | null> {
  try {
    const plan = await planDirect(file, overrides);
    const done = await loadDirect(backend, resourceId, plan, opts);
    done.log.forEach((l) => log(l, logLevel(l)));
    return done;
  } catch (e) {
    if (!(e instanceof NotDirect)) throw e;
    log(`read in two passes (not a file for COPY as it is: ${e.message})`);
    return null;
  }
}

/** The general path: pass one guesses types and spools the rows, pass two copies them. */
async function loadInTwoPasses(
  backend: BulkLoadBackend,
  resourceId: string,
  file: string,
  spool: string,
  overrides: Map<string, string>,
  log: Log,
  signal: AbortSignal | undefined,
  progress: (p: LoadProgress) => void,
  total: number | undefined,
  elapsed: () => string,
): Promise<{ rows: number; columns: PreparedColumn[] }> {
  const prepared = await prepareTable(file, {
    overrides,
    spoolPath: spool,
    signal,
    onProgress: (p) => progress({ phase: 'read', ...p, total }),
  });
  prepared.log.forEach((l) => log(l, logLevel(l)));
  log(`file read and types guessed (${elapsed()})`);
  const spoolSize = fs.statSync(spool).size;
  const rows = await replaceTable(backend, resourceId, prepared, {
    signal,
    onProgress: (p) => progress({ phase: 'copy', ...p, total: spoolSize }),
  });
  return { rows, columns: prepared.columns };
}
