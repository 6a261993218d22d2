// The loader's record of a resource's loads: a task status (entity resource, task_type and key
// "xloader", as CKAN's xloader) whose value holds the job id, what was loaded and the log lines.
import type { Queryable } from '../../db/database.ts';
import { findTaskStatus, saveTaskStatus, type TaskStatusRow } from '../../model/task-status.ts';

export const TASK_TYPE = 'xloader';
export const LOAD_JOB_TYPE = 'xloader';

export type LoadState = 'pending' | 'running' | 'complete' | 'error';

export interface LogLine {
  timestamp: string;
  message: string;
  level: 'INFO' | 'WARNING' | 'ERROR';
}

export interface LoadTaskValue {
  job_id: string | null;
  /** What triggered the load (URL/upload signature): an unchanged resource is not loaded again. */
  source?: string;
  /** SHA-256 of the file last loaded (hex). */
  hash?: string;
  requested_timestamp?: string;
  finished_timestamp?: string | null;
  progress?: { rows: number; bytes: number };
  logs: LogLine[];
}

export const nowIso = () => new Date().toISOString().replace('Z', '');

export function parseValue(row: TaskStatusRow | null): LoadTaskValue {
  try {
    const v = row?.value ? JSON.parse(row.value) : null;
    if (v && typeof v === 'object') return { logs: [], job_id: null, ...v };
  } catch {
    /* a value written by someone else */
  }
  return { job_id: null, logs: [] };
}

export async function loadTask(db: Queryable, resourceId: string): Promise<TaskStatusRow | null> {
  return findTaskStatus(db, { entity_id: resourceId, task_type: TASK_TYPE, key: TASK_TYPE });
}

export async function saveLoadTask(
  db: Queryable,
  resourceId: string,
  state: LoadState,
  value: LoadTaskValue,
  error: string | null = null,
): Promise<TaskStatusRow> {
  const row = await saveTaskStatus(db, {
    entity_id: resourceId,
    entity_type: 'resource',
    task_type: TASK_TYPE,
    key: TASK_TYPE,
    value: JSON.stringify(value),
    state,
    error,
  });
  return row!;
}

/** xloader_status's answer (CKAN's shape). */
export function statusDict(row: TaskStatusRow) {
  const v = parseValue(row);
  return {
    status: row.state,
    job_id: v.job_id,
    job_url: null,
    last_updated: row.last_updated,
    task_info: {
      job_id: v.job_id,
      job_type: LOAD_JOB_TYPE,
      status: row.state,
      data: { resource_id: row.entity_id },
      error: row.error ? { message: row.error } : null,
      requested_timestamp: v.requested_timestamp ?? null,
      finished_timestamp: v.finished_timestamp ?? null,
      sent_data: null,
      result_url: null,
      api_key: null,
      metadata: { resource_id: row.entity_id, progress: v.progress ?? null },
      logs: v.logs.map((l) => ({ ...l, module: 'loader', funcName: null, lineno: null })),
    },
    error: row.error ? { message: row.error } : null,
  };
}
