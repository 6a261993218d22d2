// The Solr/Lucene query language of package_search (q, fq, fq_list) parsed into a small syntax
// tree. A hand-written recursive-descent parser: it reports the position of every problem, which
// becomes the Search Query Error's message.
//
//   query   := or EOF
//   or      := and (("OR" | "||") and)*
//   and     := unary (("AND" | "&&")? unary)*          adjacency means AND (the default operator)
//   unary   := ("NOT" | "!" | "-") unary | "+" unary | primary
//   primary := "(" or ")" | FIELD ":" value | value
//   value   := TERM | PHRASE | RANGE | "(" or ")"         a group after FIELD: uses that field
//   RANGE   := ("[" | "{") bound "TO" bound ("]" | "}")
// Boosts (^2) and proximity ("a b"~1) are accepted and ignored; fuzzy terms (word~, word~1) are
// refused (a Search Query Error, not a silent empty result).
//
// The size of what a query asks for is bounded (QueryBudget): every clause becomes SQL, and an
// embedded database runs a statement on the server's only connection, so no query may be costly
// by its size alone.
import { SearchQueryError } from '../errors.ts';

/** Bounds of one search (q and all its filter queries together), as Solr's maxBooleanClauses. */
export const QUERY_LIMITS = {
  /** words, phrases and ranges */
  clauses: 100,
  /** terms with * or ? (each expands over the index's words) */
  wildcards: 20,
  /** quoted phrases (each may compute the phrase keys of every row it tests, ~0.2 ms a row on PGlite) */
  phrases: 10,
  /** words of one quoted phrase */
  phraseWords: 32,
} as const;

/** What the queries of one search have used of QUERY_LIMITS so far (shared by q and its filters). */
export interface QueryBudget {
  clauses: number;
  wildcards: number;
  phrases: number;
}

export type QueryNode =
  | { kind: 'and'; items: QueryNode[] }
  | { kind: 'or'; items: QueryNode[] }
  | { kind: 'not'; item: QueryNode }
  | { kind: 'all' }
  /** field null: the default field. wildcard: the value holds unescaped * or ?. */
  | { kind: 'term'; field: string | null; value: string; phrase: boolean; wildcard: boolean }
  | { kind: 'range'; field: string | null; lo: string | null; hi: string | null; loIncl: boolean; hiIncl: boolean };

type TokKind = 'lparen' | 'rparen' | 'and' | 'or' | 'not' | 'plus' | 'minus' | 'colon' | 'word' | 'phrase' | 'range' | 'eof';
interface Token {
  kind: TokKind;
  pos: number;
  text: string;
  /** word: the value has unescaped wildcards */
  wildcard?: boolean;
  range?: { lo: string | null; hi: string | null; loIncl: boolean; hiIncl: boolean };
}

const SPECIAL = new Set(['(', ')', '[', ']', '{', '}', '"', ':', '^', '~', ' ', '\t', '\n', '\r']);

class Lexer {
  private i = 0;
  readonly tokens: Token[] = [];
  constructor(
    private readonly s: string,
    private readonly fail: (msg: string, pos: number) => never,
  ) {
    while (this.next());
    this.tokens.push({ kind: 'eof', pos: s.length, text: '' });
  }

  private next(): boolean {
    const s = this.s;
    while (this.i < s.length && /\s/.test(s[this.i])) this.i++;
    if (this.i >= s.length) return false;
    const pos = this.i;
    const c = s[this.i];
    const push = (kind: TokKind, len: number) => {
      this.tokens.push({ kind, pos, text: s.slice(pos, pos + len) });
      this.i += len;
      this.skipModifiers();
      return true;
    };
    if (c === '(') return push('lparen', 1);
    if (c === ')') return push('rparen', 1);
    if (c === ':') return push('colon', 1);
    if (s.startsWith('&&', pos)) return push('and', 2);
    if (s.startsWith('||', pos)) return push('or', 2);
    if (c === '!') return push('not', 1);
    if (c === '+') return push('plus', 1);
    if (c === '-') return push('minus', 1);
    if (c === '"') return this.phrase(pos);
    if (c === '[' || c === '{') return this.rangeTok(pos);
    if (c === ']' || c === '}' || c === '^' || c === '~') this.fail(`unexpected "${c}"`, pos);
    const w = this.word();
    if (!w.raw) this.fail(`unexpected "${c}"`, pos);
    const kind: TokKind = w.raw === 'AND' ? 'and' : w.raw === 'OR' ? 'or' : w.raw === 'NOT' ? 'not' : 'word';
    this.tokens.push({ kind, pos, text: w.value, wildcard: w.wildcard });
    this.skipModifiers();
    return true;
  }

  /** A bare word up to whitespace or a special character; backslash escapes the next character. */
  private word(): { raw: string; value: string; wildcard: boolean } {
    const s = this.s;
    const start = this.i;
    let value = '';
    let wildcard = false;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === '\\') {
        if (this.i + 1 >= s.length) this.fail('a backslash at the end', this.i);
        value += s[this.i + 1];
        this.i += 2;
        continue;
      }
      if (SPECIAL.has(c)) break;
      // "-" and "+" inside a word are part of it (e.g. dates, hyphenated names)
      if (c === '*' || c === '?') wildcard = true;
      value += c;
      this.i++;
    }
    return { raw: s.slice(start, this.i), value, wildcard };
  }

  private phrase(pos: number): boolean {
    const s = this.s;
    let value = '';
    this.i++;
    for (;;) {
      if (this.i >= s.length) this.fail('a quoted phrase is not closed', pos);
      const c = s[this.i];
      if (c === '\\' && this.i + 1 < s.length) {
        value += s[this.i + 1];
        this.i += 2;
        continue;
      }
      this.i++;
      if (c === '"') break;
      value += c;
    }
    this.tokens.push({ kind: 'phrase', pos, text: value });
    this.skipModifiers();
    return true;
  }

  private rangeTok(pos: number): boolean {
    const s = this.s;
    const loIncl = s[this.i] === '[';
    this.i++;
    const bound = (): string => {
      while (this.i < s.length && /\s/.test(s[this.i])) this.i++;
      if (s[this.i] === '"') {
        const before = this.tokens.length;
        this.phrase(this.i);
        return this.tokens.splice(before, 1)[0].text;
      }
      const start = this.i;
      let v = '';
      while (this.i < s.length && !/\s/.test(s[this.i]) && s[this.i] !== ']' && s[this.i] !== '}') {
        if (s[this.i] === '\\' && this.i + 1 < s.length) {
          v += s[this.i + 1];
          this.i += 2;
          continue;
        }
        v += s[this.i++];
      }
      if (!v) this.fail('a range needs a lower and an upper bound', start);
      return v;
    };
    const lo = bound();
    while (this.i < s.length && /\s/.test(s[this.i])) this.i++;
    if (!s.startsWith('TO', this.i) || !/\s/.test(s[this.i + 2] ?? '')) this.fail('a range must be written [a TO b]', this.i);
    this.i += 2;
    const hi = bound();
    while (this.i < s.length && /\s/.test(s[this.i])) this.i++;
    const close = s[this.i];
    if (close !== ']' && close !== '}') this.fail('a range is not closed with ] or }', this.i);
    this.i++;
    this.tokens.push({
      kind: 'range',
      pos,
      text: s.slice(pos, this.i),
      range: { lo: lo === '*' ? null : lo, hi: hi === '*' ? null : hi, loIncl, hiIncl: close === ']' },
    });
    this.skipModifiers();
    return true;
  }

  /** ^boost and a phrase's ~slop: accepted, without effect; a word's ~ (fuzzy match) is refused. */
  private skipModifiers(): void {
    const s = this.s;
    const last = this.tokens[this.tokens.length - 1];
    while (this.i < s.length && (s[this.i] === '^' || s[this.i] === '~')) {
      const at = this.i;
      this.i++;
      while (this.i < s.length && /[0-9.]/.test(s[this.i])) this.i++;
      if (s[at] === '^' && this.i === at + 1) this.fail('a boost (^) needs a number', at);
      if (s[at] === '~' && last?.kind === 'word') this.fail('fuzzy terms (~) are not supported', at);
    }
  }
}

class Parser {
  private k = 0;
  private readonly tokens: Token[];
  constructor(
    private readonly input: string,
    private readonly field: string,
    private readonly budget: QueryBudget,
  ) {
    this.tokens = new Lexer(input, (m, p) => this.fail(m, p)).tokens;
  }

  fail(message: string, pos: number): never {
    const shown = this.input.length > 200 ? `${this.input.slice(0, 200)}...` : this.input;
    throw new SearchQueryError(`${this.field}: cannot parse '${shown}': ${message} at position ${pos + 1}`);
  }

  /** Counts a clause against the search's budget; over a bound, the query is refused. */
  private spend(t: Token): void {
    const b = this.budget;
    if (++b.clauses > QUERY_LIMITS.clauses)
      throw new SearchQueryError(
        `${this.field}: too many clauses (a search may have at most ${QUERY_LIMITS.clauses} words, phrases and ranges)`,
      );
    if (t.wildcard && ++b.wildcards > QUERY_LIMITS.wildcards)
      throw new SearchQueryError(`${this.field}: too many wildcard terms (a search may have at most ${QUERY_LIMITS.wildcards})`);
    if (t.kind === 'phrase' && ++b.phrases > QUERY_LIMITS.phrases)
      throw new SearchQueryError(`${this.field}: too many quoted phrases (a search may have at most ${QUERY_LIMITS.phrases})`);
    if (t.kind === 'phrase' && t.text.split(/\s+/).length > QUERY_LIMITS.phraseWords)
      throw new SearchQueryError(`${this.field}: a phrase may have at most ${QUERY_LIMITS.phraseWords} words`);
  }

  private peek(): Token {
    return this.tokens[this.k];
  }

  private describe(t: Token): string {
    return t.kind === 'eof' ? 'the end of the query' : `"${this.input.slice(t.pos, t.pos + Math.max(1, t.text.length))}"`;
  }

  parse(): QueryNode {
    if (this.peek().kind === 'eof') return { kind: 'all' };
    const node = this.or(null);
    if (this.peek().kind !== 'eof') this.fail(`unexpected ${this.describe(this.peek())}`, this.peek().pos);
    return node;
  }

  private depth = 0;

  private or(field: string | null): QueryNode {
    // bounded recursion: a hostile query of thousands of "(" is an error, not a stack overflow
    if (++this.depth > 100) this.fail('too deeply nested', this.peek().pos);
    try {
      return this.orItems(field);
    } finally {
      this.depth--;
    }
  }

  private orItems(field: string | null): QueryNode {
    const items = [this.and(field)];
    while (this.peek().kind === 'or') {
      this.k++;
      items.push(this.and(field));
    }
    return items.length === 1 ? items[0] : { kind: 'or', items };
  }

  private startsClause(t: Token): boolean {
    return (
      t.kind === 'lparen' ||
      t.kind === 'word' ||
      t.kind === 'phrase' ||
      t.kind === 'range' ||
      t.kind === 'not' ||
      t.kind === 'plus' ||
      t.kind === 'minus'
    );
  }

  private and(field: string | null): QueryNode {
    const items = [this.unary(field)];
    for (;;) {
      if (this.peek().kind === 'and') {
        this.k++;
        items.push(this.unary(field));
      } else if (this.startsClause(this.peek())) {
        items.push(this.unary(field));
      } else break;
    }
    return items.length === 1 ? items[0] : { kind: 'and', items };
  }

  private unary(field: string | null): QueryNode {
    const t = this.peek();
    if (t.kind === 'not' || t.kind === 'minus' || t.kind === 'plus') {
      this.k++;
      if (++this.depth > 100) this.fail('too deeply nested', t.pos);
      try {
        const item = this.unary(field);
        return t.kind === 'plus' ? item : { kind: 'not', item };
      } finally {
        this.depth--;
      }
    }
    return this.primary(field);
  }

  private primary(field: string | null): QueryNode {
    const t = this.peek();
    if (t.kind === 'word' && this.tokens[this.k + 1].kind === 'colon') {
      if (field !== null) this.fail(`a field inside the group of field "${field}"`, t.pos);
      this.k += 2;
      const name = t.text;
      if (name === '*') {
        const v = this.peek();
        if (v.kind === 'word' && v.text === '*') {
          this.k++;
          return { kind: 'all' };
        }
        this.fail('"*:" must be followed by "*"', v.pos);
      }
      if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name)) this.fail(`"${name}" is not a field name`, t.pos);
      return this.value(name);
    }
    return this.value(field);
  }

  private value(field: string | null): QueryNode {
    const t = this.peek();
    switch (t.kind) {
      case 'lparen': {
        this.k++;
        if (this.peek().kind === 'rparen') this.fail('empty parentheses', this.peek().pos);
        const inner = this.or(field);
        if (this.peek().kind !== 'rparen') this.fail(`expected ")" but found ${this.describe(this.peek())}`, this.peek().pos);
        this.k++;
        return inner;
      }
      case 'word':
        this.k++;
        if (t.text === '*' && field === null) return { kind: 'all' };
        this.spend(t);
        return { kind: 'term', field, value: t.text, phrase: false, wildcard: !!t.wildcard };
      case 'phrase':
        this.k++;
        this.spend(t);
        return { kind: 'term', field, value: t.text, phrase: true, wildcard: false };
      case 'range':
        this.k++;
        this.spend(t);
        return { kind: 'range', field, ...t.range! };
      default:
        this.fail(`expected a search term but found ${this.describe(t)}`, t.pos);
    }
  }
}

/**
 * Parses q/fq text (field: the parameter it came from, named in errors); an empty or blank text
 * matches everything. The queries of one search share one budget.
 */
export function parseQuery(input: string, field = 'q', budget: QueryBudget = { clauses: 0, wildcards: 0, phrases: 0 }): QueryNode {
  return new Parser(input, field, budget).parse();
}
