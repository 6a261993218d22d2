// Embedded (PGlite) data dirs made once at install time (npm's prepare runs `bin/build.js
// --template`) and copied file by file into each new data dir: PGlite's initdb costs several
// seconds on a small machine for each of the two data dirs (catalog, data store), and the core
// migrations as much again; a copy costs a fraction of a second (and, unlike PGlite's loadDataDir
// of a dump, no memory: the server keeps what a start took). Two templates: an empty database (the
// data store), and one with the core migrations applied (the catalog; used only while the
// migration files are those it was made from). Without them a new data dir is made by initdb.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGliteDatabase } from './database.ts';
import { coreMigrationsDir, migrate } from './migrate.ts';

/** The project's root: the first folder above this file with a package.json (from src/db or from a build in dist/). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
  return dir;
}

/** PGlite's version: a template made by another version is not used. */
function pgliteVersion(root: string): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

/** The core migration files, names and contents: a catalog template made from others is not used. */
function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of fs.readdirSync(coreMigrationsDir).sort()) {
    hash
      .update(`${file}\0`)
      .update(fs.readFileSync(path.join(coreMigrationsDir, file)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

export type TemplateKind = 'empty' | 'catalog';

export function embeddedTemplatePath(kind: TemplateKind): string {
  const root = projectRoot();
  const name = kind === 'empty' ? `pglite-empty-${pgliteVersion(root)}` : `pglite-catalog-${pgliteVersion(root)}-${migrationsHash()}`;
  return path.join(root, 'dist', name);
}

/** The template for a new data dir of this name, when it has been made. */
export function existingEmbeddedTemplate(dataDirName: string): string | undefined {
  const kinds: TemplateKind[] = dataDirName === 'catalog' ? ['catalog', 'empty'] : ['empty'];
  for (const kind of kinds) {
    const file = embeddedTemplatePath(kind);
    if (fs.existsSync(path.join(file, 'PG_VERSION'))) return file;
  }
  return undefined;
}

/** Makes a template data dir (from another one, when given) beside where it goes, then moves it there. */
async function makeTemplate(dir: string, from: string | undefined, fill: (db: PGliteDatabase) => Promise<unknown>): Promise<void> {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return;
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const db = await PGliteDatabase.open({ dataDir: tmp, template: from });
  await fill(db);
  await db.close();
  try {
    fs.renameSync(tmp, dir);
  } catch (e) {
    // Made by another process meanwhile.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) throw e;
  }
}

/** Makes the templates that do not exist yet; returns their paths. */
export async function prepareEmbeddedTemplates(): Promise<string[]> {
  const empty = embeddedTemplatePath('empty');
  await makeTemplate(empty, undefined, async () => undefined);
  const catalog = embeddedTemplatePath('catalog');
  await makeTemplate(catalog, empty, (db) => migrate(db));
  return [empty, catalog];
}
