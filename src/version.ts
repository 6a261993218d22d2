// svc's own version: from the first package.json above this file (from src/ or from a build in dist/).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function readVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return String(JSON.parse(fs.readFileSync(file, 'utf8')).version ?? '0');
    const up = path.dirname(dir);
    if (up === dir) return '0';
    dir = up;
  }
}

export const SVC_VERSION = readVersion();
