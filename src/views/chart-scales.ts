// Scales and ticks of the server-rendered charts: linear (nice steps), time (calendar steps) and
// band (categories). Each maps a value to a pixel position.

export interface Tick {
  pos: number;
  label: string;
}

export interface Scale {
  /** Pixel position of a value (numbers and time values as numbers: ms for time). */
  at(v: number | string): number;
  ticks: Tick[];
  /** Width of one category (band scales), else 0. */
  band: number;
}

/** A "nice" step (1, 2, 5 times a power of ten) for about `count` intervals over span. */
function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

/** A number as a short label: 1.5k, 2M, 0.25. */
export function formatNumber(v: number, step = 0): string {
  const a = Math.abs(v);
  const short = (n: number, suffix: string) => `${Number(n.toFixed(2))}${suffix}`;
  if (a >= 1e12) return short(v / 1e12, 'T');
  if (a >= 1e9) return short(v / 1e9, 'G');
  if (a >= 1e6) return short(v / 1e6, 'M');
  if (a >= 1e4) return short(v / 1e3, 'k');
  const decimals = step > 0 && step < 1 ? Math.min(6, Math.ceil(-Math.log10(step))) : a > 0 && a < 1 ? 3 : 0;
  return Number(v.toFixed(decimals)).toString();
}

/** A linear scale over [lo, hi] (widened to nice bounds) onto [p0, p1]. */
export function linearScale(lo: number, hi: number, p0: number, p1: number, tickCount = 6): Scale {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
  if (lo === hi) [lo, hi] = lo === 0 ? [0, 1] : [Math.min(0, lo), Math.max(0, hi)];
  const step = niceStep(hi - lo, tickCount);
  const a = Math.floor(lo / step) * step;
  const b = Math.ceil(hi / step) * step;
  const at = (v: number | string) => p0 + ((Number(v) - a) / (b - a)) * (p1 - p0);
  const ticks: Tick[] = [];
  for (let v = a, i = 0; v <= b + step / 2 && i < 50; v += step, i++) {
    const value = Math.abs(v) < step / 1e6 ? 0 : v;
    ticks.push({ pos: at(value), label: formatNumber(value, step) });
  }
  return { at, ticks, band: 0 };
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Calendar steps: [unit, count, approximate length]. */
const TIME_STEPS: ['ms' | 'month' | 'year', number, number][] = [
  ['ms', SECOND, SECOND],
  ['ms', 15 * SECOND, 15 * SECOND],
  ['ms', MINUTE, MINUTE],
  ['ms', 15 * MINUTE, 15 * MINUTE],
  ['ms', HOUR, HOUR],
  ['ms', 3 * HOUR, 3 * HOUR],
  ['ms', 6 * HOUR, 6 * HOUR],
  ['ms', 12 * HOUR, 12 * HOUR],
  ['ms', DAY, DAY],
  ['ms', 2 * DAY, 2 * DAY],
  ['ms', 7 * DAY, 7 * DAY],
  ['ms', 14 * DAY, 14 * DAY],
  ['month', 1, 30 * DAY],
  ['month', 3, 91 * DAY],
  ['month', 6, 182 * DAY],
  ['year', 1, 365 * DAY],
  ['year', 2, 730 * DAY],
  ['year', 5, 1826 * DAY],
  ['year', 10, 3652 * DAY],
  ['year', 25, 9131 * DAY],
  ['year', 50, 18262 * DAY],
  ['year', 100, 36525 * DAY],
];

/** Milliseconds of a time value as the data store gives it ('2020-01-02', '2020-01-02T03:04:05'; UTC). */
export function timeValue(v: number | string): number {
  if (typeof v === 'number') return v;
  return Date.parse(/T|\s/.test(v) ? `${v.replace(' ', 'T')}${/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? '' : 'Z'}` : `${v}T00:00:00Z`);
}

function timeLabel(ms: number, unit: 'ms' | 'month' | 'year', count: number): string {
  const iso = new Date(ms).toISOString();
  if (unit === 'year') return iso.slice(0, 4);
  if (unit === 'month') return iso.slice(0, 7);
  if (count >= DAY) return iso.slice(0, 10);
  if (count >= MINUTE) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
  return iso.slice(11, 19);
}

/** A time scale over [lo, hi] (ms) onto [p0, p1], ticks on calendar boundaries (UTC). */
export function timeScale(lo: number, hi: number, p0: number, p1: number, tickCount = 6): Scale {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, DAY];
  if (lo === hi) [lo, hi] = [lo - DAY / 2, hi + DAY / 2];
  const at = (v: number | string) => p0 + ((timeValue(v) - lo) / (hi - lo)) * (p1 - p0);
  const wanted = (hi - lo) / tickCount;
  const [unit, count] = TIME_STEPS.find(([, , len]) => len >= wanted) ?? TIME_STEPS[TIME_STEPS.length - 1];
  const ticks: Tick[] = [];
  const d = new Date(lo);
  let t: number;
  if (unit === 'ms') t = Math.ceil(lo / count) * count;
  else if (unit === 'month') {
    const m = Math.ceil((d.getUTCMonth() + (d.getUTCDate() > 1 || lo % DAY ? 1 : 0)) / count) * count;
    t = Date.UTC(d.getUTCFullYear(), m, 1);
  } else {
    const y = Math.ceil((d.getUTCFullYear() + (lo > Date.UTC(d.getUTCFullYear(), 0, 1) ? 1 : 0)) / count) * count;
    t = Date.UTC(y, 0, 1);
  }
  for (let i = 0; t <= hi && i < 40; i++) {
    ticks.push({ pos: at(t), label: timeLabel(t, unit, count) });
    const n = new Date(t);
    t =
      unit === 'ms'
        ? t + count
        : unit === 'month'
          ? Date.UTC(n.getUTCFullYear(), n.getUTCMonth() + count, 1)
          : Date.UTC(n.getUTCFullYear() + count, 0, 1);
  }
  return { at, ticks, band: 0 };
}

/** Categories side by side onto [p0, p1]; at() gives a category's middle; at most ~12 labels shown. */
export function bandScale(categories: string[], p0: number, p1: number): Scale {
  const index = new Map(categories.map((c, i) => [c, i]));
  const band = (p1 - p0) / Math.max(1, categories.length);
  const at = (v: number | string) => p0 + band * ((index.get(String(v)) ?? 0) + 0.5);
  const every = Math.max(1, Math.ceil(categories.length / 12));
  const ticks = categories.filter((_, i) => i % every === 0).map((c) => ({ pos: at(c), label: c.length > 14 ? `${c.slice(0, 13)}…` : c }));
  return { at, ticks, band };
}
