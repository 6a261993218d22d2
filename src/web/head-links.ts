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

/** The search page's filters a custom feed keeps (the page's own paging and facet display are left out). */
const FEED_FILTERS = ['q', 'sort', 'organization', 'groups', 'tags', 'res_format', 'license_id', 'ext_bbox'];

/**
 * The Atom feed of a page (<link rel="alternate" type="application/atom+xml">): the home page and
 * an unfiltered search have the recent datasets, a filtered search its custom feed, an
 * organization's or group's page its own feed; other pages none.
 */
export function feedHeadLinks(
  base: string,
  path: string,
  query: Record<string, string | string[]>,
  t: (key: string) => string,
): (HeadLink & { title: string })[] {
  const link = (href: string, key: string) => [{ rel: 'alternate', type: 'application/atom+xml', href: `${base}${href}`, title: t(key) }];
  if (path === '/') return link('/feeds/dataset.atom', 'feeds.link.all');
  if (path === '/dataset') {
    const qs = new URLSearchParams();
    for (const key of FEED_FILTERS)
      for (const v of [query[key] ?? []].flat())
        if (v.trim() && !(key === 'sort' && v === 'score desc, metadata_modified desc')) qs.append(key, v);
    return qs.size ? link(`/feeds/custom.atom?${qs}`, 'feeds.link.search') : link('/feeds/dataset.atom', 'feeds.link.all');
  }
  const m = /^\/(organization|group)\/([^/]+)$/.exec(path);
  if (m && m[2] !== 'new') return link(`/feeds/${m[1]}/${m[2]}.atom`, `feeds.link.${m[1]}`);
  return [];
}
