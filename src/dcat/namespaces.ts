// The RDF vocabularies of the DCAT profiles: one prefix map (used by every serialiser, so all
// formats print the same prefixes) and a term maker per vocabulary (`dcat('Dataset')`).
import { DataFactory, type NamedNode } from 'n3';

export const PREFIXES = {
  adms: 'http://www.w3.org/ns/adms#',
  cnt: 'http://www.w3.org/2011/content#',
  cr: 'http://mlcommons.org/croissant/',
  dcat: 'http://www.w3.org/ns/dcat#',
  dcatap: 'http://data.europa.eu/r5r/',
  dcatus: 'http://resources.data.gov/ontology/dcat-us#',
  dct: 'http://purl.org/dc/terms/',
  foaf: 'http://xmlns.com/foaf/0.1/',
  gsp: 'http://www.opengis.net/ont/geosparql#',
  hydra: 'http://www.w3.org/ns/hydra/core#',
  locn: 'http://www.w3.org/ns/locn#',
  odrs: 'http://schema.theodi.org/odrs#',
  org: 'http://www.w3.org/ns/org#',
  owl: 'http://www.w3.org/2002/07/owl#',
  prov: 'http://www.w3.org/ns/prov#',
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  schema: 'http://schema.org/',
  skos: 'http://www.w3.org/2004/02/skos/core#',
  spdx: 'http://spdx.org/rdf/terms#',
  time: 'http://www.w3.org/2006/time#',
  vcard: 'http://www.w3.org/2006/vcard/ns#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
} as const;

/** A term maker for one vocabulary: `dct('title')` is <http://purl.org/dc/terms/title>; terms are made once. */
export type Vocabulary = (local: string) => NamedNode;

function vocabulary(base: string): Vocabulary {
  const made = new Map<string, NamedNode>();
  return (local) => {
    let node = made.get(local);
    if (!node) {
      node = DataFactory.namedNode(base + local);
      made.set(local, node);
    }
    return node;
  };
}

export const adms = vocabulary(PREFIXES.adms);
export const cnt = vocabulary(PREFIXES.cnt);
export const dcat = vocabulary(PREFIXES.dcat);
export const dcatap = vocabulary(PREFIXES.dcatap);
export const dcatus = vocabulary(PREFIXES.dcatus);
export const dct = vocabulary(PREFIXES.dct);
export const foaf = vocabulary(PREFIXES.foaf);
export const gsp = vocabulary(PREFIXES.gsp);
export const hydra = vocabulary(PREFIXES.hydra);
export const locn = vocabulary(PREFIXES.locn);
export const owl = vocabulary(PREFIXES.owl);
export const prov = vocabulary(PREFIXES.prov);
export const rdf = vocabulary(PREFIXES.rdf);
export const rdfs = vocabulary(PREFIXES.rdfs);
export const schema = vocabulary(PREFIXES.schema);
export const skos = vocabulary(PREFIXES.skos);
export const spdx = vocabulary(PREFIXES.spdx);
export const time = vocabulary(PREFIXES.time);
export const vcard = vocabulary(PREFIXES.vcard);
export const xsd = vocabulary(PREFIXES.xsd);

/** rdf:type, the most used predicate. */
export const RDF_TYPE = rdf('type');

// Characters that may not appear in an IRI as written in Turtle or N-Triples; they are
// percent-encoded so a sloppy URL in a dataset ("a b.csv") still makes a valid IRI.
const IRI_UNSAFE = new Set([...'<>"{}|\\^`']);
const IRI_UNSAFE_CODES = new Set([...IRI_UNSAFE].map((c) => c.charCodeAt(0)));

function hasIriUnsafe(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x20 || IRI_UNSAFE_CODES.has(code)) return true;
  }
  return false;
}

/** The IRI for a URL-like string, with the characters an IRI may not hold percent-encoded. */
export function cleanIri(value: string): string {
  const trimmed = value.trim();
  if (!hasIriUnsafe(trimmed)) return trimmed;
  let out = '';
  for (const c of trimmed) out += c.charCodeAt(0) <= 0x20 || IRI_UNSAFE.has(c) ? encodeURIComponent(c) : c;
  return out;
}

/** A NamedNode for a URL-like string (cleaned as cleanIri does). */
export function iri(value: string): NamedNode {
  return DataFactory.namedNode(cleanIri(value));
}

/** True when the string is an absolute http(s), urn or mailto reference, i.e. meant as a resource rather than text. */
export function looksLikeIri(value: string): boolean {
  return /^(https?:\/\/\S+|urn:\S+|mailto:\S+)$/i.test(value.trim());
}
