// Chart points kept between renders. The aggregate of a large table takes a full scan (a second
// or more at a million rows) while its result is a few thousand points, so it is kept per table,
// keyed by the table's write marker (it changes with every committed write, in any process) and
// by the chart's configuration and the table's columns. A render reads the marker (one indexed
// row) and either finds the points or computes them; points of an older marker are dropped
// then. Requests for the same points while they are computed share the one computation. What
// the last computation of a chart found (its largest groups and x range) outlives the marker: the
// next computation guesses them unchanged, which saves it a scan when they are (chartPoints).
import type { DatastoreBackend, DatastoreField } from '../datastore/backend.ts';
import type { ChartConfig } from './chart-config.ts';
import { type ChartData, type ChartShape, chartData, chartPoints } from './chart-query.ts';

/** Tables whose charts are kept (least recently used dropped first). */
const MAX_TABLES = 200;
/** Charts kept per table (views of one table with different configurations). */
const MAX_CHARTS_PER_TABLE = 20;

interface TableEntry {
  marker: string;
  charts: Map<string, Promise<ChartData>>;
  /** The shape each chart had when last computed, whatever the marker then (a guess, never shown). */
  shapes: Map<string, ChartShape>;
}

/** One cache per data store backend (an app and its databases). */
const caches = new WeakMap<DatastoreBackend, Map<string, TableEntry>>();

function tablesOf(backend: DatastoreBackend): Map<string, TableEntry> {
  let tables = caches.get(backend);
  if (!tables) caches.set(backend, (tables = new Map()));
  return tables;
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
  if (!entry || entry.marker !== marker) entry = { marker, charts: new Map(), shapes: entry?.shapes ?? new Map() };
  tables.set(table, entry);
  if (tables.size > MAX_TABLES) tables.delete(tables.keys().next().value!);
  const key = JSON.stringify([config, fields.map((f) => [f.id, f.type])]);
  const hit = entry.charts.get(key);
  if (hit) return hit;
  const shapes = entry.shapes;
  const computed = chartPoints(backend, table, config, fields, shapes.get(key)).then(({ data, shape }) => {
    shapes.delete(key);
    shapes.set(key, shape);
    if (shapes.size > MAX_CHARTS_PER_TABLE) shapes.delete(shapes.keys().next().value!);
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
