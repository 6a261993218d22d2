// The search engine kept inside the catalog database: package_search_index rows written in the
// same transaction as the dataset (index/remove), and queries as SQL over that table (query).
//
// Ranking: a broad term can match most of the catalog, and scoring every match is what makes
// full-text search slow. When more than rankWindow datasets match, only the first rankWindow of
// them in the cheap order (the sort keys after score, by default metadata_modified desc, an index
// walk) are scored; the result order is those, best score first, then the remaining matches in
// the cheap order. The order is the same whatever start is, so paging never repeats or skips.
import { isDatabase, isPool, sideBySide, type Queryable } from '../db/database.ts';
import { SearchQueryError } from '../errors.ts';
import { columnSql, countedCustomField, resolveField, sortableField, type FieldKind } from './fields.ts';
import type { SearchSchemaFields } from './schema-fields.ts';
import { parseQuery, type QueryNode } from './query-parser.ts';
import { balanced, phraseRun, SqlBuilder, TS_CONFIG, textQueriesOf, type TextFacts } from './sql-builder.ts';
import { INDEX_ONE_SQL, INDEX_SQL } from './index-rows.ts';
import { ResultCache } from './result-cache.ts';
import type { PackageQuery, PackageQueryResult, SearchEngine, SortKey } from './engine.ts';
import { countFields, countWord, countedColumn, readCounts, type CountedClass, type CountsResult } from './value-counts.ts';
import { facetsOfMatches, readFacetRows, scanCountAndFacets, scanFacet, type FacetItem } from './facets.ts';
import { typedSortPage, type TypedSortKey } from './typed-sort.ts';
import { spatialCondition, spatialSortKey, type SpatialFilter } from './spatial.ts';
import { mergeSql, type CountMerger } from './count-merge.ts';

export interface PostgresEngineOptions {
  /** svc.auth.allow_dataset_collaborators: collaborator labels are indexed. */
  collaborators: () => boolean;
  /** svc.search.remove_deleted_packages: deleted datasets leave the index. */
  removeDeleted: () => boolean;
  /** How many matches are scored at most (see above). */
  rankWindow: () => number;
  /**
   * A one-word query with facets matching at least this many public datasets has its word's
   * facets counted from then on (value-counts.ts, countWord); 0: never.
   */
  countedWordMin: () => number;
  /** What the configured dataset schemas say of custom fields (schema-fields.ts). */
  schemaFields: () => SearchSchemaFields;
  /** When the pending count changes are merged (migration 023). */
  merger: CountMerger;
}

interface IndexState {
  generation: string;
  text: TextFacts;
  wordCount: number | null;
  lexeme: string | null;
  counted: boolean;
}

/** Prepared once per connection: planning the statement took 2-3 ms a write (one dataset: index-rows.ts). */
const INDEX_ROWS = { name: 'svc_search_index_rows', text: INDEX_SQL };
const INDEX_ONE_ROW = { name: 'svc_search_index_row', text: INDEX_ONE_SQL };

/** The word of a query that is one plain word of the whole text (no field, phrase or wildcard). */
function singleWord(node: QueryNode): string | null {
  if (node.kind !== 'term' || node.phrase || node.wildcard) return null;
  const f = resolveField(node.field);
  return f.type === 'fulltext' && f.weight === null ? node.value : null;
}

/** A filter query that names the state field (the caller then chooses states, within the visibility). */
const mentionsState = (fq: string) => /(^|[\s(+])state:/.test(fq);

/** The ORDER BY of a query: full (with the rank), cheap (without), and how many parameters cheap needs. */
interface Order {
  full: string;
  cheap: string;
  cheapParams: number;
  /** The rank's SQL when the sort has score (its parameters are the last ones). */
  rank: string | null;
  /** The first sort key is a typed custom field: the page walks the index of its values. */
  typed?: TypedSortKey;
}

/** Whether the results are ordered by score first (only the rank window is scored). */
const scoresFirst = (query: PackageQuery, rank: string | null) =>
  rank !== null && (query.sort[0]?.field === 'score' || query.sort[0]?.field === 'rank');

function sortExpression(f: FieldKind, builder: SqlBuilder): { sql: string; nullable: boolean; typedKey?: string } {
  switch (f.type) {
    case 'string':
      return { sql: `${columnSql(f.column)} COLLATE "C"`, nullable: !['name', 'package_id', 'state', 'type', 'title'].includes(f.column) };
    case 'extra':
      // a typed field by its least value (a list's), found by the index of its values
      if (f.typed) {
        const typedKey = builder.param(f.key);
        return {
          sql: `(SELECT min(v.${f.typed === 'date' ? 'ts' : 'num'}) FROM package_search_field_values v
            WHERE v.package_id = s.package_id AND v.field = ${typedKey}::text)`,
          nullable: true,
          typedKey,
        };
      }
      return { sql: `(s.extras ->> ${builder.param(f.key)}::text) COLLATE "C"`, nullable: true };
    case 'int':
    case 'date':
    case 'bool':
      return { sql: columnSql(f.column), nullable: false };
    default:
      throw new Error('not sortable');
  }
}

export class PostgresSearchEngine implements SearchEngine {
  private readonly cache = new ResultCache();
  /** Custom fields known to be counted (package_search_counted_fields: the list only grows). */
  private readonly countedFields = new Set<string>();
  constructor(private readonly opts: PostgresEngineOptions) {}

  /**
   * Marks the index as changed; called after the change has committed, so that a result computed
   * from a snapshot taken before the commit is never filed under the new generation.
   */
  async changed(db: Queryable): Promise<void> {
    // on one connection the pending counts are merged in the same statement (count-merge.ts)
    const generation = "nextval('package_search_generation')";
    await db.query(this.opts.merger.changed() ? mergeSql(generation) : `SELECT ${generation}`);
  }

  async index(db: Queryable, packageIds: string[]): Promise<void> {
    if (!packageIds.length) return;
    // one statement writes the rows (labels in SQL) and answers the ids it wrote none for
    const one = packageIds.length === 1;
    const r = await db.query<{ unwritten: string[] }>(one ? INDEX_ONE_ROW : INDEX_ROWS, [
      one ? packageIds[0] : packageIds,
      this.opts.removeDeleted(),
      this.opts.collaborators(),
    ]);
    await this.remove(db, r.rows[0].unwritten);
  }

  async remove(db: Queryable, packageIds: string[]): Promise<void> {
    if (packageIds.length) await db.query('DELETE FROM package_search_index WHERE package_id = ANY($1::text[])', [packageIds]);
  }

  async query(db: Queryable, query: PackageQuery): Promise<PackageQueryResult> {
    const budget = { clauses: 0, wildcards: 0, phrases: 0 };
    const qNode = parseQuery(query.q, 'q', budget);
    const fqNodes = query.fq.map((f) => parseQuery(f, 'fq', budget));
    // a single word that everyone may find (words are counted for the class 'public' only): its
    // count is read with the rest
    const word = fqNodes.length === 0 ? singleWord(qNode) : null;
    const wordClass = word && this.countedClass(query) === 'public' ? 'public' : null;
    const state = await this.readState(db, [qNode, ...fqNodes], wordClass ? { word: word!, cls: wordClass } : null);
    const params: unknown[] = [];
    const schema = this.opts.schemaFields();
    const builder = new SqlBuilder(params, state.text, schema);
    const visible = { sql: this.visibility(query, builder), countedClass: this.countedClass(query) };
    const conditions = [builder.where(qNode)];
    // filters do not score: their terms are left out of the rank
    builder.scoring = false;
    for (const n of fqNodes) conditions.push(builder.where(n));
    if (query.spatial) conditions.push(spatialCondition(query.spatial, builder));
    const filters = conditions.filter((c) => c !== 'TRUE');
    const where = [visible.sql, ...filters].filter((c) => c !== 'TRUE').join(' AND ') || 'TRUE';
    // nothing but the visibility of a counted class: the count and facets are read from the counts;
    // a single word and that visibility: the count is the number of datasets with the word, and a
    // frequent word's count and facets are read from its own counts (migration 012)
    const term = filters.length === 1 && conditions[0] !== 'TRUE' && fqNodes.length === 0 ? singleWord(qNode) : null;
    // nothing but one filter on a custom field, for a counted class: its count from the index of
    // its values (counts of a choice, typed values), not from the matching rows
    const wordCount =
      term !== null
        ? state.wordCount
        : qNode.kind === 'all' &&
            fqNodes.length === 1 &&
            !query.spatial &&
            (visible.countedClass === 'public' || visible.countedClass === 'active')
          ? await this.customFilterCount(db, fqNodes[0], schema, visible.countedClass)
          : null;
    const countedClass =
      filters.length === 0 ? visible.countedClass : wordCount !== null ? await this.countedWordClass(db, query, state, wordCount) : null;
    // Parameters in the order the statements use them: the conditions', the sort's, the rank's
    // (bound only when the sort has score). A statement leaves out those it does not use: a
    // parameter a statement never names has no type (a PostgreSQL error).
    const whereParams = params.length;
    const rankSql = builder.rankQueries.length
      ? () =>
          `ts_rank(s.doc, ${balanced(
            builder.rankQueries.map((q) => q()),
            '||',
          )})`
      : null;
    const order = this.orderBy(query.sort, rankSql, builder, schema, query.spatial);
    const rank = order.rank;

    // A cached result is valid while no index change has committed since it was computed.
    const key = JSON.stringify([
      where,
      params,
      order,
      query.start,
      query.rows,
      query.sort,
      query.facetFields,
      query.facetLimit,
      query.facetMincount,
      this.opts.rankWindow(),
    ]);
    const cached = this.cache.get(key, state.generation);
    if (cached) return cached;
    const custom =
      countedClass === 'public' || countedClass === 'active'
        ? await this.countedCustomFields(db, query.facetFields, schema)
        : new Set<string>();
    const result = await this.compute(db, where, params, whereParams, order, rank, query, countedClass, wordCount, custom);
    this.cache.set(key, state.generation, result);
    return result;
  }

  private async compute(
    db: Queryable,
    where: string,
    params: unknown[],
    /** How many of params the conditions use (the rest: the sort's and the rank's). */
    whereParams: number,
    order: Order,
    rank: string | null,
    query: PackageQuery,
    countedClass: CountedClass | null,
    /** The query is a single word: how many datasets the caller may find have it (null: count them). */
    wordCount: number | null,
    /** Custom facet fields counted per value (for the classes 'public' and 'active'). */
    customCounted: ReadonlySet<string>,
  ): Promise<PackageQueryResult> {
    const fields = [...new Set(query.facetFields)];
    const counts = countedClass ? fields.filter((f) => countedColumn(f) !== null || customCounted.has(f)) : [];
    const scanned = fields.filter((f) => !counts.includes(f));
    // On a pool the statements run side by side: each scanned facet has its own (more cores, less
    // time); on one connection one scan gives the count and every scanned facet (less work).
    const onPool = isPool(db);
    const whereOnly = params.slice(0, whereParams);
    const counting = async (): Promise<{ count: number; facets: Record<string, FacetItem[]> }> => {
      if (scanned.length && !onPool) return scanCountAndFacets(db, where, whereOnly, scanned, query);
      if (countedClass) return readCounts(db, countedClass, counts, query);
      if (wordCount !== null) return { count: wordCount, facets: {} };
      const r = await db.query<{ n: string }>(`SELECT count(*) AS n FROM package_search_index s WHERE ${where}`, whereOnly);
      return { count: Number(r.rows[0].n), facets: {} };
    };
    // A count that must be scanned and a page inside the rank window: one statement reads the
    // matches once, for the count, the facets (all scanned: nothing is counted here) and the page.
    // On a pool too: the statements side by side would each find and read every match again.
    const together =
      !countedClass &&
      wordCount === null &&
      scoresFirst(query, rank) &&
      query.rows > 0 &&
      query.start + query.rows <= this.opts.rankWindow();
    const tasks: (() => Promise<unknown>)[] = together
      ? [() => this.countAndRankedPage(db, where, params, order, query, scanned)]
      : [counting, () => this.page(db, where, params, order, rank, query)];
    const first = tasks.length;
    if (onPool && !together) for (const f of scanned) tasks.push(() => scanFacet(db, where, whereOnly, f, query));
    else if (counts.length && scanned.length) tasks.push(() => readCounts(db, countedClass!, counts, query));
    const done = await sideBySide(db, tasks);
    type Counted = { count: number; facets: Record<string, FacetItem[]> };
    const counted = done[0] as Counted;
    const ids = (together ? (done[0] as { ids: string[] }).ids : done[1]) as string[];
    const more = done.slice(first);
    // Facet names come from the caller: no lookup may reach Object.prototype ('constructor', '__proto__').
    const facets: PackageQueryResult['facets'] = Object.create(null);
    for (const f of query.facetFields) {
      if (Object.hasOwn(counted.facets, f)) facets[f] = counted.facets[f];
      else if (onPool) facets[f] = more[scanned.indexOf(f)] as FacetItem[];
      else facets[f] = (more[0] as CountsResult).facets[f];
    }
    return { count: counted.count, ids, facets };
  }

  /**
   * The facet fields of a query that the schemas declare counted and that are counted: those
   * listed already, and the others listed now when this call may open a transaction of its own
   * (countFields; else they are scanned).
   */
  private async countedCustomFields(db: Queryable, facetFields: string[], schema: SearchSchemaFields): Promise<Set<string>> {
    const wanted = [...new Set(facetFields.filter((f) => countedCustomField(f, schema) !== null))];
    const missing = wanted.filter((f) => !this.countedFields.has(f));
    if (missing.length) {
      const listed = await db.query<{ field: string }>(
        'SELECT field FROM package_search_counted_fields WHERE field = ANY($1::text[]) AND ready',
        [missing],
      );
      for (const r of listed.rows) this.countedFields.add(r.field);
      const unlisted = missing.filter((f) => !this.countedFields.has(f));
      if (unlisted.length && isDatabase(db) && (await countFields(db, unlisted))) for (const f of unlisted) this.countedFields.add(f);
    }
    return new Set(wanted.filter((f) => this.countedFields.has(f)));
  }

  /**
   * How many datasets of the class match a filter that is one term or range of a custom field:
   * a value of a counted field (package_search_field_counts) or a typed value or range
   * (package_search_field_values: an index-only count). Null for any other filter.
   */
  private async customFilterCount(
    db: Queryable,
    node: QueryNode,
    schema: SearchSchemaFields,
    cls: 'public' | 'active',
  ): Promise<number | null> {
    if (node.kind !== 'term' && node.kind !== 'range') return null;
    const f = resolveField(node.field, schema);
    if (f.type !== 'extra' || !node.field) return null;
    const visible = cls === 'public' ? "v.state = 'active' AND NOT v.private" : "v.state = 'active'";
    if (f.typed) {
      const params: unknown[] = [];
      const b = new SqlBuilder(params, undefined, schema);
      const sql = b.typedCount(node, f.key, f.typed, visible);
      if (!sql) return null;
      return Number((await db.query<{ n: string }>(sql, params)).rows[0].n);
    }
    if (node.kind !== 'term' || node.wildcard || f.key !== node.field) return null;
    if (!(await this.countedCustomFields(db, [f.key], schema)).has(f.key)) return null;
    const r = await db.query<{ n: string }>(
      'SELECT coalesce((SELECT n FROM package_search_field_counts_now WHERE class = $1 AND field = $2 AND value = $3), 0) AS n',
      [cls, f.key, node.value],
    );
    return Number(r.rows[0].n);
  }

  /**
   * The counted class of a one-word query of the class 'public' whose facets can be read from the
   * counts: its word's, when the word is counted or has just been (it is frequent enough and this
   * call may open a transaction of its own); else null (the facets are scanned).
   */
  private async countedWordClass(db: Queryable, query: PackageQuery, state: IndexState, wordCount: number): Promise<CountedClass | null> {
    if (!state.lexeme || !query.facetFields.some((f) => countedColumn(f) !== null)) return null;
    if (state.counted) return `public:${state.lexeme}`;
    const min = this.opts.countedWordMin();
    if (min <= 0 || wordCount < min || !isDatabase(db)) return null;
    return (await countWord(db, state.lexeme)) ? `public:${state.lexeme}` : null;
  }

  /**
   * In one round trip: the index generation (for the result cache); which words and phrases are
   * only stop words (they match nothing in a tsvector: dropped, as Solr does); the lexemes of each
   * phrase that is a plain run (found by its phrase keys, migration 013); and, for a single
   * word, its lexeme, how many datasets of the class have it (null when it is more than one
   * lexeme) and whether its facets are counted (migration 012).
   */
  private async readState(db: Queryable, nodes: QueryNode[], word: { word: string; cls: CountedClass } | null): Promise<IndexState> {
    const tqs = nodes.flatMap((n) => textQueriesOf(n));
    const r = await db.query<{
      g: string;
      empty: boolean[] | null;
      phrases: (string | null)[] | null;
      n: string | null;
      lexeme: string | null;
      counted: boolean;
    }>(
      `WITH x AS (SELECT CASE WHEN cardinality(l) = 1 THEN l[1] END AS lexeme
         FROM (SELECT tsvector_to_array(to_tsvector('${TS_CONFIG}', $4::text)) AS l) y WHERE $4::text IS NOT NULL),
       t AS (SELECT i, k, CASE WHEN k = 'phrase' THEN phraseto_tsquery('${TS_CONFIG}', v) ELSE plainto_tsquery('${TS_CONFIG}', v) END AS q
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(k, v, i))
       SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM package_search_generation)::text || coalesce('@' || pg_last_wal_replay_lsn()::text, '') AS g,
        (SELECT array_agg(numnode(q) = 0 ORDER BY i) FROM t) AS empty,
        (SELECT array_agg(CASE WHEN k = 'phrase' THEN q::text END ORDER BY i) FROM t) AS phrases,
        (SELECT coalesce((SELECT n FROM package_search_value_counts_now WHERE class = $3 AND field = 'doc' AND value = x.lexeme), 0)
         FROM x WHERE x.lexeme IS NOT NULL) AS n,
        (SELECT lexeme FROM x) AS lexeme,
        EXISTS (SELECT 1 FROM package_search_counted_words w, x WHERE w.word = x.lexeme AND w.ready) AS counted`,
      [tqs.map((t) => t.kind), tqs.map((t) => t.value), word?.cls ?? null, word?.word ?? null],
    );
    const row = r.rows[0];
    return {
      generation: String(row.g),
      text: {
        stopWordsOnly: new Set(tqs.filter((_, i) => row.empty?.[i]).map((t) => SqlBuilder.textKey(t))),
        phraseLexemes: new Map(
          tqs.flatMap((t, i) => {
            const run = row.phrases?.[i] ? phraseRun(row.phrases[i]!) : null;
            return run ? [[SqlBuilder.textKey(t), run] as const] : [];
          }),
        ),
      },
      wordCount: row.n === null ? null : Number(row.n),
      lexeme: row.lexeme,
      counted: row.counted,
    };
  }

  /** The counted class (migration 011) that is exactly the datasets the caller may find, if any. */
  private countedClass(query: PackageQuery): CountedClass | null {
    const v = query.visibility;
    const onlyActive = !v.includeDrafts && !(v.includeDeleted && !this.opts.removeDeleted()) && !query.fq.some(mentionsState);
    if (!onlyActive) return null;
    return !v.includePrivate ? 'public' : v.sysadmin ? 'active' : null;
  }

  /**
   * Which datasets the caller may find: states asked for, private ones when asked, matched by
   * permission labels; and the counted class (migration 011) that is exactly those, if any.
   */
  private visibility(query: PackageQuery, builder: SqlBuilder): string {
    const v = query.visibility;
    const states = ['active'];
    if (v.includeDrafts) states.push('draft');
    if (v.includeDeleted && !this.opts.removeDeleted()) states.push('deleted');
    const statesFiltered = query.fq.some(mentionsState);
    const parts: string[] = [];
    if (!statesFiltered) parts.push(states.length === 1 ? `s.state = 'active'` : `s.state = ANY(${builder.param(states)}::text[])`);
    if (!v.includePrivate) parts.push('NOT s.private');
    // Active public datasets carry the label 'public' that every caller holds: the label test only
    // matters when private, draft or deleted datasets can match.
    const onlyPublic = !v.includePrivate && states.length === 1 && !statesFiltered;
    if (!v.sysadmin && !onlyPublic) parts.push(`s.labels && ${builder.param(v.labels)}::text[]`);
    return parts.length ? parts.join(' AND ') : 'TRUE';
  }

  private orderBy(
    sort: SortKey[],
    rankSql: (() => string) | null,
    builder: SqlBuilder,
    schema: SearchSchemaFields,
    spatial?: SpatialFilter,
  ): Order {
    const keys: string[] = [];
    const cheap: string[] = [];
    let byViews = false;
    let typedFirst: Omit<TypedSortKey, 'rest'> | undefined;
    // the rank's place in keys; its SQL is made after the loop (its parameters after the sort's)
    const RANK = '\u0000rank';
    for (const k of sort) {
      const overlap = spatialSortKey(k, spatial, rankSql !== null, builder);
      if (overlap) {
        keys.push(overlap);
        cheap.push(overlap);
        continue;
      }
      if (k.field === 'score' || k.field === 'rank') {
        if (rankSql) keys.push(`${RANK} ${k.desc ? 'DESC' : 'ASC'}`);
        continue;
      }
      // CKAN's "Popular" orders: page views are not tracked, so every dataset ties
      if (k.field === 'views_recent' || k.field === 'views_total') {
        byViews = true;
        continue;
      }
      const f = sortableField(k.field, schema);
      if (!f) throw new SearchQueryError(`Can not sort on field "${k.field}"`);
      const e = sortExpression(f, builder);
      const sql = `${e.sql} ${k.desc ? 'DESC' : 'ASC'}${e.nullable ? ' NULLS LAST' : ''}`;
      if (e.typedKey && !keys.length && f.type === 'extra')
        typedFirst = { field: e.typedKey, column: f.typed === 'date' ? 'ts' : 'num', desc: k.desc };
      keys.push(sql);
      cheap.push(sql);
    }
    if (!cheap.length) {
      cheap.push('s.metadata_modified DESC');
      if (byViews) keys.push('s.metadata_modified DESC');
    }
    const last = sort[sort.length - 1]?.field;
    if (last !== 'name' && last !== 'id') {
      keys.push('s.package_id');
      cheap.push('s.package_id');
    }
    const cheapParams = builder.params.length;
    const rank = rankSql && keys.some((k) => k.startsWith(RANK)) ? rankSql() : null;
    const full = keys.map((k) => (rank && k.startsWith(RANK) ? rank + k.slice(RANK.length) : k));
    return {
      full: full.join(', ') || 's.metadata_modified DESC, s.package_id',
      cheap: cheap.join(', '),
      cheapParams,
      rank,
      typed: typedFirst && { ...typedFirst, rest: full.slice(1).join(', ') },
    };
  }

  /**
   * The count, the facets of fields and a page inside the rank window (start + rows <= window,
   * score first) in one statement: the matches are read once (only the columns the cheap order
   * needs and the facets' values), the window's rows are found again by their ctid (same
   * snapshot) to be scored. The matches are a CTE of their own so that the planner cannot walk an
   * index in the cheap order to find them (it would test every row it walks, and the count needs
   * them all anyway).
   */
  private async countAndRankedPage(
    db: Queryable,
    where: string,
    params: unknown[],
    order: Order,
    query: PackageQuery,
    fields: string[],
  ): Promise<{ count: number; facets: Record<string, FacetItem[]>; ids: string[] }> {
    const p = [...params];
    const b = new SqlBuilder(p);
    const rows = b.param(query.rows);
    const start = b.param(query.start);
    const facets = facetsOfMatches(fields, b, query, ', NULL::text[]');
    const columns = [...new Set(order.cheap.match(/\bs\.[a-z_]+/g)), ...facets.columns].join(', ');
    const r = await db.query<{ f: number; name: string | null; n: string; ids: string[] | null }>(
      `WITH m AS MATERIALIZED (SELECT s.ctid AS t, ${columns} FROM package_search_index s WHERE ${where}),
       w AS (SELECT s.t FROM m s ORDER BY ${order.cheap} LIMIT ${this.opts.rankWindow() | 0})
       SELECT 0 AS f, NULL::text AS name, count(*) AS n,
        ARRAY(SELECT s.package_id FROM w JOIN package_search_index s ON s.ctid = w.t ORDER BY ${order.full}
         LIMIT ${rows} OFFSET ${start}) AS ids FROM m
       ${facets.branches.join('\n       ')}`,
      p,
    );
    const ids = r.rows.find((x) => x.f === 0)!.ids ?? [];
    return { ...readFacetRows(r.rows, fields), ids };
  }

  private async page(
    db: Queryable,
    where: string,
    params: unknown[],
    order: Order,
    rank: string | null,
    query: PackageQuery,
  ): Promise<string[]> {
    const { start, rows } = query;
    if (rows === 0) return [];
    const window = this.opts.rankWindow();
    const scoreFirst = scoresFirst(query, rank);
    const select = async (sql: string, limit: number, offset: number, used = params) =>
      (await db.query<{ id: string }>(`${sql} LIMIT $${used.length + 1} OFFSET $${used.length + 2}`, [...used, limit, offset])).rows.map(
        (r) => r.id,
      );
    // with score first, the window holds every match when there are fewer: the same order as scoring all
    if (!scoreFirst) {
      if (order.typed) return typedSortPage(db, where, params, order.typed, start, rows);
      return select(`SELECT s.package_id AS id FROM package_search_index s WHERE ${where} ORDER BY ${order.full}`, rows, start);
    }
    const ids: string[] = [];
    if (start < window) {
      ids.push(
        ...(await select(
          `WITH w AS MATERIALIZED (SELECT * FROM package_search_index s WHERE ${where} ORDER BY ${order.cheap} LIMIT ${window | 0})
         SELECT s.package_id AS id FROM w s ORDER BY ${order.full}`,
          Math.min(rows, window - start),
          start,
        )),
      );
    }
    if (start + rows > window) {
      const from = Math.max(start, window);
      ids.push(
        ...(await select(
          `SELECT s.package_id AS id FROM package_search_index s WHERE ${where} ORDER BY ${order.cheap}`,
          start + rows - from,
          from,
          params.slice(0, order.cheapParams),
        )),
      );
    }
    return ids;
  }
}
