// JSON-LD blocks (<script type="application/ld+json">) that plugins add to pages: schema.org for
// search engines (structured_data), Croissant (croissant). A source is given what the page shows
// and calls actions as the visitor, so it can only describe what the visitor may read.
import type { Services } from '../context.ts';

type Dict = Record<string, any>;

/** What a page shows: a dataset (as package_show gave it to the visitor), or the home page's recent datasets. */
export type JsonLdPage = { page: 'dataset'; pkg: Dict } | { page: 'home'; datasets: Dict[] };

/** Calls an action as the visitor of the page. */
export type VisitorCall = <T = any>(action: string, data?: Record<string, unknown>) => Promise<T>;

/** A JSON-LD object for a page, or undefined when it has nothing to say about it. */
export type JsonLdSource = (page: JsonLdPage, call: VisitorCall) => Promise<Dict | undefined> | Dict | undefined;

const sources = new WeakMap<Services, JsonLdSource[]>();

/** Adds a source of JSON-LD for pages (called from a plugin's setup). */
export function addJsonLdSource(services: Services, source: JsonLdSource): void {
  const list = sources.get(services) ?? [];
  list.push(source);
  sources.set(services, list);
}

/**
 * The JSON-LD of a page for its one <script type="application/ld+json">: the sources' objects (a
 * list when there are several; JSON-LD allows it, and nodes with the same @id are one node), or
 * undefined when there are none. A source that fails is logged and left out: the page does not
 * depend on it.
 */
export async function pageJsonLd(services: Services, call: VisitorCall, page: JsonLdPage): Promise<Dict | Dict[] | undefined> {
  const out: Dict[] = [];
  for (const source of sources.get(services) ?? []) {
    try {
      const ld = await source(page, call);
      if (ld) out.push(ld);
    } catch (err) {
      services.logger.error({ err, page: page.page }, 'JSON-LD of a page failed');
    }
  }
  return out.length > 1 ? out : out[0];
}
