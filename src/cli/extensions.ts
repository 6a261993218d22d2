// What a CLI command gets to run (src/cli/program.ts), and the commands plugins add to the CLI
// (e.g. `svc datastore set-permissions`). A plugin's CLI module is imported for every command,
// --help included: it declares names, options and descriptions only, and imports its code inside
// the action (see src/cli/plugin-commands.ts).
import type { Command } from 'commander';
import type { Services } from '../context.ts';
import type { Config } from '../config/load.ts';

/** An error whose message is all the user needs (no stack). */
export class CliError extends Error {}

/** Where a CLI run reads and writes: the process's streams, or captured ones in tests. */
export interface CliIo {
  /** Writes to standard output (text as given: add the newline). */
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Standard input: the process's stream, or the whole text in tests. */
  stdin: NodeJS.ReadStream | string;
  /** Already open services to run on (tests); the CLI opens and closes its own otherwise. */
  services?: Services;
}

export interface CliTools {
  io: CliIo;
  /** The configuration, with every option declared (core and plugins). */
  config: (overrides?: Record<string, unknown>) => Promise<Config>;
  withServices: <T>(fn: (s: Services) => Promise<T>, overrides?: Record<string, unknown>) => Promise<T>;
  /** Prints one line on standard output. */
  print: (line: string) => void;
  /** Ends the run with this exit status once the command returns. */
  setExitCode: (code: number) => void;
}

export const cliCommands: ((program: Command, tools: CliTools) => void)[] = [];
