// The profile registry. A profile maps a dataset dict to RDF (output) and, where dcat-parse
// registers it, RDF back to a dataset dict (parsing). Profiles are named as in ckanext-dcat
// (euro_dcat_ap_3, euro_dcat_ap_2, dcat_us_3, schemaorg, croissant) and applied in the order
// given: a later one may add to or replace what an earlier one wrote.
import type { NamedNode, Quad_Subject, Store } from 'n3';
import type { Graph, Subject } from './graph.ts';

/** A dataset dict as package_show returns it (core fields, extras, scheming fields, resources). */
export type DatasetDict = Record<string, any>;

/** A data store table behind a resource: served by our Action API as a dcat:DataService. */
export interface DataStoreTable {
  resourceId: string;
  /** The data dictionary (datastore_info's fields): id, type and the info dict. */
  fields: { id: string; type: string; info?: Record<string, unknown> }[];
}

/** What the output side of a profile knows besides the dataset. */
export interface OutputContext {
  graph: Graph;
  /** Base of every minted URI: svc.dcat.base_uri, else the site URL; no trailing slash. */
  baseUri: string;
  /** The site URL (for page and API links); no trailing slash. */
  siteUrl: string;
  /** The URI of a dataset: its `uri` field or extra, else baseUri/dataset/{id}. */
  datasetUri(dataset: DatasetDict): string;
  /** The URI of a resource: its `uri` field, else baseUri/dataset/{package id}/resource/{id}. */
  resourceUri(dataset: DatasetDict, resource: DatasetDict): string;
  /** The URL of a licence id (the licence list's url), when known. */
  licenseUrl(licenseId: string): string | undefined;
  /** Groups become dcat:theme (svc.dcat.groups_as_themes). */
  groupsAsThemes: boolean;
  /** The data store tables of the dataset's resources (empty when the data store is off). */
  tables: Map<string, DataStoreTable>;
}

/** The catalog's own description (the site's title, description, URL, language, modified). */
export interface CatalogDict {
  title: string;
  description: string;
  homepage: string;
  language?: string;
  modified?: string;
}

/** What the parsing side of a profile gets: the whole document and one dcat:Dataset in it. */
export interface ParseInput {
  store: Store;
  subject: Quad_Subject;
  /** The dict being built; the profile adds to it. */
  dataset: DatasetDict;
  /** Field names the target dataset type's schema defines (scheming shape); others go to extras. */
  schemaFields: Set<string>;
}

export interface DcatProfile {
  /** The name used in `profiles=` and svc.dcat.rdf.profiles (ckanext-dcat's names). */
  name: string;
  description: string;
  /** Profiles applied before this one whenever it is asked for (DCAT-AP 3 builds on 2). */
  basedOn?: string[];
  /** Adds the triples of one dataset, its distributions and agents. */
  datasetToGraph?(ctx: OutputContext, dataset: DatasetDict, node: NamedNode): void | Promise<void>;
  /** Adds the triples of the catalog itself (not its datasets). */
  catalogToGraph?(ctx: OutputContext, catalog: CatalogDict, node: Subject): void;
  /** Reads one dcat:Dataset back into the dict (registered by the parsing side). */
  parseDataset?(input: ParseInput): void;
}

const profiles = new Map<string, DcatProfile>();

/** Adds a profile, or extends one already registered with the given hooks (parsing registers after output). */
export function registerProfile(profile: DcatProfile): void {
  const existing = profiles.get(profile.name);
  profiles.set(profile.name, existing ? { ...existing, ...profile } : profile);
}

export function profileNames(): string[] {
  return [...profiles.keys()];
}

export class UnknownProfileError extends Error {
  constructor(readonly profile: string) {
    super(`Unknown RDF profile "${profile}"; known profiles: ${profileNames().join(', ')}`);
  }
}

/**
 * The profiles to apply, in order, for a list of names (each preceded by those it is based on,
 * each once). Throws UnknownProfileError naming the first unknown one.
 */
export function resolveProfiles(names: readonly string[]): DcatProfile[] {
  const out: DcatProfile[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    const profile = profiles.get(name);
    if (!profile) throw new UnknownProfileError(name);
    seen.add(name);
    for (const base of profile.basedOn ?? []) visit(base);
    out.push(profile);
  };
  for (const name of names) visit(name);
  return out;
}

/** Splits `profiles=` text (comma or space separated) into names. */
export function profileList(value: string | readonly string[]): string[] {
  const parts = typeof value === 'string' ? value.split(/[\s,]+/) : value.flatMap((v) => v.split(/[\s,]+/));
  return parts.map((s) => s.trim()).filter(Boolean);
}
