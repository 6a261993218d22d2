// How an embedded database is opened, in plain JavaScript: by PGliteDatabase (database.ts) and by
// the data store's worker thread (pglite-worker-thread.mjs), which runs without a TypeScript loader.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pgliteParsers } from './pglite-parsers.mjs';

/**
 * PostgreSQL's buffer cache inside each PGlite. The default (128 MB, touched page by page as the
 * data dir is read) is most of an embedded server's memory, twice over (catalog and data store:
 * 590-650 MB idle); pages not in this cache are read from the data dir's files, which the
 * operating system's cache keeps.
 */
export const EMBEDDED_SHARED_BUFFERS = '16MB';

/**
 * Opens PGlite on a data dir (in memory without one). A new data dir is a copy of the template
 * (a closed data dir, see embedded-template.ts; or a PGlite dump, a .tar.gz file) when there is
 * one, else made by initdb.
 * @param {{ dataDir?: string, template?: string, loadDataDir?: Blob }} opts
 */
export async function openPGlite({ dataDir, template, loadDataDir }) {
  let load = loadDataDir;
  if (dataDir) {
    const fresh = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
    fs.mkdirSync(dataDir, { recursive: true });
    if (fresh && template && !load) {
      if (fs.statSync(template).isDirectory()) fs.cpSync(template, dataDir, { recursive: true });
      else load = new Blob([fs.readFileSync(template)]);
    }
  }
  return PGlite.create({
    dataDir,
    parsers: pgliteParsers,
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
    ...(load ? { loadDataDir: load } : {}),
  });
}
