// A parsed query (query-parser.ts) as a SQL condition over package_search_index (alias s). Every
// value is a bound parameter; columns come only from fields.ts.
import { SearchQueryError } from '../errors.ts';
import { COUNTED_COLUMNS, columnSql, resolveField, type FieldKind } from './fields.ts';
import type { QueryNode } from './query-parser.ts';
import { parseSolrDate } from './solr-dates.ts';
import { NO_SCHEMA_FIELDS, type CustomFieldType, type SearchSchemaFields } from './schema-fields.ts';

/** Text search configuration of the index (stemming as Solr's English text fields). */
export const TS_CONFIG = 'english';

/** A word or phrase matched against the tsvector; plain and phrase ones may be all stop words. */
export interface TextQuery {
  kind: 'plain' | 'phrase' | 'prefix';
  value: string;
}

/** Characters that join words into one token (Solr's word-delimiter filter splits there). */
const WORD_JOINERS = /[-_./]+/g;

/** Whether a word is made of words joined by - _ . or / (e.g. covid-cases, stations.csv). */
const joinedWords = (value: string) => /[\p{L}\p{N}][-_./]+[\p{L}\p{N}]/u.test(value);

/**
 * SQL text of `text` followed by the parts of its words joined by . or / (the parser keeps
 * stations.csv or data/x.csv whole; it splits - and _ itself), so that each part is found as a word.
 */
export function withWordParts(text: string): string {
  return `concat_ws(' ', ${text}, array_to_string(ARRAY(SELECT translate(m[1], './', '  ')
    FROM regexp_matches(${text}, '(\\S*[[:alnum:]][./]+[[:alnum:]]\\S*)', 'g') AS m), ' '))`;
}

/** A tsquery literal of one lexeme, taken as it is (no parsing into words, no stemming). */
export const lexemeQuery = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

const textKey = (t: TextQuery) => `${t.kind}\u0000${t.value}`;

function isText(f: FieldKind): boolean {
  return f.type === 'fulltext' || f.type === 'text';
}

function textQueryOf(node: Extract<QueryNode, { kind: 'term' }>): TextQuery | null {
  if (node.wildcard) {
    const prefix = node.value.split(/[*?]/)[0];
    return prefix ? { kind: 'prefix', value: prefix } : null;
  }
  return { kind: node.phrase ? 'phrase' : 'plain', value: node.value };
}

/** The word and phrase queries of free-text fields in a query (to find those made only of stop words). */
export function textQueriesOf(node: QueryNode, out: TextQuery[] = []): TextQuery[] {
  switch (node.kind) {
    case 'and':
    case 'or':
      node.items.forEach((n) => textQueriesOf(n, out));
      break;
    case 'not':
      textQueriesOf(node.item, out);
      break;
    case 'term': {
      const tq = isText(resolveField(node.field)) ? textQueryOf(node) : null;
      if (tq && tq.kind !== 'prefix') out.push(tq);
      break;
    }
  }
  return out;
}

/** A LIKE pattern from a Solr wildcard term: * any text, ? one character. */
function likePattern(value: string): string {
  return value
    .replace(/[\\%_]/g, (c) => '\\' + c)
    .replace(/\*/g, '%')
    .replace(/\?/g, '_');
}

/** Fields and values longer than this (in characters) have no key in extra_keys (migration 018). */
const EXTRA_KEY_MAX = 200;

/**
 * The key of a field's value in the index row's extra_keys (migration 018: a GIN index that finds
 * it exactly), or null when the value is too long to have one. PostgreSQL's length counts code points.
 */
function extraKey(field: string, value: string): string | null {
  const fieldLength = [...field].length;
  if (fieldLength > EXTRA_KEY_MAX || [...value].length > EXTRA_KEY_MAX) return null;
  return `${fieldLength}:${field}=${value}`;
}

/** What the database said of a query's words and phrases (PostgresSearchEngine.readState). */
export interface TextFacts {
  /** Keys (textKey) of the words and phrases made only of stop words. */
  stopWordsOnly: Set<string>;
  /** Keys of phrases that are a run of consecutive lexemes (no stop word between): the lexemes. */
  phraseLexemes: Map<string, string[]>;
}

const NO_FACTS: TextFacts = { stopWordsOnly: new Set(), phraseLexemes: new Map() };

/**
 * The lexemes of a tsquery's text when it is a plain run ('a' <-> 'b' <-> 'c'), else null. The
 * text doubles quotes and backslashes inside a lexeme.
 */
export function phraseRun(tsquery: string): string[] | null {
  const lexeme = /'((?:[^'\\]|''|\\.)*)'/y;
  const out: string[] = [];
  for (let i = 0; ; i += 5) {
    lexeme.lastIndex = i;
    const m = lexeme.exec(tsquery);
    if (!m) return null;
    out.push(m[1].replace(/''|\\(.)/g, (_, c?: string) => c ?? "'"));
    i = lexeme.lastIndex;
    if (i === tsquery.length) return out;
    if (!tsquery.startsWith(' <-> ', i)) return null;
  }
}

/**
 * The tsquery of phrase keys (migration 013) a run of lexemes needs: the keys a pair begins, one
 * key of three, else the keys of its runs of three (they do not say the runs are in one place:
 * the positions are tested too).
 */
function phraseKeys(lexemes: string[]): { query: string; exact: boolean } {
  if (lexemes.length === 2) return { query: `${lexemeQuery(`${lexemes.join(' ')} `)}:*`, exact: true };
  const runs = lexemes.slice(2).map((_, i) => lexemeQuery(lexemes.slice(i, i + 3).join(' ')));
  return { query: runs.join(' & '), exact: lexemes.length === 3 };
}

/**
 * The active tags (tg.name) of the index row's dataset (alias s) in the vocabulary named by the
 * parameter: vocabulary tags are not in the index row, they are read from the catalog's tables.
 */
export function vocabularyTagsSql(vocabularyParam: string): string {
  return `SELECT tg.name FROM package_tags pt JOIN tags tg ON tg.id = pt.tag_id JOIN vocabularies vc ON vc.id = tg.vocabulary_id
    WHERE pt.package_id = s.package_id AND pt.state = 'active' AND vc.name = ${vocabularyParam}::text`;
}

/** A term found by the keys of an expression index (SqlBuilder.keyed). */
interface Keyed {
  /** the index's function of doc */
  index: 'package_search_phrase_keys' | 'package_search_weighted_keys';
  /** SQL of the tsquery of the term's keys */
  keys: string;
  /** SQL of the positional test that completes the keys' (null: the keys are exact) */
  positions: string | null;
}

/**
 * SQL expressions joined by a binary operator as a balanced tree: a chain of hundreds nests as
 * deep as it is long, and PGlite's small stack fails on such an expression without an error.
 */
export function balanced(items: string[], op: string): string {
  if (items.length === 1) return items[0];
  const half = items.length >> 1;
  return `(${balanced(items.slice(0, half), op)} ${op} ${balanced(items.slice(half), op)})`;
}

export class SqlBuilder {
  /**
   * tsquery expressions of the free-text terms that are not negated: what score ranks by (made,
   * their values bound, only when the sort has score).
   */
  readonly rankQueries: (() => string)[] = [];
  /** Whether the terms now built are scored (false for filter queries). */
  scoring = true;

  constructor(
    readonly params: unknown[],
    private readonly facts: TextFacts = NO_FACTS,
    /** What the configured schemas say of custom fields (typed dates and numbers). */
    readonly schema: SearchSchemaFields = NO_SCHEMA_FIELDS,
  ) {}

  static textKey = textKey;

  param(v: unknown): string {
    this.params.push(v);
    return `$${this.params.length}`;
  }

  where(node: QueryNode, negated = false): string {
    switch (node.kind) {
      case 'all':
        return 'TRUE';
      case 'and':
      case 'or':
        return this.combine(node.kind, node.items, negated);
      case 'not':
        return `NOT coalesce(${this.where(node.item, !negated)}, false)`;
      case 'term':
        return this.term(node, negated);
      case 'range':
        return this.range(node);
    }
  }

  private tsquery(tq: TextQuery): string {
    if (tq.kind === 'prefix') {
      return `to_tsquery('simple', ${this.param(`${lexemeQuery(tq.value.toLowerCase())}:*`)})`;
    }
    if (tq.kind === 'plain' && joinedWords(tq.value)) {
      // as Solr's word-delimiter filter: the whole as the parser reads it, or its parts in a row
      // (rows indexed before the parts were added have them only where the parser split the word)
      return `(plainto_tsquery('${TS_CONFIG}', ${this.param(tq.value)}) || phraseto_tsquery('${TS_CONFIG}', ${this.param(tq.value.replace(WORD_JOINERS, ' '))}))`;
    }
    const fn = tq.kind === 'phrase' ? 'phraseto_tsquery' : 'plainto_tsquery';
    return `${fn}('${TS_CONFIG}', ${this.param(tq.value)})`;
  }

  /**
   * Items joined by AND or OR. Terms found by the keys of an expression index (phrases: the phrase
   * keys of migration 013; title:/notes: the weighted keys of migration 014) are tested together,
   * one tsquery per index: the keys of a row are computed once, not once per term (~0.2 ms a row
   * on PGlite). A term's positional test implies its keys, so the keys of those that need one are
   * tested together too, before their positional tests.
   */
  private combine(kind: 'and' | 'or', items: QueryNode[], negated: boolean): string {
    const joiner = kind === 'and' ? ' AND ' : ' OR ';
    const parts: string[] = [];
    const groups = new Map<string, { exact: string[]; positional: Keyed[] }>();
    for (const n of items) {
      const keyed = n.kind === 'term' ? this.keyed(n, negated) : null;
      if (!keyed) {
        parts.push(this.where(n, negated));
        continue;
      }
      const group = groups.get(keyed.index) ?? { exact: [], positional: [] };
      groups.set(keyed.index, group);
      if (keyed.positions === null) group.exact.push(keyed.keys);
      else group.positional.push(keyed);
    }
    const op = kind === 'and' ? '&&' : '||';
    for (const [index, group] of groups) {
      const test = (keys: string[]) => `${index}(s.doc) @@ ${balanced(keys, op)}`;
      if (group.exact.length) parts.push(test(group.exact));
      if (group.positional.length) {
        const positions = group.positional.map((x) => x.positions).join(joiner);
        parts.push(`(${test(group.positional.map((x) => x.keys))} AND (${positions}))`);
      }
    }
    return `(${parts.join(joiner)})`;
  }

  /**
   * A term found by the keys of an expression index: the index's function, the tsquery of the
   * term's keys, and its positional test when the keys do not say it all. Null (nothing bound or
   * ranked) for any other term.
   */
  private keyed(node: Extract<QueryNode, { kind: 'term' }>, negated: boolean): Keyed | null {
    const f = resolveField(node.field, this.schema);
    if (f.type !== 'fulltext' || (node.wildcard && /^[*]+$/.test(node.value))) return null;
    const tq = textQueryOf(node);
    if (!tq || (tq.kind !== 'prefix' && this.facts.stopWordsOnly.has(textKey(tq)))) return null;
    const run = f.weight ? undefined : this.facts.phraseLexemes.get(textKey(tq));
    if (!f.weight && (!run || run.length < 2)) return null;
    // the term's tsquery is bound only where it is used (an unused parameter has no type)
    let made: string | undefined;
    const q = () => (made ??= this.tsquery(tq));
    if (!negated && this.scoring) this.rankQueries.push(q);
    if (run) {
      const { query, exact } = phraseKeys(run);
      return { index: 'package_search_phrase_keys', keys: `${this.param(query)}::tsquery`, positions: exact ? null : `s.doc @@ ${q()}` };
    }
    // the words of one part of the text: found by their keys behind the part's weight, exactly
    // for words and prefixes; a phrase (or joined words) adds its positions in the part
    const positional = tq.kind === 'phrase' || (tq.kind === 'plain' && joinedWords(tq.value));
    return {
      index: 'package_search_weighted_keys',
      keys: `package_search_weighted_query(${q()}, '${f.weight}')`,
      positions: positional ? `ts_filter(s.doc, '{${f.weight}}') @@ ${q()}` : null,
    };
  }

  private term(node: Extract<QueryNode, { kind: 'term' }>, negated: boolean): string {
    const keyed = this.keyed(node, negated);
    if (keyed) {
      const keys = `${keyed.index}(s.doc) @@ ${keyed.keys}`;
      return keyed.positions === null ? keys : `(${keys} AND ${keyed.positions})`;
    }
    const f = resolveField(node.field, this.schema);
    const name = node.field ?? 'text';
    const onlyStar = node.wildcard && /^[*]+$/.test(node.value);
    switch (f.type) {
      case 'fulltext':
      case 'text': {
        if (onlyStar) return f.type === 'text' ? `coalesce(${columnSql(f.column)}, '') <> ''` : 'TRUE';
        const tq = textQueryOf(node);
        if (!tq) return 'TRUE';
        // a term made only of stop words constrains nothing (as Solr drops it)
        if (tq.kind !== 'prefix' && this.facts.stopWordsOnly.has(textKey(tq))) return 'TRUE';
        // the tsquery expression is made (its value bound) only where it is used
        let made: string | undefined;
        const q = () => (made ??= this.tsquery(tq));
        if (!negated && this.scoring) this.rankQueries.push(q);
        if (f.type === 'fulltext') return `s.doc @@ ${q()}`;
        return `(s.doc @@ ${q()} AND to_tsvector('${TS_CONFIG}', coalesce(${columnSql(f.column)}, '')) @@ ${q()})`;
      }
      case 'string': {
        const col = columnSql(f.column);
        if (onlyStar) return `coalesce(${col}, '') <> ''`;
        if (node.wildcard) return `${col} LIKE ${this.param(likePattern(node.value))}`;
        return `${col} = ${this.param(node.value)}`;
      }
      case 'strings': {
        const col = columnSql(f.column);
        if (onlyStar) return `cardinality(${col}) > 0`;
        if (node.wildcard) {
          const pattern = this.param(likePattern(node.value));
          // the values that exist and match (counted lists), then the list's GIN index
          if (COUNTED_COLUMNS.includes(f.column))
            return `${col} && ARRAY(SELECT value FROM package_search_value_counts_now
              WHERE class = 'all' AND field = ${this.param(f.column)} AND n > 0 AND value LIKE ${pattern})`;
          return `EXISTS (SELECT 1 FROM unnest(${col}) v WHERE v LIKE ${pattern})`;
        }
        return `${col} @> ARRAY[${this.param(node.value)}]::text[]`;
      }
      case 'int': {
        if (onlyStar) return 'TRUE';
        return `${columnSql(f.column)} = ${this.param(this.integer(node.value, name))}`;
      }
      case 'date': {
        if (onlyStar) return 'TRUE';
        return `${columnSql(f.column)} = ${this.param(parseSolrDate(node.value, name))}::timestamp`;
      }
      case 'bool': {
        if (onlyStar) return 'TRUE';
        const v = node.value.toLowerCase();
        if (v !== 'true' && v !== 'false') throw new SearchQueryError(`Invalid boolean "${node.value}" for field "${name}"`);
        return `${columnSql(f.column)} = ${v === 'true' ? 'TRUE' : 'FALSE'}`;
      }
      case 'extra': {
        if (f.typed && !onlyStar && !node.wildcard) return this.typedValues(this.typedTest(node, f.key, f.typed)!);
        // a value by its exact key; any value, a pattern or a long value by the extras themselves
        const key = onlyStar || node.wildcard ? null : extraKey(f.key, node.value);
        if (key !== null) return `s.extra_keys @> ARRAY[${this.param(key)}]::text[]`;
        const k = this.param(f.key);
        if (onlyStar) return `s.extras ? ${k}`;
        if (node.wildcard) return `(s.extras ->> ${k}::text) LIKE ${this.param(likePattern(node.value))}`;
        const v = this.param(node.value);
        return `(s.extras @> jsonb_build_object(${k}::text, ${v}::text) OR s.extras @> jsonb_build_object(${k}::text, jsonb_build_array(${v}::text)))`;
      }
      case 'vocab': {
        const tag = onlyStar
          ? ''
          : node.wildcard
            ? ` AND tg.name LIKE ${this.param(likePattern(node.value))}`
            : ` AND tg.name = ${this.param(node.value)}`;
        return `EXISTS (${vocabularyTagsSql(this.param(f.vocabulary))}${tag})`;
      }
      case 'constant':
        return 'TRUE';
    }
  }

  /** A value of a typed custom field as SQL (bound), or a Search Query Error naming the field. */
  private typedValue(type: CustomFieldType, v: string, field: string): string {
    if (type === 'date') return `${this.param(parseSolrDate(v, field))}::timestamp`;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$/.test(v)) throw new SearchQueryError(`Invalid number "${v}" for field "${field}"`);
    return `${this.param(v)}::numeric`;
  }

  /**
   * The test on rows (alias v) of package_search_field_values of a term (not a wildcard) or range
   * of a typed custom field; null for a term of any value (*) or a wildcard.
   */
  typedTest(node: QueryNode, key: string, type: CustomFieldType, alias = 'v'): string | null {
    const name = node.kind === 'term' || node.kind === 'range' ? (node.field ?? 'text') : 'text';
    const col = `${alias}.${type === 'date' ? 'ts' : 'num'}`;
    const tests: string[] = [];
    if (node.kind === 'term') {
      if (node.wildcard) return null;
      tests.push(`= ${this.typedValue(type, node.value, name)}`);
    } else if (node.kind === 'range') {
      if (node.lo !== null) tests.push(`${node.loIncl ? '>=' : '>'} ${this.typedValue(type, node.lo, name)}`);
      if (node.hi !== null) tests.push(`${node.hiIncl ? '<=' : '<'} ${this.typedValue(type, node.hi, name)}`);
    } else return null;
    const conditions = tests.length ? tests.map((t) => `${col} ${t}`) : [`${col} IS NOT NULL`];
    return `${alias}.field = ${this.param(key)}::text AND ${conditions.join(' AND ')}`;
  }

  /**
   * A statement (its column n) counting the datasets with a value of a typed custom field that
   * passes a term or range (typedTest; null when it is not one), among the rows visible passes
   * (a condition on v). Each dataset has one row flagged least (migration 026) per field among
   * its values of the type: the flagged rows that pass are distinct datasets, and another row
   * that passes (an item of a list) counts its dataset only when the flagged row does not pass.
   * An index-only scan of the values in the range, without sorting their ids.
   */
  typedCount(node: QueryNode, key: string, type: CustomFieldType, visible: string): string | null {
    const test = this.typedTest(node, key, type);
    if (test === null) return null;
    const least = type === 'date' ? 'least_ts' : 'least_num';
    const leastPasses = this.typedTest(node, key, type, 'l')!;
    return `SELECT count(*) FILTER (WHERE v.${least})
        + count(DISTINCT v.package_id COLLATE "C") FILTER (WHERE NOT v.${least} AND NOT EXISTS (
          SELECT 1 FROM package_search_field_values l WHERE l.package_id = v.package_id AND l.${least} AND ${leastPasses})) AS n
      FROM package_search_field_values v WHERE ${test} AND ${visible}`;
  }

  /**
   * A test on the typed values of a custom field (package_search_field_values, migration 017:
   * one row per date or number of the field, a list's items each), by its index on (field, value).
   */
  private typedValues(test: string): string {
    return `EXISTS (SELECT 1 FROM package_search_field_values v WHERE v.package_id = s.package_id AND ${test})`;
  }

  private integer(v: string, field: string): number {
    if (!/^[+-]?\d+$/.test(v)) throw new SearchQueryError(`Invalid number "${v}" for field "${field}"`);
    return Number(v);
  }

  private range(node: Extract<QueryNode, { kind: 'range' }>): string {
    const f = resolveField(node.field, this.schema);
    const name = node.field ?? 'text';
    let expr: string;
    let conv: (v: string) => string;
    switch (f.type) {
      case 'int':
        expr = columnSql(f.column);
        conv = (v) => `${this.param(this.integer(v, name))}`;
        break;
      case 'date':
        expr = columnSql(f.column);
        conv = (v) => `${this.param(parseSolrDate(v, name))}::timestamp`;
        break;
      case 'string':
        expr = `${columnSql(f.column)} COLLATE "C"`;
        conv = (v) => this.param(v);
        break;
      case 'extra':
        if (f.typed) return this.typedValues(this.typedTest(node, f.key, f.typed)!);
        expr = `(s.extras ->> ${this.param(f.key)}::text) COLLATE "C"`;
        conv = (v) => this.param(v);
        break;
      case 'strings': {
        const parts = this.bounds('v COLLATE "C"', node, (v) => this.param(v));
        return `EXISTS (SELECT 1 FROM unnest(${columnSql(f.column)}) v WHERE ${parts})`;
      }
      default:
        throw new SearchQueryError(`Range queries are not supported on field "${name}"`);
    }
    return `(${this.bounds(expr, node, conv)})`;
  }

  private bounds(expr: string, node: Extract<QueryNode, { kind: 'range' }>, conv: (v: string) => string): string {
    const parts: string[] = [];
    if (node.lo !== null) parts.push(`${expr} ${node.loIncl ? '>=' : '>'} ${conv(node.lo)}`);
    if (node.hi !== null) parts.push(`${expr} ${node.hiIncl ? '<=' : '<'} ${conv(node.hi)}`);
    if (!parts.length) parts.push(`${expr} IS NOT NULL`);
    return parts.join(' AND ');
  }
}
