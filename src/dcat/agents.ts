// The parts of a dcat:Dataset that are nodes of their own: contact points (vcard:Kind), publisher
// and creator (foaf:Agent), temporal coverage (dct:PeriodOfTime) and spatial coverage
// (dct:Location). Each is read from the scheming shape (a list of objects) or, when absent, from
// the legacy extras (contact_name, publisher_uri, temporal_start, spatial_uri, ...), with the core
// fields as fallbacks (maintainer/author for the contact, the organization for the publisher).
import { DataFactory, type NamedNode } from 'n3';
import { fieldText, fieldValue, objectsOf, textOf } from './dataset-values.ts';
import { type Graph, nodeFor, type Subject } from './graph.ts';
import { dcat, dct, foaf, gsp, iri, locn, looksLikeIri, RDF_TYPE, skos, vcard, xsd } from './namespaces.ts';
import type { DatasetDict, OutputContext } from './profiles.ts';

type Dict = Record<string, any>;

const GEOJSON_TYPE = DataFactory.namedNode('https://www.iana.org/assignments/media-types/application/vnd.geo+json');

/** The objects of a scheming list field, else one object made of the legacy `<prefix>_<key>` extras. */
function roleObjects(dataset: DatasetDict, field: string, keys: readonly string[]): Dict[] {
  const listed = objectsOf(fieldValue(dataset, field)).filter((o) => keys.some((k) => textOf(o[k])));
  if (listed.length) return listed;
  const legacy: Dict = {};
  for (const k of keys) {
    const v = fieldText(dataset, `${field}_${k}`);
    if (v) legacy[k] = v;
  }
  return Object.keys(legacy).length ? [legacy] : [];
}

const AGENT_KEYS = ['uri', 'name', 'email', 'url', 'type', 'identifier', 'id'] as const;
const CONTACT_KEYS = ['uri', 'name', 'email', 'identifier', 'url'] as const;

function mailto(email: string): NamedNode {
  return iri(email.startsWith('mailto:') ? email : `mailto:${email}`);
}

/** dcat:contactPoint: `contact` objects, the contact_* extras, else the maintainer, else the author. */
export function addContactPoints(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  const g = ctx.graph;
  let contacts = roleObjects(dataset, 'contact', CONTACT_KEYS);
  if (!contacts.length) {
    for (const who of ['maintainer', 'author']) {
      const name = textOf(dataset[who]);
      const email = textOf(dataset[`${who}_email`]);
      if (name || email) {
        contacts = [{ name: name ?? email, email }];
        break;
      }
    }
  }
  for (const c of contacts) {
    const contact = nodeFor(g, c.uri);
    g.add(node, dcat('contactPoint'), contact);
    g.add(contact, RDF_TYPE, vcard('Kind'));
    g.text(contact, vcard('fn'), c.name);
    const email = textOf(c.email);
    if (email) g.add(contact, vcard('hasEmail'), mailto(email));
    g.text(contact, vcard('hasUID'), c.identifier);
    const url = textOf(c.url);
    if (url && looksLikeIri(url)) g.add(contact, vcard('hasURL'), iri(url));
  }
}

function addAgent(g: Graph, agent: Dict): Subject {
  const node = nodeFor(g, agent.uri);
  g.add(node, RDF_TYPE, foaf('Agent'));
  g.text(node, foaf('name'), agent.name);
  const email = textOf(agent.email);
  if (email) g.add(node, foaf('mbox'), mailto(email));
  const url = textOf(agent.url);
  if (url && looksLikeIri(url)) g.add(node, foaf('homepage'), iri(url));
  g.uriOrText(node, dct('type'), agent.type);
  g.text(node, dct('identifier'), agent.identifier ?? agent.id);
  return node;
}

/** dct:publisher: `publisher` objects, the publisher_* extras, else the dataset's organization. */
export function addPublishers(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  let publishers = roleObjects(dataset, 'publisher', AGENT_KEYS);
  const org = dataset.organization as Dict | null | undefined;
  if (!publishers.length && org?.name) {
    publishers = [{ uri: `${ctx.baseUri}/organization/${org.name}`, name: org.title || org.name }];
  }
  for (const p of publishers) ctx.graph.add(node, dct('publisher'), addAgent(ctx.graph, p));
}

/** dct:creator: `creator` objects or the creator_* extras. */
export function addCreators(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  for (const c of roleObjects(dataset, 'creator', AGENT_KEYS)) ctx.graph.add(node, dct('creator'), addAgent(ctx.graph, c));
}

/** dct:temporal periods: `temporal_coverage` [{start, end}], else the temporal_start/temporal_end extras. */
export function addTemporalCoverage(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  const g = ctx.graph;
  let periods = objectsOf(fieldValue(dataset, 'temporal_coverage')).filter((p) => textOf(p.start) || textOf(p.end));
  if (!periods.length) {
    const start = fieldText(dataset, 'temporal_start');
    const end = fieldText(dataset, 'temporal_end');
    if (start || end) periods = [{ start, end }];
  }
  for (const p of periods) {
    const period = g.blank();
    g.add(node, dct('temporal'), period);
    g.add(period, RDF_TYPE, dct('PeriodOfTime'));
    g.date(period, dcat('startDate'), p.start);
    g.date(period, dcat('endDate'), p.end);
  }
}

function geometryText(value: unknown): string | undefined {
  if (value && typeof value === 'object') return JSON.stringify(value);
  return textOf(value);
}

/** The literal of a geometry: WKT stays WKT, GeoJSON gets the GeoJSON media type. */
function geometryLiteral(value: string) {
  return value.trim().startsWith('{') ? DataFactory.literal(value, GEOJSON_TYPE) : DataFactory.literal(value, gsp('wktLiteral'));
}

/** dct:spatial: `spatial_coverage` objects, else the spatial_uri/spatial_text/spatial_bbox/... extras (or `spatial`). */
export function addSpatialCoverage(ctx: OutputContext, dataset: DatasetDict, node: Subject): void {
  const g = ctx.graph;
  let places = objectsOf(fieldValue(dataset, 'spatial_coverage')).filter((p) =>
    ['uri', 'text', 'geom', 'bbox', 'centroid'].some((k) => p[k]),
  );
  if (!places.length) {
    const legacy: Dict = {
      uri: fieldText(dataset, 'spatial_uri'),
      text: fieldText(dataset, 'spatial_text'),
      geom: fieldValue(dataset, 'spatial'),
      bbox: fieldValue(dataset, 'spatial_bbox'),
      centroid: fieldValue(dataset, 'spatial_centroid'),
    };
    if (Object.values(legacy).some(Boolean)) places = [legacy];
  }
  for (const p of places) {
    const place = nodeFor(g, p.uri);
    g.add(node, dct('spatial'), place);
    g.add(place, RDF_TYPE, dct('Location'));
    g.text(place, skos('prefLabel'), p.text);
    const geometries: [NamedNode, unknown][] = [
      [locn('geometry'), p.geom],
      [dcat('bbox'), p.bbox],
      [dcat('centroid'), p.centroid],
    ];
    for (const [predicate, value] of geometries) {
      const text = geometryText(value);
      if (text) g.add(place, predicate, geometryLiteral(text));
    }
  }
}

/** dcat:temporalResolution values as xsd:duration (P1D, PT1H, ...); other text is not a duration and is left out. */
export function addTemporalResolution(g: Graph, node: Subject, values: unknown): void {
  for (const v of Array.isArray(values) ? values : [values]) {
    const t = textOf(v);
    if (t && /^-?P[0-9TYMWDHS.]+$/.test(t)) g.typed(node, dcat('temporalResolution'), t, xsd('duration'));
  }
}
