// A chart's points, aggregated by PostgreSQL through the data store's read path (the read-only
// role, a row limit): never more than MAX_POINTS come back, whatever the table's size. Numeric
// and date x values are put in at most that many equal-width intervals; a group-by keeps the
// MAX_GROUPS largest groups.
import type { DatastoreBackend, DatastoreField } from '../datastore/backend.ts';
import { COUNTS_TABLE } from '../datastore/catalog.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { type Aggregate, type AxisKind, axisKind, type ChartConfig } from './chart-config.ts';
import { timeValue } from './chart-scales.ts';

export const MAX_POINTS = 2000;
export const MAX_GROUPS = 10;

export interface ChartSeries {
  /** The y column, or the group's value (with the y column when several). */
  name: string;
  points: { x: number | string; y: number | null }[];
}

export interface ChartData {
  config: ChartConfig;
  xKind: AxisKind;
  series: ChartSeries[];
  /** x values were put in intervals (more distinct values than points allowed). */
  bucketed: boolean;
  /** Only the first MAX_POINTS categories are shown. */
  truncated: boolean;
  /** Groups left out (beyond the MAX_GROUPS largest). */
  groupsLeftOut: number;
}

const AGG_SQL: Record<Aggregate, (col: string) => string> = {
  sum: (c) => `sum(${c})::float8`,
  mean: (c) => `avg(${c})::float8`,
  min: (c) => `min(${c})::float8`,
  max: (c) => `max(${c})::float8`,
  count: (c) => `count(${c})::float8`,
};

export const col = (name: string) => `d.${qi(name)}`;
/** The label of a group whose value is null. */
export const NULL_GROUP = '(no value)';

/** How the x values are put in intervals, with the x range passed back as parameters. */
export function bucketOf(x: string, xType: string, xKind: AxisKind, lo: unknown, hi: unknown, n: number, params: unknown[]): string {
  const p = (v: unknown, cast: string) => {
    params.push(v);
    return `$${params.length}::${cast}`;
  };
  if (xKind === 'time' && xType === 'date') {
    // Whole days between the date and the first: integer arithmetic, nothing converted per row.
    const first = p(lo, 'date');
    return `(${x} - ${first})::int8 * ${n} / (${p(hi, 'date')} - ${first} + 1)`;
  }
  if (xKind === 'time') {
    const ms = Math.max(0, timeValue(String(hi)) - timeValue(String(lo)));
    const stride = (Math.floor(ms / n) + 1) / 1000;
    return `date_bin(make_interval(secs => ${p(stride, 'float8')}), ${x}, ${p(lo, xType)})`;
  }
  const [l, h] = [Number(lo), Number(hi)];
  return `width_bucket(${x}::float8, ${p(l, 'float8')}, ${p(h > l ? h : l + 1, 'float8')}, ${n})`;
}

/**
 * What one computation of a chart found: the largest groups (largest first) and the x range of
 * their rows. The next computation of the same chart (after a write) guesses that they are
 * unchanged, so it needs one scan of the table instead of two (see chartPoints).
 */
export interface ChartShape {
  groups: (string | null)[];
  range: { lo: unknown; hi: unknown } | null;
}

/**
 * What a chart's points were computed from, kept to apply the rows a write changed instead of
 * scanning the table again (applyChanges). Only for charts whose every value can be computed
 * again exactly from it: numeric or date x, integer y for sums and means (their exact sums are
 * kept), integer or float8 y for minimum and maximum; and only when every group was counted.
 */
export interface ChartState {
  /** The table's write marker when the points were computed (read in the same statement). */
  marker: string;
  /** Every group of rows with an x (one, named null, without a group-by), in the scan's order. */
  groups: { g: string | null; n: number; dbN: number; dbRank: number }[];
  /** The groups shown, largest first. */
  top: (string | null)[];
  range: { lo: unknown; hi: unknown };
  perSeries: number;
  /** Points by [group, interval]. */
  points: Map<string, PointState>;
}

interface PointState {
  g: string | null;
  /** The interval (as text). */
  b: string;
  /** Rows in it. */
  n: number;
  /** Its smallest x (where the point is drawn). */
  x: unknown;
  /** Per y column: the sum (sum, mean) or the extreme (min, max), as the database wrote it. */
  s: (string | null)[];
  /** Per y column: values that are not null. */
  k: number[];
  y: (number | null)[];
}

export const INT_TYPES = new Set(['int', 'int2', 'int4', 'int8']);
const STATE_X_TYPES = new Set(['int', 'int2', 'int4', 'float8', 'date', 'timestamp', 'timestamptz']);

/** Whether a chart's points can be kept as a ChartState (see there). */
function stateful(config: ChartConfig, fields: DatastoreField[]): boolean {
  const type = (c: string) => fields.find((f) => f.id === c)?.type ?? 'text';
  if (!STATE_X_TYPES.has(type(config.x))) return false;
  return config.y.every((c) => {
    const t = type(c);
    if (config.aggregate === 'count') return true;
    if (config.aggregate === 'min' || config.aggregate === 'max') return INT_TYPES.has(t) || t === 'float8';
    return INT_TYPES.has(t);
  });
}

/** The state aggregates of the y columns (per point), named s0, k0, ... */
function stateSelect(config: ChartConfig): string {
  return config.y
    .map((c, i) => {
      const v = col(c);
      if (config.aggregate === 'sum' || config.aggregate === 'mean') return `sum(${v})::text AS "s${i}", count(${v}) AS "k${i}"`;
      if (config.aggregate === 'count') return `NULL::text AS "s${i}", count(${v}) AS "k${i}"`;
      return `${config.aggregate}(${v})::text AS "s${i}", count(${v}) AS "k${i}"`;
    })
    .join(', ');
}

/** The y values from the state columns (as the aggregates of AGG_SQL give them). */
function finalSelect(config: ChartConfig, n: string): string {
  if (!config.y.length) return `${n}::float8 AS "y0"`;
  return config.y
    .map((_, i) => {
      const [sv, kv] = [`"s${i}"`, `"k${i}"`];
      if (config.aggregate === 'mean') return `CASE WHEN ${kv} = 0 THEN NULL ELSE (${sv}::numeric / ${kv})::float8 END AS "y${i}"`;
      if (config.aggregate === 'count') return `${kv}::float8 AS "y${i}"`;
      return `${sv}::float8 AS "y${i}"`;
    })
    .join(', ');
}

/** The state columns' names. */
const stateNames = (config: ChartConfig) => config.y.map((_, i) => `"s${i}", "k${i}"`).join(', ');

/** The table's write marker, in the statement that reads it (params: the table's name appended). */
function markerSql(table: string, params: unknown[]): string {
  params.push(table);
  return `(SELECT xmin::text FROM ${COUNTS_TABLE} WHERE id = $${params.length})`;
}

/**
 * Statements that put rows in intervals: the planner cannot know how few intervals there are (it
 * counts the distinct x values), so it expects a large aggregate and sorts it, spilling to disk,
 * and compiles it (JIT) for much longer than the aggregate takes. Hashed (in parallel), it is cheap.
 */
const BUCKET_SETTINGS = { enable_sort: 'off', jit: 'off' };

/**
 * The chart's points (config checked against the table before: checkChartConfig). Every statement
 * bounds its rows, so runs without a cursor: PostgreSQL may scan the table with parallel workers.
 */
export async function chartData(
  backend: DatastoreBackend,
  table: string,
  config: ChartConfig,
  fields: DatastoreField[],
): Promise<ChartData> {
  return (await chartPoints(backend, table, config, fields)).data;
}

/**
 * The chart's points and its shape. Numeric and date x take two scans: the largest groups and the
 * x range, then the intervals, which depend on them. Given the shape of an earlier computation
 * (`guess`), one scan computes the groups and the range and, with them guessed, the intervals;
 * when the groups or the range found differ from the guess, those points are thrown away and the
 * intervals computed again from what was found (two scans, as without a guess). Either way the
 * points are those of the table as it is now.
 */
export async function chartPoints(
  backend: DatastoreBackend,
  table: string,
  config: ChartConfig,
  fields: DatastoreField[],
  guess?: ChartShape,
): Promise<{ data: ChartData; shape: ChartShape; state: ChartState | null }> {
  const t = `${qi(table)} AS d`;
  const xType = fields.find((f) => f.id === config.x)?.type ?? 'text';
  const xKind = axisKind(xType);
  const x = col(config.x);
  const ys = config.y.length ? config.y.map((c) => AGG_SQL[config.aggregate](col(c))) : ['count(*)::float8'];
  const ySelect = ys.map((e, i) => `${e} AS "y${i}"`).join(', ');
  const g = config.group_by === undefined ? null : col(config.group_by);
  const params: unknown[] = [];
  let where = `${x} IS NOT NULL`;
  let groupsLeftOut = 0;
  let groups: (string | null)[] = [];
  // Numeric and date x: the x range is read with the groups (or alone), so the points take one more scan.
  const ranged = xKind !== 'category';
  // The points' sums and counts are read too, and the table's marker with them (ChartState).
  const keep = ranged && stateful(config, fields);
  const rangeSelect = ranged ? `, min(${x}) AS "lo", max(${x}) AS "hi"` : '';
  const order = (v: unknown) => (xKind === 'time' ? timeValue(String(v)) : Number(v));
  let range: { lo: unknown; hi: unknown } | null = null;
  const widen = (rows: Record<string, unknown>[]) => {
    for (const row of rows) {
      if (row.lo === null || row.lo === undefined) continue;
      if (!range) range = { lo: row.lo, hi: row.hi };
      else {
        if (order(row.lo) < order(range.lo)) range.lo = row.lo;
        if (order(row.hi) > order(range.hi)) range.hi = row.hi;
      }
    }
  };
  const groupLimit = MAX_GROUPS + 1000;
  const perSeriesOf = (n: number) => Math.max(1, Math.floor(MAX_POINTS / Math.max(1, n)));
  const pointLimitOf = (n: number) => (perSeriesOf(n) + 1) * Math.max(1, n);
  const states = keep ? stateSelect(config) : '';
  const stateCols = keep && config.y.length ? `, ${stateNames(config)}` : '';
  let guessed: Record<string, unknown>[] | null = null;
  // For the state: every group counted (grouped charts), and the marker each statement read.
  let counted: { g: string | null; n: number }[] | null = null;
  const markers: unknown[] = [];
  if (ranged && guess?.range && (g !== null || guess.groups.length === 0)) {
    // One scan: per group and guessed interval (rows of groups not guessed among the largest in
    // one interval each), then the groups' sizes and ranges from those, and the points.
    const p = [...params];
    const bucket = bucketOf(x, xType, xKind, guess.range.lo, guess.range.hi, perSeriesOf(guess.groups.length), p);
    const ysOrStates = keep ? (states ? `, ${states}` : '') : `, ${ySelect}`;
    let fine: string;
    if (g) {
      p.push(
        guess.groups.filter((v) => v !== null),
        guess.groups.includes(null),
      );
      const guessedGroup = `(${g}::text = ANY($${p.length - 1}::text[]) OR ($${p.length}::bool AND ${g} IS NULL))`;
      fine = `SELECT ${g}::text AS "g", CASE WHEN ${guessedGroup} THEN ${bucket} END AS "b", count(*) AS "n"${rangeSelect}${ysOrStates}
        FROM ${t} WHERE ${where} GROUP BY ${g}, 2`;
    } else {
      fine = `SELECT NULL::text AS "g", ${bucket} AS "b", count(*) AS "n"${rangeSelect}${ysOrStates} FROM ${t} WHERE ${where} GROUP BY 2`;
    }
    const noYs = ys.map((_, i) => `NULL::float8 AS "y${i}"`).join(', ');
    const yNames = keep ? finalSelect(config, '"n"') : ys.map((_, i) => `"y${i}"`).join(', ');
    const noStates = keep
      ? `, NULL::text AS "pb", NULL::int8 AS "pn"${config.y.map((_, i) => `, NULL::text AS "s${i}", NULL::int8 AS "k${i}"`).join('')}`
      : '';
    const pointStates = keep ? `, "b"::text, "n"${stateCols}` : '';
    const markerRow = keep ? `UNION ALL SELECT -1, ${markerSql(table, p)}, NULL, NULL, NULL, NULL, ${noYs}${noStates}` : '';
    const rowLimit = groupLimit + pointLimitOf(Math.min(MAX_GROUPS, Math.max(1, guess.groups.length))) + (keep ? 1 : 0);
    const sql = `WITH fine AS (${fine}),
      groups AS (SELECT "g", sum("n")::int8 AS "n", min("lo") AS "lo", max("hi") AS "hi" FROM fine GROUP BY "g" ORDER BY 2 DESC, 1 LIMIT ${groupLimit})
      SELECT 0 AS "k", "g", "n", NULL AS "o", "lo" AS "x", "hi", ${noYs}${noStates} FROM groups
      UNION ALL SELECT 1, "g", NULL, "lo", "lo", NULL, ${yNames}${pointStates} FROM fine WHERE "b" IS NOT NULL
      ${markerRow}
      ORDER BY 1, 3 DESC, 4, 2 LIMIT ${rowLimit + 1}`;
    const r = await backend.readQuery(sql, { params: p, rowLimit, bounded: true, settings: BUCKET_SETTINGS });
    const found = r.records.filter((row) => row.k === 0);
    const top = found.slice(0, g ? MAX_GROUPS : 1);
    widen(top.map((row) => ({ lo: row.x, hi: row.hi })));
    const foundRange = range as { lo: unknown; hi: unknown } | null;
    if (g) {
      groups = top.map((row) => (row.g === null ? null : String(row.g)));
      groupsLeftOut = Math.max(0, found.length - MAX_GROUPS);
    }
    if (keep && !r.truncated) {
      markers.push(r.records.find((row) => row.k === -1)?.g);
      if (g) counted = found.map((row) => ({ g: row.g === null ? null : String(row.g), n: Number(row.n) }));
    }
    const sameGroups = groups.length === guess.groups.length && groups.every((v) => guess.groups.includes(v));
    const sameRange = foundRange !== null && sameValue(foundRange.lo, guess.range.lo) && sameValue(foundRange.hi, guess.range.hi);
    if (sameGroups && sameRange && !r.truncated) guessed = r.records.filter((row) => row.k === 1);
  } else if (g) {
    // The largest groups (and their x range), one scan of the table.
    const p: unknown[] = [];
    const marker = keep ? `, ${markerSql(table, p)} AS "m"` : '';
    const r = await backend.readQuery(
      `SELECT ${g}::text AS "g", count(*)::int AS "n"${rangeSelect}${marker} FROM ${t} WHERE ${where} GROUP BY ${g} ORDER BY 2 DESC, 1 LIMIT ${groupLimit + 1}`,
      { params: p, rowLimit: groupLimit, bounded: true },
    );
    groups = r.records.slice(0, MAX_GROUPS).map((row) => (row.g === null ? null : String(row.g)));
    widen(r.records.slice(0, MAX_GROUPS));
    groupsLeftOut = Math.max(0, r.records.length - MAX_GROUPS);
    if (keep && !r.truncated) {
      markers.push(r.records[0]?.m);
      counted = r.records.map((row) => ({ g: row.g === null ? null : String(row.g), n: Number(row.n) }));
    }
  } else if (ranged) {
    const p: unknown[] = [];
    const marker = keep ? `, ${markerSql(table, p)} AS "m"` : '';
    const r = await backend.readQuery(`SELECT ${rangeSelect.slice(2)}${marker} FROM ${t} WHERE ${where}`, {
      params: p,
      rowLimit: 1,
      bounded: true,
    });
    widen(r.records);
    if (keep) markers.push(r.records[0]?.m);
  }
  if (g && groupsLeftOut) {
    params.push(
      groups.filter((v) => v !== null),
      groups.includes(null),
    );
    where += ` AND (${g}::text = ANY($1::text[]) OR ($2::bool AND ${g} IS NULL))`;
  }
  const gSelect = g ? `, ${g}::text AS "g"` : '';
  const perSeries = perSeriesOf(groups.length);
  let records: Record<string, unknown>[];
  let truncated: boolean;
  if (guessed) {
    records = guessed;
    truncated = false;
  } else {
    let sql: string;
    let rowLimit: number;
    let settings: Record<string, string> | undefined;
    if (!ranged) {
      rowLimit = MAX_POINTS;
      sql = `SELECT ${x}::text AS "x"${gSelect}, ${ySelect} FROM ${t} WHERE ${where} GROUP BY 1${g ? ', 2' : ''} ORDER BY 1${g ? ', 2' : ''}`;
    } else {
      // Equal-width intervals between the smallest and largest x; each point at its interval's smallest x.
      const { lo, hi } = range ?? { lo: 0, hi: 1 };
      const bucket = range ? bucketOf(x, xType, xKind, lo, hi, perSeries, params) : 'true';
      rowLimit = pointLimitOf(groups.length);
      settings = BUCKET_SETTINGS;
      if (keep && range) {
        const inner = `SELECT min(${x}) AS "x"${gSelect}, (${bucket})::text AS "pb", count(*) AS "pn"${states ? `, ${states}` : ''}
          FROM ${t} WHERE ${where} GROUP BY ${bucket}${g ? `, ${g}` : ''}`;
        sql = `SELECT "x"${g ? ', "g"' : ''}, ${finalSelect(config, '"pn"')}, "pb", "pn"${stateCols}, ${markerSql(table, params)} AS "m"
          FROM (${inner}) AS q ORDER BY 1${g ? ', 2' : ''}`;
      } else {
        sql = `SELECT min(${x}) AS "x"${gSelect}, ${ySelect} FROM ${t} WHERE ${where}
      GROUP BY ${bucket}${g ? `, ${g}` : ''} ORDER BY 1${g ? ', 2' : ''}`;
      }
    }
    sql += ` LIMIT ${rowLimit + 1}`;
    const r = await backend.readQuery(sql, { params, rowLimit, bounded: true, ...(settings ? { settings } : {}) });
    records = r.records;
    truncated = r.truncated;
    if (keep && records.length) markers.push(records[0].m);
  }
  const data = buildData(config, xKind, g !== null, groups, records, perSeries, truncated, groupsLeftOut);
  let state: ChartState | null = null;
  const marker = markers[0];
  if (
    keep &&
    range &&
    !truncated &&
    typeof marker === 'string' &&
    markers.every((m) => m === marker) &&
    (!g || (counted && counted.length < groupLimit))
  ) {
    const points = new Map<string, PointState>();
    for (const row of records) {
      const pg = g ? (row.g === null ? null : String(row.g)) : null;
      const b = String(row.pb);
      points.set(pointKey(pg, b), {
        g: pg,
        b,
        n: Number(row.pn),
        x: row.x,
        s: config.y.map((_, i) => (row[`s${i}`] === null ? null : String(row[`s${i}`]))),
        k: config.y.map((_, i) => Number(row[`k${i}`])),
        y: ys.map((_, i) => (row[`y${i}`] === null || row[`y${i}`] === undefined ? null : Number(row[`y${i}`]))),
      });
    }
    state = {
      marker,
      groups: (counted ?? []).map((c, i) => ({ ...c, dbN: c.n, dbRank: i })),
      top: groups,
      range,
      perSeries,
      points,
    };
  }
  return { data, shape: { groups, range }, state };
}

export const pointKey = (g: string | null, b: string) => JSON.stringify([g, b]);

/** The chart's series from its points (records: x, g, y0, ... in x order). */
export function buildData(
  config: ChartConfig,
  xKind: AxisKind,
  grouped: boolean,
  groups: (string | null)[],
  records: Record<string, unknown>[],
  perSeries: number,
  truncated: boolean,
  groupsLeftOut: number,
): ChartData {
  const names = config.y.length ? config.y : ['count'];
  const series = new Map<string, ChartSeries>();
  const seriesOf = (key: string) => {
    let s = series.get(key);
    if (!s) series.set(key, (s = { name: key, points: [] }));
    return s;
  };
  // Series in the order of the groups (largest first), then of the y columns.
  if (grouped) for (const v of groups) seriesOf(v ?? NULL_GROUP);
  let distinctX = 0;
  let lastX: unknown;
  for (const row of records) {
    const xv = xKind === 'number' ? Number(row.x) : String(row.x);
    if (xv !== lastX) distinctX++;
    lastX = xv;
    names.forEach((name, i) => {
      const key = grouped ? (row.g === null ? NULL_GROUP : String(row.g)) : name;
      const y = row[`y${i}`];
      seriesOf(key).points.push({ x: xv, y: y === null || y === undefined ? null : Number(y) });
    });
  }
  return {
    config,
    xKind,
    series: [...series.values()],
    bucketed: xKind !== 'category' && distinctX >= perSeries,
    truncated,
    groupsLeftOut,
  };
}

/** x values as the data store gives them (numbers, ISO strings) compared. */
export function sameValue(a: unknown, b: unknown): boolean {
  return typeof a === 'number' || typeof b === 'number' ? Number(a) === Number(b) : String(a) === String(b);
}
