// The storage of uploaded resource files behind one interface: on local disk (the default,
// storage.ts) or in an S3-compatible object store (s3-storage.ts), chosen by svc.storage.backend.
// Everything that reads or writes an upload (actions, downloads, pages, the loader) goes through it.
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ConfigError, type Config } from '../config/load.ts';
import type { UploadedFile } from '../context.ts';
import { ActionError } from '../errors.ts';
import { resourceFilePath, storedFileSha256, storeResourceFileOnDisk } from './storage.ts';

/** The object store cannot be reached or refused the operation: 503, the caller may try again. */
export class StorageUnavailableError extends ActionError {
  readonly type = 'Service Unavailable';
  readonly status = 503;
}

export interface StoredFile {
  size: number;
  /** SHA-256 (hex) recorded when the file was stored; null when not known. */
  sha256: string | null;
}

export interface ByteRange {
  start: number;
  end: number;
}

/** Work to do once the action's transaction has committed. */
export type AfterCommitWork = () => void | Promise<void>;

export interface FileStore {
  readonly kind: 'local' | 's3';
  /** Start-up check: the store is reachable and writable, else a ConfigError saying what is wrong. */
  check(): Promise<void>;
  /**
   * Before the transaction commits: makes the upload durable where it can be put in place from
   * (a failure fails the action, nothing is changed); the work returned puts it in place.
   */
  stage(resourceId: string, file: UploadedFile): Promise<AfterCommitWork>;
  /**
   * Optional, before the action runs: sends an upload where stage() will take it from, so the
   * transfer does not hold the action's transaction open (object stores). release() forgets it,
   * removing what no action put in place.
   */
  prestage?(file: UploadedFile): Promise<void>;
  release?(file: UploadedFile): Promise<void>;
  /** Removes the resource's file (after commit). */
  remove(resourceId: string): Promise<void>;
  /** Size and checksum of the resource's file; null when there is none. */
  stat(resourceId: string): Promise<StoredFile | null>;
  /** The file's bytes (the bytes of range when given, ends included). */
  read(resourceId: string, range?: ByteRange): Promise<Readable>;
  /** With presigned downloads on: a time-limited address of the file in the object store; else null. */
  downloadUrl(resourceId: string, opts: { contentType: string }): Promise<string | null>;
  /**
   * The file on local disk (the stored file itself, or its bytes fetched to `spare`), waiting up to
   * waitMs for it to arrive (it is put in place after the action's commit); null when it does not.
   */
  localFile(resourceId: string, spare: string, waitMs: number): Promise<(StoredFile & { path: string }) | null>;
  close(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The default store: files under svc.storage_path/resources (storage.ts). */
class LocalFileStore implements FileStore {
  readonly kind = 'local' as const;
  constructor(private readonly config: Config) {}
  async check(): Promise<void> {}
  async stage(resourceId: string, file: UploadedFile): Promise<AfterCommitWork> {
    return () => storeResourceFileOnDisk(this.config, resourceId, file);
  }
  async remove(resourceId: string): Promise<void> {
    const file = resourceFilePath(this.config, resourceId);
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}.sha256`, { force: true });
  }
  async stat(resourceId: string): Promise<StoredFile | null> {
    const file = resourceFilePath(this.config, resourceId);
    try {
      const size = fs.statSync(file).size;
      return { size, sha256: await storedFileSha256(file) };
    } catch {
      return null;
    }
  }
  async read(resourceId: string, range?: ByteRange): Promise<Readable> {
    return fs.createReadStream(resourceFilePath(this.config, resourceId), range ? { start: range.start, end: range.end } : {});
  }
  async downloadUrl(): Promise<string | null> {
    return null;
  }
  async localFile(resourceId: string, _spare: string, waitMs: number) {
    const file = resourceFilePath(this.config, resourceId);
    const end = Date.now() + waitMs;
    while (!fs.existsSync(file)) {
      if (Date.now() > end) return null;
      await sleep(100);
    }
    return { path: file, size: fs.statSync(file).size, sha256: await storedFileSha256(file) };
  }
  close(): void {}
}

const stores = new WeakMap<Config, FileStore>();

/** The file store of this configuration (one per process and configuration; the S3 module is loaded only when used). */
export async function openFileStore(config: Config): Promise<FileStore> {
  const known = stores.get(config);
  if (known) return known;
  let store: FileStore;
  if (config.str('svc.storage.backend') === 's3') {
    if (!config.str('svc.storage.s3.bucket')) throw new ConfigError('svc.storage.backend is s3 but svc.storage.s3.bucket is not set');
    const { S3FileStore } = await import('./s3-storage.ts');
    store = stores.get(config) ?? new S3FileStore(config);
  } else store = new LocalFileStore(config);
  stores.set(config, store);
  return store;
}

/** Closes the store of this configuration (its connections); the next use opens it again. */
export function closeFileStore(config: Config): void {
  stores.get(config)?.close();
  stores.delete(config);
}

/** The bytes of a stored file of at most maxBytes; undefined when there is none or it is larger. */
export async function readSmallFile(config: Config, resourceId: string, maxBytes: number): Promise<Buffer | undefined> {
  const store = await openFileStore(config);
  const stored = await store.stat(resourceId);
  if (!stored || stored.size > maxBytes) return undefined;
  return buffer(await store.read(resourceId));
}

/** Removes the resource's file from the configured store (run after commit). */
export async function removeStoredFile(config: Config, resourceId: string): Promise<void> {
  await (await openFileStore(config)).remove(resourceId);
}

/** Sends a request's uploads to the store before its action runs (object stores; nothing for local disk). */
export async function prestageUploads(config: Config, files: Record<string, UploadedFile>): Promise<void> {
  const list = Object.values(files);
  if (!list.length) return;
  const store = await openFileStore(config);
  if (store.prestage) for (const f of list) await store.prestage(f);
}

/** After the request: removes the prestaged uploads no action put in place. */
export async function releaseUploads(config: Config, files: Record<string, UploadedFile>): Promise<void> {
  const list = Object.values(files);
  if (!list.length) return;
  const store = await openFileStore(config);
  if (store.release) for (const f of list) await store.release(f);
}
