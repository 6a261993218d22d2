// What an action call does with input PostgreSQL could never store and with the database's own
// errors: races are retried (the caller sees the sequential answer), values the database refuses
// become Validation Errors naming the field. Used by callAction (registry.ts) only.
import { ValidationError } from '../errors.ts';

/** Deeper input is refused before any handler sees it (recursive code would run out of stack). */
export const MAX_INPUT_DEPTH = 100;

/** Plain JSON containers; anything else (lazy byte lists, file descriptions built by us) is not walked. */
function isContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  if (Array.isArray(v)) return true;
  if (!v || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const NUL = 'Null characters are not allowed';

/**
 * Refuses NUL characters (no PostgreSQL text or jsonb can hold one) in any key or string, and
 * nesting deeper than MAX_INPUT_DEPTH, naming the top-level field. Iterative, so hostile nesting
 * cannot overflow the stack; one pass without allocations per value (large data store bodies).
 */
export function checkInput(input: Record<string, unknown>): void {
  const values: unknown[] = [];
  const fields: string[] = [];
  const depths: number[] = [];
  for (const [k, v] of Object.entries(input)) {
    if (k.includes('\u0000')) throw new ValidationError({ [k]: [NUL] });
    values.push(v);
    fields.push(k);
    depths.push(1);
  }
  while (values.length) {
    const value = values.pop();
    const field = fields.pop()!;
    const depth = depths.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) throw new ValidationError({ [field]: [NUL] });
      continue;
    }
    if (!isContainer(value)) continue;
    if (depth >= MAX_INPUT_DEPTH) throw new ValidationError({ [field]: [`Nested too deeply (at most ${MAX_INPUT_DEPTH} levels)`] });
    if (Array.isArray(value)) {
      for (const v of value) {
        if (typeof v === 'string') {
          if (v.includes('\u0000')) throw new ValidationError({ [field]: [NUL] });
        } else if (v !== null && typeof v === 'object') {
          values.push(v);
          fields.push(field);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const k in value) {
      if (k.includes('\u0000')) throw new ValidationError({ [field]: [NUL] });
      const v = value[k];
      if (typeof v === 'string') {
        // The key names the place inside the field (a record's column, a nested dict's key).
        if (v.includes('\u0000')) throw new ValidationError({ [field]: [`${NUL} (in "${k}")`] });
      } else if (v !== null && typeof v === 'object') {
        values.push(v);
        fields.push(field);
        depths.push(depth + 1);
      }
    }
  }
}

interface PgError {
  code?: string;
  message?: string;
  detail?: string;
  column?: string;
  constraint?: string;
}

const pgCode = (e: unknown): string | undefined => {
  const code = (e as PgError | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/**
 * Errors of a write that another transaction caused and that a fresh attempt settles: the
 * attempt then sees the other write committed and answers as a sequential call would
 * (serialization failure, deadlock, lock not available, a unique or foreign key taken meanwhile).
 */
export function isRace(e: unknown): boolean {
  const code = pgCode(e);
  return code === '40001' || code === '40P01' || code === '55P03' || code === '23505' || code === '23503';
}

/** A short random pause growing with the attempt, so racing calls do not meet again at once. */
export function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt + 5));
}

/**
 * The top-level field whose value (a string or number anywhere below it) the message quotes:
 * exactly, or else a string the quoted text contains (validators normalize: a date gains its time).
 */
function quotedField(input: Record<string, unknown>, message: string): string | undefined {
  const quoted = [...message.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
  if (!quoted.length) return undefined;
  let near: string | undefined;
  const stack: { value: unknown; top: string; depth: number }[] = Object.entries(input).map(([k, v]) => ({ value: v, top: k, depth: 0 }));
  while (stack.length) {
    const { value, top, depth } = stack.pop()!;
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value);
      if (quoted.includes(text)) return top;
      if (!near && text.length >= 4 && quoted.some((q) => q.includes(text))) near = top;
    } else if (isContainer(value) && depth < MAX_INPUT_DEPTH) {
      for (const v of Array.isArray(value) ? value : Object.values(value)) stack.push({ value: v, top, depth: depth + 1 });
    }
  }
  return near;
}

/** What a data exception (SQLSTATE class 22) means for the sender, without the database's own text. */
const DATA_EXCEPTIONS: Record<string, string> = {
  '22001': 'the text is too long',
  '22003': 'the number is out of range',
  '22007': 'not a valid date or time',
  '22008': 'the date or time is out of range',
  '22012': 'division by zero',
  '22021': 'characters that cannot be stored',
  '22P05': 'characters that cannot be stored',
  '2201B': 'not a valid regular expression',
  '22023': 'not a valid parameter value',
  '22025': 'not a valid escape sequence',
  '22P03': 'not a valid binary value',
};

/** PostgreSQL's type names as a sender knows them. */
const TYPE_WORDS: [RegExp, string][] = [
  [/^(integer|bigint|smallint)$/, 'a whole number'],
  [/^(numeric|real|double precision)$/, 'a number'],
  [/^(timestamp|date|time|interval)/, 'a date or time'],
  [/^boolean$/, 'true or false'],
  [/^uuid$/, 'a UUID'],
  [/^jsonb?$/, 'JSON'],
];

function refusalInOurWords(code: string, message: string): string {
  if (code === '22P02') {
    // "invalid input syntax for type integer: ..."
    const type = /for type ([a-z ]+)/.exec(message)?.[1]?.trim() ?? '';
    const words = TYPE_WORDS.find(([re]) => re.test(type))?.[1];
    return words ? `must be ${words}` : 'not in the expected form';
  }
  return DATA_EXCEPTIONS[code] ?? 'not a value that can be stored';
}

/**
 * The database's refusal of a value (SQLSTATE class 22: bad text, numbers out of range, invalid
 * dates...; class 23: a constraint, also one that still fails after the retries), or a race that
 * never settled, as a Validation Error. Anything else is returned unchanged (a real fault: the 500 path logs it).
 */
export function databaseErrorAsValidation(e: unknown, input: Record<string, unknown>): unknown {
  const code = pgCode(e);
  if (!code) return e;
  const err = e as PgError;
  const message = String(err.message ?? '');
  if (code.startsWith('22')) {
    const field = err.column ?? quotedField(input, message) ?? 'input';
    return new ValidationError({ [field]: [`Invalid value: ${refusalInOurWords(code, message)}`] });
  }
  if (code === '23505' || code === '23503') {
    const key = /^Key \(([^)]*)\)/.exec(err.detail ?? '')?.[1];
    const field = key && /^\w+$/.test(key) ? key : 'input';
    return new ValidationError({
      [field]: [code === '23505' ? 'That value is already in use.' : 'Refers to something that does not exist.'],
    });
  }
  if (code.startsWith('23')) {
    // Other integrity constraints (not null, check): the input broke a rule the schema holds.
    return new ValidationError({ [err.column ?? 'input']: [code === '23502' ? 'Missing value' : 'Invalid value: not allowed here'] });
  }
  if (code === '40001' || code === '40P01' || code === '55P03') {
    return new ValidationError({ message: ['Concurrent changes conflicted with this request; please send it again.'] });
  }
  return e;
}

/**
 * A stack overflow while a handler reads its input: nesting checkInput could not see (lists
 * an action reads lazily from the body's bytes) — the input's fault, named by those lists.
 */
export function overflowAsValidation(e: unknown, lazyLists: readonly string[] | undefined): unknown {
  if (!(e instanceof RangeError) || !/call stack/i.test(e.message)) return e;
  const field = lazyLists?.[0] ?? 'input';
  return new ValidationError({ [field]: [`Nested too deeply (at most ${MAX_INPUT_DEPTH} levels)`] });
}
