// Uploaded resource files on disk (the local backend of store.ts): <svc.storage_path>/resources/<id[0:3]>/<id[3:6]>/<id[6:]>.
// A file is written under a temporary name in the same folder and renamed into place, so an
// interrupted upload never leaves a half file where a download would find it.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/load.ts';
import type { UploadedFile } from '../context.ts';

export function resourceFilePath(config: Config, resourceId: string): string {
  const id = resourceId.replace(/[^A-Za-z0-9_-]/g, '_');
  return path.join(config.str('svc.storage_path'), 'resources', id.slice(0, 3), id.slice(3, 6), id.slice(6) || '_');
}

/**
 * The checksum kept beside a stored file: "<inode> <size> <mtime ms> <sha256>" of the file it was
 * computed for (a rename keeps all three), so one that is not the file's (the file replaced since,
 * or a crash between the file and its checksum) is never taken for it.
 */
const checksumPath = (file: string) => `${file}.sha256`;
const fileIdentity = (st: fs.Stats) => `${st.ino} ${st.size} ${st.mtimeMs}`;
/** Checksums of files this process stored that are still being computed, by the file's path. */
const checksumsComing = new Map<string, Promise<void>>();

/**
 * Moves the received bytes into storage for the resource (replacing an older file); their checksum
 * is written beside them when it is ready (it is computed on a thread while the upload arrives and
 * may trail it).
 */
export function storeResourceFileOnDisk(config: Config, resourceId: string, file: UploadedFile): void {
  const target = resourceFilePath(config, resourceId);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const tmp = `${target}.part-${randomUUID()}`;
  try {
    try {
      fs.renameSync(file.path, tmp);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      fs.copyFileSync(file.path, tmp);
    }
    fs.renameSync(tmp, target);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fs.rmSync(checksumPath(target), { force: true });
  if (!file.sha256) return;
  const identity = fileIdentity(fs.statSync(target));
  const coming = file.sha256
    .then((sha256) => {
      if (fileIdentity(fs.statSync(target)) !== identity) return; // replaced meanwhile
      const part = `${checksumPath(target)}.part-${randomUUID()}`;
      fs.writeFileSync(part, `${identity} ${sha256}`);
      fs.renameSync(part, checksumPath(target));
    })
    .catch(() => undefined)
    .finally(() => {
      if (checksumsComing.get(target) === coming) checksumsComing.delete(target);
    });
  checksumsComing.set(target, coming);
}

/** The SHA-256 (hex) of a stored file as recorded when it was stored, or null when not known. */
export async function storedFileSha256(file: string): Promise<string | null> {
  await checksumsComing.get(file);
  try {
    const [ino, size, mtime, sha256] = fs.readFileSync(checksumPath(file), 'utf8').split(' ');
    return `${ino} ${size} ${mtime}` === fileIdentity(fs.statSync(file)) && /^[0-9a-f]{64}$/.test(sha256) ? sha256 : null;
  } catch {
    return null;
  }
}

/** Removes the resource's file from the configured store (local disk or the object store): run after commit. */
export { removeStoredFile as removeResourceFile } from './store.ts';

/** CKAN's munge_filename: a safe base name for the download URL. */
export function mungeFilename(name: string): string {
  const base = path.basename(name.replace(/\\/g, '/')).trim();
  let out = base
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ /g, '-')
    .replace(/[^A-Za-z0-9_.-]/g, '')
    .replace(/-+/g, '-');
  if (out.length > 100) {
    const dot = out.lastIndexOf('.');
    const ext = dot > 0 && out.length - dot <= 16 ? out.slice(dot) : '';
    out = out.slice(0, 100 - ext.length) + ext;
  }
  return out || 'upload';
}

/** Name prefix of the temporary files multipart uploads are written to (request-data.ts). */
export const UPLOAD_TMP_PREFIX = 'upload-';

/** A new upload temp file name: the prefix, this process's pid (whose files they are), a random part. */
export function uploadTmpName(): string {
  return `${UPLOAD_TMP_PREFIX}${process.pid}-${randomUUID()}`;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where multipart uploads are received before an action stores them (request-data.ts). */
export function uploadTmpDir(config: Config): string {
  return path.join(config.str('svc.storage_path'), 'tmp');
}

/**
 * At startup: removes every upload temp file left by a process that stopped mid-request (killed,
 * crashed). Only the files of another process still running on this machine are spared (its
 * uploads in flight, when several processes share the storage). Returns how many were removed.
 */
export function sweepUploadTmp(config: Config): number {
  const dir = uploadTmpDir(config);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(UPLOAD_TMP_PREFIX)) continue;
    const owner = Number(/^(\d+)-/.exec(name.slice(UPLOAD_TMP_PREFIX.length))?.[1]);
    if (owner && owner !== process.pid && processAlive(owner)) continue;
    const file = path.join(dir, name);
    try {
      if (!fs.statSync(file).isFile()) continue;
      fs.rmSync(file, { force: true });
      removed++;
    } catch {
      // gone meanwhile
    }
  }
  return removed;
}
