// The parsing side of the DCAT profiles: one dcat:Dataset (with its distributions) read into a
// dataset dict in the scheming shape (top-level DCAT fields, lists as lists, agents as objects).
// shape.ts then moves what the target type's schema does not define into legacy extras.
// DCAT-AP 2 and 3 share one reading (3 adds properties 2 never has, so reading them always is
// harmless); DCAT-US 3 adds its own.
import type { Quad_Subject } from 'n3';
import { adms, cnt, dcat, dcatap, dcatus, dct, foaf, owl, skos } from '../namespaces.ts';
import { profileNames, registerProfile, type DatasetDict, type DcatProfile, type ParseInput } from '../profiles.ts';
import { accessServices, agents, boundingBoxes, checksum, contactPoints, labelOf, locations, periods } from './nodes.ts';
import { nodeUri, type Reader } from './reader.ts';

type Dict = Record<string, any>;

/** The Reader of each document being parsed (set by parseDcat before the profiles run). */
const readers = new WeakMap<ParseInput['store'], Reader>();

export function useReader(reader: Reader): void {
  readers.set(reader.store, reader);
}

function readerOf(input: ParseInput): Reader {
  const r = readers.get(input.store);
  if (!r) throw new Error('parseDataset called outside parseDcat');
  return r;
}

function set(d: Dict, key: string, value: unknown): void {
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && !value.length)) return;
  d[key] = value;
}

const IANA_MEDIA_TYPE = /^https?:\/\/www\.iana\.org\/assignments\/media-types\//;
const EU_FILE_TYPE = /^https?:\/\/publications\.europa\.eu\/resource\/authority\/file-type\//;

/** The format names CKAN portals give the common media types (what a format-less IANA IRI becomes). */
const FORMAT_OF_MEDIA_TYPE: Record<string, string> = {
  'text/csv': 'CSV',
  'text/tab-separated-values': 'TSV',
  'text/plain': 'TXT',
  'text/html': 'HTML',
  'application/json': 'JSON',
  'application/geo+json': 'GeoJSON',
  'application/ld+json': 'JSON-LD',
  'application/xml': 'XML',
  'text/xml': 'XML',
  'application/rdf+xml': 'RDF',
  'text/turtle': 'TTL',
  'application/n-triples': 'NT',
  'application/vnd.ms-excel': 'XLS',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'XLSX',
  'application/vnd.oasis.opendocument.spreadsheet': 'ODS',
  'application/msword': 'DOC',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'DOCX',
  'application/pdf': 'PDF',
  'application/zip': 'ZIP',
  'application/gzip': 'GZ',
  'application/vnd.google-earth.kml+xml': 'KML',
  'application/vnd.apache.parquet': 'PARQUET',
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
};

/**
 * dct:format as CKAN writes formats: "CSV" for the EU file-type IRI, the format name of a common
 * IANA media type (else the media type itself), a blank node's label, a literal as written.
 */
function formatOf(r: Reader, distribution: Quad_Subject): string | undefined {
  const v = r.value(distribution, dct('format'), (n) => labelOf(r, n));
  if (!v) return undefined;
  if (EU_FILE_TYPE.test(v)) return v.replace(EU_FILE_TYPE, '');
  if (!IANA_MEDIA_TYPE.test(v)) return v;
  const mediaType = v.replace(IANA_MEDIA_TYPE, '');
  return FORMAT_OF_MEDIA_TYPE[mediaType.toLowerCase()] ?? mediaType;
}

function mediaTypeOf(r: Reader, distribution: Quad_Subject): string | undefined {
  return r.value(distribution, dcat('mediaType'), (n) => labelOf(r, n))?.replace(IANA_MEDIA_TYPE, '');
}

/** Values of a property, blank nodes by their label (a dct:Standard, a dct:RightsStatement, ...). */
function labelled(r: Reader, s: Quad_Subject, p: Parameters<Reader['values']>[1]): string[] {
  return r.values(s, p, (n) => labelOf(r, n));
}

function alternateIdentifiers(r: Reader, s: Quad_Subject): string[] {
  return r.values(s, adms('identifier'), (n) => r.value(n, skos('notation')) ?? labelOf(r, n));
}

function distribution(r: Reader, node: Quad_Subject): Dict {
  const res: Dict = {};
  set(res, 'uri', nodeUri(node));
  set(res, 'name', r.value(node, dct('title')));
  set(res, 'description', r.value(node, dct('description')));
  const accessUrl = r.value(node, dcat('accessURL'));
  const downloadUrl = r.value(node, dcat('downloadURL'));
  set(res, 'url', downloadUrl ?? accessUrl);
  set(res, 'access_url', accessUrl);
  set(res, 'download_url', downloadUrl);
  set(res, 'format', formatOf(r, node));
  set(res, 'mimetype', mediaTypeOf(r, node));
  const size = r.number(node, dcat('byteSize'));
  if (size !== undefined && Number.isInteger(size) && size >= 0) res.size = size;
  Object.assign(res, checksum(r, node));
  set(res, 'issued', r.value(node, dct('issued')));
  set(res, 'modified', r.value(node, dct('modified')));
  set(
    res,
    'license',
    r.value(node, dct('license'), (n) => labelOf(r, n)),
  );
  set(
    res,
    'rights',
    r.value(node, dct('rights'), (n) => labelOf(r, n)),
  );
  set(res, 'status', r.value(node, adms('status')));
  set(res, 'availability', r.value(node, dcatap('availability')));
  set(res, 'compress_format', r.value(node, dcat('compressFormat')));
  set(res, 'package_format', r.value(node, dcat('packageFormat')));
  set(res, 'temporal_resolution', r.value(node, dcat('temporalResolution')));
  set(res, 'spatial_resolution_in_meters', r.value(node, dcat('spatialResolutionInMeters')));
  set(res, 'documentation', r.values(node, foaf('page')));
  set(res, 'language', r.values(node, dct('language')));
  set(res, 'conforms_to', labelled(r, node, dct('conformsTo')));
  set(res, 'applicable_legislation', r.values(node, dcatap('applicableLegislation')));
  set(res, 'access_services', accessServices(r, node));
  return res;
}

/** The distributions of a dataset, in the order the document names them. */
export function distributionNodes(r: Reader, s: Quad_Subject): Quad_Subject[] {
  return r.nodes(s, dcat('distribution'));
}

const SIMPLE: [string, Parameters<Reader['value']>[1]][] = [
  ['issued', dct('issued')],
  ['modified', dct('modified')],
  ['identifier', dct('identifier')],
  ['version_notes', adms('versionNotes')],
  ['frequency', dct('accrualPeriodicity')],
  ['provenance', dct('provenance')],
  ['dcat_type', dct('type')],
  ['access_rights', dct('accessRights')],
  ['homepage', foaf('homepage')],
  ['temporal_resolution', dcat('temporalResolution')],
  ['spatial_resolution_in_meters', dcat('spatialResolutionInMeters')],
];

const LISTS: [string, Parameters<Reader['values']>[1][]][] = [
  ['language', [dct('language')]],
  ['theme', [dcat('theme')]],
  ['conforms_to', [dct('conformsTo')]],
  ['documentation', [foaf('page')]],
  ['related_resource', [dct('relation')]],
  ['has_version', [dcat('hasVersion'), dct('hasVersion')]],
  ['is_version_of', [dct('isVersionOf')]],
  ['source', [dct('source')]],
  ['sample', [adms('sample')]],
  ['is_referenced_by', [dct('isReferencedBy')]],
  ['applicable_legislation', [dcatap('applicableLegislation')]],
  ['hvd_category', [dcatap('hvdCategory')]],
  ['in_series', [dcat('inSeries')]],
];

/** DCAT-AP (2.x and 3): every core field and the DCAT fields of ckanext-dcat's dcat_ap_full schema. */
function parseDcatAp(input: ParseInput): void {
  const r = readerOf(input);
  const s = input.subject;
  const d = input.dataset;
  set(d, 'title', r.value(s, dct('title')));
  set(d, 'notes', r.value(s, dct('description')));
  set(d, 'url', r.value(s, dcat('landingPage')));
  set(d, 'version', r.value(s, dcat('version')) ?? r.value(s, owl('versionInfo')) ?? r.value(s, adms('version')));
  d.tags = r.texts(s, dcat('keyword')).map((name) => ({ name }));
  set(d, 'uri', nodeUri(s));
  for (const [key, p] of SIMPLE)
    set(
      d,
      key,
      r.value(s, p, (n) => labelOf(r, n)),
    );
  for (const [key, predicates] of LISTS) set(d, key, [...new Set(predicates.flatMap((p) => labelled(r, s, p)))]);
  set(d, 'alternate_identifier', alternateIdentifiers(r, s));
  set(d, 'contact', contactPoints(r, s).concat(contactPoints(r, s, adms('contactPoint'))));
  set(d, 'publisher', agents(r, s, dct('publisher')));
  set(d, 'creator', agents(r, s, dct('creator')));
  set(d, 'temporal_coverage', periods(r, s));
  set(d, 'spatial_coverage', locations(r, s));
  d.resources = distributionNodes(r, s).map((node) => distribution(r, node));
}

/** DCAT-US 3: what it adds to DCAT-AP (liability, purpose, usage, contributors, bounding boxes, encodings). */
function parseDcatUs(input: ParseInput): void {
  const r = readerOf(input);
  const s = input.subject;
  const d = input.dataset;
  set(
    d,
    'liability',
    r.value(s, dcatus('liabilityStatement'), (n) => labelOf(r, n)),
  );
  set(d, 'purpose', r.values(s, dcatus('purpose')));
  set(d, 'usage', r.values(s, skos('scopeNote')));
  set(d, 'contributor', agents(r, s, dct('contributor')));
  set(d, 'bbox', boundingBoxes(r, s));
  const nodes = distributionNodes(r, s);
  const resources: DatasetDict[] = d.resources ?? [];
  nodes.forEach((node, i) => {
    const res = resources[i];
    if (!res) return;
    set(res, 'identifier', r.value(node, dct('identifier')));
    set(res, 'character_encoding', r.value(node, cnt('characterEncoding')));
  });
}

/** Runs the DCAT-AP reading once per dataset, whichever of the profiles asks first. */
const apDone = new WeakSet<DatasetDict>();

function parseOnce(input: ParseInput): void {
  if (apDone.has(input.dataset)) return;
  apDone.add(input.dataset);
  parseDcatAp(input);
}

/** Adds the parsing hook to a profile; the output side's own description is kept when it registered first. */
function addParser(name: string, description: string, parseDataset: (input: ParseInput) => void): void {
  registerProfile(profileNames().includes(name) ? ({ name, parseDataset } as DcatProfile) : { name, description, parseDataset });
}

addParser('euro_dcat_ap_2', 'DCAT-AP 2.x', parseOnce);
addParser('euro_dcat_ap_3', 'DCAT-AP 3 (the default)', parseOnce);
addParser('dcat_us_3', 'DCAT-US 3', (input) => {
  parseOnce(input);
  parseDcatUs(input);
});
