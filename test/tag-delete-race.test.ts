// A free tag no dataset uses any more is deleted (dataset_purge; tags a harvest made ahead for
// records that were then refused), and its links go with it (ON DELETE CASCADE). A dataset write
// linking that tag at the same moment must keep its link: the tag is locked first, which waits
// for the linking write to end, and only then found unused or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PostgresDatabase } from '../src/db/database.ts';
import { onPostgres, startApp } from './helpers/app.ts';

test('dataset_purge keeps a tag that another write links while the purge runs', {
  skip: !onPostgres && 'PostgreSQL only: the embedded database runs one transaction at a time',
}, async () => {
  const t = await startApp({ plugins: [] });
  const admin = { token: t.sysadminToken };
  try {
    const org = await t.ok('organization_create', { name: 'tag-race-org' }, admin);
    await t.ok('package_create', { name: 'goes', owner_org: org.id, tags: [{ name: 'shared-once' }] }, admin);
    const stays = await t.ok('package_create', { name: 'stays', owner_org: org.id }, admin);
    const tagId = (await t.ok('tag_show', { id: 'shared-once' }, admin)).id as string;

    // another writer links the tag to "stays" and has not committed yet
    const other = await (t.services.db as PostgresDatabase).raw.connect();
    try {
      await other.query('BEGIN');
      await other.query('INSERT INTO package_tags (package_id, tag_id) VALUES ($1, $2)', [stays.id, tagId]);
      const purge = t.call('dataset_purge', { id: 'goes' }, admin);
      // the purge waits for the other writer's link (its lock on the tag) before it decides
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query('COMMIT');
      const purged = await purge;
      assert.equal(purged.status, 200, JSON.stringify(purged.body));
    } finally {
      other.release();
    }
    const links = await t.services.db.query<{ n: string }>('SELECT count(*) AS n FROM package_tags WHERE tag_id = $1', [tagId]);
    assert.equal(Number(links.rows[0].n), 1, 'the link made while the purge ran is kept');
    assert.equal((await t.ok('tag_show', { id: 'shared-once' }, admin)).name, 'shared-once');
    assert.equal((await t.call('package_show', { id: 'goes' }, admin)).status, 404);
  } finally {
    await t.close();
  }
});
