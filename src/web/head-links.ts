// <link> elements that plugins add to a page's head, e.g. the dcat plugin's
// <link rel="alternate" type="text/turtle" href=".../dataset/x.ttl"> on dataset pages.
import type { Services } from '../context.ts';

type Dict = Record<string, any>;

export interface HeadLink {
  rel: string;
  type: string;
  href: string;
}

/** The links of a dataset page (the dataset as package_show gave it to the visitor). */
export type HeadLinkSource = (pkg: Dict) => HeadLink[];

const sources = new WeakMap<Services, HeadLinkSource[]>();

/** Adds a source of head links for dataset pages (called from a plugin's setup). */
export function addDatasetHeadLinks(services: Services, source: HeadLinkSource): void {
  sources.set(services, [...(sources.get(services) ?? []), source]);
}

/** The head links of a dataset page. */
export function datasetHeadLinks(services: Services, pkg: Dict): HeadLink[] {
  return (sources.get(services) ?? []).flatMap((source) => source(pkg));
}
