// Datasets' spatial extents (migration 019): the bounding box of the `spatial` geometry of each
// dataset that has one, kept with the dataset's writes.
import type { Queryable } from '../db/database.ts';
import type { Bbox } from '../search/spatial-geojson.ts';

/** A box as PostgreSQL's box input reads it. */
export const boxText = (b: Bbox): string => `(${b.maxx},${b.maxy}),(${b.minx},${b.miny})`;

/**
 * The dataset's `spatial` value: a custom field of its schema (scheming) or else its extra of that
 * name; null when it has neither or it is blank.
 */
export async function spatialValueOf(db: Queryable, packageId: string): Promise<unknown> {
  const r = await db.query<{ custom: unknown; extra: string | null }>(
    `SELECT p.custom_fields -> 'spatial' AS custom,
       (SELECT e.value FROM package_extras e WHERE e.package_id = p.id AND e.key = 'spatial') AS extra
     FROM packages p WHERE p.id = $1`,
    [packageId],
  );
  const row = r.rows[0];
  if (!row) return null;
  const value = row.custom ?? row.extra;
  return typeof value === 'string' && !value.trim() ? null : (value ?? null);
}

/** Stores the dataset's extent (null: it has none). */
export async function setSpatialExtent(db: Queryable, packageId: string, extent: Bbox | null): Promise<void> {
  if (!extent) {
    await db.query('DELETE FROM package_spatial_extents WHERE package_id = $1', [packageId]);
    return;
  }
  await db.query(
    `INSERT INTO package_spatial_extents (package_id, extent) VALUES ($1, $2::box)
     ON CONFLICT (package_id) DO UPDATE SET extent = EXCLUDED.extent`,
    [packageId, boxText(extent)],
  );
}
