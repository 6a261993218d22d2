// The two shapes a parsed dataset takes (ckanext-dcat's): a DCAT field the target dataset type's
// schema defines stays a top-level field (lists as lists, agents as lists of objects); any other
// becomes a legacy extra named as in ckanext-dcat's mapping (contact_name, publisher_uri,
// temporal_start, spatial_uri, ...) with lists JSON-encoded. Resources keep every key at the top
// (CKAN resources take any key); their lists are JSON-encoded unless the schema defines them.
import type { DatasetDict } from '../profiles.ts';

/** Fields of a dataset dict that are core CKAN fields, never extras. */
const CORE = new Set(['title', 'notes', 'url', 'version', 'tags', 'license_id', 'resources', 'name', 'type', 'extras', 'owner_org']);

/** The first object of a repeating field, spread into `prefix_key` extras. */
const FIRST_OBJECT: Record<string, { prefix: string; keys: Record<string, string> }> = {
  contact: { prefix: 'contact_', keys: { uri: 'uri', name: 'name', email: 'email', identifier: 'identifier', url: 'url' } },
  publisher: {
    prefix: 'publisher_',
    keys: { uri: 'uri', name: 'name', email: 'email', url: 'url', type: 'type', identifier: 'identifier' },
  },
  creator: { prefix: 'creator_', keys: { uri: 'uri', name: 'name', email: 'email', url: 'url', type: 'type', identifier: 'identifier' } },
  temporal_coverage: { prefix: 'temporal_', keys: { start: 'start', end: 'end' } },
  spatial_coverage: {
    prefix: 'spatial',
    keys: { uri: '_uri', text: '_text', geom: '', bbox: '_bbox', centroid: '_centroid' },
  },
};

export interface TargetFields {
  /** Dataset field names of the target type's schema (empty: no schema, everything legacy). */
  dataset: Set<string>;
  /** Resource field names of the schema. */
  resource: Set<string>;
}

function extraValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Moves the fields the schema does not define into extras; returns the same dict. */
export function shapeDataset(d: DatasetDict, target: TargetFields): DatasetDict {
  const extras: { key: string; value: string }[] = [];
  for (const key of Object.keys(d)) {
    if (CORE.has(key) || target.dataset.has(key)) continue;
    const value = d[key];
    delete d[key];
    const spread = FIRST_OBJECT[key];
    if (spread && Array.isArray(value)) {
      const first = value[0] ?? {};
      for (const [sub, suffix] of Object.entries(spread.keys)) {
        if (first[sub] !== undefined && first[sub] !== '') extras.push({ key: `${spread.prefix}${suffix}`, value: extraValue(first[sub]) });
      }
    } else extras.push({ key, value: extraValue(value) });
  }
  if (extras.length) d.extras = [...(d.extras ?? []), ...extras];
  for (const res of d.resources ?? []) {
    for (const [key, value] of Object.entries(res)) {
      if (value !== null && typeof value === 'object' && !target.resource.has(key)) res[key] = JSON.stringify(value);
    }
  }
  return d;
}
