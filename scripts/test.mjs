#!/usr/bin/env node
// npm test: the whole suite on the embedded database (PGlite), then again on PostgreSQL when
// SVC_TEST_DATABASE_URL is set. Extra arguments are test files (default: every test/**/*.test.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
process.chdir(root);

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const args = process.argv.slice(2);
const files = args.length ? args : testFiles('test').sort();
const template = path.join(root, '.cache', 'pglite-template.tar.gz');

// One empty PGlite data dir, made once; every test database is loaded from it (sub-second).
if (!fs.existsSync(template)) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '-e', `import('./test/helpers/app.ts').then((m) => m.makePGliteTemplate(${JSON.stringify(template)}))`],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const passes = [['pglite', {}]];
if (process.env.SVC_TEST_DATABASE_URL) passes.push(['postgres', {}]);
else console.log('# SVC_TEST_DATABASE_URL is not set: running on PGlite only (set it to a PostgreSQL URL to run the PostgreSQL pass too)');

let failed = false;
for (const [db] of passes) {
  console.log(`# --- test pass on ${db} ---`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=900000', '--test-reporter=spec', ...files],
    {
      stdio: 'inherit',
      env: { ...process.env, SVC_TEST_DB: db, SVC_TEST_TEMPLATE: template },
    },
  );
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
