// Concurrent dataset writes do not wait for each other's after-save work (issue #32: 4 clients
// creating datasets): the search index row, whose counts lock rows every write shares until the
// commit (migration 011), is written after the other change listeners, so a write busy in them
// holds no shared row. PostgreSQL only (PGlite runs one transaction at a time).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { onPostgres, startApp, type TestApp } from './helpers/app.ts';
import { onPackageChange } from '../src/model/packages.ts';

let t: TestApp;
const admin = () => ({ token: t.sysadminToken });
/** Datasets whose change listener waits until released. */
const held = new Map<string, { reached: () => void; release: Promise<void> }>();

before(async () => {
  if (!onPostgres) return;
  t = await startApp({ plugins: ['activity'] });
  onPackageChange(t.services, async (_db, packageId) => {
    const h = held.get(packageId);
    if (!h) return;
    h.reached();
    await h.release;
  });
  await t.ok('organization_create', { name: 'wl-org' }, admin());
  // (a tag made by two writes at once is one row: the second waits for the first; here it exists)
  await t.ok('package_create', { name: 'wl-zero', owner_org: 'wl-org', tags: [{ name: 'shared' }] }, admin());
});
after(async () => {
  await t?.close();
});

/** Resolves 'blocked' once a backend of this database waits for a lock. */
async function someoneBlocked(): Promise<'blocked'> {
  for (;;) {
    const r = await t.services.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (r.rows[0].n > 0) return 'blocked';
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a create busy in its change listeners does not hold up another create', { skip: !onPostgres }, async () => {
  const id = randomUUID();
  let reached!: () => void;
  let release!: () => void;
  const inListener = new Promise<void>((r) => (reached = r));
  held.set(id, { reached, release: new Promise<void>((r) => (release = r)) });
  const first = t.ok('package_create', { id, name: 'wl-first', owner_org: 'wl-org', tags: [{ name: 'shared' }] }, admin());
  await inListener;
  try {
    const second = t.ok('package_create', { name: 'wl-second', owner_org: 'wl-org', tags: [{ name: 'shared' }] }, admin());
    assert.equal(await Promise.race([second.then(() => 'done' as const), someoneBlocked()]), 'done');
  } finally {
    release();
  }
  await first;
  const found = await t.ok('package_search', { q: 'tags:shared', fq: 'organization:wl-org' });
  assert.equal(found.count, 3);
  assert.deepEqual(found.results.map((d: { name: string }) => d.name).sort(), ['wl-first', 'wl-second', 'wl-zero']);
});
