// PGlite is one process per data dir. A lock file holding our pid tells a second process
// (a CLI command while the server runs) to stop with a clear message instead of corrupting data.
import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {}

const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDataDirLock(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'svc.lock');
  if (held.has(file)) return;
  try {
    const pid = Number(fs.readFileSync(file, 'utf8'));
    if (pid && pid !== process.pid && alive(pid)) {
      throw new DataDirLockedError(
        `the embedded database in ${dir} is in use by another svc process (pid ${pid}). ` +
          'PGlite allows one process at a time: stop the server first, or run svc on PostgreSQL (svc.database_url) to use the CLI while it runs.',
      );
    }
  } catch (e) {
    if (e instanceof DataDirLockedError) throw e;
  }
  fs.writeFileSync(file, String(process.pid));
  held.add(file);
  process.once('exit', () => {
    try {
      if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.rmSync(file);
    } catch {
      /* already gone */
    }
  });
}
