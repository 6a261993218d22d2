// Loads the effective configuration: declared defaults <- svc.ini <- environment <- command line.
import fs from 'node:fs';
import path from 'node:path';
import { optionDeclaration, optionDeclarations, type OptionDeclaration } from './options.ts';

export class ConfigError extends Error {}

export type ConfigValues = Record<string, unknown>;

/** Parses `key = value` lines; `#` and `;` start comments; `[section]` headers are ignored. */
export function parseIni(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';') || /^\[.*\]$/.test(line)) continue;
    const eq = line.indexOf('=');
    if (eq < 0) throw new ConfigError(`svc.ini: cannot read line "${line}" (expected key = value)`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** `svc.auth.allow_dataset_collaborators` -> `SVC__AUTH__ALLOW_DATASET_COLLABORATORS`. */
export function envName(option: string): string {
  return option.toUpperCase().replace(/\./g, '__');
}

const TRUE = new Set(['true', 'on', '1', 'yes', 't', 'y']);
const FALSE = new Set(['false', 'off', '0', 'no', 'f', 'n', '']);

/** Converts a raw (string) value to the option's type; throws ConfigError naming the option. */
export function convertOption(decl: OptionDeclaration, raw: unknown): unknown {
  let value: unknown = raw;
  const fail = (why: string): never => {
    throw new ConfigError(`invalid value for option ${decl.name}: ${JSON.stringify(raw)} ${why}`);
  };
  switch (decl.type) {
    case 'int': {
      if (typeof raw === 'number' && Number.isInteger(raw)) break;
      if (typeof raw !== 'string' || !/^-?\d+$/.test(raw.trim())) fail('is not an integer');
      value = Number.parseInt(String(raw), 10);
      break;
    }
    case 'float': {
      value = typeof raw === 'number' ? raw : Number(raw);
      if (typeof value !== 'number' || Number.isNaN(value)) fail('is not a number');
      break;
    }
    case 'bool': {
      if (typeof raw === 'boolean') break;
      const s = String(raw).trim().toLowerCase();
      if (TRUE.has(s)) value = true;
      else if (FALSE.has(s)) value = false;
      else fail('is not a boolean (true/false)');
      break;
    }
    case 'list': {
      if (Array.isArray(raw)) value = raw.map(String);
      else
        value = String(raw)
          .split(/[\s,]+/)
          .filter(Boolean);
      break;
    }
    default:
      value = raw === undefined || raw === null ? '' : String(raw);
  }
  const problem = decl.validate?.(value);
  if (problem) fail(problem);
  return value;
}

export interface LoadOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  overrides?: Record<string, unknown>;
  cwd?: string;
}

export function findConfigFile(opts: LoadOptions): string | undefined {
  const env = opts.env ?? process.env;
  const explicit = opts.configFile ?? env.SVC_INI;
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new ConfigError(`config file not found: ${explicit}`);
    return explicit;
  }
  const local = path.join(opts.cwd ?? process.cwd(), 'svc.ini');
  return fs.existsSync(local) ? local : undefined;
}

export class Config {
  constructor(
    private readonly values: ConfigValues,
    readonly file?: string,
  ) {}

  get<T = unknown>(name: string): T {
    if (!(name in this.values)) {
      const decl = optionDeclaration(name);
      if (!decl) throw new Error(`undeclared option ${name}`);
      return decl.default as T;
    }
    return this.values[name] as T;
  }
  str(name: string): string {
    return this.get<string>(name);
  }
  int(name: string): number {
    return this.get<number>(name);
  }
  bool(name: string): boolean {
    return this.get<boolean>(name);
  }
  list(name: string): string[] {
    return this.get<string[]>(name);
  }

  /** Changes an option in this process (config_option_update, tests). Validates like start-up. */
  set(name: string, raw: unknown): void {
    const decl = optionDeclaration(name);
    this.values[name] = decl ? convertOption(decl, raw) : raw;
  }

  /** Effective values of every declared option, secrets masked. */
  show(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const d of optionDeclarations().sort((a, b) => a.name.localeCompare(b.name))) {
      const v = this.get(d.name);
      out[d.name] = d.secret && v ? '********' : v;
    }
    return out;
  }
}

/** Builds the configuration; a bad value stops with a ConfigError naming the option. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = findConfigFile(opts);
  const raw: Record<string, unknown> = {};
  if (file) Object.assign(raw, parseIni(fs.readFileSync(file, 'utf8')));
  for (const d of optionDeclarations()) {
    const e = env[envName(d.name)];
    if (e !== undefined) raw[d.name] = e;
  }
  Object.assign(raw, opts.overrides ?? {});
  const values: ConfigValues = {};
  for (const [name, value] of Object.entries(raw)) {
    const decl = optionDeclaration(name);
    // Unknown keys in the ini file are kept as strings: plugins declared later may read them.
    values[name] = decl ? convertOption(decl, value) : value;
  }
  return new Config(values, file);
}
