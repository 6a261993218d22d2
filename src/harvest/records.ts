// Small pieces the document readers share: a field of a parsed dataset dict wherever the parser
// put it, and JSON whose text depends only on the value (so a record's hash says if it changed).

/** A dataset dict's field: top-level, else the extra of that key. */
export function fieldOf(dataset: Record<string, unknown>, key: string): unknown {
  if (dataset[key] !== undefined && dataset[key] !== null && dataset[key] !== '') return dataset[key];
  if (!Array.isArray(dataset.extras)) return undefined;
  const extra = (dataset.extras as { key?: unknown; value?: unknown }[]).find((e) => e && e.key === key);
  return extra?.value;
}

/** A field as text, when it is text that says something. */
export function textOf(dataset: Record<string, unknown>, key: string): string | undefined {
  const v = fieldOf(dataset, key);
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

/** JSON with object keys in sorted order at every depth. */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
  return out;
}

/** An ISO 8601 time or date as the source wrote it, or null when it is not one. */
export function isoTime(value: unknown): string | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const v = value.trim();
  return /^\d{4}-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$/.test(v) ? v : null;
}

// A catalog that cannot be asked for its ids is read whole by read(); the run then asks listGuids
// for the same ids. What a completed read saw is kept for the next listGuids of the same run (the
// same signal and source) so the catalog is not read twice; a read cut short keeps nothing.
const readGuids = new WeakMap<AbortSignal, Map<string, Set<string>>>();
const sourceKey = (source: { url: string; config: unknown }) => `${source.url}\n${JSON.stringify(source.config)}`;

export function rememberGuids(signal: AbortSignal, source: { url: string; config: unknown }, guids: Set<string>): void {
  let bySource = readGuids.get(signal);
  if (!bySource) readGuids.set(signal, (bySource = new Map()));
  bySource.set(sourceKey(source), guids);
}

/** The ids the last completed read of this run saw (once), or undefined. */
export function recallGuids(signal: AbortSignal, source: { url: string; config: unknown }): Set<string> | undefined {
  const bySource = readGuids.get(signal);
  const key = sourceKey(source);
  const guids = bySource?.get(key);
  bySource?.delete(key);
  return guids;
}
