// The loader's temporary files (the download of a link, the spooled rows of a two-pass load) in the
// storage's tmp folder. Their names carry the pid of the process whose load made them, so a process
// killed mid-load (kill -9, out of memory) leaves files that the next start, or the next load, can
// tell apart from those of loads still running here or in another live process on this machine.
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from '../../files/storage.ts';

const PREFIX = 'loader-';
const SUFFIXES = ['.download', '.spool'];

/** Files of the loads running in this process. */
const owned = new Set<string>();

/** The temporary files of one load, owned by this process until `release`. */
export function loadTmpFiles(tmpDir: string, resourceId: string): { download: string; spool: string; release: () => void } {
  const tag = `${PREFIX}${resourceId.replace(/[^A-Za-z0-9-]/g, '_')}-${process.pid}-${Date.now()}`;
  const download = path.join(tmpDir, `${tag}.download`);
  const spool = path.join(tmpDir, `${tag}.spool`);
  owned.add(download);
  owned.add(spool);
  return {
    download,
    spool,
    release: () => {
      for (const f of [download, spool]) {
        fs.rmSync(f, { force: true });
        owned.delete(f);
      }
    },
  };
}

/** `loader-<resource>-<pid>-<ms>.<suffix>` -> pid (the resource part may hold dashes). */
function ownerPid(name: string): number | null {
  const m = /-(\d+)-\d+\.[a-z]+$/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Removes the loader files that no running load owns: those of a process that is gone, and those of
 * this process that no load of it holds. Returns the removed files' names.
 */
export function sweepStaleLoadFiles(tmpDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(tmpDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(PREFIX) || !SUFFIXES.some((s) => name.endsWith(s))) continue;
    const file = path.join(tmpDir, name);
    const pid = ownerPid(name);
    if (pid === process.pid ? owned.has(file) : pid !== null && processAlive(pid)) continue;
    try {
      if (!fs.statSync(file).isFile()) continue;
      fs.rmSync(file, { force: true });
      removed.push(name);
    } catch {
      // removed meanwhile
    }
  }
  return removed;
}
