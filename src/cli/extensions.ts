// Commands that plugins add to the CLI (e.g. `svc datastore set-permissions`).
import type { Command } from 'commander';
import type { Services } from '../context.ts';
import type { Config } from '../config/load.ts';

export interface CliTools {
  config: (overrides?: Record<string, unknown>) => Config;
  withServices: <T>(fn: (s: Services) => Promise<T>, overrides?: Record<string, unknown>) => Promise<T>;
}

export const cliCommands: ((program: Command, tools: CliTools) => void)[] = [];
