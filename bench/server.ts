// The real app (src/services.ts + src/http/app.ts) on a real port, as a child process of the
// benchmark so its memory (RSS) can be measured on its own. Configuration comes as JSON in
// SVC_BENCH_CONFIG; once listening it creates a sysadmin with an API token and reports
// {port, token} to the parent over IPC.
import pino from 'pino';
import { loadConfig } from '../src/config/load.ts';
import { buildApp } from '../src/http/app.ts';
import { closeServices, createServices } from '../src/services.ts';
import { insertUser } from '../src/model/users.ts';
import { hashPassword } from '../src/auth/passwords.ts';
import { issueToken } from '../src/actions/api-token.ts';

const overrides = JSON.parse(process.env.SVC_BENCH_CONFIG ?? '{}');
const config = loadConfig({ env: {}, overrides, cwd: overrides['svc.storage_path'] });
const services = await createServices(config, { logger: pino({ level: config.str('svc.log_level') }) });
const app = await buildApp(services);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;

const name = `bench_admin_${process.pid}`;
const user = await insertUser(services.db, {
  name,
  email: `${name}@example.org`,
  sysadmin: true,
  password_hash: await hashPassword('bench password 1'),
});
const { token } = await issueToken({ db: services.db, config: services.config } as any, user, 'bench');
process.send!({ port, token });

// 'fts-idle': answers once the data store's background full-text filler has nothing left to do
// (every vector computed and the table vacuumed and analyzed after it), so searches are timed on
// the settled table.
// 'fts-pause' / 'fts-resume' (answered with the same word): while paused the filler starts no
// batch, as while a write is in progress (bench datastore's load rounds: no fill of one phase's
// table during the timed phases after it; a table left unfilled 10 minutes is filled anyway).
let resumeFiller: (() => void) | null = null;
process.on('message', (m) => {
  const filler = (
    services.plugins.datastore as { sessions?: { filler?: { idle(): Promise<void>; writeStarted(): () => void } } } | undefined
  )?.sessions?.filler;
  if (m === 'fts-idle') void (filler?.idle() ?? Promise.resolve()).then(() => process.send!('fts-idle'));
  else if (m === 'fts-pause') {
    resumeFiller ??= filler?.writeStarted() ?? null;
    process.send!(m);
  } else if (m === 'fts-resume') {
    resumeFiller?.();
    resumeFiller = null;
    process.send!(m);
  }
});

const stop = async () => {
  await app.close();
  await closeServices(services);
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
