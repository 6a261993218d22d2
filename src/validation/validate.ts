// CKAN-style validation: each field has a chain of validators. A validator returns the (converted)
// value, throws Invalid to add a message and go on (messages accumulate, as in CKAN), or throws
// Stop to end the chain for that field (missing values). Errors come out as {field: ["message"]},
// with lists of per-item dicts for nested lists ({} for valid siblings).
import { ValidationError } from '../errors.ts';

export const MISSING: unique symbol = Symbol('missing');

/** Control flow of validator chains, thrown on every request: no stack trace is captured. */
class ChainSignal extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/** Longest message a validator may give: messages quote the value sent, which may be megabytes. */
const MAX_MESSAGE = 500;

export class Invalid extends ChainSignal {
  constructor(message: string) {
    super(message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message);
  }
}
export class Stop extends ChainSignal {
  constructor(readonly record?: string) {
    super(record ?? 'stop');
  }
}
/** Ends the chain for that field with this value (a nullable parameter's null). */
export class Keep extends ChainSignal {
  constructor(readonly value: unknown) {
    super('keep');
  }
}

export interface FieldContext {
  /** Name of the field being validated. */
  key: string;
  /** The whole (top-level or item) dict being validated, values as converted so far. */
  data: Record<string, unknown>;
  /** Whatever the caller passes along (the action context). */
  context: any;
}

export type Validator = (value: any, field: FieldContext) => unknown | Promise<unknown>;

export interface ListOf {
  listOf: Schema;
  /** Validators run on the list as a whole before its items (e.g. ignoreMissing). */
  before?: Validator[];
}

export type FieldSpec = Validator[] | ListOf;

export interface Schema {
  [field: string]: FieldSpec | ExtrasPolicy | Validator[] | undefined;
  /** What to do with keys the schema does not name: keep them, drop them, or report them. */
  $extras?: ExtrasPolicy;
  /**
   * Chains over the whole dict (CKAN's __before / __after): run once before the fields on the dict
   * as sent, and once after them on the dict as validated. A validator sees the dict as `data`
   * (and may change it) and the value of the key __before / __after (usually missing); its
   * messages are reported under that key.
   */
  $before?: Validator[];
  $after?: Validator[];
}
export type ExtrasPolicy = 'keep' | 'drop' | 'reject';

export interface ValidationResult {
  data: Record<string, unknown>;
  errors: Record<string, unknown>;
}

function isListOf(spec: unknown): spec is ListOf {
  return !!spec && typeof spec === 'object' && !Array.isArray(spec) && 'listOf' in (spec as object);
}

/**
 * Validators that do nothing but end the chain, without a message, when the value passes `test`
 * (ignoreMissing, ignoreEmpty: most fields of a dict are not sent): runChain ends the chain
 * itself for them instead of having a Stop thrown and caught for every field not sent.
 */
const silentStops = new Map<Validator, (v: unknown) => boolean>();

/** Declares validator as one that only throws `new Stop()` when test(value), and returns the value otherwise. */
export function stopsSilentlyWhen(validator: Validator, test: (v: unknown) => boolean): Validator {
  silentStops.set(validator, test);
  return validator;
}

interface ChainResult {
  value: unknown;
  messages: string[];
}

const isThenable = (x: unknown): x is PromiseLike<unknown> => !!x && typeof (x as { then?: unknown }).then === 'function';

/** What a validator's exception does to the chain: its result, or undefined to go on with the next validator. */
function signalled(e: unknown, messages: string[]): ChainResult | undefined {
  if (e instanceof Keep) return { value: e.value, messages };
  if (e instanceof Stop) {
    if (e.record) messages.push(e.record);
    return { value: MISSING, messages };
  }
  if (e instanceof Invalid) {
    messages.push(e.message);
    return undefined;
  }
  // A validator assuming what an earlier one refused (v.trim() after "Must be a string"):
  // the field has its error already.
  if (messages.length && e instanceof TypeError) return { value: MISSING, messages };
  throw e;
}

/**
 * Runs a chain; synchronous as long as its validators are (a promise only once one returns a
 * promise: a microtask per validator of every field was a good part of a dataset's validation).
 */
function runChain(chain: Validator[], value: unknown, field: FieldContext): ChainResult | Promise<ChainResult> {
  const messages: string[] = [];
  let v = value;
  for (let i = 0; i < chain.length; i++) {
    const validator = chain[i];
    const stops = silentStops.get(validator);
    if (stops) {
      if (stops(v)) return { value: MISSING, messages };
      continue;
    }
    let r: unknown;
    try {
      r = validator(v, field);
    } catch (e) {
      const end = signalled(e, messages);
      if (end) return end;
      continue;
    }
    if (isThenable(r)) return finishChain(chain, i, v, r, messages, field);
    v = r;
  }
  return { value: v, messages };
}

/** The rest of a chain once chain[i], given the value `given`, has returned a promise (each validator awaited). */
async function finishChain(
  chain: Validator[],
  i: number,
  given: unknown,
  pending: PromiseLike<unknown>,
  messages: string[],
  field: FieldContext,
): Promise<ChainResult> {
  let v = given;
  try {
    v = await pending;
  } catch (e) {
    const end = signalled(e, messages);
    if (end) return end;
  }
  for (let k = i + 1; k < chain.length; k++) {
    const validator = chain[k];
    const stops = silentStops.get(validator);
    if (stops) {
      if (stops(v)) return { value: MISSING, messages };
      continue;
    }
    try {
      v = await validator(v, field);
    } catch (e) {
      const end = signalled(e, messages);
      if (end) return end;
    }
  }
  return { value: v, messages };
}

export async function validate(schema: Schema, sent: Record<string, unknown>, context?: unknown): Promise<ValidationResult> {
  const data: Record<string, unknown> = {};
  const errors: Record<string, unknown> = {};
  const policy = schema.$extras ?? 'drop';
  const input = schema.$before?.length ? await runWholeDict(schema.$before, '__before', { ...sent }, errors, context) : sent;
  for (const [key, value] of Object.entries(input)) {
    if (key in schema || key === '$extras') continue;
    if (policy === 'keep') data[key] = value;
    else if (policy === 'reject') errors[key] = ['The input field ' + key + ' was not expected.'];
  }
  for (const [key, spec] of Object.entries(schema)) {
    if (key.startsWith('$') || spec === undefined) continue;
    const field: FieldContext = { key, data, context };
    const raw = key in input && input[key] !== undefined ? input[key] : MISSING;
    if (isListOf(spec)) {
      let list: unknown = raw;
      if (spec.before) {
        const ran = runChain(spec.before, raw, field);
        const r = ran instanceof Promise ? await ran : ran;
        if (r.messages.length) errors[key] = r.messages;
        if (r.value === MISSING || r.messages.length) continue;
        list = r.value;
      }
      if (list === MISSING || list === null) continue;
      if (!Array.isArray(list) || list.some((x) => !x || typeof x !== 'object' || Array.isArray(x))) {
        errors[key] = [`Only lists of dicts can be placed against subschema ('${key}',)`];
        continue;
      }
      const items: Record<string, unknown>[] = [];
      const itemErrors: Record<string, unknown>[] = [];
      for (const item of list as Record<string, unknown>[]) {
        const r = await validate(spec.listOf, item, context);
        items.push(r.data);
        itemErrors.push(r.errors);
      }
      data[key] = items;
      if (itemErrors.some((e) => Object.keys(e).length)) errors[key] = itemErrors;
      continue;
    }
    const ran = runChain(spec as Validator[], raw, field);
    const r = ran instanceof Promise ? await ran : ran;
    if (r.messages.length) errors[key] = r.messages;
    if (r.value !== MISSING) data[key] = r.value;
  }
  if (schema.$after?.length) await runWholeDict(schema.$after, '__after', data, errors, context);
  return { data, errors };
}

/** A $before / $after chain over `dict` (changed in place); its key never stays in the dict. */
async function runWholeDict(
  chain: Validator[],
  key: '__before' | '__after',
  dict: Record<string, unknown>,
  errors: Record<string, unknown>,
  context: unknown,
): Promise<Record<string, unknown>> {
  const r = await runChain(chain, key in dict && dict[key] !== undefined ? dict[key] : MISSING, { key, data: dict, context });
  if (r.messages.length) errors[key] = r.messages;
  delete dict[key];
  return dict;
}

export async function validateOrThrow<T = Record<string, any>>(
  schema: Schema,
  input: Record<string, unknown>,
  context?: unknown,
): Promise<T> {
  const { data, errors } = await validate(schema, input, context);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return data as T;
}
