// RDF text in any of the formats DCAT catalogs are published in -> quads in one store, with the
// guards hostile input needs: the caller bounds the size; JSON-LD never fetches a remote
// @context; RDF/XML with a DTD is refused, so no entity can expand.
import { DataFactory, Parser, Store, type Quad, type Quad_Object, type Quad_Subject, type Term } from 'n3';
import jsonld from 'jsonld';
import { RdfXmlParser } from 'rdfxml-streaming-parser';

const { namedNode, blankNode, literal, quad, defaultGraph } = DataFactory;

/** The formats the parser reads, by the name used in the `format` parameter. */
export type RdfFormat = 'turtle' | 'ntriples' | 'n3' | 'xml' | 'jsonld';

/** Every accepted spelling of a format (ckanext-dcat's / rdflib's names, file extensions, media types). */
const FORMAT_NAMES: Record<string, RdfFormat> = {
  turtle: 'turtle',
  ttl: 'turtle',
  'text/turtle': 'turtle',
  'application/x-turtle': 'turtle',
  nt: 'ntriples',
  ntriples: 'ntriples',
  'n-triples': 'ntriples',
  'application/n-triples': 'ntriples',
  n3: 'n3',
  'text/n3': 'n3',
  xml: 'xml',
  rdf: 'xml',
  rdfxml: 'xml',
  'rdf/xml': 'xml',
  'pretty-xml': 'xml',
  'application/rdf+xml': 'xml',
  jsonld: 'jsonld',
  'json-ld': 'jsonld',
  json: 'jsonld',
  'application/ld+json': 'jsonld',
};

/** The accepted format names, for messages and the action's help. */
export const FORMAT_CHOICES = ['turtle', 'ttl', 'nt', 'ntriples', 'n3', 'xml', 'rdf', 'pretty-xml', 'jsonld', 'json-ld'];

/** The format a name stands for, or undefined when it is not one we read. */
export function formatByName(name: string): RdfFormat | undefined {
  return FORMAT_NAMES[name.trim().toLowerCase().split(';')[0]!.trim()];
}

/** The format of a document judged from its first characters (XML, JSON, else Turtle, which also reads N-Triples). */
export function guessFormat(text: string): RdfFormat {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('<?xml') || /^<(!--|rdf:RDF|[A-Za-z_][\w.-]*:[\w.-]+[\s>])/.test(start)) return 'xml';
  if (start.startsWith('{') || start.startsWith('[')) return 'jsonld';
  return 'turtle';
}

/** The document is not well-formed RDF of its format; the message says where and why. */
export class RdfSyntaxError extends Error {}

/** Reads the document into a store (every quad into the default graph: named graphs are not kept apart). */
export async function readRdf(text: string, format: RdfFormat, baseIRI?: string): Promise<Store> {
  const store = new Store();
  const add = (q: Quad) => store.addQuad(q.graph.termType === 'DefaultGraph' ? q : quad(q.subject, q.predicate, q.object));
  try {
    if (format === 'xml') for (const q of await readXml(text, baseIRI)) add(q);
    else if (format === 'jsonld') for (const q of await readJsonLd(text, baseIRI)) add(q);
    else {
      const parser = new Parser({ format: N3_FORMATS[format], baseIRI });
      for (const q of parser.parse(text)) add(q);
    }
  } catch (e) {
    if (e instanceof RdfSyntaxError) throw e;
    throw new RdfSyntaxError(messageOf(e));
  }
  return store;
}

const N3_FORMATS: Record<'turtle' | 'ntriples' | 'n3', string> = {
  turtle: 'text/turtle',
  ntriples: 'application/n-triples',
  n3: 'text/n3',
};

function messageOf(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/\s+/g, ' ').trim().slice(0, 500);
}

// A DOCTYPE is where entities are declared; DCAT documents never need one.
const DOCTYPE = /<!DOCTYPE/i;

async function readXml(text: string, baseIRI?: string): Promise<Quad[]> {
  if (DOCTYPE.test(text)) throw new RdfSyntaxError('RDF/XML with a DOCTYPE (entity declarations) is not accepted');
  const parser = new RdfXmlParser({ baseIRI, dataFactory: DataFactory });
  const quads: Quad[] = [];
  return new Promise((resolve, reject) => {
    parser.on('data', (q: Quad) => quads.push(q));
    parser.on('error', (e: unknown) => reject(new RdfSyntaxError(messageOf(e))));
    parser.on('end', () => {
      // The streaming parser never tells the XML reader the text ended: an unclosed element would pass.
      try {
        (parser as unknown as { saxParser: { close(): void } }).saxParser.close();
      } catch (e) {
        reject(new RdfSyntaxError(messageOf(e)));
      }
      resolve(quads);
    });
    parser.write(text);
    parser.end();
  });
}

/** A document loader that loads nothing: a remote @context is refused, not fetched. */
async function refuseRemote(url: string): Promise<never> {
  throw new RdfSyntaxError(`remote JSON-LD contexts are not loaded (${url.slice(0, 200)}); put the context in the document`);
}

async function readJsonLd(text: string, baseIRI?: string): Promise<Quad[]> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new RdfSyntaxError(`not JSON: ${messageOf(e)}`);
  }
  if (doc === null || typeof doc !== 'object') throw new RdfSyntaxError('a JSON-LD document is an object or an array');
  const options: jsonld.Options.ToRdf = { documentLoader: refuseRemote as any };
  if (baseIRI) options.base = baseIRI;
  let dataset: unknown;
  try {
    dataset = await jsonld.toRDF(doc as jsonld.JsonLdDocument, options);
  } catch (e) {
    throw new RdfSyntaxError(`JSON-LD: ${jsonLdMessage(e)}`);
  }
  return (dataset as JsonLdQuad[]).map((q) =>
    quad(subjectTerm(q.subject), namedNode(q.predicate.value), objectTerm(q.object), defaultGraph()),
  );
}

/** jsonld.js wraps the real cause (our loader's refusal) in its own error's details. */
function jsonLdMessage(e: unknown): string {
  let cause: any = e;
  while (cause?.details?.cause) cause = cause.details.cause;
  return messageOf(cause instanceof RdfSyntaxError ? cause : e);
}

interface JsonLdTerm {
  termType: string;
  value: string;
  datatype?: { value: string };
  language?: string;
}

interface JsonLdQuad {
  subject: JsonLdTerm;
  predicate: JsonLdTerm;
  object: JsonLdTerm;
}

function subjectTerm(t: JsonLdTerm): Quad_Subject {
  return t.termType === 'BlankNode' ? blankNode(t.value.replace(/^_:/, '')) : namedNode(t.value);
}

function objectTerm(t: JsonLdTerm): Quad_Object {
  if (t.termType === 'Literal') {
    if (t.language) return literal(t.value, t.language);
    return t.datatype ? literal(t.value, namedNode(t.datatype.value)) : literal(t.value);
  }
  return subjectTerm(t) as Term as Quad_Object;
}
