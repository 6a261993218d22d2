// Site settings kept in the database: runtime-edited options and generated secrets.
import type { Queryable } from '../db/database.ts';

export async function getSystemInfo(db: Queryable, key: string): Promise<string | undefined> {
  return (await db.query<{ value: string }>('SELECT value FROM system_info WHERE key = $1', [key])).rows[0]?.value;
}

export async function allSystemInfo(db: Queryable, prefix: string): Promise<Record<string, string>> {
  const r = await db.query<{ key: string; value: string }>('SELECT key, value FROM system_info WHERE starts_with(key, $1)', [prefix]);
  return Object.fromEntries(r.rows.map((x) => [x.key, x.value]));
}

export async function setSystemInfo(db: Queryable, key: string, value: string): Promise<void> {
  await db.query(
    `INSERT INTO system_info (key, value) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now() at time zone 'utc'`,
    [key, value],
  );
}
