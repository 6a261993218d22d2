// graphy's RDF/XML scriber ships without types: a Transform stream taking {type: 'quad', value} items.
declare module '@graphy/content.xml.scribe' {
  import type { Transform } from 'node:stream';
  export default function scribe(config?: { prefixes?: Record<string, string> }): Transform;
}
