// Reading RDF answers back in tests with the libraries directly (n3, jsonld, rdfxml-streaming-parser),
// independently of svc's own parser, and asking the store simple questions.
import jsonld from 'jsonld';
import { DataFactory, Parser, Store, type Quad, type Term } from 'n3';
import { RdfXmlParser } from 'rdfxml-streaming-parser';

export const NS = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  dcat: 'http://www.w3.org/ns/dcat#',
  dct: 'http://purl.org/dc/terms/',
  foaf: 'http://xmlns.com/foaf/0.1/',
  vcard: 'http://www.w3.org/2006/vcard/ns#',
  hydra: 'http://www.w3.org/ns/hydra/core#',
  spdx: 'http://spdx.org/rdf/terms#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  owl: 'http://www.w3.org/2002/07/owl#',
  adms: 'http://www.w3.org/ns/adms#',
  dcatus: 'http://resources.data.gov/ontology/dcat-us#',
  schema: 'https://schema.org/',
  cr: 'http://mlcommons.org/croissant/',
  skos: 'http://www.w3.org/2004/02/skos/core#',
  locn: 'http://www.w3.org/ns/locn#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
} as const;

/** Parses an answer of the given extension into a store; throws on malformed RDF. */
export async function parseRdf(text: string, ext: string): Promise<Store> {
  const store = new Store();
  if (ext === 'jsonld') {
    const quads = (await jsonld.toRDF(JSON.parse(text))) as any[];
    const term = (t: any): any =>
      t.termType === 'BlankNode'
        ? DataFactory.blankNode(t.value)
        : t.termType === 'Literal'
          ? DataFactory.literal(t.value, t.language || DataFactory.namedNode(t.datatype.value))
          : DataFactory.namedNode(t.value);
    for (const q of quads) store.addQuad(DataFactory.quad(term(q.subject), term(q.predicate), term(q.object)));
  } else if (ext === 'xml' || ext === 'rdf') {
    const quads = await new Promise<Quad[]>((resolve, reject) => {
      const out: Quad[] = [];
      const parser = new RdfXmlParser({ dataFactory: DataFactory as any });
      parser.on('data', (q: Quad) => out.push(q));
      parser.on('error', reject);
      parser.on('end', () => resolve(out));
      parser.write(text);
      parser.end();
    });
    store.addQuads(quads);
  } else {
    const format = { ttl: 'text/turtle', nt: 'application/n-triples', n3: 'text/n3' }[ext];
    store.addQuads(new Parser({ format }).parse(text));
  }
  return store;
}

const node = (v: string | Term) => (typeof v === 'string' ? DataFactory.namedNode(v) : v);

/** The values (IRIs or lexical forms) of a subject's property. */
export function values(store: Store, subject: string | Term, predicate: string): string[] {
  return store.getObjects(node(subject), node(predicate), null).map((o) => o.value);
}

/** The objects (terms) of a subject's property. */
export function objects(store: Store, subject: string | Term, predicate: string): Term[] {
  return store.getObjects(node(subject), node(predicate), null);
}

/** The subjects of a class. */
export function instances(store: Store, cls: string): string[] {
  return store.getSubjects(node(`${NS.rdf}type`), node(cls), null).map((s) => s.value);
}
