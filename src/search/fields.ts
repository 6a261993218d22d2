// The fields of the package_search index (reference §5) and how each is stored in the
// package_search_index table. Every column name here is a constant of this module: queries name
// fields, never columns.
import { NO_SCHEMA_FIELDS, type CustomFieldType, type SearchSchemaFields } from './schema-fields.ts';

export type FieldKind =
  /** words in the weighted tsvector (weight: the one weight of its part of the text; null: all of it) */
  | { type: 'fulltext'; weight: 'a' | 'b' | 'c' | 'd' | null }
  /** English-stemmed words of one column, found through the tsvector first */
  | { type: 'text'; column: string }
  /** an exact string (case-sensitive, as Solr's string fields) */
  | { type: 'string'; column: string }
  /** a list of exact strings */
  | { type: 'strings'; column: string }
  | { type: 'int'; column: string }
  | { type: 'date'; column: string }
  | { type: 'bool'; column: string }
  /** the tags of one vocabulary (vocab_<name>, as CKAN indexes them), read from the catalog's tags */
  | { type: 'vocab'; vocabulary: string }
  /**
   * a key of the extras (package extras and custom dataset fields); typed: a schema's date or
   * number field, whose values are compared as such (package_search_field_values, migration 017)
   */
  | { type: 'extra'; key: string; typed?: CustomFieldType }
  /** always true (site_id: one site per index) */
  | { type: 'constant'; value: string };

const FIELDS: Record<string, FieldKind> = {
  text: { type: 'fulltext', weight: null },
  title: { type: 'fulltext', weight: 'a' },
  notes: { type: 'fulltext', weight: 'c' },
  author: { type: 'text', column: 'author' },
  maintainer: { type: 'text', column: 'maintainer' },
  res_name: { type: 'text', column: 'res_name' },
  res_description: { type: 'text', column: 'res_description' },
  id: { type: 'string', column: 'package_id' },
  name: { type: 'string', column: 'name' },
  state: { type: 'string', column: 'state' },
  version: { type: 'string', column: 'version' },
  url: { type: 'string', column: 'url' },
  license_id: { type: 'string', column: 'license_id' },
  organization: { type: 'string', column: 'organization' },
  owner_org: { type: 'string', column: 'owner_org' },
  creator_user_id: { type: 'string', column: 'creator_user_id' },
  dataset_type: { type: 'string', column: 'type' },
  type: { type: 'string', column: 'type' },
  title_string: { type: 'string', column: 'title' },
  capacity: { type: 'string', column: "(CASE WHEN s.private THEN 'private' ELSE 'public' END)" },
  tags: { type: 'strings', column: 'tags' },
  groups: { type: 'strings', column: 'groups' },
  res_format: { type: 'strings', column: 'res_format' },
  res_url: { type: 'strings', column: 'res_url' },
  res_type: { type: 'strings', column: 'res_type' },
  permission_labels: { type: 'strings', column: 'labels' },
  num_resources: { type: 'int', column: 'num_resources' },
  num_tags: { type: 'int', column: 'num_tags' },
  metadata_created: { type: 'date', column: 'metadata_created' },
  metadata_modified: { type: 'date', column: 'metadata_modified' },
  private: { type: 'bool', column: 'private' },
  site_id: { type: 'constant', value: '' },
  entity_type: { type: 'constant', value: 'package' },
};
// No prototype: a field named __proto__ or constructor is an unknown field, not one of Object's.
Object.setPrototypeOf(FIELDS, null);

/** A custom field: an extra key, typed as the schemas type it. */
function customField(name: string, schema: SearchSchemaFields): FieldKind {
  const typed = schema.typed.get(name);
  return typed ? { type: 'extra', key: name, typed } : { type: 'extra', key: name };
}

/** Resolves a field of a query: a known field, `extras_{key}`, or any other name as an extra key. */
export function resolveField(name: string | null, schema: SearchSchemaFields = NO_SCHEMA_FIELDS): FieldKind {
  if (name === null) return FIELDS.text;
  const known = FIELDS[name];
  if (known) return known;
  if (name.startsWith('vocab_') && name.length > 6) return { type: 'vocab', vocabulary: name.slice(6) };
  if (name.startsWith('extras_') && name.length > 7) return { type: 'extra', key: name.slice(7) };
  return customField(name, schema);
}

/** A field of the schemas whose values are counted per value (migration 017), or null. */
export function countedCustomField(name: string, schema: SearchSchemaFields): string | null {
  return schema.counted.has(name) && !FIELDS[name] ? name : null;
}

/** The SQL expression of a column kind, over alias s. */
export function columnSql(column: string): string {
  return column.startsWith('(') ? column : `s.${column}`;
}

/**
 * Fields package_search may sort by (unknown ones are a Search Query Error): known ones,
 * `extras_{key}`, and the custom fields a schema declares (Solr indexes those, CKAN sorts by them).
 */
export function sortableField(name: string, schema: SearchSchemaFields = NO_SCHEMA_FIELDS): FieldKind | undefined {
  if (name.startsWith('extras_') && name.length > 7) return { type: 'extra', key: name.slice(7) };
  if (!FIELDS[name] && schema.declared.has(name)) return customField(name, schema);
  const f = FIELDS[name];
  if (!f || f.type === 'fulltext' || f.type === 'strings' || f.type === 'constant' || f.type === 'text') return undefined;
  return f;
}

/** Fields that can be faceted: single values or lists (not free text). */
export function facetableField(name: string): FieldKind | undefined {
  if (name.startsWith('vocab_') && name.length > 6) return { type: 'vocab', vocabulary: name.slice(6) };
  if (name.startsWith('extras_') && name.length > 7) return { type: 'extra', key: name.slice(7) };
  const f = FIELDS[name];
  if (!f) return { type: 'extra', key: name };
  if (f.type === 'fulltext' || f.type === 'constant') return undefined;
  return f;
}

/** Index columns counted per value (the triggers' list, package_search_value_triples). */
export const COUNTED_COLUMNS: readonly string[] = [
  'organization',
  'owner_org',
  'license_id',
  'type',
  'tags',
  'groups',
  'res_format',
  'res_type',
];
