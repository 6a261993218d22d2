// Solr date values in queries: ISO 8601 (2020-01-02, 2020-01-02T03:04:05Z, fractions allowed) and
// date math on NOW or a date (NOW-1YEAR, NOW/DAY, 2020-01-01T00:00:00Z+6MONTHS). Returned as
// 'YYYY-MM-DD HH:MM:SS.fff' in UTC, the form of the index's timestamp columns.
import { SearchQueryError } from '../errors.ts';

const UNITS = ['YEAR', 'MONTH', 'DAY', 'DATE', 'HOUR', 'MINUTE', 'SECOND', 'MILLI', 'MILLISECOND'] as const;
type Unit = (typeof UNITS)[number];

function unitOf(u: string): Unit | undefined {
  const up = u.toUpperCase().replace(/S$/, '');
  return (UNITS as readonly string[]).includes(up) ? (up as Unit) : undefined;
}

function add(d: Date, n: number, unit: Unit): void {
  switch (unit) {
    case 'YEAR':
      d.setUTCFullYear(d.getUTCFullYear() + n);
      break;
    case 'MONTH':
      d.setUTCMonth(d.getUTCMonth() + n);
      break;
    case 'DAY':
    case 'DATE':
      d.setUTCDate(d.getUTCDate() + n);
      break;
    case 'HOUR':
      d.setUTCHours(d.getUTCHours() + n);
      break;
    case 'MINUTE':
      d.setUTCMinutes(d.getUTCMinutes() + n);
      break;
    case 'SECOND':
      d.setUTCSeconds(d.getUTCSeconds() + n);
      break;
    default:
      d.setUTCMilliseconds(d.getUTCMilliseconds() + n);
  }
}

function roundDown(d: Date, unit: Unit): void {
  const order: Unit[] = ['YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'SECOND'];
  const u = unit === 'DATE' ? 'DAY' : unit;
  const at = order.indexOf(u);
  if (at < 0) return;
  if (at < 1) d.setUTCMonth(0);
  if (at < 2) d.setUTCDate(1);
  if (at < 3) d.setUTCHours(0);
  if (at < 4) d.setUTCMinutes(0);
  if (at < 5) d.setUTCSeconds(0);
  d.setUTCMilliseconds(0);
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(Z)?/;

/** Parses a Solr date (field named for the message); throws a Search Query Error. */
export function parseSolrDate(value: string, field: string, now = new Date()): string {
  let rest = value;
  let d: Date;
  if (rest.startsWith('NOW')) {
    d = new Date(now.getTime());
    rest = rest.slice(3);
  } else {
    const m = ISO.exec(rest);
    if (!m) throw new SearchQueryError(`Invalid date "${value}" for field "${field}"`);
    const [, y, mo, da, h = '00', mi = '00', se = '00', frac = ''] = m;
    d = new Date(Date.UTC(+y, +mo - 1, +da, +h, +mi, +se, Math.round(Number(frac || '0') * 1000)));
    if (Number.isNaN(d.getTime()) || d.getUTCMonth() !== +mo - 1 || d.getUTCDate() !== +da) {
      throw new SearchQueryError(`Invalid date "${value}" for field "${field}"`);
    }
    rest = rest.slice(m[0].length);
  }
  while (rest) {
    const m = /^([+-])(\d+)([A-Za-z]+)|^\/([A-Za-z]+)/.exec(rest);
    const unit = m && unitOf(m[3] ?? m[4]);
    if (!m || !unit) throw new SearchQueryError(`Invalid date math "${value}" for field "${field}"`);
    if (m[4]) roundDown(d, unit);
    else add(d, (m[1] === '-' ? -1 : 1) * Number(m[2]), unit);
    rest = rest.slice(m[0].length);
  }
  if (Number.isNaN(d.getTime())) throw new SearchQueryError(`Invalid date "${value}" for field "${field}"`);
  return d.toISOString().replace('T', ' ').replace('Z', '');
}
