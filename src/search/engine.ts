// The search engine behind package_search: index a dataset, remove one, query. The catalog
// database serves it today (postgres-engine.ts); another engine can implement the same interface.
import type { Queryable } from '../db/database.ts';
import type { SpatialFilter } from './spatial.ts';

/** Who is asking and which datasets beyond the active public ones the call asks for. */
export interface SearchVisibility {
  /** Sysadmins see everything: no label filter. */
  sysadmin: boolean;
  /** Permission labels the caller holds (src/auth/authz.ts). */
  labels: string[];
  includePrivate: boolean;
  includeDrafts: boolean;
  includeDeleted: boolean;
}

export interface SortKey {
  field: string;
  desc: boolean;
}

export interface PackageQuery {
  q: string;
  /** Filter queries (fq and each of fq_list): all must match; they do not affect the score. */
  fq: string[];
  sort: SortKey[];
  rows: number;
  start: number;
  facetFields: string[];
  /** Negative: every value. */
  facetLimit: number;
  facetMincount: number;
  visibility: SearchVisibility;
  /** ext_bbox: only datasets whose spatial extent intersects it. */
  spatial?: SpatialFilter;
}

export interface PackageQueryResult {
  count: number;
  /** Dataset ids of the page, in order. */
  ids: string[];
  /** Per facet field: values with their counts, most frequent first. */
  facets: Record<string, { name: string; count: number }[]>;
}

export interface SearchEngine {
  /** (Re)indexes the datasets, in the caller's transaction. */
  index(db: Queryable, packageIds: string[]): Promise<void>;
  remove(db: Queryable, packageIds: string[]): Promise<void>;
  /** Called after index changes have committed (engines that cache results drop them). */
  changed(db: Queryable): Promise<void>;
  query(db: Queryable, query: PackageQuery): Promise<PackageQueryResult>;
}
