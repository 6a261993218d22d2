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

const col = (name: string) => `d.${qi(name)}`;
/** The label of a group whose value is null. */
export const NULL_GROUP = '(no value)';

/** How the x values are put in intervals, with the x range passed back as parameters. */
function bucketOf(x: string, xType: string, xKind: AxisKind, lo: unknown, hi: unknown, n: number, params: unknown[]): string {
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

const INT_TYPES = new Set(['int', 'int2', 'int4', 'int8']);
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

const pointKey = (g: string | null, b: string) => JSON.stringify([g, b]);

/** The chart's series from its points (records: x, g, y0, ... in x order). */
function buildData(
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
function sameValue(a: unknown, b: unknown): boolean {
  return typeof a === 'number' || typeof b === 'number' ? Number(a) === Number(b) : String(a) === String(b);
}

/**
 * The chart after the rows of some writes changed (rows: their JSON arrays, write.ts RowChanges, in
 * commit order), from its state, without reading the table; null when the state does not tell
 * (a row moved the x range or the largest groups, or removed a point's smallest x or its extreme
 * y): the points are then computed from the table. The new state is kept at `marker`.
 */
export async function applyChanges(
  backend: DatastoreBackend,
  table: string,
  config: ChartConfig,
  fields: DatastoreField[],
  state: ChartState,
  rows: string[],
  marker: string,
): Promise<{ data: ChartData; shape: ChartShape; state: ChartState } | null> {
  const xType = fields.find((f) => f.id === config.x)?.type ?? 'text';
  const xKind = axisKind(xType);
  const x = col(config.x);
  const g = config.group_by === undefined ? null : col(config.group_by);
  const params: unknown[] = [
    `[${rows
      .map((r) => r.slice(1, -1))
      .filter((r) => r)
      .join(',')}]`,
  ];
  const bucket = bucketOf(x, xType, xKind, state.range.lo, state.range.hi, state.perSeries, params);
  params.push(state.range.lo, state.range.hi);
  const [lo, hi] = [`$${params.length - 1}::${xType}`, `$${params.length}::${xType}`];
  const values = config.y.map((c, i) => `, ${col(c)}::text AS "v${i}"`).join('');
  // Each changed row (old ones out, new ones in) with its group, interval and place in the range.
  const sql = `SELECT (e.v->>'s')::int AS "s", ${g ? `${g}::text` : 'NULL::text'} AS "g", (${bucket})::text AS "b", ${x} AS "x",
      (${x} < ${lo} OR ${x} > ${hi}) AS "out", (${x} = ${lo} OR ${x} = ${hi}) AS "edge"${values}
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(v, o), jsonb_populate_record(NULL::${qi(table)}, e.v->'r') AS d
    WHERE ${x} IS NOT NULL ORDER BY e.o`;
  const read = await backend.readQuery(sql, { params, rowLimit: MAX_CHANGES, bounded: true });
  if (read.truncated) return null;
  const changed = read.records;
  const order = (v: unknown) => (xKind === 'time' ? timeValue(String(v)) : Number(v));
  const isInt = (c: string) => INT_TYPES.has(fields.find((f) => f.id === c)?.type ?? '');
  const cmp = (c: string, a: string, b: string) => {
    if (isInt(c)) {
      const [p, q] = [BigInt(a), BigInt(b)];
      return p < q ? -1 : p > q ? 1 : 0;
    }
    return Math.sign(Number(a) - Number(b));
  };
  // Intervals of at most one day (dates) or one whole number: the rows of a point share its x.
  const width = (order(state.range.hi) - order(state.range.lo)) / (xType === 'date' ? 86_400_000 : 1);
  const singleX = xType === 'date' ? width + 1 <= state.perSeries : INT_TYPES.has(xType) && Math.max(width, 1) <= state.perSeries;
  const top = new Set(state.top);
  const counts = new Map(state.groups.map((c) => [c.g, { ...c }]));
  const points = new Map([...state.points].map(([k, p]) => [k, { ...p, s: [...p.s], k: [...p.k], y: [...p.y] }]));
  const touched = new Set<string>();
  for (const row of changed) {
    const s = Number(row.s);
    const rg = row.g === null ? null : String(row.g);
    if (g) {
      let c = counts.get(rg);
      if (!c) counts.set(rg, (c = { g: rg, n: 0, dbN: -1, dbRank: Number.POSITIVE_INFINITY }));
      c.n += s;
      if (c.n < 0) return null;
      if (!top.has(rg)) continue;
    }
    // A row in or out of the shown groups: within the range, not at its ends when removed.
    if (s > 0 ? row.out : row.edge || row.out) return null;
    const key = pointKey(rg, String(row.b));
    let p = points.get(key);
    if (!p) {
      if (s < 0) return null;
      points.set(key, (p = { g: rg, b: String(row.b), n: 0, x: row.x, s: config.y.map(() => null), k: config.y.map(() => 0), y: [] }));
    }
    touched.add(key);
    p.n += s;
    if (s > 0 && order(row.x) < order(p.x)) p.x = row.x;
    else if (s < 0 && p.n > 0 && !singleX && order(row.x) <= order(p.x)) return null;
    for (let i = 0; i < config.y.length; i++) {
      const v = row[`v${i}`];
      if (v === null || v === undefined) continue;
      const text = String(v);
      p.k[i] += s;
      const cur = p.s[i];
      if (config.aggregate === 'sum' || config.aggregate === 'mean') {
        p.s[i] = p.k[i] === 0 ? null : String(BigInt(cur ?? '0') + BigInt(s) * BigInt(text));
      } else if (config.aggregate === 'min' || config.aggregate === 'max') {
        const better = (a: string, b: string) => (config.aggregate === 'min' ? cmp(config.y[i], a, b) < 0 : cmp(config.y[i], a, b) > 0);
        if (s > 0) {
          if (cur === null || better(text, cur)) p.s[i] = text;
        } else if (p.k[i] === 0) p.s[i] = null;
        else if (cur === null || !better(cur, text)) return null;
      }
    }
  }
  // The largest groups again: the same ones, in an order the database would give (ties only
  // between groups that had those sizes when it ordered them).
  let groups = state.top;
  let list = state.groups;
  let groupsLeftOut = 0;
  if (g) {
    list = [...counts.values()].filter((c) => c.n > 0).sort((a, b) => b.n - a.n || a.dbRank - b.dbRank);
    if (list.length >= MAX_GROUPS + 1000) return null;
    for (let i = 0; i < Math.min(MAX_GROUPS, list.length - 1); i++) {
      const [a, b] = [list[i], list[i + 1]];
      if (a.n === b.n && !(a.n === a.dbN && b.n === b.dbN)) return null;
    }
    groups = list.slice(0, MAX_GROUPS).map((c) => c.g);
    if (groups.length !== state.top.length || groups.some((v) => !top.has(v))) return null;
    groupsLeftOut = Math.max(0, list.length - MAX_GROUPS);
  }
  for (const key of touched) if (points.get(key)!.n === 0) points.delete(key);
  // The changed points' values: means divided by the database, as avg does.
  const changedPoints = [...touched].filter((k) => points.has(k)).map((k) => points.get(k)!);
  const means: string[] = [];
  const meanCounts: number[] = [];
  for (const p of changedPoints) {
    if (!config.y.length) p.y = [p.n];
    else
      p.y = config.y.map((_, i) => {
        if (config.aggregate === 'count') return p.k[i];
        if (p.s[i] === null) return null;
        if (config.aggregate === 'mean') {
          means.push(p.s[i]!);
          meanCounts.push(p.k[i]);
          return null;
        }
        return Number(p.s[i]);
      });
  }
  if (means.length) {
    const r = await backend.readQuery(
      `SELECT ("s"::numeric / "k")::float8 AS "y" FROM unnest($1::text[], $2::int8[]) WITH ORDINALITY AS u("s", "k", "i") ORDER BY "i"`,
      { params: [means, meanCounts], rowLimit: means.length, bounded: true },
    );
    let j = 0;
    for (const p of changedPoints)
      config.y.forEach((_, i) => {
        if (p.s[i] !== null) p.y[i] = Number(r.records[j++].y);
      });
  }
  const sorted = [...points.values()].sort((a, b) => order(a.x) - order(b.x));
  const records = sorted.map((p) => ({ x: p.x, g: p.g, ...Object.fromEntries(p.y.map((y, i) => [`y${i}`, y])) }));
  const data = buildData(config, xKind, g !== null, groups, records, state.perSeries, false, groupsLeftOut);
  const next: ChartState = { ...state, marker, groups: list, top: groups, points };
  return { data, shape: { groups, range: state.range }, state: next };
}

/** Changed rows read back at most (write.ts reports fewer per write; a few writes in a row). */
const MAX_CHANGES = 20_000;
