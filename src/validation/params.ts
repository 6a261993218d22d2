// Typed parameter declarations. An action declares each parameter once with a builder:
//
//   params: {
//     id: p.string('the id or name of the dataset').required(),
//     limit: p.natural('at most this many').default(10).max(() => 1000),
//     groups: p.listOf({ name: p.string('group name') }, 'groups of the dataset'),
//     owner_org: p.string('owning organization').use(organizationExists),
//   }
//
// From that one declaration come the CKAN validator chain (coercion of GET strings, CKAN's
// messages, the {field: [messages]} error dict), the JSON Schema of the OpenAPI document, the
// help_show text, and the TypeScript type of the handler's parameters (ParamValues<P>).
// Domain validators that need the database go into the same chain with `.use(...)`.
import { Type, type TSchema } from '@sinclair/typebox';
import { Stop, type ExtrasPolicy, type FieldContext, type ListOf, type Schema, type Validator } from './validate.ts';
import {
  booleanValidator,
  defaultValue,
  emailValidator,
  ignoreEmpty,
  nullIfEmpty,
  ignoreMissing,
  intValidator,
  isoDate,
  jsonObject,
  jsonValue,
  nameValidator,
  naturalNumber,
  notEmpty,
  notMissing,
  oneOf,
  positiveInteger,
  stringList,
  unicodeString,
  uuidValidator,
  clampTo,
  numberValidator,
} from './validators.ts';

/** How a missing value is treated. */
type Presence =
  | { mode: 'optional' } // missing or null: the key is left out
  | { mode: 'optional-nonempty' } // also "" counts as missing
  | { mode: 'required' } // missing, null or "": "Missing value"
  | { mode: 'required-key' } // only a missing key is an error ("" is allowed)
  | { mode: 'nullable' } // missing, null or "": null is passed on
  | { mode: 'default'; value: unknown }
  | { mode: 'own' }; // no presence check: the validators see a missing value (MISSING) themselves

interface ParamState {
  /** Name of the type in help_show (`:type x: int`). */
  typeName: string;
  schema: TSchema;
  /** Validators that check and convert the type, after the presence check. */
  typeChain: Validator[];
  /** Checks run before the type check (e.g. who may set the field at all). */
  pre?: Validator[];
  /** Domain validators, after the type check. */
  extra: Validator[];
  presence: Presence;
  description: string;
  /** Nested list of dicts (listOf). */
  listOf?: Params;
  /** Validators run on a nested list before its items. */
  listBefore?: Validator[];
  /** Unknown keys of the nested dicts (listOf). */
  listExtras?: ExtrasPolicy;
  /** Not listed in the OpenAPI document or help (internal-only parameters). */
  hidden?: boolean;
  /** The size bound of this kind of value (see BOUNDS); maxLength() and maxItems() override it. */
  bound?: Bound;
}

/**
 * Every value an action reads is bounded, so that no input reaches the database at a size it
 * cannot store or index (a btree row holds ~2,700 bytes) or the process cannot hold. Declarations
 * inherit the bound of their kind and may override it (.maxLength(n), .maxItems(n)).
 */
export const BOUNDS = {
  /** Identifiers, keys, types, formats, codes: indexed columns (three fit in one index row). */
  key: 200,
  /** Free text (titles, notes, descriptions, queries). */
  text: 500_000,
  /** Items of a list of strings (filter queries, names, terms). */
  stringItems: 1_000,
  /** Items of a list of dicts (a dataset's resources, a group's datasets). */
  dictItems: 50_000,
} as const;

/** The key bound for a text parameter named like an identifier (id, *_id, key, type, *_type, format, *_code, state). */
const KEY_NAME = /^(id|key|type|format|state|capacity|username)$|_(id|type|code|key)$/;

type Bound = { kind: 'text'; max?: number; message?: string } | { kind: 'items'; max: number; itemChars?: number } | { kind: 'none' };

/** The characters a text parameter of this name may have. */
function textLimit(bound: Bound | undefined, name: string | undefined): number | undefined {
  if (!bound || bound.kind !== 'text') return undefined;
  if (bound.max !== undefined) return bound.max;
  return name && KEY_NAME.test(name) ? BOUNDS.key : BOUNDS.text;
}

function boundValidator(bound: Bound | undefined, name: string | undefined): Validator | undefined {
  if (!bound || bound.kind === 'none') return undefined;
  if (bound.kind === 'items') {
    const { max, itemChars } = bound;
    return (v) => {
      if (!Array.isArray(v)) return v;
      if (v.length > max) throw new Stop(`Must have at most ${max} items`);
      if (itemChars !== undefined && v.some((x) => typeof x === 'string' && x.length > itemChars))
        throw new Stop(`Each item must be a maximum of ${itemChars} characters long`);
      return v;
    };
  }
  const limit = textLimit(bound, name)!;
  const message = bound.message ?? `Must be a maximum of ${limit} characters long`;
  // Stop: later validators (and their messages quoting the value) never see the oversized text.
  return (v) => {
    if (typeof v === 'string' && v.length > limit) throw new Stop(message);
    return v;
  };
}

/**
 * One declared parameter. T is the value the handler receives; R whether it is always present
 * (required or defaulted).
 */
export class Param<T = unknown, R extends boolean = false> {
  declare readonly __value: T;
  declare readonly __present: R;
  constructor(readonly state: ParamState) {}

  private with<T2 = T, R2 extends boolean = R>(changes: Partial<ParamState>): Param<T2, R2> {
    return new Param<T2, R2>({ ...this.state, ...changes });
  }

  /** Missing, null or empty string is an error ("Missing value"). */
  required(): Param<T, true> {
    return this.with<T, true>({ presence: { mode: 'required' } });
  }

  /** Only an absent key is an error: an empty string is a value. */
  requiredKey(): Param<T, true> {
    return this.with<T, true>({ presence: { mode: 'required-key' } });
  }

  /** Used when the value is missing, null or "" (a function gets the field: field.context is the action context). */
  default<D extends T>(value: D | ((field: FieldContext) => D)): Param<T, true> {
    return this.with<T, true>({ presence: { mode: 'default', value } });
  }

  /**
   * No presence check: the validators see a missing value (MISSING) and decide themselves (a
   * field whose requirement depends on other fields or the configuration).
   */
  handlesMissing(): Param<T, R> {
    return this.with({ presence: { mode: 'own' } });
  }

  /** An empty string also counts as not given. */
  ignoreEmpty(): Param<T, R> {
    return this.with({ presence: { mode: 'optional-nonempty' } });
  }

  /** Missing, null or "" reach the handler as null. */
  nullable(): Param<T | null, true> {
    return this.with<T | null, true>({ presence: { mode: 'nullable' } });
  }

  /** Domain validators (may use the database through field.context.db), after the type check. */
  use(...validators: Validator[]): Param<T, R> {
    return this.with({ extra: [...this.state.extra, ...validators] });
  }

  /** Validators run after the presence check and before the type check (e.g. sysadmin-only fields). */
  first(...validators: Validator[]): Param<T, R> {
    return this.with({ pre: [...(this.state.pre ?? []), ...validators] });
  }

  /** Clamps a number to at most max (CKAN clamps limits silently). */
  max(max: number | (() => number)): Param<T, R> {
    const fn = typeof max === 'function' ? max : () => max;
    return this.with({ extra: [...this.state.extra, clampTo(fn)] });
  }

  /** Longest allowed string (instead of the bound of its kind). */
  maxLength(n: number, message?: string): Param<T, R> {
    return this.with({ bound: { kind: 'text', max: n, message } });
  }

  /** Most items of a list (instead of the bound of its kind). */
  maxItems(n: number): Param<T, R> {
    const b = this.state.bound;
    return this.with({ bound: { kind: 'items', max: n, itemChars: b?.kind === 'items' ? b.itemChars : undefined } });
  }

  /** Left out of the OpenAPI document and help (internal parameters). */
  hidden(): Param<T, R> {
    return this.with({ hidden: true });
  }

  /** The CKAN validator chain of this parameter (name: the parameter's name, which may give its bound). */
  chain(name?: string): Validator[] {
    const bound = boundValidator(this.state.bound, name);
    return [
      ...presenceValidators(this.state.presence),
      ...(this.state.pre ?? []),
      ...this.state.typeChain,
      ...(bound ? [bound] : []),
      ...this.state.extra,
    ];
  }

  /** The JSON Schema of this parameter for the OpenAPI document. */
  jsonSchema(name?: string): TSchema {
    const s: Record<string, unknown> = { ...this.state.schema, description: this.state.description };
    const b = this.state.bound;
    const chars = textLimit(b, name);
    if (chars !== undefined && s.type === 'string') s.maxLength = chars;
    if (b?.kind === 'items') s.maxItems = b.max;
    const pr = this.state.presence;
    if (pr.mode === 'default' && typeof pr.value !== 'function') s.default = pr.value;
    if (pr.mode === 'nullable') return Type.Union([s as TSchema, Type.Null()], { description: this.state.description });
    return s as TSchema;
  }

  get isRequired(): boolean {
    return this.state.presence.mode === 'required' || this.state.presence.mode === 'required-key';
  }
}

function presenceValidators(pr: Presence): Validator[] {
  switch (pr.mode) {
    case 'optional':
      return [ignoreMissing];
    case 'optional-nonempty':
      return [ignoreEmpty];
    case 'required':
      return [notEmpty];
    case 'required-key':
      return [notMissing];
    case 'nullable':
      return [nullIfEmpty];
    case 'default':
      return [defaultValue(pr.value)];
    case 'own':
      return [];
  }
}

export type Params = Record<string, Param<any, boolean>>;

type Present<P> = { [K in keyof P]: P[K] extends Param<any, true> ? K : never }[keyof P];
type Optional<P> = Exclude<keyof P, Present<P>>;
type ValueOf<X> = X extends Param<infer T, boolean> ? T : never;

/** The validated parameters a handler receives. */
export type ParamValues<P extends Params> = { [K in Present<P>]: ValueOf<P[K]> } & { [K in Optional<P>]?: ValueOf<P[K]> };

const make = <T>(typeName: string, schema: TSchema, typeChain: Validator[], description: string, bound?: Bound): Param<T, false> =>
  new Param<T, false>({ typeName, schema, typeChain, extra: [], presence: { mode: 'optional' }, description, bound });
const TEXT: Bound = { kind: 'text' };
/** The longest e-mail address (RFC 5321). */
const EMAIL_MAX = 254;

/** The builders. Each takes the one-line description shown in help_show and the OpenAPI document. */
export const p = {
  /** Text; numbers and booleans are turned into their text as CKAN does. */
  string: (description: string) => make<string>('string', Type.String(), [unicodeString], description, TEXT),
  /** Text used as is (no conversion of numbers). */
  text: (description: string) => make<string>('string', Type.String(), [unicodeString], description, TEXT),
  integer: (description: string) => make<number>('int', Type.Integer(), [intValidator], description),
  /** An integer >= 0 ("Must be a natural number"). */
  natural: (description: string) => make<number>('int', Type.Integer({ minimum: 0 }), [naturalNumber], description),
  /** An integer >= 1. */
  positive: (description: string) => make<number>('int', Type.Integer({ minimum: 1 }), [positiveInteger], description),
  number: (description: string) => make<number>('float', Type.Number(), [numberValidator], description),
  /** CKAN booleans: true/false and on/off, 1/0, yes/no, t/f, y/n in any case. */
  boolean: (description: string) => make<boolean>('bool', Type.Boolean(), [booleanValidator], description),
  uuid: (description: string) => make<string>('string', Type.String({ format: 'uuid' }), [uuidValidator], description),
  /** A CKAN name: 2-100 characters of lowercase a-z, 0-9, - and _. */
  name: (description: string) => make<string>('string', Type.String({ pattern: '^[a-z0-9_-]{2,100}$' }), [nameValidator], description),
  email: (description: string) =>
    make<string>('string', Type.String({ format: 'email' }), [unicodeString, (v: string) => v.trim(), emailValidator], description, {
      kind: 'text',
      max: EMAIL_MAX,
    }),
  url: (description: string) => make<string>('string', Type.String({ format: 'uri-reference' }), [unicodeString], description, TEXT),
  /** ISO 8601 date or date-time, normalised to YYYY-MM-DDTHH:MM:SS[.ffffff] (UTC). */
  datetime: (description: string) => make<string>('string', Type.String({ format: 'date-time' }), [isoDate], description),
  enum: <V extends string>(values: readonly V[], description: string) =>
    make<V>('string', Type.Union(values.map((v) => Type.Literal(v))), [unicodeString, oneOf(values)], description, {
      kind: 'text',
      max: BOUNDS.key,
    }),
  /** A list of strings; one string becomes a list of one (split on commas when split is true). */
  stringList: (description: string, opts: { split?: boolean } = {}) =>
    make<string[]>('list of strings', Type.Array(Type.String()), [stringList(opts.split ?? false)], description, {
      kind: 'items',
      max: BOUNDS.stringItems,
      itemChars: BOUNDS.text,
    }),
  /** A JSON object (also given as JSON text in GET and form requests). */
  object: (description: string, properties?: Record<string, TSchema>) =>
    make<Record<string, any>>(
      'dictionary',
      properties ? Type.Object(properties, { additionalProperties: true }) : Type.Record(Type.String(), Type.Unknown()),
      [jsonObject],
      description,
    ),
  /** Any JSON value (also given as JSON text). */
  json: (description: string, schema: TSchema = Type.Unknown()) => make<any>('JSON value', schema, [jsonValue], description),
  /**
   * A value of type T checked and converted by its own validators (a type the builders above do
   * not cover, e.g. a password or "a string or a list of strings").
   */
  custom: <T>(description: string, validators: Validator[], schema: TSchema = Type.Unknown(), typeName = 'string') =>
    // declared as text: bounded as text (its name may make it a key)
    make<T>(typeName, schema, validators, description, schema.type === 'string' ? TEXT : undefined),
  /** Any value, passed on unchanged (the handler or a domain validator checks it). */
  any: (description: string, schema: TSchema = Type.Unknown(), typeName = 'any') => make<any>(typeName, schema, [], description),
  /** A list of dicts, each validated by its own declarations. */
  listOf: <P extends Params>(item: P, description: string, opts: { extras?: ExtrasPolicy } = {}) =>
    new Param<ParamValues<P>[], false>({
      typeName: 'list of dictionaries',
      schema: Type.Array(objectSchema(item, opts.extras ?? 'drop')),
      typeChain: [],
      extra: [],
      presence: { mode: 'optional' },
      description,
      bound: { kind: 'items', max: BOUNDS.dictItems },
      listOf: item,
      listExtras: opts.extras,
    }),
};

/** The JSON Schema of a parameter object (the request body of an action). */
export function objectSchema(params: Params, extras: ExtrasPolicy = 'drop', description?: string): TSchema {
  const properties: Record<string, TSchema> = {};
  for (const [name, param] of Object.entries(params)) {
    if (param.state.hidden) continue;
    properties[name] = param.isRequired ? param.jsonSchema(name) : Type.Optional(param.jsonSchema(name));
  }
  return Type.Object(properties, { additionalProperties: extras !== 'reject', ...(description ? { description } : {}) });
}

/** Compiles declarations into the validator schema that validate() runs. */
export function compileParams(params: Params, extras: ExtrasPolicy = 'drop'): Schema {
  const schema: Schema = { $extras: extras };
  for (const [name, param] of Object.entries(params)) {
    const st = param.state;
    const bound = boundValidator(st.bound, name);
    schema[name] = st.listOf
      ? ({
          listOf: compileParams(st.listOf, st.listExtras ?? 'drop'),
          before: [...presenceValidators(st.presence), ...(bound ? [bound] : []), ...st.extra],
        } satisfies ListOf)
      : param.chain(name);
  }
  return schema;
}

/** help_show's text in CKAN's docstring shape. */
export function helpText(description: string, params: Params | undefined, returns?: { description: string; rtype?: string }): string {
  const lines = [description.trim()];
  const entries = Object.entries(params ?? {}).filter(([, prm]) => !prm.state.hidden);
  if (entries.length) lines.push('');
  for (const [name, prm] of entries) {
    const st = prm.state;
    let tail = '';
    if (st.presence.mode === 'default') {
      const d = st.presence.value;
      tail = typeof d === 'function' ? ' (optional)' : ` (optional, default: ${JSON.stringify(d)})`;
    } else if (!prm.isRequired) tail = ' (optional)';
    lines.push(`:param ${name}: ${st.description}${tail}`);
    lines.push(`:type ${name}: ${st.typeName}`);
  }
  if (returns) {
    lines.push('');
    lines.push(`:returns: ${returns.description}`);
    if (returns.rtype) lines.push(`:rtype: ${returns.rtype}`);
  }
  return lines.join('\n');
}
