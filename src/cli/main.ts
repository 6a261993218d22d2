// The svc command line (bin/svc.js runs this): see program.ts.
import { runCli } from './program.ts';

// `svc config sample | head`: a reader that stops early is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
const code = await runCli(process.argv.slice(2));
// A failed command may leave handles open (a half-opened database): leave now. Success lets
// `svc serve` and `svc jobs worker` keep running and output drain.
if (code !== 0) process.exit(code);
