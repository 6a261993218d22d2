// Resources as dcat:Distribution: addresses, format and media type as IANA media types, byte size,
// checksum (spdx:Checksum), licence, rights, status, and the access services a resource names.
// A resource whose rows are in the data store also gets a dcat:DataService: our Action API
// (datastore_search) as endpoint, our OpenAPI document as endpoint description.
import { DataFactory, type NamedNode } from 'n3';
import { objectsOf, textOf } from './dataset-values.ts';
import type { Graph, Subject } from './graph.ts';
import { adms, dcat, dcatap, dct, foaf, iri, looksLikeIri, RDF_TYPE, rdfs, spdx, xsd } from './namespaces.ts';
import type { DatasetDict, OutputContext } from './profiles.ts';

type Dict = Record<string, any>;

const IANA = 'https://www.iana.org/assignments/media-types/';

/** Media types of the format names CKAN portals use. */
const MEDIA_TYPES: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  txt: 'text/plain',
  html: 'text/html',
  json: 'application/json',
  geojson: 'application/geo+json',
  jsonld: 'application/ld+json',
  'json-ld': 'application/ld+json',
  xml: 'application/xml',
  rdf: 'application/rdf+xml',
  ttl: 'text/turtle',
  turtle: 'text/turtle',
  nt: 'application/n-triples',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  odt: 'application/vnd.oasis.opendocument.text',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  kml: 'application/vnd.google-earth.kml+xml',
  kmz: 'application/vnd.google-earth.kmz',
  gpx: 'application/gpx+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  tiff: 'image/tiff',
  svg: 'image/svg+xml',
  parquet: 'application/vnd.apache.parquet',
  sql: 'application/sql',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
};

/** The media type of a resource: its mimetype, else the one of its format name. */
export function mediaTypeOf(resource: Dict): string | undefined {
  const mimetype = textOf(resource.mimetype);
  if (mimetype && /^[a-z]+\/[\w.+-]+$/i.test(mimetype)) return mimetype.toLowerCase();
  const format = textOf(resource.format)?.toLowerCase().replace(/^\./, '');
  return format ? MEDIA_TYPES[format] : undefined;
}

function mediaTypeNode(g: Graph, type: string, cls: NamedNode): NamedNode {
  const node = iri(IANA + type);
  g.add(node, RDF_TYPE, cls);
  return node;
}

/** dct:format: the IANA media type of the format name, else a dct:MediaTypeOrExtent labelled with it. */
function addFormat(g: Graph, node: Subject, resource: Dict): void {
  const format = textOf(resource.format);
  if (!format) return;
  if (looksLikeIri(format)) {
    g.add(node, dct('format'), iri(format));
    return;
  }
  const known =
    MEDIA_TYPES[format.toLowerCase().replace(/^\./, '')] ?? (/^[a-z]+\/[\w.+-]+$/i.test(format) ? format.toLowerCase() : undefined);
  if (known) {
    g.add(node, dct('format'), mediaTypeNode(g, known, dct('MediaTypeOrExtent')));
    return;
  }
  const extent = g.blank();
  g.add(node, dct('format'), extent);
  g.add(extent, RDF_TYPE, dct('MediaTypeOrExtent'));
  g.text(extent, rdfs('label'), format);
}

/** An absolute address for a resource URL (an uploaded file's path gets the site's address). */
function absolute(ctx: OutputContext, url: unknown): string | undefined {
  const t = textOf(url);
  if (!t) return undefined;
  if (t.startsWith('/')) return ctx.siteUrl + t;
  return looksLikeIri(t) ? t : undefined;
}

function addChecksum(g: Graph, node: Subject, resource: Dict): void {
  const hash = textOf(resource.hash);
  if (!hash) return;
  const checksum = g.blank();
  g.add(node, spdx('checksum'), checksum);
  g.add(checksum, RDF_TYPE, spdx('Checksum'));
  g.typed(checksum, spdx('checksumValue'), hash.replace(/^[a-z0-9-]+:/i, ''), xsd('hexBinary'));
  const algorithm = (textOf(resource.hash_algorithm) ?? /^([a-z0-9-]+):/i.exec(hash)?.[1] ?? guessAlgorithm(hash))?.toLowerCase();
  if (algorithm) {
    const name = algorithm.replace(/-/g, '');
    g.add(checksum, spdx('algorithm'), looksLikeIri(algorithm) ? iri(algorithm) : spdx(`checksumAlgorithm_${name}`));
  }
}

/** The algorithm of a bare hex digest by its length. */
function guessAlgorithm(hash: string): string | undefined {
  if (!/^[0-9a-f]+$/i.test(hash)) return undefined;
  return { 32: 'md5', 40: 'sha1', 64: 'sha256', 128: 'sha512' }[hash.length];
}

/** The distribution of one resource; dataset-level licence when the resource has none. */
export function addDistribution(ctx: OutputContext, dataset: DatasetDict, datasetNode: Subject, resource: Dict, version: 2 | 3): NamedNode {
  const g = ctx.graph;
  const node = iri(ctx.resourceUri(dataset, resource));
  g.add(datasetNode, dcat('distribution'), node);
  g.add(node, RDF_TYPE, dcat('Distribution'));
  g.text(node, dct('title'), resource.name);
  g.text(node, dct('description'), resource.description);
  const url = absolute(ctx, resource.url);
  const accessUrl = absolute(ctx, resource.access_url) ?? url;
  const downloadUrl = absolute(ctx, resource.download_url) ?? (resource.url_type === 'upload' ? url : undefined);
  if (accessUrl) g.add(node, dcat('accessURL'), iri(accessUrl));
  if (downloadUrl) g.add(node, dcat('downloadURL'), iri(downloadUrl));
  const mediaType = mediaTypeOf(resource);
  if (mediaType) g.add(node, dcat('mediaType'), mediaTypeNode(g, mediaType, dct('MediaType')));
  addFormat(g, node, resource);
  const size = Number(resource.size);
  if (resource.size !== null && resource.size !== '' && Number.isInteger(size) && size >= 0) {
    g.typed(node, dcat('byteSize'), size, version === 3 ? xsd('nonNegativeInteger') : xsd('decimal'));
  }
  addChecksum(g, node, resource);
  g.date(node, dct('issued'), resource.issued ?? resource.created);
  g.date(node, dct('modified'), resource.modified ?? resource.last_modified ?? resource.metadata_modified);
  const license =
    textOf(resource.license) ?? (dataset.license_id ? (ctx.licenseUrl(dataset.license_id) ?? dataset.license_url) : undefined);
  if (license) {
    const licenseNode = looksLikeIri(license) ? iri(license) : g.blank();
    g.add(node, dct('license'), licenseNode);
    g.add(licenseNode, RDF_TYPE, dct('LicenseDocument'));
    if (!looksLikeIri(license)) g.text(licenseNode, rdfs('label'), license);
  }
  rightsStatement(g, node, dct('rights'), resource.rights);
  g.uriOrText(node, adms('status'), resource.status);
  g.uris(node, foaf('page'), resource.documentation);
  g.uris(node, dct('language'), resource.language);
  g.uris(node, dct('conformsTo'), resource.conforms_to);
  g.uriOrText(node, dcatap('availability'), resource.availability);
  g.uris(node, dcat('compressFormat'), resource.compress_format);
  g.uris(node, dcat('packageFormat'), resource.package_format);
  for (const service of objectsOf(resource.access_services)) addAccessService(ctx, node, service);
  const table = ctx.tables.get(resource.id);
  if (table) addDataStoreService(ctx, dataset, datasetNode, node, resource);
  return node;
}

/** A rights statement (dct:RightsStatement) from text or a URI. */
export function rightsStatement(g: Graph, node: Subject, predicate: NamedNode, value: unknown): void {
  const text = textOf(value);
  if (!text) return;
  const statement = looksLikeIri(text) ? iri(text) : g.blank();
  g.add(node, predicate, statement);
  g.add(statement, RDF_TYPE, dct('RightsStatement'));
  if (!looksLikeIri(text)) g.text(statement, rdfs('label'), text);
}

/** A dcat:DataService a resource names in access_services (the scheming shape). */
function addAccessService(ctx: OutputContext, distribution: Subject, service: Dict): void {
  const g = ctx.graph;
  const node = service.uri && looksLikeIri(service.uri) ? iri(service.uri) : g.blank();
  g.add(distribution, dcat('accessService'), node);
  g.add(node, RDF_TYPE, dcat('DataService'));
  g.text(node, dct('title'), service.title);
  g.text(node, dct('description'), service.description);
  g.uris(node, dcat('endpointURL'), service.endpoint_url);
  g.uriOrText(node, dcat('endpointDescription'), service.endpoint_description);
  g.uris(node, dcat('servesDataset'), service.serves_dataset);
  g.uris(node, dct('conformsTo'), service.conforms_to);
  g.texts(node, dcat('keyword'), service.keyword);
  g.uris(node, dct('language'), service.language);
  g.uriOrText(node, dcatap('availability'), service.availability);
  g.uriOrText(node, dct('license'), service.license);
  g.uriOrText(node, dct('accessRights'), service.access_rights);
  rightsStatement(g, node, dct('rights'), service.rights);
  g.text(node, dct('identifier'), service.identifier);
  g.uriOrText(node, dct('format'), service.format);
  const landing = textOf(service.landing_page);
  if (landing && looksLikeIri(landing)) g.add(node, dcat('landingPage'), iri(landing));
}

/** The data store serving a resource's rows: datastore_search of our API, described by our OpenAPI document. */
function addDataStoreService(ctx: OutputContext, dataset: DatasetDict, datasetNode: Subject, distribution: Subject, resource: Dict): void {
  const g = ctx.graph;
  const node = iri(`${ctx.resourceUri(dataset, resource)}/datastore`);
  g.add(distribution, dcat('accessService'), node);
  g.add(node, RDF_TYPE, dcat('DataService'));
  g.text(node, dct('title'), `Data store API of ${textOf(resource.name) ?? resource.id}`);
  g.add(node, dcat('endpointURL'), iri(`${ctx.siteUrl}/api/3/action/datastore_search?resource_id=${resource.id}`));
  g.add(node, dcat('endpointDescription'), iri(`${ctx.siteUrl}/api/3/openapi.json`));
  g.add(node, dcat('servesDataset'), datasetNode);
  g.add(node, dct('conformsTo'), DataFactory.namedNode('https://spec.openapis.org/oas/v3.1.0'));
}
