// Search actions: package_search (Solr query language over the index of src/search), resource_search,
// tag_search, tag_autocomplete.
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { p } from '../validation/params.ts';
import { Invalid, type Validator } from '../validation/validate.ts';
import type { ActionContext } from './context.ts';
import { sideBySide, withStatementTimeout } from '../db/database.ts';
import { anyone } from '../auth/rules.ts';
import { userPermissionLabels, visiblePackagesCondition } from '../auth/authz.ts';
import { NotFoundError, SearchQueryError, ValidationError } from '../errors.ts';
import { packageDictsOfIds, resourceDict } from '../model/package-dict.ts';
import { findLicense } from '../model/licenses.ts';
import { findVocabulary } from '../model/tags.ts';
import { searchEngine } from '../search/service.ts';
import { spatialFilterOf } from '../search/spatial.ts';
import type { SortKey } from '../search/engine.ts';
import { groupTitles, type FacetItem } from '../search/facets.ts';
import { RESOURCE_SEARCH_COLUMNS, searchResources, searchTags, type ResourceCriterion } from '../search/catalog-search.ts';
import { datasetSchema, resourceSchema } from './result-schemas.ts';

const DEFAULT_SORT = 'score desc, metadata_modified desc';

/** Longest q or filter query (its clauses are bounded too, in search/query-parser.ts). */
const MAX_QUERY_LENGTH = 20_000;

/** A list of at most maxItems items, each (when a string) of at most maxLength characters. */
const boundedList =
  (maxItems: number, maxLength: number): Validator =>
  (v) => {
    if (!Array.isArray(v)) return v;
    if (v.length > maxItems) throw new Invalid(`Must be a list of at most ${maxItems} items`);
    if (v.some((x) => typeof x === 'string' && x.length > maxLength))
      throw new Invalid(`Each item must be at most ${maxLength} characters long`);
    return v;
  };

/** Parameters package_search accepts without effect (engine tuning of Solr). */
const ENGINE_PARAMS = ['qf', 'wt', 'bf', 'boost', 'tie', 'defType', 'mm', 'q.op', 'df', 'hl', 'spellcheck'] as const;

/** A statement stopped at svc.search.timeout is the query's Search Query Error (never a 500); others pass on. */
const searchTimedOut = (timeoutMs: number) => (e: unknown) => {
  if ((e as { code?: string })?.code !== '57014') throw e;
  throw new SearchQueryError(`the search took longer than svc.search.timeout (${timeoutMs} ms): use fewer terms, wildcards or phrases`);
};

/** "metadata_modified desc, name asc" -> sort keys; a missing or bad direction is CKAN's Search Query Error. */
export function parseSort(sort: string): SortKey[] {
  const keys: SortKey[] = [];
  for (const part of sort.split(',')) {
    const words = part.trim().split(/\s+/).filter(Boolean);
    if (!words.length) continue;
    const dir = words[1]?.toLowerCase();
    if (words.length !== 2 || (dir !== 'asc' && dir !== 'desc')) throw new SearchQueryError('Invalid "sort" parameter');
    keys.push({ field: words[0], desc: dir === 'desc' });
  }
  if (!keys.length) throw new SearchQueryError('Invalid "sort" parameter');
  return keys;
}

function facetFieldList(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new ValidationError({ 'facet.field': ['Must be a list of strings'] });
  return v;
}

function fieldList(v: unknown): string[] | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') return v.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  throw new ValidationError({ fl: ['Must be a list of strings'] });
}

/** The dict of a result restricted to fl (extras_k gives the extra k under k, as CKAN does). */
function pick(dict: Record<string, unknown>, fl: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const extras = (dict.extras as { key: string; value: unknown }[] | undefined) ?? [];
  for (const f of fl) {
    if (f in dict) out[f] = dict[f];
    else if (f.startsWith('extras_')) {
      const e = extras.find((x) => x.key === f.slice(7));
      if (e) out[f.slice(7)] = e.value;
    }
  }
  return out;
}

/**
 * Display names of facet values, for all the facet fields at once: groups and organizations by
 * their titles (one statement: their names are unique across both), licences by theirs.
 */
async function facetDisplayNames(ctx: ActionContext, facets: Record<string, FacetItem[]>): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  const groupNames = Object.entries(facets).flatMap(([field, items]) =>
    field === 'groups' || field === 'organization' ? items.map((v) => v.name) : [],
  );
  const titles = new Map<string, string>();
  if (groupNames.length) {
    for (const g of await groupTitles(ctx.db, [...new Set(groupNames)])) titles.set(g.name, g.title || g.name);
  }
  for (const [field, items] of Object.entries(facets)) {
    if (field === 'groups' || field === 'organization') out.set(field, titles);
    else if (field === 'license_id') {
      const names = new Map<string, string>();
      for (const v of items) {
        const license = findLicense(v.name);
        if (license) names.set(v.name, license.title);
      }
      out.set(field, names);
    }
  }
  return out;
}

const searchFacetsSchema = Type.Record(
  Type.String(),
  Type.Object({
    title: Type.String(),
    items: Type.Array(Type.Object({ name: Type.String(), display_name: Type.String(), count: Type.Integer() })),
  }),
);

export const searchActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'package_search',
    sideEffectFree: true,
    auth: anyone,
    description:
      'Search datasets with the Solr query language (q, fq, fq_list), with facets, sorting and paging. Only datasets the caller may read are counted, returned and faceted.',
    params: {
      q: p
        .text(
          'the query: words (name and title weigh most), field:value, "phrases", AND/OR/NOT/+/-, (groups), * and ? wildcards, [a TO b] and {a TO b} ranges, *:*; q and the filters together at most 100 words, phrases and ranges, 20 of them wildcards and 10 quoted phrases',
        )
        .maxLength(MAX_QUERY_LENGTH)
        .default('*:*'),
      fq: p.text('a filter query in the same language: restricts the results, does not score').maxLength(MAX_QUERY_LENGTH).ignoreEmpty(),
      fq_list: p.stringList('more filter queries (at most 50)').use(boundedList(50, MAX_QUERY_LENGTH)),
      sort: p
        .string(
          `comma-separated "field asc|desc" (fields: score, name, title_string, metadata_modified, metadata_created, num_resources, num_tags, id, license_id, organization, extras_*; views_recent and views_total are accepted: page views are not tracked, so they tie)`,
        )
        .default(DEFAULT_SORT),
      rows: p.natural('at most this many results (clamped to svc.search.rows_max, default 1000)').default(10),
      start: p.natural('offset of the first result').default(0),
      facet: p.boolean('return facets of facet.field').default(true),
      'facet.field': p
        .json(
          'JSON list of fields to facet on (any indexed field: tags, groups, organization, res_format, license_id, extras_*, vocab_*...; at most 20)',
          Type.Array(Type.String(), { maxItems: 20 }),
        )
        .use(boundedList(20, 200)),
      'facet.limit': p.integer('at most this many values per facet (default search.facets.limit = 50; negative: all)'),
      'facet.mincount': p.natural('only values found at least this many times').default(1),
      include_private: p.boolean('also private datasets the caller may read').default(false),
      include_drafts: p.boolean("also the caller's drafts (sysadmins: all drafts)").default(false),
      include_deleted: p.boolean('also deleted datasets (only when svc.search.remove_deleted_packages is false)').default(false),
      use_default_schema: p.boolean('accepted; svc has one dataset schema').default(false),
      fl: p.any('fields to return instead of whole datasets (list or comma-separated)'),
      ext_bbox: p
        .string(
          'minx,miny,maxx,maxy in degrees (ckanext-spatial): only datasets whose spatial geometry intersects the box; sort=spatial desc orders them by overlap (so does score without words to score)',
        )
        .ignoreEmpty(),
      ...Object.fromEntries(ENGINE_PARAMS.map((k) => [k, p.any('Solr tuning parameter: accepted, without effect').hidden()])),
    },
    extras: 'keep',
    returns: {
      description: 'count (total found), results (datasets as package_show returns them), search_facets, facets (deprecated) and sort',
      rtype: 'dictionary',
      schema: Type.Object(
        {
          count: Type.Integer(),
          results: Type.Array(datasetSchema),
          sort: Type.String(),
          search_facets: searchFacetsSchema,
          facets: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer())),
        },
        { additionalProperties: true },
      ),
    },
    handler: async (ctx, prm) => {
      const all = prm as Record<string, unknown>;
      const declared = new Set(Object.keys(searchActions[0].params ?? {}));
      const unknown = Object.keys(all).filter((k) => !declared.has(k) && !k.startsWith('ext_'));
      if (unknown.length) {
        throw new ValidationError(
          Object.fromEntries(unknown.map((k) => [k, [`The input field ${k} was not expected.`]])),
          `Invalid search parameters: [${unknown.map((k) => `'${k}'`).join(', ')}]`,
        );
      }
      const facetFields = prm.facet ? facetFieldList(prm['facet.field']) : [];
      const fl = fieldList(prm.fl);
      const sysadmin = ctx.identity.sysadmin;
      const rows = Math.min(prm.rows, ctx.config.int('svc.search.rows_max'));
      const sortText = prm.sort.trim() === 'rank' ? DEFAULT_SORT : prm.sort;
      const labels = sysadmin ? [] : await userPermissionLabels(ctx);
      const query = {
        q: prm.q,
        fq: [prm.fq, ...(prm.fq_list ?? [])].filter((x): x is string => !!x && !!x.trim()),
        sort: parseSort(sortText),
        rows,
        start: prm.start,
        facetFields,
        facetLimit: prm['facet.limit'] ?? ctx.config.int('search.facets.limit'),
        facetMincount: prm['facet.mincount'],
        visibility: {
          sysadmin,
          labels,
          // An anonymous caller holds no label but 'public': asking for private datasets adds none
          // (and the search may then read its counts of public datasets).
          includePrivate: prm.include_private && (sysadmin || !!ctx.identity.user),
          includeDrafts: prm.include_drafts,
          includeDeleted: prm.include_deleted,
        },
        spatial: spatialFilterOf(prm.ext_bbox),
      };
      // Bounded in time on both databases (the embedded catalog runs in a worker thread that can be stopped).
      const timeoutMs = ctx.config.int('svc.search.timeout');
      const found = await searchEngine(ctx.services).query(withStatementTimeout(ctx.db, timeoutMs), query).catch(searchTimedOut(timeoutMs));
      // the page's dicts and the facets' display names side by side (each needs only the search)
      const [dicts, titlesOf] = await sideBySide(ctx.db, [
        () => packageDictsOfIds(ctx, found.ids),
        () => facetDisplayNames(ctx, found.facets),
      ]);
      const facets: Record<string, Record<string, number>> = Object.create(null);
      const searchFacets: Record<string, { title: string; items: { count: number; display_name: string; name: string }[] }> =
        Object.create(null);
      for (const field of facetFields) {
        const values = Object.hasOwn(found.facets, field) ? found.facets[field] : [];
        const titles = titlesOf.get(field);
        facets[field] = Object.fromEntries(values.map((v) => [v.name, v.count]));
        const items = values.map((v) => ({ count: v.count, display_name: titles?.get(v.name) ?? v.name, name: v.name }));
        items.sort((a, b) => (a.display_name < b.display_name ? 1 : a.display_name > b.display_name ? -1 : 0));
        searchFacets[field] = { title: field, items };
      }
      return {
        count: found.count,
        facets,
        results: fl ? dicts.map((d) => pick(d, fl)) : dicts,
        sort: sortText,
        search_facets: searchFacets,
      };
    },
  }),
  defineAction({
    name: 'resource_search',
    sideEffectFree: true,
    auth: anyone,
    description: 'Search resources of public datasets: every `field:term` criterion must match (case-insensitive substring; hash: prefix).',
    params: {
      query: p.any('a `field:term` string or a list of them', Type.Union([Type.String(), Type.Array(Type.String())])).required(),
      order_by: p.string('a resource field to order by (ascending)').ignoreEmpty(),
      offset: p.natural('skip this many results').default(0),
      limit: p.natural('at most this many results'),
    },
    returns: {
      description: 'count (ignoring offset and limit) and results (resources)',
      rtype: 'dictionary',
      schema: Type.Object({ count: Type.Integer(), results: Type.Array(resourceSchema) }),
    },
    handler: async (ctx, prm) => {
      const list = typeof prm.query === 'string' ? [prm.query] : prm.query;
      if (!Array.isArray(list) || !list.every((x) => typeof x === 'string'))
        throw new ValidationError({ query: ['Must be <field>:<value> pair(s)'] });
      const extraFields = new Set(ctx.config.list('svc.extra_resource_fields'));
      const known = (f: string) => RESOURCE_SEARCH_COLUMNS.includes(f);
      const criteria: ResourceCriterion[] = list.map((item) => {
        const at = item.indexOf(':');
        if (at <= 0) throw new ValidationError({ query: ['Must be <field>:<value> pair(s)'] });
        const field = item.slice(0, at).trim();
        const term = item.slice(at + 1);
        if (known(field)) return { field, term, extra: false };
        if (extraFields.has(field)) return { field, term, extra: true };
        throw new ValidationError({ query: [`Field "${field}" not recognised in resource_search.`] });
      });
      if (prm.order_by && !known(prm.order_by) && !extraFields.has(prm.order_by)) {
        throw new ValidationError({ order_by: [`Field "${prm.order_by}" not recognised in resource_search.`] });
      }
      const { count, rows } = await searchResources(ctx.db, criteria, {
        orderBy: prm.order_by,
        extraOrder: !!prm.order_by && !known(prm.order_by),
        offset: prm.offset,
        limit: prm.limit,
      });
      return { count, results: rows.map((r) => resourceDict(ctx.config, r)) };
    },
  }),
  ...(['tag_search', 'tag_autocomplete'] as const).map((name) =>
    defineAction({
      name,
      sideEffectFree: true,
      auth: anyone,
      description:
        name === 'tag_search'
          ? 'Tags whose names contain every query term (case-insensitive), used by datasets the caller may read; free tags unless vocabulary_id is given.'
          : 'Names of tags containing the query (case-insensitive), used by datasets the caller may read.',
      params: {
        query: p.stringList('the text (or texts) the tag name must contain (at most 20)').use(boundedList(20, 100)),
        q: p.stringList('same as query').use(boundedList(20, 100)).hidden(),
        vocabulary_id: p.string('id or name of a vocabulary (default: free tags)').ignoreEmpty(),
        fields: p.any('deprecated, ignored').hidden(),
        limit: p.natural('at most this many tags').default(10),
        offset: p.natural('skip this many tags').default(0),
      },
      returns:
        name === 'tag_search'
          ? {
              description: 'count and results ({id, name, vocabulary_id})',
              rtype: 'dictionary',
              schema: Type.Object({
                count: Type.Integer(),
                results: Type.Array(
                  Type.Object({ id: Type.String(), name: Type.String(), vocabulary_id: Type.Union([Type.String(), Type.Null()]) }),
                ),
              }),
            }
          : { description: 'tag names', rtype: 'list of strings', schema: Type.Array(Type.String()) },
      handler: async (
        ctx: ActionContext,
        prm: { query?: string[]; q?: string[]; vocabulary_id?: string; limit: number; offset: number },
      ) => {
        const terms = (prm.query ?? prm.q ?? []).filter((t) => t !== '');
        if (!terms.length) return name === 'tag_search' ? { count: 0, results: [] } : [];
        let vocabularyId: string | null = null;
        if (prm.vocabulary_id) {
          const v = await findVocabulary(ctx.db, prm.vocabulary_id);
          if (!v) throw new NotFoundError(`Could not find vocabulary "${prm.vocabulary_id}"`);
          vocabularyId = v.id;
        }
        const params: unknown[] = [];
        const visible = `p.state = 'active' AND ${await visiblePackagesCondition(ctx, params, 'p')}`;
        const { count, rows } = await searchTags(ctx.db, terms, vocabularyId, visible, params, prm.limit, prm.offset);
        if (name === 'tag_autocomplete') return rows.map((r) => r.name);
        return { count, results: rows.map((r) => ({ id: r.id, name: r.name, vocabulary_id: r.vocabulary_id })) };
      },
    }),
  ),
];
