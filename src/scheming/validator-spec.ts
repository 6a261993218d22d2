// Reads a schema field's validators string as ckanext-scheming does: space-separated names, each
// optionally called with arguments ("if_empty_same_as(name) unicode_safe default(5)"). Arguments
// that read as Python literals keep their type ("x", 1, None, True); otherwise every argument of
// that call is its text, split at commas (if_empty_same_as(name) -> ["name"]).

export type LiteralValue = string | number | boolean | null | LiteralValue[] | { [key: string]: LiteralValue };

export interface ValidatorCall {
  name: string;
  /** Arguments when the name was followed by parentheses; an empty list when it was not. */
  args: LiteralValue[];
}

/** The validator calls of a validators string, in order. */
export function parseValidatorSpec(text: string): ValidatorCall[] {
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((part) => {
      const open = part.indexOf('(');
      if (open < 0 || !part.endsWith(')')) return { name: part, args: [] };
      const inner = part.slice(open + 1, -1);
      return { name: part.slice(0, open), args: literalArgs(inner) ?? inner.split(',') };
    });
}

/** The arguments as literals, or undefined when they are not all literals. */
function literalArgs(text: string): LiteralValue[] | undefined {
  try {
    const reader = new LiteralReader(text);
    const { value, tuple } = reader.topLevel();
    if (tuple) return (value as LiteralValue[]).length ? (value as LiteralValue[]) : [value];
    return [value];
  } catch {
    return undefined;
  }
}

class LiteralReader {
  private pos = 0;
  constructor(private readonly text: string) {}

  /** "a, b" is a tuple as in Python; a single value is not. */
  topLevel(): { value: LiteralValue; tuple: boolean } {
    this.space();
    if (this.pos >= this.text.length) throw new Error('empty');
    const first = this.value();
    this.space();
    if (this.pos === this.text.length) return { value: first, tuple: Array.isArray(first) && this.tuples.has(first) };
    const items = [first];
    while (this.eat(',')) {
      this.space();
      if (this.pos === this.text.length) break;
      items.push(this.value());
      this.space();
    }
    if (this.pos !== this.text.length) throw new Error('trailing text');
    return { value: items, tuple: true };
  }

  /** Lists written in parentheses (Python tuples): a tuple alone is the arguments themselves. */
  private readonly tuples = new WeakSet<LiteralValue[]>();

  private value(): LiteralValue {
    this.space();
    const c = this.text[this.pos];
    if (c === '"' || c === "'") return this.string(c);
    if (c === '(') {
      const { items, comma } = this.sequence(')');
      if (items.length === 1 && !comma) return items[0];
      this.tuples.add(items);
      return items;
    }
    if (c === '[') return this.sequence(']').items;
    if (c === '{') return this.dict();
    const m = /^(-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+)|None|True|False)/.exec(this.text.slice(this.pos));
    if (!m) throw new Error('not a literal');
    this.pos += m[0].length;
    if (m[0] === 'None') return null;
    if (m[0] === 'True') return true;
    if (m[0] === 'False') return false;
    return Number(m[0]);
  }

  private sequence(close: string): { items: LiteralValue[]; comma: boolean } {
    this.pos++;
    const items: LiteralValue[] = [];
    let comma = false;
    this.space();
    while (!this.eat(close)) {
      items.push(this.value());
      this.space();
      if (!this.eat(',')) {
        this.space();
        if (!this.eat(close)) throw new Error('unclosed');
        break;
      }
      comma = true;
      this.space();
    }
    return { items, comma };
  }

  private dict(): { [key: string]: LiteralValue } {
    this.pos++;
    const out: { [key: string]: LiteralValue } = {};
    this.space();
    while (!this.eat('}')) {
      const key = this.value();
      this.space();
      if (!this.eat(':')) throw new Error('no colon');
      out[String(key)] = this.value();
      this.space();
      if (!this.eat(',')) {
        this.space();
        if (!this.eat('}')) throw new Error('unclosed');
        break;
      }
      this.space();
    }
    return out;
  }

  private string(quote: string): string {
    let out = '';
    this.pos++;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos++];
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.text[this.pos++];
      const hex = (n: number) => {
        const h = this.text.slice(this.pos, this.pos + n);
        if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) throw new Error('bad escape');
        this.pos += n;
        return String.fromCodePoint(Number.parseInt(h, 16));
      };
      if (e === 'x') out += hex(2);
      else if (e === 'u') out += hex(4);
      else if (e === 'U') out += hex(8);
      else out += ESCAPES[e] ?? `\\${e}`;
    }
    throw new Error('unterminated string');
  }

  private space(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  private eat(c: string): boolean {
    if (this.text[this.pos] !== c) return false;
    this.pos++;
    return true;
  }
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '0': '\0',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};
