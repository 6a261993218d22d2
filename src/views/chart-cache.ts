// Chart points kept between renders. The aggregate of a large table takes a full scan (a second
// or more at a million rows) while its result is a few thousand points, so it is kept per table,
// keyed by the table's write marker (it changes with every committed write, in any process) and
// by the chart's configuration and the table's columns. A render reads the marker (one indexed
// row) and either finds the points or computes them; points of an older marker are dropped
// then. Requests for the same points while they are computed share the one computation.
//
// After a write, the points are computed again in one of three ways, the cheapest that holds:
// - from the chart's state (its points' sums and counts, every group's size: ChartState) and the
//   rows the writes since changed, reported by the writes of this process (datastore/row-changes.ts),
//   when every write since the state's marker is one of those (each names the marker it follows);
// - with the largest groups and x range of the last computation guessed (one scan of the table);
// - from nothing (two scans).
// Each way gives the points of the table as it is at the marker read (chart-query.ts).
import type { DatastoreBackend, DatastoreField } from '../datastore/backend.ts';
import { listenToRowChanges, type RowChanges } from '../datastore/row-changes.ts';
import type { ChartConfig } from './chart-config.ts';
import { applyChanges } from './chart-changes.ts';
import { type ChartData, type ChartShape, type ChartState, chartData, chartPoints } from './chart-query.ts';

/** Tables whose charts are kept (least recently used dropped first). */
const MAX_TABLES = 200;
/** Charts kept per table (views of one table with different configurations). */
const MAX_CHARTS_PER_TABLE = 20;
/** Writes followed from a chart's state to the table's marker at most. */
const MAX_WRITES_FOLLOWED = 64;
/** The reported rows kept at most (characters of JSON, all tables). */
const MAX_REPORTED_CHARS = 32 * 1024 * 1024;

interface TableEntry {
  marker: string;
  charts: Map<string, Promise<ChartData>>;
  /** The shape each chart had when last computed, whatever the marker then (a guess, never shown). */
  shapes: Map<string, ChartShape>;
  /** The state of each chart when last computed, at its own marker. */
  states: Map<string, ChartState>;
}

/** One cache per data store backend (an app and its databases). */
const caches = new WeakMap<DatastoreBackend, Map<string, TableEntry>>();

function tablesOf(backend: DatastoreBackend): Map<string, TableEntry> {
  let tables = caches.get(backend);
  if (!tables) caches.set(backend, (tables = new Map()));
  return tables;
}

/** Tables with a chart state (any backend): their writes report the rows they change. */
const watched = new Set<string>();
/** Rows changed by the writes of this process, by table and the marker each write made. */
const reported = new Map<string, RowChanges>();
let reportedChars = 0;
const linkKey = (table: string, marker: string) => `${table}\u0000${marker}`;

listenToRowChanges({
  wants: (table) => watched.has(table),
  changed: (c) => {
    const key = linkKey(c.table, c.marker);
    const had = reported.get(key);
    if (had) reportedChars -= had.rows.length;
    reported.delete(key);
    reported.set(key, c);
    reportedChars += c.rows.length;
    while (reportedChars > MAX_REPORTED_CHARS && reported.size) {
      const [k, v] = reported.entries().next().value!;
      reported.delete(k);
      reportedChars -= v.rows.length;
    }
  },
});

function watch(table: string): void {
  watched.delete(table);
  watched.add(table);
  if (watched.size > MAX_TABLES * 5) watched.delete(watched.values().next().value!);
}

/** The rows changed from one marker to another (oldest write first), when every write between was reported. */
function changesBetween(table: string, from: string, to: string): string[] | null {
  const rows: string[] = [];
  let at = to;
  for (let i = 0; i < MAX_WRITES_FOLLOWED && at !== from; i++) {
    const link = reported.get(linkKey(table, at));
    if (!link) return null;
    rows.push(link.rows);
    at = link.prev;
  }
  return at === from ? rows.reverse() : null;
}

/** The chart's points, from the cache while the table has not been written since they were computed. */
export async function cachedChartData(
  backend: DatastoreBackend,
  table: string,
  config: ChartConfig,
  fields: DatastoreField[],
): Promise<ChartData> {
  const marker = await backend.writeMarker(table);
  if (marker === null) return chartData(backend, table, config, fields);
  const tables = tablesOf(backend);
  let entry = tables.get(table);
  if (entry) tables.delete(table);
  if (!entry || entry.marker !== marker)
    entry = { marker, charts: new Map(), shapes: entry?.shapes ?? new Map(), states: entry?.states ?? new Map() };
  tables.set(table, entry);
  if (tables.size > MAX_TABLES) tables.delete(tables.keys().next().value!);
  const key = JSON.stringify([config, fields.map((f) => [f.id, f.type])]);
  const hit = entry.charts.get(key);
  if (hit) return hit;
  const { shapes, states } = entry;
  const compute = async () => {
    const state = states.get(key);
    const rows = state && changesBetween(table, state.marker, marker);
    const applied = rows ? await applyChanges(backend, table, config, fields, state!, rows, marker) : null;
    return applied ?? (await chartPoints(backend, table, config, fields, shapes.get(key)));
  };
  const computed = compute().then(({ data, shape, state }) => {
    keep(shapes, key, shape);
    if (state) {
      keep(states, key, state);
      watch(table);
    } else states.delete(key);
    return data;
  });
  const charts = entry.charts;
  charts.set(key, computed);
  if (charts.size > MAX_CHARTS_PER_TABLE) charts.delete(charts.keys().next().value!);
  // A failure is not kept: the next render tries again.
  computed.catch(() => {
    if (charts.get(key) === computed) charts.delete(key);
  });
  return computed;
}

/** Sets a chart's entry as the most recent one (the least recent dropped beyond the bound). */
function keep<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_CHARTS_PER_TABLE) map.delete(map.keys().next().value!);
}
