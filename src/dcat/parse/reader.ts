// Reading values out of a parsed document: the one object of a property as text (a literal in the
// preferred language first), all of them, numbers, and references (IRIs as strings).
import type { NamedNode, Quad_Object, Quad_Subject, Store, Term } from 'n3';

/** How a node is named in a dict: its IRI, or nothing for a blank node. */
export function nodeUri(node: Term): string | undefined {
  return node.termType === 'NamedNode' ? node.value : undefined;
}

export class Reader {
  constructor(
    readonly store: Store,
    /** The language a literal is taken in when a property has several (else untagged, else any). */
    readonly language = 'en',
  ) {}

  objects(s: Quad_Subject, p: NamedNode): Quad_Object[] {
    return this.store.getObjects(s, p, null) as Quad_Object[];
  }

  /** Nodes (IRIs or blank nodes) a property points to. */
  nodes(s: Quad_Subject, p: NamedNode): Quad_Subject[] {
    return this.objects(s, p).filter((o) => o.termType === 'NamedNode' || o.termType === 'BlankNode') as Quad_Subject[];
  }

  subjectsOfType(type: NamedNode, rdfType: NamedNode): Quad_Subject[] {
    return this.store.getSubjects(rdfType, type, null) as Quad_Subject[];
  }

  /** The text of one value: a literal's lexical form, an IRI as is; blank nodes by their label (rdfs:label etc.). */
  value(s: Quad_Subject, p: NamedNode, label?: (node: Quad_Subject) => string | undefined): string | undefined {
    const objects = this.objects(s, p);
    if (!objects.length) return undefined;
    const literals = objects.filter((o) => o.termType === 'Literal');
    if (literals.length) {
      const v = this.preferredLiteral(literals);
      return v.trim() === '' ? undefined : v;
    }
    for (const o of objects) {
      const v = o.termType === 'NamedNode' ? o.value : label?.(o as Quad_Subject);
      if (v) return v;
    }
    return undefined;
  }

  /** Every value as text, each once, in document order (blank nodes by their label when given). */
  values(s: Quad_Subject, p: NamedNode, label?: (node: Quad_Subject) => string | undefined): string[] {
    const out: string[] = [];
    for (const o of this.objects(s, p)) {
      const v = o.termType === 'Literal' || o.termType === 'NamedNode' ? o.value : label?.(o as Quad_Subject);
      if (v && v.trim() !== '' && !out.includes(v)) out.push(v);
    }
    return out;
  }

  /** Literals only, in the preferred language when they are language-tagged (keywords of a multilingual document). */
  texts(s: Quad_Subject, p: NamedNode): string[] {
    const literals = this.objects(s, p).filter((o) => o.termType === 'Literal');
    const languages = new Set(literals.map((l) => (l as any).language as string));
    const keep = languages.size > 1 ? this.pickLanguage(languages) : undefined;
    const out: string[] = [];
    for (const l of literals) {
      if (keep !== undefined && (l as any).language !== keep && (l as any).language !== '') continue;
      const v = l.value;
      if (v.trim() !== '' && !out.includes(v)) out.push(v);
    }
    return out;
  }

  /** A number (xsd:decimal, integer, ...) or undefined when the text is not one. */
  number(s: Quad_Subject, p: NamedNode): number | undefined {
    const v = this.value(s, p);
    if (v === undefined || v.trim() === '') return undefined;
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }

  private pickLanguage(languages: Set<string>): string {
    if (languages.has('')) return '';
    if (languages.has(this.language)) return this.language;
    const prefix = [...languages].find((l) => l.split('-')[0] === this.language);
    return prefix ?? [...languages][0]!;
  }

  private preferredLiteral(literals: Quad_Object[]): string {
    const languages = new Set(literals.map((l) => (l as any).language as string));
    const lang = this.pickLanguage(languages);
    const chosen = literals.find((l) => (l as any).language === lang) ?? literals[0]!;
    return chosen.value;
  }
}
