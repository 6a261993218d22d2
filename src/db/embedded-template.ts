// Embedded (PGlite) databases made once at install time (npm's prepare runs `bin/build.js
// --template`) and copied into each new data dir: PGlite's initdb costs several seconds on a small
// machine for each of the two data dirs (catalog, data store), and the core migrations as much
// again; loading a copy costs a fraction of a second. Two templates: an empty database (the data
// store), and one with the core migrations applied (the catalog; used only while the migration
// files are those it was made from). Without them a new data dir is made by initdb as before.
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
  return path.join(root, 'dist', `${name}.tar.gz`);
}

/** The template for a new data dir of this name, when it has been made. */
export function existingEmbeddedTemplate(dataDirName: string): string | undefined {
  const kinds: TemplateKind[] = dataDirName === 'catalog' ? ['catalog', 'empty'] : ['empty'];
  for (const kind of kinds) {
    const file = embeddedTemplatePath(kind);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

async function writeDump(db: PGliteDatabase, file: string): Promise<void> {
  const dump = await db.raw.dumpDataDir('gzip');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  fs.renameSync(tmp, file);
}

/** Makes the templates that do not exist yet; returns their paths. */
export async function prepareEmbeddedTemplates(): Promise<string[]> {
  const empty = embeddedTemplatePath('empty');
  if (!fs.existsSync(empty)) {
    const db = await PGliteDatabase.open({});
    await writeDump(db, empty);
    await db.close();
  }
  const catalog = embeddedTemplatePath('catalog');
  if (!fs.existsSync(catalog)) {
    const db = await PGliteDatabase.open({ loadDataDir: new Blob([fs.readFileSync(empty)]) });
    await migrate(db);
    await writeDump(db, catalog);
    await db.close();
  }
  return [empty, catalog];
}
