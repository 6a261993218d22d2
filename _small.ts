// Manual check: a 100k-row datastore_upsert (10 requests of 10,000 rows: insert into a table
// without key, then upsert by primary key) on the embedded data store. ROOT = the checkout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const ROOT = process.env.ROOT!;
const { loadConfig } = await import(`${ROOT}/src/config/load.ts`);
const { createServices, closeServices } = await import(`${ROOT}/src/services.ts`);
const { buildApp } = await import(`${ROOT}/src/http/app.ts`);
const { insertUser } = await import(`${ROOT}/src/model/users.ts`);
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-load-'));
const config = loadConfig({ env: {}, overrides: { 'svc.storage_path': storage, 'svc.site_url': 'http://x', 'svc.log_level': 'silent' }, cwd: storage });
const services = await createServices(config);
const app = await buildApp(services);
await app.ready();
const admin = await insertUser(services.db, { name: 'admin', email: 'a@x', sysadmin: true, password_hash: 'x' });
const { issueToken } = await import(`${ROOT}/src/actions/api-token.ts`);
const { token } = await issueToken({ db: services.db, config: services.config } as any, admin, 't');
const call = async (action: string, body: unknown) => {
  const r = await app.inject({ method: 'POST', url: `/api/3/action/${action}`, headers: { authorization: token, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const j = r.json();
  if (!j.success) throw new Error(`${action}: ${JSON.stringify(j.error).slice(0, 300)}`);
  return j.result;
};
await call('organization_create', { name: 'org1' });
await call('package_create', { name: 'pkg1', owner_org: 'org1' });
const fields = [{ id: 'row_id', type: 'int' }, { id: 'name', type: 'text' }, { id: 'amount', type: 'numeric' }, { id: 'day', type: 'date' }, { id: 'note', type: 'text' }];
const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ row_id: from + i, name: `name ${from + i}`, amount: (from + i) * 1.25, day: '2024-03-04', note: 'some text here, with a comma' }));
for (const method of ['insert', 'upsert']) {
  const res = await call('datastore_create', { resource: { package_id: 'pkg1' }, fields, ...(method === 'upsert' ? { primary_key: ['row_id'] } : {}) });
  const started = performance.now();
  for (let b = 0; b < 100; b++) await call("datastore_upsert", { resource_id: res.resource_id, method, records: rows((b % 7) * 100, 120) });
  const ms = performance.now() - started;
  console.log(`${method}: 100 requests of 120 rows in ${(ms / 1000).toFixed(2)} s (${Math.round(100000 / (ms / 1000))} rows/s)`);
}
await app.close();
await closeServices(services);
fs.rmSync(storage, { recursive: true, force: true });
