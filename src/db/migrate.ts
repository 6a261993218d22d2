// Numbered SQL migrations (NNN_name.sql), applied once each in order, recorded in svc_migrations.
// Plugins pass their own folder and a prefix so their migrations are tracked separately.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

export const coreMigrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * The advisory lock held while migrations run: processes starting at once on one PostgreSQL
 * database (servers, a CLI command) apply them one after the other; the later ones find them done.
 */
const MIGRATION_LOCK = 7365_7630_01;

/** Applies the pending migrations of dir, all in one transaction (all or none); returns their names. */
export async function migrate(db: Database, dir = coreMigrationsDir, scope = 'core'): Promise<string[]> {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort();
  const applied = await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS svc_migrations (
      scope text NOT NULL, name text NOT NULL, applied_at timestamp NOT NULL DEFAULT (now() at time zone 'utc'),
      PRIMARY KEY (scope, name))`);
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM svc_migrations WHERE scope = $1', [scope])).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
      await tx.query('INSERT INTO svc_migrations (scope, name) VALUES ($1, $2)', [scope, file]);
      applied.push(file);
    }
    return applied;
  });
  // An embedded database stopped in the middle of a statement (pglite-worker.ts) replays its WAL
  // since the last checkpoint when it opens again: the migrations' WAL is not replayed each time.
  if (applied.length && db.kind === 'pglite') await db.exec('CHECKPOINT');
  return applied;
}

/** The migrations of dir not applied yet (readiness: a node on an older schema than its code is not ready). */
export async function pendingMigrations(db: Database, dir = coreMigrationsDir, scope = 'core'): Promise<string[]> {
  const files = fs.readdirSync(dir).filter((f) => /^\d+_.*\.sql$/.test(f));
  const exists = await db.query<{ t: string | null }>(`SELECT to_regclass('svc_migrations')::text AS t`);
  if (!exists.rows[0]?.t) return files.sort();
  const done = new Set(
    (await db.query<{ name: string }>('SELECT name FROM svc_migrations WHERE scope = $1', [scope])).rows.map((r) => r.name),
  );
  return files.filter((f) => !done.has(f)).sort();
}
