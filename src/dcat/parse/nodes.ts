// The nodes a dataset or distribution points to, read into the objects of the scheming shape:
// contact points (vcard), agents (foaf), periods of time, locations, checksums, data services.
import type { Quad_Subject } from 'n3';
import { dcat, dcatap, dcatus, dct, foaf, gsp, locn, rdf, rdfs, schema, skos, spdx, time, vcard } from '../namespaces.ts';
import { nodeUri, type Reader } from './reader.ts';
import { wktToGeoJson } from './wkt.ts';

type Dict = Record<string, any>;

/** Drops empty values, so a node with nothing but a URI gives {uri}. */
function compact(d: Dict): Dict {
  for (const k of Object.keys(d)) if (d[k] === undefined || d[k] === '' || (Array.isArray(d[k]) && !d[k].length)) delete d[k];
  return d;
}

function withoutMailto(v: string | undefined): string | undefined {
  return v?.replace(/^mailto:/i, '');
}

/** A label for a blank node standing for a concept or a format: skos:prefLabel, rdfs:label, rdf:value, foaf:name. */
export function labelOf(r: Reader, node: Quad_Subject): string | undefined {
  return r.value(node, skos('prefLabel')) ?? r.value(node, rdfs('label')) ?? r.value(node, rdf('value')) ?? r.value(node, foaf('name'));
}

/** dcat:contactPoint nodes as {uri, name, email, identifier, url}. */
export function contactPoints(r: Reader, s: Quad_Subject, predicate = dcat('contactPoint')): Dict[] {
  return r.nodes(s, predicate).map((node) =>
    compact({
      uri: nodeUri(node),
      name: r.value(node, vcard('fn')) ?? r.value(node, vcard('organization-name')),
      email: withoutMailto(r.value(node, vcard('hasEmail'))),
      identifier: r.value(node, vcard('hasUID')),
      url: r.value(node, vcard('hasURL')),
    }),
  );
}

/** Agents (publisher, creator, contributor) as {uri, name, email, url, type, identifier}. */
export function agents(r: Reader, s: Quad_Subject, predicate: Parameters<Reader['nodes']>[1]): Dict[] {
  return r.nodes(s, predicate).map((node) =>
    compact({
      uri: nodeUri(node),
      name: r.value(node, foaf('name')) ?? r.value(node, skos('prefLabel')) ?? r.value(node, vcard('fn')),
      email: withoutMailto(r.value(node, foaf('mbox')) ?? r.value(node, vcard('hasEmail'))),
      url: r.value(node, foaf('homepage')) ?? r.value(node, foaf('workplaceHomepage')),
      type: r.value(node, dct('type'), (n) => labelOf(r, n)),
      identifier: r.value(node, dct('identifier')),
    }),
  );
}

function instant(r: Reader, node: Quad_Subject | undefined): string | undefined {
  if (!node) return undefined;
  return r.value(node, time('inXSDDateTimeStamp')) ?? r.value(node, time('inXSDDateTime')) ?? r.value(node, time('inXSDDate'));
}

/** dct:temporal periods as {start, end} (DCAT 2 startDate/endDate, schema.org's, or OWL-Time's). */
export function periods(r: Reader, s: Quad_Subject): Dict[] {
  const out: Dict[] = [];
  for (const node of r.nodes(s, dct('temporal'))) {
    const start =
      r.value(node, dcat('startDate')) ?? r.value(node, schema('startDate')) ?? instant(r, r.nodes(node, time('hasBeginning'))[0]);
    const end = r.value(node, dcat('endDate')) ?? r.value(node, schema('endDate')) ?? instant(r, r.nodes(node, time('hasEnd'))[0]);
    if (start || end) out.push(compact({ start, end }));
  }
  return out;
}

const GEOJSON_TYPES = new Set([
  'https://www.iana.org/assignments/media-types/application/vnd.geo+json',
  'http://www.opengis.net/ont/geosparql#geoJSONLiteral',
]);

/** A geometry literal as GeoJSON text: GeoJSON kept as written, WKT converted; other encodings left out. */
function geometry(r: Reader, node: Quad_Subject, predicate: Parameters<Reader['nodes']>[1]): string | undefined {
  let wkt: string | undefined;
  for (const o of r.objects(node, predicate)) {
    if (o.termType !== 'Literal') continue;
    const type = (o as any).datatype?.value as string | undefined;
    const text = o.value.trim();
    if ((type && GEOJSON_TYPES.has(type)) || text.startsWith('{')) return text;
    if (type === gsp('wktLiteral').value || /^[A-Z]+\s*\(/i.test(text)) wkt ??= text;
  }
  return wkt ? wktToGeoJson(wkt) : undefined;
}

/** dct:spatial as {uri, text, geom, bbox, centroid}: a URI, a literal name, or a dct:Location. */
export function locations(r: Reader, s: Quad_Subject): Dict[] {
  const out: Dict[] = [];
  for (const o of r.objects(s, dct('spatial'))) {
    if (o.termType === 'Literal') {
      if (o.value.trim()) out.push({ text: o.value });
      continue;
    }
    const node = o as Quad_Subject;
    const place = compact({
      uri: nodeUri(node),
      text: r.value(node, skos('prefLabel')) ?? r.value(node, rdfs('label')) ?? r.value(node, locn('geographicName')),
      geom: geometry(r, node, locn('geometry')),
      bbox: geometry(r, node, dcat('bbox')),
      centroid: geometry(r, node, dcat('centroid')),
    });
    if (Object.keys(place).length) out.push(place);
  }
  return out;
}

/** DCAT-US bounding boxes as {west, east, north, south}. */
export function boundingBoxes(r: Reader, s: Quad_Subject): Dict[] {
  return r.nodes(s, dcatus('geographicBoundingBox')).map((node) =>
    compact({
      west: r.value(node, dcatus('westBoundingLongitude')),
      east: r.value(node, dcatus('eastBoundingLongitude')),
      north: r.value(node, dcatus('northBoundingLatitude')),
      south: r.value(node, dcatus('southBoundingLatitude')),
    }),
  );
}

/** spdx:checksum as {hash, hash_algorithm} (the algorithm as its IRI, e.g. spdx:checksumAlgorithm_sha256). */
export function checksum(r: Reader, distribution: Quad_Subject): Dict {
  const node = r.nodes(distribution, spdx('checksum'))[0];
  if (!node) return {};
  return compact({ hash: r.value(node, spdx('checksumValue')), hash_algorithm: r.value(node, spdx('algorithm')) });
}

/** dcat:accessService nodes as the access_services objects of the scheming shape. */
export function accessServices(r: Reader, distribution: Quad_Subject): Dict[] {
  return r.nodes(distribution, dcat('accessService')).map((node) =>
    compact({
      uri: nodeUri(node),
      title: r.value(node, dct('title')),
      description: r.value(node, dct('description')),
      endpoint_description: r.value(node, dcat('endpointDescription')),
      endpoint_url: r.values(node, dcat('endpointURL')),
      serves_dataset: r.values(node, dcat('servesDataset')),
      access_rights: r.value(node, dct('accessRights'), (n) => labelOf(r, n)),
      availability: r.value(node, dcatap('availability')),
      conforms_to: r.values(node, dct('conformsTo')),
      format: r.values(node, dct('format')),
      identifier: r.value(node, dct('identifier')),
      language: r.values(node, dct('language')),
      rights: r.values(node, dct('rights'), (n) => labelOf(r, n)),
      landing_page: r.values(node, dcat('landingPage')),
      keyword: r.texts(node, dcat('keyword')),
      license: r.value(node, dct('license')),
      modified: r.value(node, dct('modified')),
      theme: r.values(node, dcat('theme')),
      applicable_legislation: r.values(node, dcatap('applicableLegislation')),
      contact: contactPoints(r, node),
      publisher: agents(r, node, dct('publisher')),
      creator: agents(r, node, dct('creator')),
    }),
  );
}
