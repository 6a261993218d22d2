// Lists of datasets for operators' commands (the CLI), whatever their visibility.
import type { Queryable } from '../db/database.ts';

/** Ids and names of every active dataset, public or private, by name. */
export async function activePackages(db: Queryable): Promise<{ id: string; name: string }[]> {
  const r = await db.query<{ id: string; name: string }>("SELECT id, name FROM packages WHERE state = 'active' ORDER BY name");
  return r.rows;
}
