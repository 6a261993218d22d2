// Runs svc's command line in this process, its output captured (test/cli.test.ts, search-cli).
import { runCli } from '../../src/cli/program.ts';
import type { TestApp } from './app.ts';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export interface CliOptions {
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  /** Open the command's own services from the configuration instead of the test app's. */
  own?: boolean;
}

/** Runs `svc <argv>` on the test app's services (or its own, with `own`), in its storage folder. */
export async function runCliIn(t: TestApp, argv: string[], opts: CliOptions = {}): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
    env: opts.env ?? {},
    cwd: t.storagePath,
    stdin: opts.stdin ?? '',
    services: opts.own ? undefined : t.services,
  });
  return { code, out, err };
}
