// The per-value dataset counts of the search index (package_search_value_counts, migration 011),
// kept exact by triggers in the transaction of every index change. A query that has nothing but
// the visibility of a counted class reads its count and facets here instead of scanning the index.
// A count is its kept row plus the pending changes (migration 023): read only through the views
// package_search_value_counts_now and package_search_field_counts_now.
import type { Database, Queryable } from '../db/database.ts';
import { COUNTED_COLUMNS, facetableField } from './fields.ts';
import { lexemeQuery } from './sql-builder.ts';

/**
 * 'public': active datasets that are not private (everyone); 'active': all active ones (sysadmins
 * with include_private); 'public:<lexeme>': the public ones whose text has a counted word (migration 012).
 */
export type CountedClass = 'public' | 'active' | `public:${string}`;

/** The counted column of a facet field, or null when it has to be counted by a scan. */
export function countedColumn(field: string): string | null {
  const f = facetableField(field);
  if (!f || (f.type !== 'string' && f.type !== 'strings')) return null;
  return COUNTED_COLUMNS.includes(f.column) ? f.column : null;
}

export interface CountsResult {
  count: number;
  facets: Record<string, { name: string; count: number }[]>;
}

/**
 * The number of datasets of the class and the facets of the given (counted) fields, in one
 * statement: facet columns from package_search_value_counts, custom fields (those without a
 * counted column, listed in package_search_counted_fields: classes 'public' and 'active' only)
 * from package_search_field_counts.
 */
export async function readCounts(
  db: Queryable,
  cls: CountedClass,
  facetFields: string[],
  query: { facetLimit: number; facetMincount: number },
): Promise<CountsResult> {
  const columns = ['', ...facetFields.map((f) => countedColumn(f) ?? f)];
  const custom = [false, ...facetFields.map((f) => countedColumn(f) === null)];
  const r = await db.query<{ i: number; name: string; n: string }>(
    `SELECT f.i::int AS i, c.value AS name, c.n FROM unnest($2::text[], $5::boolean[]) WITH ORDINALITY AS f (field, custom, i)
     CROSS JOIN LATERAL (SELECT value, n FROM (
         SELECT value, n FROM package_search_value_counts_now WHERE NOT f.custom AND class = $1 AND field = f.field
         UNION ALL SELECT value, n FROM package_search_field_counts_now WHERE f.custom AND class = $1 AND field = f.field) x
       WHERE n >= CASE WHEN f.field = '' THEN 0 ELSE $3::bigint END
       ORDER BY n DESC, value LIMIT CASE WHEN f.field = '' OR $4::bigint < 0 THEN NULL ELSE $4::bigint END) c`,
    [cls, columns, Math.max(1, query.facetMincount), query.facetLimit, custom],
  );
  const out: CountsResult = { count: 0, facets: Object.fromEntries(facetFields.map((f) => [f, []])) };
  for (const row of r.rows) {
    if (row.i === 1) out.count = Number(row.n);
    else out.facets[facetFields[row.i - 2]].push({ name: row.name, count: Number(row.n) });
  }
  return out;
}

/** Whether a statement was stopped by its time limit (statement_timeout, or the embedded database's worker). */
const stopped = (e: unknown) => (e as { code?: string }).code === '57014';

/**
 * Waits until the transactions of this database that hold a transaction id now have ended (ids are
 * the whole server's: a snapshot's xmin would wait for other databases too); false when some
 * still run after waitMs. Each check is a statement of its own.
 */
async function earlierWritersEnded(db: Queryable, waitMs: number): Promise<boolean> {
  const writers = (
    await db.query<{ pid: number; xid: string }>(
      `SELECT pid, backend_xid::text AS xid FROM pg_stat_activity
       WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()`,
    )
  ).rows;
  if (!writers.length) return true;
  const until = Date.now() + waitMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const r = await db.query<{ running: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_stat_activity a, unnest($1::int[], $2::text[]) w (pid, xid)
       WHERE a.pid = w.pid AND a.backend_xid::text = w.xid) AS running`,
      [writers.map((w) => w.pid), writers.map((w) => w.xid)],
    );
    if (!r.rows[0].running) return true;
    if (Date.now() >= until) return false;
  }
}

/*
 * Counting starts without a lock on the index (migration 018), in three steps:
 *   1. the word or fields are listed, not ready: every index write that starts after this commit
 *      counts them (its triggers read the list);
 *   2. wait for the transactions that may have written before the list said so (those of the
 *      database that hold a transaction id after the commit) to end: from then on every write
 *      that a new snapshot does not see counts them;
 *   3. one statement (one snapshot) adds to the counts (as pending changes) what a scan of the
 *      index finds less what the triggers had counted in that snapshot, and marks them ready; writes committed after its
 *      snapshot add their own. Queries read the counts of ready ones only.
 * False when step 2 or 3 took too long: the list stays (the triggers count it), and the query
 * scans; a later one goes on from step 2. Writes in REPEATABLE READ transactions would read an
 * older list: svc writes the index in READ COMMITTED ones only.
 */

/** Starts counting the facets of a word (a lexeme of the index's text), migration 012. */
export async function countWord(db: Database, word: string, waitMs = 1000): Promise<boolean> {
  try {
    await db.query('INSERT INTO package_search_counted_words (word, ready) VALUES ($1, false) ON CONFLICT DO NOTHING', [word]);
    if (!(await earlierWritersEnded(db, waitMs))) return false;
    await db.query(
      `WITH ready AS (UPDATE package_search_counted_words SET ready = true WHERE word = $1 AND NOT ready RETURNING word)
       INSERT INTO package_search_value_deltas (class, field, value, n)
       SELECT class, field, value, sum(n) FROM (
         SELECT 'public:' || $1 AS class, t.field, t.value, count(*) AS n FROM package_search_index r,
           package_search_field_triples(r.state, r.private, r.organization, r.owner_org, r.license_id, r.type, r.tags, r.groups, r.res_format, r.res_type, NULL) t
         WHERE EXISTS (SELECT 1 FROM ready) AND r.state = 'active' AND NOT r.private AND r.doc @@ $2::tsquery AND t.class = 'public'
         GROUP BY 2, 3
         UNION ALL
         SELECT class, field, value, -n FROM package_search_value_counts_now WHERE class = 'public:' || $1 AND EXISTS (SELECT 1 FROM ready)
       ) x
       GROUP BY 1, 2, 3 HAVING sum(n) <> 0`,
      [word, lexemeQuery(word)],
    );
    return true;
  } catch (e) {
    if (stopped(e)) return false;
    throw e;
  }
}

/** Starts counting the values of custom facet fields (migration 017), as countWord does for a word. */
export async function countFields(db: Database, fields: string[], waitMs = 1000): Promise<boolean> {
  try {
    await db.query('INSERT INTO package_search_counted_fields (field, ready) SELECT unnest($1::text[]), false ON CONFLICT DO NOTHING', [
      fields,
    ]);
    if (!(await earlierWritersEnded(db, waitMs))) return false;
    await db.query(
      `WITH ready AS (UPDATE package_search_counted_fields SET ready = true WHERE field = ANY($1::text[]) AND NOT ready RETURNING field)
       INSERT INTO package_search_field_deltas (class, field, value, n)
       SELECT class, field, value, sum(n) FROM (
         SELECT t.class, t.field, t.value, count(*) AS n FROM package_search_index r,
           package_search_custom_triples(r.state, r.private, r.extras) t
         WHERE t.field IN (SELECT field FROM ready) GROUP BY 1, 2, 3
         UNION ALL
         SELECT class, field, value, -n FROM package_search_field_counts_now WHERE field IN (SELECT field FROM ready)
       ) x
       GROUP BY 1, 2, 3 HAVING sum(n) <> 0`,
      [fields],
    );
    return true;
  } catch (e) {
    if (stopped(e)) return false;
    throw e;
  }
}
