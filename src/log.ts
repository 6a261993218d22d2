// The server's logger: pino, writing JSON lines (for log collectors) or, for a person at a
// terminal, one short line per event (svc.log.format = pretty | json | auto). Requests are one
// line each: time, method, action (or path), status, milliseconds.
import pino, { type Logger } from 'pino';
import type { Config } from './config/load.ts';
import { requestIdMixin } from './metrics/request-context.ts';

// Values under these keys never reach the log, whatever logs them.
const REDACT = ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'apikey', '*.apikey', 'headers.cookie'];

export interface LogTarget {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function createLogger(config: Config, out: LogTarget = process.stdout): Logger {
  const format = config.str('svc.log.format');
  const pretty = format === 'pretty' || (format === 'auto' && !!out.isTTY);
  // mixin: the id of the request being served, in every line written for it.
  const options = { level: config.str('svc.log_level'), redact: { paths: REDACT, censor: '[redacted]' }, mixin: requestIdMixin };
  if (!pretty) return out === process.stdout ? pino(options) : pino(options, { write: (line: string) => out.write(line) });
  const color = !!out.isTTY && !process.env.NO_COLOR;
  return pino(options, { write: (line: string) => out.write(prettyLine(line, color) + '\n') });
}

const LEVELS: Record<number, [string, string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '90'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
};
const OWN_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err']);

/** One pino JSON line as a line for people. */
export function prettyLine(line: string, color = false): string {
  let o: Record<string, any>;
  try {
    o = JSON.parse(line);
  } catch {
    return line.trimEnd();
  }
  const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const [label, code] = LEVELS[o.level] ?? ['?    ', '0'];
  const time = typeof o.time === 'number' ? clock(new Date(o.time)) : '';
  const head = `${paint('90', time)} ${paint(code, label)}`;
  if (o.msg === 'request' && typeof o.method === 'string') {
    const status = Number(o.status);
    const statusCode = status >= 500 ? '31' : status >= 400 ? '33' : '32';
    const user = o.user ? paint('90', ` user=${o.user}`) : '';
    return `${head} ${clean(o.method)} ${clean(String(o.action ?? o.url ?? ''))} ${paint(statusCode, String(o.status))} ${o.ms} ms${user}`;
  }
  const fields = Object.entries(o)
    .filter(([k]) => !OWN_KEYS.has(k))
    .map(([k, v]) => `${clean(k)}=${clean(typeof v === 'string' ? v : JSON.stringify(v))}`);
  let text = `${head} ${clean(String(o.msg ?? ''))}${fields.length ? ' ' + paint('90', fields.join(' ')) : ''}`;
  if (o.err) text += '\n' + String(o.err.stack ?? o.err.message ?? JSON.stringify(o.err)).replace(/^/gm, '    ');
  return text;
}

/** No control characters from requests reach the terminal (escape sequences, fake lines). */
function clean(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function clock(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}
