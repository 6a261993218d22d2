// Task status records (CKAN's task_status table): one per (entity_id, task_type, key).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import type { PackageRow } from './packages.ts';

export interface TaskStatusRow {
  id: string;
  entity_id: string;
  entity_type: string;
  task_type: string;
  key: string;
  value: string | null;
  state: string | null;
  error: string | null;
  last_updated: string;
}

const COLUMNS = 'id, entity_id, entity_type, task_type, key, value, state, error, last_updated';

export interface TaskStatusWrite {
  id?: string;
  entity_id: string;
  entity_type: string;
  task_type: string;
  key: string;
  value?: string | null;
  state?: string | null;
  error?: string | null;
  last_updated?: string | null;
}

/**
 * Writes a task status: by id when given (that record, which must exist), else the record of
 * (entity_id, task_type, key), created when missing. Returns null when an id names no record.
 */
export async function saveTaskStatus(db: Queryable, t: TaskStatusWrite): Promise<TaskStatusRow | null> {
  const params = [
    t.entity_id,
    t.entity_type,
    t.task_type,
    t.key,
    t.value ?? null,
    t.state ?? null,
    t.error ?? null,
    t.last_updated ?? null,
  ];
  const stamp = `COALESCE($8::timestamp, now() at time zone 'utc')`;
  if (t.id) {
    const r = await db.query<TaskStatusRow>(
      `UPDATE task_status SET entity_id = $1, entity_type = $2, task_type = $3, key = $4, value = $5, state = $6, error = $7,
         last_updated = ${stamp} WHERE id = $9 RETURNING ${COLUMNS}`,
      [...params, t.id],
    );
    return r.rows[0] ?? null;
  }
  const r = await db.query<TaskStatusRow>(
    `INSERT INTO task_status (id, entity_id, entity_type, task_type, key, value, state, error, last_updated)
     VALUES ($9, $1, $2, $3, $4, $5, $6, $7, ${stamp})
     ON CONFLICT (entity_id, task_type, key) DO UPDATE SET entity_type = EXCLUDED.entity_type, value = EXCLUDED.value,
       state = EXCLUDED.state, error = EXCLUDED.error, last_updated = EXCLUDED.last_updated
     RETURNING ${COLUMNS}`,
    [...params, randomUUID()],
  );
  return r.rows[0];
}

export async function findTaskStatus(
  db: Queryable,
  by: { id: string } | { entity_id: string; task_type: string; key: string },
): Promise<TaskStatusRow | null> {
  const r =
    'id' in by
      ? await db.query<TaskStatusRow>(`SELECT ${COLUMNS} FROM task_status WHERE id = $1`, [by.id])
      : await db.query<TaskStatusRow>(`SELECT ${COLUMNS} FROM task_status WHERE entity_id = $1 AND task_type = $2 AND key = $3`, [
          by.entity_id,
          by.task_type,
          by.key,
        ]);
  return r.rows[0] ?? null;
}

export async function deleteTaskStatus(db: Queryable, id: string): Promise<boolean> {
  return (await db.query('DELETE FROM task_status WHERE id = $1', [id])).rowCount > 0;
}

/** The dataset a task status is about: the dataset itself, or the dataset of the resource (any state). */
export async function datasetOfEntity(db: Queryable, entityId: string): Promise<PackageRow | undefined> {
  const r = await db.query<PackageRow>(
    'SELECT p.* FROM packages p WHERE p.id = $1 OR p.id = (SELECT package_id FROM resources WHERE id = $1) LIMIT 1',
    [entityId],
  );
  return r.rows[0];
}
