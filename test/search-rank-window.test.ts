// The rank window of package_search, checked against an independent reference through HTTP: for
// a query sorted by score, the newest svc.search.rank_window matches (metadata_modified desc,
// then id) are ordered by ts_rank, then by metadata_modified desc and id; the other matches follow
// in that cheap order. Every page (inside the window, across its end, past it) and the count must
// be those of the reference: two words, a phrase, one field's words, with ties of date and of
// score, private datasets, for an anonymous caller and for a sysadmin asking for private ones.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from './helpers/app.ts';

let t: TestApp;

const TEXTS = [
  { title: 'Water levels', notes: 'rainfall station records' },
  { title: 'Rainfall station', notes: 'rainfall at the station, daily rainfall' },
  { title: 'Water quality', notes: 'water quality monitoring programme near a rainfall station' },
  { title: 'Lakes', notes: 'station rainfall and water quality monitoring of lakes' },
  { title: 'Water quality monitoring', notes: 'water quality monitoring, water quality monitoring' },
  { title: 'Budget', notes: 'rainfall budget, no measuring post' },
];

before(async () => {
  t = await startApp({ plugins: [] });
  await t.ok('organization_create', { name: 'lab', title: 'Lab' }, { token: t.sysadminToken });
  for (let i = 0; i < 30; i++) {
    const text = TEXTS[i % TEXTS.length];
    await t.ok(
      'package_create',
      { name: `ds-${String(i).padStart(2, '0')}`, ...text, owner_org: 'lab', private: i % 7 === 3 },
      { token: t.sysadminToken },
    );
  }
  // dates in groups of three equal ones (ties broken by id), set before any search (no cached result)
  await t.services.db.query(
    `UPDATE package_search_index SET metadata_modified = timestamp '2026-01-01'
       + (((substr(name, 4)::int * 7) % 30) / 3) * interval '1 day'`,
  );
});

after(() => t?.close());

interface Query {
  q: string;
  /** The reference's match of a dataset's tsvector s.doc. */
  match: string;
  /** The tsquery the score is computed with. */
  rank: string;
}

const QUERIES: Query[] = [
  {
    q: 'rainfall station',
    match: "s.doc @@ plainto_tsquery('english', 'rainfall') AND s.doc @@ plainto_tsquery('english', 'station')",
    rank: "plainto_tsquery('english', 'rainfall') || plainto_tsquery('english', 'station')",
  },
  {
    q: '"water quality monitoring"',
    match: "s.doc @@ phraseto_tsquery('english', 'water quality monitoring')",
    rank: "phraseto_tsquery('english', 'water quality monitoring')",
  },
  { q: 'title:water', match: "s.doc @@ to_tsquery('english', 'water:A')", rank: "plainto_tsquery('english', 'water')" },
];

/** The names in result order and the count, computed without the engine. */
async function reference(query: Query, window: number, withPrivate: boolean): Promise<string[]> {
  const visible = withPrivate ? "s.state = 'active'" : "s.state = 'active' AND NOT s.private";
  const r = await t.services.db.query<{ name: string }>(
    `WITH m AS (SELECT s.package_id, s.name, s.metadata_modified, ts_rank(s.doc, ${query.rank}) AS score,
         row_number() OVER (ORDER BY s.metadata_modified DESC, s.package_id) AS cheap
       FROM package_search_index s WHERE ${visible} AND ${query.match})
     SELECT name FROM m
     ORDER BY cheap > $1, CASE WHEN cheap <= $1 THEN score END DESC, metadata_modified DESC, package_id`,
    [window],
  );
  return r.rows.map((x) => x.name);
}

async function pages(q: string, rows: number, withPrivate: boolean): Promise<{ names: string[]; counts: Set<number> }> {
  const names: string[] = [];
  const counts = new Set<number>();
  const opts = withPrivate ? { token: t.sysadminToken } : {};
  for (let start = 0; ; start += rows) {
    const r = await t.ok('package_search', { q, rows, start, ...(withPrivate ? { include_private: true } : {}) }, opts);
    counts.add(r.count);
    names.push(...r.results.map((d: any) => d.name));
    if (r.results.length < rows) break;
  }
  return { names, counts };
}

test('every page of a query sorted by score is the reference order, whatever the window', async () => {
  try {
    for (const window of [4, 7, 1000]) {
      t.services.config.set('svc.search.rank_window', window);
      for (const query of QUERIES) {
        for (const withPrivate of [false, true]) {
          const expected = await reference(query, window, withPrivate);
          const label = `${query.q} window ${window}${withPrivate ? ' with private' : ''}`;
          // the reference is not trivial: more matches than the small windows
          assert.ok(expected.length > 7, label);
          for (const rows of [1, 3, 10]) {
            const got = await pages(query.q, rows, withPrivate);
            assert.deepEqual(got.names, expected, `${label}, rows ${rows}`);
            assert.deepEqual([...got.counts], [expected.length], `${label}, rows ${rows}`);
          }
        }
      }
    }
  } finally {
    t.services.config.set('svc.search.rank_window', 1000);
  }
});

test('the reference has ties of date and score, private matches, and orders the window by score', async () => {
  const names = (await t.services.db.query<{ name: string; private: boolean }>('SELECT name, private FROM package_search_index')).rows;
  assert.ok(names.some((x) => x.private));
  const ties = await t.services.db.query<{ n: string }>(
    'SELECT count(*) AS n FROM (SELECT metadata_modified FROM package_search_index GROUP BY 1 HAVING count(*) > 1) x',
  );
  assert.ok(Number(ties.rows[0].n) >= 5);
  // inside a window of 1000 the order differs from the date order: the score leads
  const q = QUERIES[0];
  const byScore = await reference(q, 1000, false);
  const byDate = await reference(q, 0, false);
  assert.notDeepEqual(byScore, byDate);
  assert.deepEqual([...byScore].sort(), [...byDate].sort());
  // private datasets are found only by whom may see them
  const anonymous = await reference(q, 1000, false);
  const sysadmin = await reference(q, 1000, true);
  assert.ok(sysadmin.length > anonymous.length);
  const first = await t.ok('package_search', { q: q.q, rows: 100 });
  assert.ok(first.results.every((d: any) => !d.private));
});
