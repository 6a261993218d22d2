// The contract between a harvest source's reader (what is over there) and the harvest run (what
// becomes of it here). Readers never write; the run never speaks to the remote catalog.
import type { ParseOptions } from '../dcat/parse/index.ts';

export type HarvestSourceType = 'ckan' | 'dcat_rdf' | 'dcat_json';

/** A source's `config` (a JSON object in the API, ckanext-harvest's keys). */
export interface HarvestSourceConfig {
  default_tags?: string[] | { name: string }[];
  default_groups?: string[];
  default_extras?: Record<string, string>;
  override_extras?: boolean;
  remote_groups?: 'only_local' | 'create';
  remote_orgs?: 'only_local' | 'create';
  api_version?: number;
  user?: string;
  read_only?: boolean;
  force_all?: boolean;
  clean_tags?: boolean;
  /** CKAN sources: only remote datasets matching these. */
  q?: string;
  fq?: string;
  /** Keep local copies of datasets that disappeared remotely (default false: delete them). */
  keep_deleted?: boolean;
  /** DCAT sources: RDF format when the server does not say (turtle, xml, jsonld, ...). */
  rdf_format?: string;
  /** DCAT sources: parsing profiles (default the site's). */
  profiles?: string[];
  [key: string]: unknown;
}

export interface HarvestSourceSpec {
  id: string;
  url: string;
  source_type: HarvestSourceType;
  config: HarvestSourceConfig;
}

/** One remote dataset as a reader found it. */
export interface RemoteDataset {
  /** Stable remote identity: a CKAN source's dataset id; a DCAT dataset's URI (or dct:identifier). */
  guid: string;
  /** Where a person sees it over there (for the dataset page and `harvest_object_show`). */
  remoteUrl: string | null;
  /** The remote modification time (ISO 8601), when the source says it. */
  modified: string | null;
  /** The record as received, kept on the harvest object: a CKAN package dict or a data.json object as
   * JSON, a DCAT dataset as its parsed dict in JSON with sorted keys (the same record, the same text). */
  content: string;
  /** The record as a dataset dict for package_create/update, before the source's config applies;
   * null when the record could not be read (then `error` says why: an error of this object only). */
  dataset: Record<string, unknown> | null;
  error?: string;
  /** The remote organization (a CKAN dataset's) or publisher (data.json), for config remote_orgs. */
  organization?: RemoteOrganization | null;
}

/** An organization as the remote catalog names it: matched here by id, then by name. */
export interface RemoteOrganization {
  id?: string;
  name: string;
  title?: string;
  description?: string;
  image_url?: string;
}

/** Fetches a URL's body as text, with the harvest limits (SSRF rule, time, size, User-Agent). */
export type HarvestFetch = (
  url: string,
  init?: { accept?: string; signal?: AbortSignal },
) => Promise<{ status: number; url: string; contentType: string | null; text: string }>;

export interface ReadOptions {
  /** Only datasets modified since then (ISO); null: all. Readers that cannot filter yield all. */
  since: string | null;
  signal: AbortSignal;
  fetch: HarvestFetch;
  /** DCAT sources: how documents become dataset dicts here (the target type's schema fields, the
   * licence register, the site's default profiles); a source's config.profiles wins over profiles. */
  dcat?: Pick<ParseOptions, 'target' | 'licenses' | 'profiles' | 'datasetType' | 'language'>;
}

export interface SourceReader {
  /** Every remote dataset (changed since `since` where the source can tell). Throws HarvestSourceError
   * when the source itself fails (down, 5xx after retries, not a catalog): an error of the job. */
  read(source: HarvestSourceSpec, options: ReadOptions): AsyncIterable<RemoteDataset>;
  /** Every remote guid there is now, to find the datasets deleted over there. */
  listGuids(source: HarvestSourceSpec, options: Omit<ReadOptions, 'since'>): Promise<Set<string>>;
}

/** The source failed as a whole (not one record): the job fails with this message. */
export class HarvestSourceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}
