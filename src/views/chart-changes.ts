// A kept chart brought up to date from the rows the writes since changed (datastore/row-changes.ts),
// without reading the table, when the kept state tells (chart-cache.ts decides, chart-query.ts
// computes the points from the table otherwise).
import type { DatastoreBackend, DatastoreField } from '../datastore/backend.ts';
import { quoteIdent as qi } from '../db/sql.ts';
import { axisKind, type ChartConfig } from './chart-config.ts';
import { timeValue } from './chart-scales.ts';
import {
  bucketOf,
  buildData,
  type ChartData,
  type ChartShape,
  type ChartState,
  col,
  INT_TYPES,
  MAX_GROUPS,
  pointKey,
} from './chart-query.ts';

/**
 * The chart after the rows of some writes changed (rows: their JSON arrays, datastore/row-changes.ts RowChanges, in
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
