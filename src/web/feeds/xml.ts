// A small XML writer: elements are built as values and serialized with every text and attribute
// escaped, and characters XML 1.0 forbids (control characters, lone surrogates) dropped, so no
// dataset field can make a document ill-formed.

export interface XmlElement {
  name: string;
  attrs: Record<string, string | number | null | undefined>;
  children: XmlNode[];
}
type XmlNode = XmlElement | string;

/** An element; attributes that are null, undefined or '' are left out, and so are null children. */
export function el(
  name: string,
  attrs: Record<string, string | number | null | undefined> = {},
  ...children: (XmlNode | null | undefined | false)[]
): XmlElement {
  return { name, attrs, children: children.filter((c): c is XmlNode => c !== null && c !== undefined && c !== false) };
}

// Tab, newline and carriage return are the only characters below U+0020 XML 1.0 allows; U+FFFE and
// U+FFFF and unpaired surrogates are not characters at all.
const FORBIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text with the characters XML cannot carry removed. */
export function xmlText(value: string): string {
  return value.replace(FORBIDDEN, '');
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escaped = (value: string) => xmlText(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!);

function write(node: XmlNode, out: string[]): void {
  if (typeof node === 'string') {
    out.push(escaped(node));
    return;
  }
  out.push(`<${node.name}`);
  for (const [key, value] of Object.entries(node.attrs))
    if (value !== null && value !== undefined && value !== '') out.push(` ${key}="${escaped(String(value))}"`);
  if (!node.children.length) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const child of node.children) write(child, out);
  out.push(`</${node.name}>`);
}

/** A whole document: the XML declaration and the root element. */
export function xmlDocument(root: XmlElement): string {
  const out = ['<?xml version="1.0" encoding="utf-8"?>\n'];
  write(root, out);
  out.push('\n');
  return out.join('');
}
