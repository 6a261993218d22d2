// The quads of one RDF document as the profiles build it: an ordered list of quads (serialisers
// read it once) plus the helpers every profile uses to add values that may be empty, dates,
// URIs-or-text and language-tagged text.
import { DataFactory, type BlankNode, type NamedNode, type Quad, type Quad_Object } from 'n3';
import { iri, looksLikeIri, xsd } from './namespaces.ts';

const { literal, quad, blankNode } = DataFactory;

export type Subject = NamedNode | BlankNode;

/** A value of a dataset dict that profiles may hand to the graph helpers unchecked. */
type Loose = unknown;

function text(value: Loose): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const YEAR = /^\d{4}$/;
const YEAR_MONTH = /^\d{4}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

export class Graph {
  readonly quads: Quad[] = [];

  add(s: Subject, p: NamedNode, o: Quad_Object): void {
    this.quads.push(quad(s, p, o));
  }

  blank(): BlankNode {
    return blankNode();
  }

  /** A plain (or language-tagged) literal when the value is non-empty. */
  text(s: Subject, p: NamedNode, value: Loose, language?: string): void {
    const t = text(value);
    if (t !== undefined) this.add(s, p, language ? literal(t, language) : literal(t));
  }

  /** Each value of a list, or of a JSON-encoded list, or the single value, as text. */
  texts(s: Subject, p: NamedNode, values: Loose): void {
    for (const v of listValues(values)) this.text(s, p, v);
  }

  /** A literal of the given XML Schema type (decimal, integer, boolean, duration, ...). */
  typed(s: Subject, p: NamedNode, value: Loose, type: NamedNode): void {
    const t = text(value);
    if (t !== undefined) this.add(s, p, literal(t, type));
  }

  /** A resource for a URL-like value, a literal otherwise (ckanext-dcat's URIRefOrLiteral). */
  uriOrText(s: Subject, p: NamedNode, value: Loose): void {
    const t = text(value);
    if (t === undefined) return;
    this.add(s, p, looksLikeIri(t) ? iri(t) : literal(t));
  }

  /** A resource for each URL-like value; text values are skipped (the property needs a resource). */
  uris(s: Subject, p: NamedNode, values: Loose): void {
    for (const v of listValues(values)) if (looksLikeIri(v)) this.add(s, p, iri(v));
  }

  /** A date as xsd:date, xsd:gYear, xsd:gYearMonth or xsd:dateTime by its shape; other text as is. */
  date(s: Subject, p: NamedNode, value: Loose): void {
    const t = text(value)?.trim();
    if (t === undefined) return;
    this.add(s, p, dateLiteral(t));
  }
}

/** The literal of a date string, typed by its precision. */
export function dateLiteral(value: string) {
  if (DATE_ONLY.test(value)) return literal(value, xsd('date'));
  if (YEAR.test(value)) return literal(value, xsd('gYear'));
  if (YEAR_MONTH.test(value)) return literal(value, xsd('gYearMonth'));
  if (DATE_TIME.test(value)) {
    // stored times are UTC without a zone
    const t = value.replace(' ', 'T');
    return literal(/(Z|[+-]\d{2}:?\d{2})$/.test(t) ? t : `${t}Z`, xsd('dateTime'));
  }
  return literal(value);
}

/** The non-empty strings of a list, of a JSON-encoded list, of a comma-free string, or of one value. */
export function listValues(value: Loose): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((v) => listValues(v));
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(s);
        if (Array.isArray(parsed)) return listValues(parsed);
      } catch {
        // not JSON: one value
      }
    }
    return s === '' ? [] : [s];
  }
  const t = text(value);
  return t === undefined ? [] : [t];
}

/** A subject for a value: its URI when it has one, else a blank node. */
export function nodeFor(graph: Graph, uri: Loose): Subject {
  const t = text(uri);
  return t && looksLikeIri(t) ? iri(t) : graph.blank();
}
