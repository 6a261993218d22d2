// The common validators, with CKAN's exact messages.
import { Invalid, Keep, MISSING, Stop, stopsSilentlyWhen, type FieldContext, type Validator } from './validate.ts';

const isBlank = (v: unknown) => v === MISSING || v === null || v === undefined;

/** Stops the chain (no key in the output) when the value is missing or null. */
export const ignoreMissing: Validator = stopsSilentlyWhen((v) => {
  if (isBlank(v)) throw new Stop();
  return v;
}, isBlank);

/** Like ignoreMissing, but an empty string also counts as missing. */
const isBlankOrEmpty = (v: unknown) => isBlank(v) || v === '';
export const ignoreEmpty: Validator = stopsSilentlyWhen((v) => {
  if (isBlankOrEmpty(v)) throw new Stop();
  return v;
}, isBlankOrEmpty);

/** Missing, null or "" is an error: "Missing value". */
export const notEmpty: Validator = (v) => {
  if (isBlank(v) || v === '' || (Array.isArray(v) && v.length === 0)) throw new Stop('Missing value');
  return v;
};

/** Only an absent key is an error (an empty string is allowed). */
export const notMissing: Validator = (v) => {
  if (isBlank(v)) throw new Stop('Missing value');
  return v;
};

/** Replaces a missing, null or empty value with a default (a function gets the field, e.g. for the configuration). */
export const defaultValue =
  (d: unknown | ((field: FieldContext) => unknown)): Validator =>
  (v, f) =>
    isBlank(v) || v === '' ? (typeof d === 'function' ? (d as (field: FieldContext) => unknown)(f) : d) : v;

/** Missing, null or "" ends the chain with null (kept in the output). */
export const nullIfEmpty: Validator = (v) => {
  if (isBlank(v) || v === '') throw new Keep(null);
  return v;
};

export const unicodeString: Validator = (v) => {
  if (v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  // Not a string: the field's other rules would only describe the same value again.
  throw new Stop('Must be a string');
};

const TRUE = new Set(['true', 'on', '1', 'yes', 't', 'y']);
const FALSE = new Set(['false', 'off', '0', 'no', 'f', 'n']);

/** Parses a boolean (true/on/1/yes/t/y and their opposites, any case); anything else is invalid. */
export function parseBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  return undefined;
}

export const booleanValidator: Validator = (v) => {
  const b = parseBool(v);
  if (b === undefined) throw new Invalid('Value must be a boolean (true or false)');
  return b;
};

/** An integer; beyond 2^53 (2^64, 1e400) it is not one the database or JavaScript could use. */
export const intValidator: Validator = (v) => {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) {
    const n = Number.parseInt(v, 10);
    if (Number.isSafeInteger(n)) return n;
  }
  throw new Invalid('Invalid integer');
};

export const numberValidator: Validator = (v) => {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw new Invalid('Invalid number');
};

export const naturalNumber: Validator = (v) => {
  const n = intValidator(v, undefined as any) as number;
  if (n < 0) throw new Invalid('Must be a natural number');
  return n;
};

export const positiveInteger: Validator = (v) => {
  const n = intValidator(v, undefined as any) as number;
  if (n < 1) throw new Invalid('Must be a postive integer');
  return n;
};

/** Clamps an integer to at most max (CKAN clamps limits silently). */
export const clampTo =
  (max: () => number): Validator =>
  (v) =>
    Math.min(v as number, max());

export const oneOf =
  (values: readonly string[]): Validator =>
  (v) => {
    if (!values.includes(v)) throw new Invalid(`Value must be one of ${JSON.stringify(values)}`);
    return v;
  };

const RESERVED_NAMES = new Set(['new', 'edit', 'search']);

/** Dataset, group, organization and user names. */
export const nameValidator: Validator = (v) => {
  if (typeof v !== 'string') throw new Invalid('Names must be strings');
  if (RESERVED_NAMES.has(v)) throw new Invalid('That name cannot be used');
  if (v.length < 2) throw new Invalid('Must be at least 2 characters long');
  if (v.length > 100) throw new Invalid('Name must be a maximum of 100 characters long');
  if (!/^[a-z0-9_-]*$/.test(v)) throw new Invalid('Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_');
  return v;
};

export const emailValidator: Validator = (v) => {
  if (typeof v !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v)) throw new Invalid(`Email ${v} is not a valid format`);
  return v;
};

/** A list of strings; also accepts one string (comma-separated when split is true). */
export const stringList =
  (split = false): Validator =>
  (v) => {
    if (typeof v === 'string')
      return split
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [v];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    throw new Invalid('Must be a list of strings');
  };

/** A JSON object, also given as a JSON string (GET and form requests). */
export const jsonObject: Validator = (v) => {
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw new Invalid('Could not parse as valid JSON');
    }
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Invalid('Must be a JSON object');
  return v;
};

/** Any JSON value, also given as a JSON string. */
export const jsonValue: Validator = (v) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw new Invalid('Could not parse as valid JSON');
  }
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export const uuidValidator: Validator = (v) => {
  if (!isUuid(v)) throw new Invalid('Invalid id provided');
  return v.toLowerCase();
};

/** ISO 8601 date or date-time; returns the normalized 'YYYY-MM-DDTHH:MM:SS[.ffffff]' form. */
export const isoDate: Validator = (v) => {
  if (v === null || v === '') return null;
  if (typeof v !== 'string') throw new Invalid('Date format incorrect');
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(v.trim());
  if (!m) throw new Invalid('Date format incorrect');
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${m[7] ?? ''}${m[8] ?? 'Z'}`);
  if (Number.isNaN(d.getTime())) throw new Invalid('Date format incorrect');
  // the seconds' fraction as sent, to the microsecond PostgreSQL keeps (Date keeps milliseconds;
  // a zone offset, in whole minutes, never changes it)
  const fraction = (m[7] ?? '').slice(0, 7).replace(/\.?0+$/, '');
  return d.toISOString().replace(/\.\d{3}Z$/, fraction);
};
