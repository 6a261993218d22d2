// RDF serialisations of the DCAT output, all from real RDF libraries: Turtle, N3 and N-Triples by
// n3's writer, JSON-LD as expanded node objects (one per subject, what jsonld's fromRDF makes, built
// here in one pass: fromRDF's sorting and compaction cost more than all the rest of a catalog
// page), RDF/XML by graphy's XML scriber.
// A writer takes quads in batches (one dataset or one page at a time) and hands text chunks to a
// sink, so a whole catalog streams in constant memory.
import scribeXml from '@graphy/content.xml.scribe';
import { Writer, type Quad } from 'n3';
import { PREFIXES } from './namespaces.ts';

type Kind = 'turtle' | 'n3' | 'ntriples' | 'jsonld' | 'xml';

/** The formats of the endpoints, by file extension (ckanext-dcat's, plus nt). */
export const RDF_FORMATS = {
  ttl: { kind: 'turtle', mediaType: 'text/turtle' },
  n3: { kind: 'n3', mediaType: 'text/n3' },
  nt: { kind: 'ntriples', mediaType: 'application/n-triples' },
  jsonld: { kind: 'jsonld', mediaType: 'application/ld+json' },
  xml: { kind: 'xml', mediaType: 'application/rdf+xml' },
  rdf: { kind: 'xml', mediaType: 'application/rdf+xml' },
} as const satisfies Record<string, { kind: Kind; mediaType: string }>;

export type RdfFormat = keyof typeof RDF_FORMATS;

export function isRdfFormat(value: string): value is RdfFormat {
  return Object.hasOwn(RDF_FORMATS, value);
}

/** Format names the action's `format` parameter also accepts (rdflib's names, as ckanext-dcat). */
const FORMAT_ALIASES: Record<string, RdfFormat> = {
  turtle: 'ttl',
  'pretty-xml': 'xml',
  'json-ld': 'jsonld',
  ntriples: 'nt',
  'n-triples': 'nt',
};

/** The format of an extension or format name, or undefined. */
export function rdfFormat(name: string): RdfFormat | undefined {
  const n = name.toLowerCase();
  return isRdfFormat(n) ? n : FORMAT_ALIASES[n];
}

// Media types a client may ask for in Accept, and the format answering each.
const ACCEPTED: [string, RdfFormat][] = [
  ['text/turtle', 'ttl'],
  ['application/x-turtle', 'ttl'],
  ['text/n3', 'n3'],
  ['text/rdf+n3', 'n3'],
  ['application/n-triples', 'nt'],
  ['application/ld+json', 'jsonld'],
  ['application/rdf+xml', 'xml'],
];

/**
 * The RDF format an Accept header prefers, or undefined when it prefers HTML (or anything not RDF)
 * at least as much: a browser's Accept (text/html first, the wildcard last) keeps the page.
 */
export function negotiateRdf(accept: string | undefined): RdfFormat | undefined {
  if (!accept) return undefined;
  let best: { format?: RdfFormat; q: number; order: number } = { q: 0, order: Number.POSITIVE_INFINITY };
  let htmlQ = 0;
  accept.split(',').forEach((part, order) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) return;
    if (type === 'text/html' || type === 'application/xhtml+xml') htmlQ = Math.max(htmlQ, q);
    const hit = ACCEPTED.find(([t]) => t === type);
    if (hit && (q > best.q || (q === best.q && order < best.order))) best = { format: hit[1], q, order };
  });
  return best.format && best.q > htmlQ ? best.format : undefined;
}

const subjectKey = (q: Quad) => (q.subject.termType === 'BlankNode' ? `_:${q.subject.value}` : q.subject.value);

/** The quads grouped by subject, in the order subjects first appear (so Turtle and RDF/XML write each subject once). */
function bySubject(quads: readonly Quad[]): readonly Quad[] {
  const groups = new Map<string, Quad[]>();
  let grouped = true;
  let previous: string | undefined;
  for (const q of quads) {
    const key = subjectKey(q);
    let group = groups.get(key);
    if (!group) {
      group = [];
      groups.set(key, group);
    } else if (key !== previous) grouped = false;
    group.push(q);
    previous = key;
  }
  if (grouped) return quads;
  const out: Quad[] = [];
  for (const group of groups.values()) for (const q of group) out.push(q);
  return out;
}

/** Where a writer's text goes. */
export type Sink = (chunk: string) => void | Promise<void>;

export interface RdfWriter {
  /** Serialises one batch of quads (each blank node's quads in the same batch). */
  add(quads: readonly Quad[]): Promise<void>;
  /** Writes what closes the document. */
  end(): Promise<void>;
}

const N3_FORMATS = { turtle: 'Turtle', n3: 'N3', ntriples: 'N-Triples' } as const;

/** A writer of one document in the given format. */
export function rdfWriter(format: RdfFormat, sink: Sink): RdfWriter {
  const kind = RDF_FORMATS[format].kind;
  if (kind === 'jsonld') return jsonldWriter(sink);
  if (kind === 'xml') return xmlWriter(sink);
  return n3Writer(N3_FORMATS[kind], sink);
}

function n3Writer(format: (typeof N3_FORMATS)[keyof typeof N3_FORMATS], sink: Sink): RdfWriter {
  // n3 hands over a string per triple; joined once per batch into one flat string, so the
  // pieces die young (a string built by += over a whole catalog page kept them all alive).
  let pending: string[] = [];
  const writer = new Writer(
    {
      write: (chunk: string, _encoding?: string, done?: () => void) => {
        pending.push(chunk);
        done?.();
      },
      end: (done?: () => void) => done?.(),
    } as unknown as NodeJS.WritableStream,
    format === 'N-Triples' ? { format } : { format, prefixes: PREFIXES },
  );
  const flush = async () => {
    const text = pending.join('');
    pending = [];
    if (text) await sink(text);
  };
  return {
    async add(quads) {
      writer.addQuads(bySubject(quads) as Quad[]);
      await flush();
    },
    async end() {
      await new Promise<void>((resolve, reject) => writer.end((error) => (error ? reject(error) : resolve())));
      await flush();
    },
  };
}

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_TYPE_IRI = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

type JsonLdValue = { '@id': string } | { '@value': string; '@type'?: string; '@language'?: string };
type JsonLdNode = { '@id': string; '@type'?: string[]; [predicate: string]: unknown };

const termId = (term: Quad['subject'] | Quad['object']) => (term.termType === 'BlankNode' ? `_:${term.value}` : term.value);

/** The JSON-LD value of an object term, as jsonld's fromRDF writes it (no native types, rdf:type as @type). */
function jsonLdValue(object: Quad['object']): JsonLdValue {
  if (object.termType !== 'Literal') return { '@id': termId(object) };
  if (object.language) return { '@value': object.value, '@language': object.language };
  const type = object.datatype.value;
  return type === XSD_STRING ? { '@value': object.value } : { '@value': object.value, '@type': type };
}

/**
 * The node objects of some quads in expanded JSON-LD, one per subject in the order subjects first
 * appear: what jsonld's fromRDF gives for our graphs (no lists, no named graphs) without its
 * canonical sorting. A subject met again in a later batch is a second node object with the same
 * @id, which JSON-LD merges when a reader expands or flattens the document.
 */
export function jsonLdNodes(quads: readonly Quad[]): JsonLdNode[] {
  const nodes = new Map<string, JsonLdNode>();
  for (const q of quads) {
    const id = termId(q.subject);
    let node = nodes.get(id);
    if (!node) {
      node = { '@id': id };
      nodes.set(id, node);
    }
    const predicate = q.predicate.value;
    if (predicate === RDF_TYPE_IRI && q.object.termType !== 'Literal') {
      const type = termId(q.object);
      const types = node['@type'];
      if (!types) node['@type'] = [type];
      else if (!types.includes(type)) types.push(type);
      continue;
    }
    const values = node[predicate] as JsonLdValue[] | undefined;
    if (values) values.push(jsonLdValue(q.object));
    else node[predicate] = [jsonLdValue(q.object)];
  }
  return [...nodes.values()];
}

function jsonldWriter(sink: Sink): RdfWriter {
  let first = true;
  return {
    async add(quads) {
      if (!quads.length) return;
      const text = jsonLdNodes(quads)
        .map((n) => JSON.stringify(n))
        .join(',\n');
      await sink((first ? '[\n' : ',\n') + text);
      first = false;
    },
    async end() {
      await sink(first ? '[]\n' : '\n]\n');
    },
  };
}

function xmlWriter(sink: Sink): RdfWriter {
  const scriber = scribeXml({ prefixes: PREFIXES });
  let pending: string[] = [];
  let failure: Error | undefined;
  scriber.on('data', (chunk: string | Buffer) => pending.push(String(chunk)));
  scriber.on('error', (e: Error) => {
    failure = e;
  });
  const flush = async () => {
    if (failure) throw failure;
    const text = pending.join('');
    pending = [];
    if (text) await sink(text);
  };
  return {
    async add(quads) {
      for (const quad of bySubject(quads)) scriber.write({ type: 'quad', value: quad });
      await new Promise((resolve) => setImmediate(resolve));
      await flush();
    },
    async end() {
      await new Promise<void>((resolve, reject) => {
        scriber.once('end', resolve);
        scriber.once('error', reject);
        scriber.end();
      });
      await flush();
    },
  };
}

/** The whole document of some quads as text. */
export async function serializeQuads(quads: readonly Quad[], format: RdfFormat): Promise<string> {
  const chunks: string[] = [];
  const writer = rdfWriter(format, (c) => {
    chunks.push(c);
  });
  await writer.add(quads);
  await writer.end();
  return chunks.join('');
}
