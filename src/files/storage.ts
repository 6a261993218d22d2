// Uploaded resource files on disk: <svc.storage_path>/resources/<id[0:3]>/<id[3:6]>/<id[6:]>.
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

/** Moves the received bytes into storage for the resource (replacing an older file). */
export function storeResourceFile(config: Config, resourceId: string, file: UploadedFile): void {
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
}

export function removeResourceFile(config: Config, resourceId: string): void {
  fs.rmSync(resourceFilePath(config, resourceId), { force: true });
}

export function resourceFileExists(config: Config, resourceId: string): boolean {
  return fs.existsSync(resourceFilePath(config, resourceId));
}

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

function processAlive(pid: number): boolean {
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
