// DCAT document (text in any RDF format) -> dataset dicts, the catalog's own description and its
// hydra paging: what the dcat_parse action answers and what a DCAT harvester follows page by page.
import type { Quad_Subject } from 'n3';
import { dcat, dct, foaf, hydra, RDF_TYPE } from '../namespaces.ts';
import { resolveProfiles, type DatasetDict } from '../profiles.ts';
import { distributionNodes, useReader } from './dataset.ts';
import { agents } from './nodes.ts';
import { guessFormat, readRdf, type RdfFormat } from './read-rdf.ts';
import { nodeUri, Reader } from './reader.ts';
import { shapeDataset, type TargetFields } from './shape.ts';

/** A licence of the register, as far as matching a dct:license needs it. */
export interface LicenseRef {
  id: string;
  url: string;
  title: string;
}

export interface ParseOptions {
  /** The document's format; guessed from its first characters when absent. */
  format?: RdfFormat;
  /** Profiles to apply, in order (ckanext-dcat's names); default euro_dcat_ap_3. */
  profiles?: readonly string[];
  /** The profiles are a configured default, not asked for: when none of them parses, euro_dcat_ap_3 does. */
  profilesAreDefault?: boolean;
  /** Which DCAT fields stay top-level (the target type's schema); default none: legacy extras. */
  target?: TargetFields;
  /** Set as `type` of every dataset (the dataset type the dicts are meant for). */
  datasetType?: string;
  /** The licence register: a dct:license that names one becomes license_id. */
  licenses?: readonly LicenseRef[];
  /** Base IRI for relative references (the URL the document came from). */
  baseIRI?: string;
  /** Language taken when a property has literals in several. */
  language?: string;
}

/** The dcat:Catalog the document describes (the first when it has several). */
export interface ParsedCatalog {
  uri?: string;
  title?: string;
  description?: string;
  homepage?: string;
  language?: string[];
  issued?: string;
  modified?: string;
  publisher?: Record<string, unknown>[];
}

/** Hydra paging of a catalog page (hydra:PartialCollectionView or the older hydra:PagedCollection). */
export interface Paging {
  next?: string;
  previous?: string;
  first?: string;
  last?: string;
  totalItems?: number;
  itemsPerPage?: number;
}

export interface ParseResult {
  format: RdfFormat;
  datasets: DatasetDict[];
  catalog?: ParsedCatalog;
  /** The next page's URL, when the document is one page of a longer catalog. */
  nextPage?: string;
  /** How many datasets the whole catalog has, when the page says so. */
  totalItems?: number;
  paging?: Paging;
}

export const DEFAULT_PARSE_PROFILES = ['euro_dcat_ap_3'];

/** Throws RdfSyntaxError (malformed document) or UnknownProfileError / NoParsingProfileError (profiles). */
export async function parseDcat(text: string, options: ParseOptions = {}): Promise<ParseResult> {
  const profiles = resolveProfiles(options.profiles?.length ? options.profiles : DEFAULT_PARSE_PROFILES);
  let parsers = profiles.filter((p) => p.parseDataset);
  if (!parsers.length && options.profilesAreDefault) parsers = resolveProfiles(DEFAULT_PARSE_PROFILES);
  if (!parsers.length) throw new NoParsingProfileError(profiles.map((p) => p.name));
  const format = options.format ?? guessFormat(text);
  const store = await readRdf(text, format, options.baseIRI);
  const reader = new Reader(store, options.language);
  useReader(reader);
  const target = options.target ?? { dataset: new Set<string>(), resource: new Set<string>() };
  const datasets = datasetNodes(reader).map((subject) => {
    const dataset: DatasetDict = {};
    for (const p of parsers) p.parseDataset!({ store, subject, dataset, schemaFields: target.dataset });
    const licenseId = matchLicense(reader, subject, options.licenses ?? []);
    if (licenseId) dataset.license_id = licenseId;
    if (options.datasetType) dataset.type = options.datasetType;
    return shapeDataset(dataset, target);
  });
  const paging = pagingOf(reader);
  return {
    format,
    datasets,
    catalog: catalogOf(reader),
    nextPage: paging?.next,
    totalItems: paging?.totalItems,
    paging,
  };
}

export class NoParsingProfileError extends Error {
  constructor(readonly profiles: string[]) {
    super(`None of the profiles ${profiles.join(', ')} reads DCAT documents (euro_dcat_ap_3, euro_dcat_ap_2 and dcat_us_3 do)`);
  }
}

/** Every dcat:Dataset: typed as one, or listed by a catalog with dcat:dataset; each once. */
function datasetNodes(r: Reader): Quad_Subject[] {
  const out = new Map<string, Quad_Subject>();
  const add = (n: Quad_Subject) => out.has(n.id) || out.set(n.id, n);
  r.subjectsOfType(dcat('Dataset'), RDF_TYPE).forEach(add);
  for (const q of r.store.getQuads(null, dcat('dataset'), null, null)) {
    const o = q.object;
    if (o.termType === 'NamedNode' || o.termType === 'BlankNode') add(o as Quad_Subject);
  }
  return [...out.values()];
}

function normalUrl(url: string): string {
  return url
    .trim()
    .replace(/^https?:\/\//i, '')
    .replace(/\/+$/, '')
    .toLowerCase();
}

/**
 * The licence id for the dataset's dct:license, else the first distribution's that names a
 * licence of the register (CKAN keeps the licence on the dataset, DCAT-AP on distributions): by
 * its URL, its id as the last path segment, or its title.
 */
function matchLicense(r: Reader, dataset: Quad_Subject, licenses: readonly LicenseRef[]): string | undefined {
  const candidates = [dataset, ...distributionNodes(r, dataset)].flatMap((s) => r.values(s, dct('license')));
  for (const value of candidates) {
    const url = normalUrl(value);
    const lastSegment = url.split('/').pop();
    const found =
      licenses.find((l) => l.url && normalUrl(l.url) === url) ??
      licenses.find((l) => l.id.toLowerCase() === value.trim().toLowerCase() || l.id.toLowerCase() === lastSegment) ??
      licenses.find((l) => l.title && l.title.toLowerCase() === value.trim().toLowerCase());
    if (found) return found.id;
  }
  return undefined;
}

function catalogOf(r: Reader): ParsedCatalog | undefined {
  const node = r.subjectsOfType(dcat('Catalog'), RDF_TYPE)[0];
  if (!node) return undefined;
  const c: ParsedCatalog = {
    uri: nodeUri(node),
    title: r.value(node, dct('title')),
    description: r.value(node, dct('description')),
    homepage: r.value(node, foaf('homepage')),
    language: r.values(node, dct('language')),
    issued: r.value(node, dct('issued')),
    modified: r.value(node, dct('modified')),
    publisher: agents(r, node, dct('publisher')),
  };
  for (const k of Object.keys(c) as (keyof ParsedCatalog)[]) {
    const v = c[k];
    if (v === undefined || (Array.isArray(v) && !v.length)) delete c[k];
  }
  return c;
}

function pagingOf(r: Reader): Paging | undefined {
  const views = [...r.subjectsOfType(hydra('PartialCollectionView'), RDF_TYPE), ...r.subjectsOfType(hydra('PagedCollection'), RDF_TYPE)];
  // totalItems may sit on the collection (the catalog) rather than on the view
  const counted = r.store.getSubjects(hydra('totalItems'), null, null) as Quad_Subject[];
  if (!views.length && !counted.length) return undefined;
  const first = <T>(read: (n: Quad_Subject) => T | undefined): T | undefined => {
    for (const n of [...views, ...counted]) {
      const v = read(n);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const paging: Paging = {
    next: first((n) => r.value(n, hydra('next')) ?? r.value(n, hydra('nextPage'))),
    previous: first((n) => r.value(n, hydra('previous')) ?? r.value(n, hydra('previousPage'))),
    first: first((n) => r.value(n, hydra('first')) ?? r.value(n, hydra('firstPage'))),
    last: first((n) => r.value(n, hydra('last')) ?? r.value(n, hydra('lastPage'))),
    totalItems: first((n) => r.number(n, hydra('totalItems'))),
    itemsPerPage: first((n) => r.number(n, hydra('itemsPerPage'))),
  };
  for (const k of Object.keys(paging) as (keyof Paging)[]) if (paging[k] === undefined) delete paging[k];
  return paging;
}
