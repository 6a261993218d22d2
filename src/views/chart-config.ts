// A chart view's configuration: which columns of a data store table it plots and how, checked
// against the table's columns, and the columns picked when a view names none.
import type { DatastoreField } from '../datastore/backend.ts';
import { ValidationError } from '../errors.ts';

export const AGGREGATES = ['sum', 'mean', 'count', 'min', 'max'] as const;
export const CHART_KINDS = ['line', 'bar', 'scatter', 'area'] as const;
export type Aggregate = (typeof AGGREGATES)[number];
export type ChartKind = (typeof CHART_KINDS)[number];

export interface ChartConfig {
  x: string;
  y: string[];
  group_by?: string;
  aggregate: Aggregate;
  chart: ChartKind;
}

/** How a column's values are placed on an axis. */
export type AxisKind = 'number' | 'time' | 'category';

const NUMBER_TYPES = new Set(['int', 'int2', 'int4', 'int8', 'float4', 'float8', 'float', 'numeric']);
const TIME_TYPES = new Set(['date', 'timestamp', 'timestamptz']);
/** Values that cannot be compared or grouped as they are. */
const UNGROUPABLE = (type: string) => type === 'json' || type.startsWith('_');

export function axisKind(type: string): AxisKind {
  if (NUMBER_TYPES.has(type)) return 'number';
  if (TIME_TYPES.has(type)) return 'time';
  return 'category';
}

const isNumber = (f: DatastoreField) => NUMBER_TYPES.has(f.type);

/**
 * The columns a chart of this table shows when the view names none: x the first date column, or
 * the first numeric one; y the first numeric column that is not x. Undefined when the table has
 * nothing worth plotting.
 */
export function pickColumns(fields: DatastoreField[]): { x: string; y: string[] } | undefined {
  const own = fields.filter((f) => f.id !== '_id');
  const x = own.find((f) => TIME_TYPES.has(f.type)) ?? own.find(isNumber);
  if (!x) return undefined;
  const y = own.find((f) => isNumber(f) && f.id !== x.id);
  if (!y) return undefined;
  return { x: x.id, y: [y.id] };
}

/**
 * The view's options checked against the table's fields (errors name the option); x and y are
 * picked when both are missing.
 */
export function checkChartConfig(
  options: { x?: string; y?: string[]; group_by?: string; aggregate: Aggregate; chart: ChartKind },
  fields: DatastoreField[],
): ChartConfig {
  const byId = new Map(fields.filter((f) => f.id !== '_id').map((f) => [f.id, f]));
  const known = [...byId.keys()].map((k) => JSON.stringify(k)).join(', ');
  const errors: Record<string, string[]> = {};
  let x = options.x;
  let y = options.y ?? [];
  if (!x && !y.length) {
    const picked = pickColumns(fields);
    if (!picked) throw new ValidationError({ x: ['The table has no date or numeric column to plot: name the x and y columns'] });
    ({ x, y } = picked);
  }
  if (!x) errors.x = ['Missing value'];
  else if (!byId.has(x)) errors.x = [`Column "${x}" is not in the table (its columns: ${known})`];
  else if (UNGROUPABLE(byId.get(x)!.type)) errors.x = [`Column "${x}" holds ${byId.get(x)!.type} values, which cannot be on an axis`];
  const yErrors: string[] = [];
  if (!y.length && options.aggregate !== 'count') yErrors.push('Missing value (only a count needs no y column)');
  if (new Set(y).size !== y.length) yErrors.push('A column is named twice');
  for (const c of y) {
    const f = byId.get(c);
    if (!f) yErrors.push(`Column "${c}" is not in the table (its columns: ${known})`);
    else if (!isNumber(f) && options.aggregate !== 'count')
      yErrors.push(`Column "${c}" is not numeric (${f.type}): only a count can be taken of it`);
  }
  if (y.length > 8) yErrors.push('At most 8 columns');
  if (yErrors.length) errors.y = yErrors;
  const g = options.group_by;
  if (g !== undefined) {
    if (!byId.has(g)) errors.group_by = [`Column "${g}" is not in the table (its columns: ${known})`];
    else if (UNGROUPABLE(byId.get(g)!.type)) errors.group_by = [`Column "${g}" holds ${byId.get(g)!.type} values, which cannot be grouped`];
    else if (y.length > 1) errors.group_by = ['A grouped chart shows one y column'];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { x: x!, y, ...(g !== undefined ? { group_by: g } : {}), aggregate: options.aggregate, chart: options.chart };
}
