// A chart as SVG markup made on the server (no DOM, no script): axes with labels, grid lines,
// the series as lines, areas, bars or points, a legend, and a title and description for screen
// readers. The same points as a data table (tableOf) are the text alternative the page shows.
import type { ChartData } from './chart-query.ts';
import { bandScale, linearScale, type Scale, timeScale, timeValue } from './chart-scales.ts';

const WIDTH = 760;
const HEIGHT = 400;
/** Colours told apart by most colour-blind readers, dark enough against white. */
const PALETTE = ['#1f5fa8', '#c2410c', '#15803d', '#7e22ce', '#b91c1c', '#0e7490', '#a16207', '#be185d', '#4b5563', '#4d7c0f'];

export const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const AGG_WORD = { sum: 'sum', mean: 'mean', count: 'count', min: 'minimum', max: 'maximum' } as const;

/** The y axis title: "sum of amount", "count of rows". */
export function yTitle(data: ChartData): string {
  const { aggregate, y } = data.config;
  return `${AGG_WORD[aggregate]} of ${y.length ? y.join(', ') : 'rows'}`;
}

/** One sentence describing the chart for screen readers. */
export function describeChart(data: ChartData): string {
  const { chart, x, group_by } = data.config;
  const points = data.series.reduce((n, s) => n + s.points.length, 0);
  const parts = [
    `${chart[0].toUpperCase()}${chart.slice(1)} chart of the ${yTitle(data)} by ${x}${group_by ? `, grouped by ${group_by}` : ''}`,
  ];
  parts.push(`${points} point${points === 1 ? '' : 's'} in ${data.series.length} series (${data.series.map((s) => s.name).join(', ')})`);
  if (data.bucketed) parts.push(`${x} values are grouped in equal intervals`);
  if (data.truncated) parts.push('only the first values are shown');
  if (data.groupsLeftOut) parts.push(`${data.groupsLeftOut} smaller groups are left out`);
  return `${parts.join('; ')}.`;
}

/** The chart's points as a table: one row per x value, one column per series. */
export function tableOf(data: ChartData): { columns: string[]; rows: { x: string; values: string[] }[] } {
  const xs: (number | string)[] = [];
  const seen = new Set<number | string>();
  for (const s of data.series)
    for (const p of s.points)
      if (!seen.has(p.x)) {
        seen.add(p.x);
        xs.push(p.x);
      }
  if (data.xKind === 'number') xs.sort((a, b) => Number(a) - Number(b));
  else if (data.xKind === 'time') xs.sort((a, b) => timeValue(a) - timeValue(b));
  const bySeries = data.series.map((s) => new Map(s.points.map((p) => [p.x, p.y])));
  return {
    columns: [data.config.x, ...data.series.map((s) => s.name)],
    rows: xs.map((x) => ({
      x: String(x),
      values: bySeries.map((m) => {
        const v = m.get(x);
        return v === null || v === undefined ? '' : String(Number(v.toPrecision(12)));
      }),
    })),
  };
}

/** The chart as an <svg> element; `id` keeps the ids of several charts in one page apart. */
export function renderChartSvg(data: ChartData, title: string, id: string): string {
  const legendRows = data.series.length > 1 ? Math.ceil(data.series.length / 4) : 0;
  const m = { top: 16 + legendRows * 22, right: 24, bottom: 58, left: 72 };
  const [x0, x1, y0, y1] = [m.left, WIDTH - m.right, HEIGHT - m.bottom, m.top];
  const all = data.series.flatMap((s) => s.points);
  const ys = all.map((p) => p.y).filter((v): v is number => v !== null && Number.isFinite(v));
  const kind = data.config.chart;
  const zeroBased = kind === 'bar' || kind === 'area';
  const yLo = Math.min(...ys, ...(zeroBased ? [0] : []));
  const yHi = Math.max(...ys, ...(zeroBased ? [0] : []));
  const yScale = linearScale(ys.length ? yLo : 0, ys.length ? yHi : 1, y0, y1);
  let xScale: Scale;
  if (data.xKind === 'category') {
    xScale = bandScale(
      tableOf(data).rows.map((r) => r.x),
      x0,
      x1,
    );
  } else {
    const vs = all.map((p) => (data.xKind === 'time' ? timeValue(p.x) : Number(p.x))).filter(Number.isFinite);
    let [lo, hi] = [Math.min(...vs), Math.max(...vs)];
    if (kind === 'bar') {
      // Half a bar's room on either side, so that the first and last bars are whole.
      const pad = smallestGap(vs, hi - lo) / 2;
      [lo, hi] = [lo - pad, hi + pad];
    }
    xScale = data.xKind === 'time' ? timeScale(lo, hi, x0, x1) : linearScale(lo, hi, x0, x1);
  }
  const f = (n: number) => Number(n.toFixed(1));
  const out: string[] = [];
  const titleId = `${id}-title`;
  const descId = `${id}-desc`;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${titleId} ${descId}" preserveAspectRatio="xMidYMid meet">`,
    `<title id="${titleId}">${escapeXml(title)}</title>`,
    `<desc id="${descId}">${escapeXml(describeChart(data))}</desc>`,
    '<rect x="0" y="0" width="100%" height="100%" fill="#ffffff"/>',
  );
  // Grid and y axis.
  out.push('<g class="chart-axis chart-y" font-size="12" fill="#1f2937">');
  for (const t of yScale.ticks) {
    out.push(`<line x1="${x0}" x2="${x1}" y1="${f(t.pos)}" y2="${f(t.pos)}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${x0 - 8}" y="${f(t.pos + 4)}" text-anchor="end">${escapeXml(t.label)}</text>`);
  }
  out.push(
    `<text class="chart-axis-title" x="${-(y0 + y1) / 2}" y="16" transform="rotate(-90)" text-anchor="middle" font-weight="600">${escapeXml(yTitle(data))}</text>`,
    '</g>',
  );
  // x axis.
  out.push('<g class="chart-axis chart-x" font-size="12" fill="#1f2937">');
  out.push(`<line x1="${x0}" x2="${x1}" y1="${y0}" y2="${y0}" stroke="#6b7280"/>`);
  for (const t of xScale.ticks) {
    out.push(`<line x1="${f(t.pos)}" x2="${f(t.pos)}" y1="${y0}" y2="${y0 + 5}" stroke="#6b7280"/>`);
    // Labels at the ends stay inside the drawing.
    const anchor = t.pos > x1 - 40 ? 'end' : t.pos < x0 + 40 ? 'start' : 'middle';
    out.push(`<text x="${f(t.pos)}" y="${y0 + 20}" text-anchor="${anchor}">${escapeXml(t.label)}</text>`);
  }
  out.push(
    `<text class="chart-axis-title" x="${(x0 + x1) / 2}" y="${HEIGHT - 12}" text-anchor="middle" font-weight="600">${escapeXml(data.config.x)}</text>`,
    '</g>',
  );
  // Series.
  const base = yScale.at(yLo <= 0 && yHi >= 0 ? 0 : yLo);
  const step = barStep(data, xScale, x1 - x0);
  data.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    const pts = s.points.filter((p) => p.y !== null).map((p) => [xScale.at(p.x), yScale.at(p.y!)] as const);
    out.push(`<g class="chart-series" data-series="${escapeXml(s.name)}">`);
    if (kind === 'line' || kind === 'area') {
      const d = pts.map(([px, py], k) => `${k ? 'L' : 'M'}${f(px)} ${f(py)}`).join('');
      if (kind === 'area' && pts.length)
        out.push(
          `<path d="${d}L${f(pts[pts.length - 1][0])} ${f(base)}L${f(pts[0][0])} ${f(base)}Z" fill="${color}" fill-opacity="0.18" stroke="none"/>`,
        );
      if (pts.length) out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2" stroke-linejoin="round"/>`);
      if (pts.length <= 60) for (const [px, py] of pts) out.push(`<circle cx="${f(px)}" cy="${f(py)}" r="2.5" fill="${color}"/>`);
    } else if (kind === 'scatter') {
      for (const [px, py] of pts) out.push(`<circle cx="${f(px)}" cy="${f(py)}" r="3" fill="${color}" fill-opacity="0.75"/>`);
    } else {
      const n = data.series.length;
      const w = Math.max(1, (step * 0.8) / n);
      for (const [px, py] of pts) {
        const left = px - (step * 0.8) / 2 + i * w;
        out.push(`<rect x="${f(left)}" y="${f(Math.min(py, base))}" width="${f(w)}" height="${f(Math.abs(base - py))}" fill="${color}"/>`);
      }
    }
    out.push('</g>');
  });
  // Legend.
  if (legendRows) {
    out.push('<g class="chart-legend" font-size="12" fill="#1f2937">');
    data.series.forEach((s, i) => {
      const lx = x0 + (i % 4) * ((x1 - x0) / 4);
      const ly = 14 + Math.floor(i / 4) * 22;
      const name = s.name.length > 22 ? `${s.name.slice(0, 21)}…` : s.name;
      out.push(`<rect x="${f(lx)}" y="${ly - 10}" width="12" height="12" fill="${PALETTE[i % PALETTE.length]}"/>`);
      out.push(`<text x="${f(lx + 18)}" y="${ly}">${escapeXml(name)}</text>`);
    });
    out.push('</g>');
  }
  out.push('</svg>');
  return out.join('');
}

/** The smallest gap between distinct values (span / count when there is none). */
function smallestGap(values: number[], span: number): number {
  const xs = [...new Set(values)].sort((a, b) => a - b);
  let gap = span > 0 ? span / Math.max(1, xs.length) : 1;
  for (let i = 1; i < xs.length; i++) if (xs[i] - xs[i - 1] > 0) gap = Math.min(gap, xs[i] - xs[i - 1]);
  return gap;
}

/** The room one bar group has: its band, or the smallest gap between x positions. */
function barStep(data: ChartData, xScale: Scale, width: number): number {
  if (xScale.band) return xScale.band;
  const xs = data.series.flatMap((s) => s.points.map((p) => xScale.at(p.x)));
  return Math.max(1, Math.min(width / 2, smallestGap(xs, width)));
}

/** What a page shows of a chart: the SVG, its description and the data table alternative. */
export function chartFigure(data: ChartData, title: string, id: string) {
  return { svg: renderChartSvg(data, title, id), description: describeChart(data), table: tableOf(data), data };
}
