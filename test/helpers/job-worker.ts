// A separate worker process for the jobs test: runs the 'count' jobs of a PostgreSQL catalog until
// none is left, recording each run (job id, pid) in job_runs.
import pino from 'pino';
import { loadConfig } from '../../src/config/load.ts';
import { createServices, closeServices } from '../../src/services.ts';
import { runWorker } from '../../src/cli/jobs.ts';

const [url] = process.argv.slice(2);
const config = loadConfig({ env: {}, overrides: { 'svc.database_url': url, 'svc.plugins': [], 'svc.log_level': 'silent' } });
const services = await createServices(config, { logger: pino({ level: 'silent' }), worker: false, migrate: false });
services.jobs.registerJobType('count', async ({ job }) => {
  await services.db.query('INSERT INTO job_runs (job_id, pid) VALUES ($1, $2)', [job.id, process.pid]);
  await new Promise((r) => setTimeout(r, 2));
  return { pid: process.pid };
});
// Both processes start together (a slow start must not leave all jobs to the other one).
await services.db.query('INSERT INTO job_workers_ready (pid) VALUES ($1)', [process.pid]);
for (let i = 0; i < 1200; i++) {
  const r = await services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM job_workers_ready');
  if (r.rows[0].n >= 2) break;
  await new Promise((res) => setTimeout(res, 50));
}
await runWorker(services, [], true);
await closeServices(services);
