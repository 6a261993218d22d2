// Runtime configuration: config_option_list, config_option_show, config_option_update.
// The editable set maps each key to its validator chain; plugins may add or remove keys.
import type { Services } from './context.ts';
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { listOf } from './result-schemas.ts';
import { sysadminOnly } from '../auth/rules.ts';
import { ConfigError, convertOption } from '../config/load.ts';
import { optionDeclaration, type OptionType } from '../config/options.ts';
import { ValidationError } from '../errors.ts';
import { allSystemInfo, setSystemInfo } from '../model/system-info.ts';
import { announceChange } from '../db/notifications.ts';
import { Invalid, validate, type Validator } from '../validation/validate.ts';
import { ignoreMissing } from '../validation/validators.ts';

const PREFIX = 'config:';

/** What JSON may carry for each declared type (strings too: form and GET values). */
const ACCEPTED: Record<OptionType, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  int: (v) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v)),
  float: (v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)),
  bool: (v) => typeof v === 'string' || typeof v === 'boolean',
  list: (v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')),
};
const TYPE_NAMES: Record<OptionType, string> = {
  string: 'a string',
  int: 'an integer',
  float: 'a number',
  bool: 'a boolean',
  list: 'a list of strings',
};

/** Checks and converts with the option's declaration (type and validate), reporting problems as field errors. */
const declared: Validator = (v, f) => {
  const decl = optionDeclaration(f.key);
  if (!decl) return v;
  if (!ACCEPTED[decl.type](v)) throw new Invalid(`Must be ${TYPE_NAMES[decl.type]}`);
  try {
    return convertOption(decl, v);
  } catch (e) {
    if (e instanceof ConfigError) throw new Invalid(e.message.replace(/^invalid value for option \S+: /, 'Invalid value: '));
    throw e;
  }
};

const editable = new Map<string, Validator[]>();

/** Adds a key to the editable set. Put ignoreMissing first so the key need not always be sent. */
export function addEditableOption(key: string, validators: Validator[]): void {
  editable.set(key, validators);
}

export function removeEditableOption(key: string): void {
  editable.delete(key);
}

for (const key of [
  'svc.site_custom_css',
  'svc.main_css',
  'svc.site_title',
  'svc.site_about',
  'svc.site_url',
  'svc.site_logo',
  'svc.site_description',
  'svc.site_intro_text',
  'svc.homepage_style',
  'svc.hola',
]) {
  addEditableOption(key, [ignoreMissing, declared]);
}

/** Applies values saved by config_option_update to this process at start-up. */
export async function loadPersistedOptions(services: Services): Promise<void> {
  const saved = await allSystemInfo(services.db, PREFIX);
  for (const [k, raw] of Object.entries(saved)) {
    const key = k.slice(PREFIX.length);
    if (!editable.has(key)) continue;
    const value = JSON.parse(raw);
    const decl = optionDeclaration(key);
    // A value saved before it was checked by type (a number as site URL) must not stop the start.
    if (decl && !ACCEPTED[decl.type](value)) {
      services.logger.warn({ option: key }, 'ignoring a saved runtime option of the wrong type');
      continue;
    }
    try {
      services.config.set(key, value);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      services.logger.warn({ option: key, err: e.message }, 'ignoring an invalid saved runtime option');
    }
  }
}

/** At most this many keys are named in the answer (a hostile call may send thousands). */
const NAMED_KEYS = 10;
/** Longest key quoted in a message. */
const KEY_CHARS = 100;

function notEditable(keys: string[]): ValidationError {
  const named = keys.slice(0, NAMED_KEYS).map((k) => (k.length > KEY_CHARS ? `${k.slice(0, KEY_CHARS)}...` : k));
  const more = keys.length > NAMED_KEYS ? ` and ${keys.length - NAMED_KEYS} more` : '';
  const message = `Configuration option(s) ${named.map((k) => `'${k}'`).join(', ')}${more} can not be updated`;
  return new ValidationError(Object.fromEntries(named.map((k) => [k, [message]])), message);
}

export const configActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'config_option_list',
    sideEffectFree: true,
    auth: sysadminOnly,
    description: 'Return the list of configuration options that can be changed at run time with config_option_update. Sysadmin only.',
    returns: { description: 'the option keys', rtype: 'list', schema: listOf(Type.String()) },
    handler: () => [...editable.keys()].sort(),
  }),
  defineAction({
    name: 'config_option_show',
    sideEffectFree: true,
    auth: sysadminOnly,
    description: 'Return the current value of a runtime-editable configuration option. Sysadmin only.',
    params: { key: p.string('the option name, e.g. svc.site_title').required() },
    returns: { description: 'the value', rtype: 'string', schema: Type.Unknown() },
    handler: (ctx, params) => {
      if (!editable.has(params.key)) throw notEditable([params.key]);
      return ctx.config.get(params.key);
    },
  }),
  defineAction({
    name: 'config_option_update',
    sideEffectFree: false,
    auth: sysadminOnly,
    description:
      'Change runtime-editable configuration options. Send an object mapping option keys to values; the values are validated, saved in the database and take effect at once. Sysadmin only.',
    // The editable keys change at run time (plugins add and remove them): their chains run in the handler.
    params: {},
    extras: 'keep',
    returns: { description: 'the updated keys and their values', rtype: 'dictionary', schema: Type.Record(Type.String(), Type.Unknown()) },
    handler: async (ctx, input: Record<string, unknown>) => {
      const unknown: string[] = [];
      for (const k in input) if (!editable.has(k)) unknown.push(k);
      if (unknown.length) throw notEditable(unknown);
      const schema = Object.fromEntries([...editable].filter(([k]) => k in input));
      const { data, errors } = await validate(schema, input, ctx);
      if (Object.keys(errors).length) throw new ValidationError(errors);
      for (const [k, v] of Object.entries(data)) await setSystemInfo(ctx.db, PREFIX + k, JSON.stringify(v));
      if (ctx.services.changes) await announceChange(ctx.db, 'config');
      for (const [k, v] of Object.entries(data)) ctx.config.set(k, v);
      return data;
    },
  }),
];
