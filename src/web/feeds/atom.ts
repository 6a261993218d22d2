// Atom 1.0 (RFC 4287) documents of datasets as CKAN's feeds give them: the feed's title, subtitle,
// id, author and links (alternate: the search page; self; first, last, prev, next for paging), and
// one entry per dataset with its page, a stable id, updated and published dates, author, summary
// (the notes), a category per tag and the dataset's package_show as an enclosure.
import type { Config } from '../../config/load.ts';
import { declareOption } from '../../config/options.ts';
import { el, xmlDocument, xmlText, type XmlElement } from './xml.ts';

type Dict = Record<string, any>;

declareOption({
  name: 'svc.feeds.limit',
  type: 'int',
  default: 20,
  description: 'Datasets in one page of an Atom feed (/feeds/*.atom)',
  validate: (v: number) => (v >= 1 && v <= 1000 ? undefined : 'must be between 1 and 1000'),
});
declareOption({
  name: 'svc.feeds.author_name',
  type: 'string',
  default: '',
  description: "The feeds' author (default svc.site_id)",
});
declareOption({
  name: 'svc.feeds.authority_name',
  type: 'string',
  default: '',
  description: "The domain name or email address in the feeds' tag: URIs (default the host of svc.site_url)",
});
declareOption({
  name: 'svc.feeds.date',
  type: 'string',
  default: '',
  description:
    "A date (YYYY-MM-DD, or YYYY-MM, YYYY) on which the authority name was the publisher's: with it, feed and entry ids are tag: URIs (RFC 4151); without, the site's addresses",
  validate: (v: string) => (v === '' || /^\d{4}(-\d{2}(-\d{2})?)?$/.test(v) ? undefined : 'must be a date such as 2012-03-22'),
});

export const ATOM_TYPE = 'application/atom+xml';

/** A feed's or entry's id: a tag: URI when svc.feeds.date is set, else the address on this site (as CKAN). */
export function atomId(config: Config, base: string, path: string): string {
  const date = config.str('svc.feeds.date');
  if (!date) return `${base}${path}`;
  const authority = config.str('svc.feeds.authority_name') || hostOf(base);
  return `tag:${authority},${date}:${path}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** A catalog timestamp (UTC, often without a zone) as an RFC 3339 date-time; null when unreadable. */
export function atomDate(value: unknown): string | null {
  if (typeof value !== 'string' || !value) return null;
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export interface FeedLinks {
  /** The search page showing the same datasets. */
  alternate: string;
  self: string;
  first: string;
  last: string;
  prev: string | null;
  next: string | null;
}

export interface FeedDescription {
  title: string;
  subtitle: string;
  /** The path the feed's id is made from (/feeds/dataset.atom ...). */
  idPath: string;
  links: FeedLinks;
  lang: string;
}

/** The address of a dataset's page and of its package_show. */
export interface DatasetAddresses {
  page: (pkg: Dict) => string;
  api: (pkg: Dict) => string;
}

function entry(config: Config, base: string, pkg: Dict, addresses: DatasetAddresses): XmlElement {
  const updated = atomDate(pkg.metadata_modified) ?? atomDate(pkg.metadata_created) ?? new Date(0).toISOString();
  const published = atomDate(pkg.metadata_created);
  const author = typeof pkg.author === 'string' ? pkg.author.trim() : '';
  const email = typeof pkg.author_email === 'string' ? pkg.author_email.trim() : '';
  const notes = typeof pkg.notes === 'string' ? xmlText(pkg.notes) : '';
  return el(
    'entry',
    {},
    el('id', {}, atomId(config, base, `/dataset/${pkg.id}`)),
    el('title', { type: 'text' }, String(pkg.title || pkg.name)),
    el('link', { rel: 'alternate', type: 'text/html', href: addresses.page(pkg) }),
    el('link', { rel: 'enclosure', type: 'application/json', href: addresses.api(pkg), length: Buffer.byteLength(JSON.stringify(pkg)) }),
    el('updated', {}, updated),
    published && el('published', {}, published),
    (author || email) && el('author', {}, el('name', {}, author || email), email && el('email', {}, email)),
    notes && el('summary', { type: 'text' }, notes),
    ...(Array.isArray(pkg.tags) ? pkg.tags : []).map((tag: Dict) => el('category', { term: String(tag.name) })),
  );
}

/** The feed document of a page of datasets (search results). */
export function atomFeed(config: Config, base: string, feed: FeedDescription, datasets: Dict[], addresses: DatasetAddresses): string {
  const author = config.str('svc.feeds.author_name').trim() || config.str('svc.site_id');
  // A feed changes when its newest dataset does; an empty one has not changed since the epoch.
  const updated = datasets.map((p) => atomDate(p.metadata_modified)).reduce<string | null>((a, b) => (b && (!a || b > a) ? b : a), null);
  const { links } = feed;
  const root = el(
    'feed',
    { xmlns: 'http://www.w3.org/2005/Atom', 'xml:lang': feed.lang },
    el('id', {}, atomId(config, base, feed.idPath)),
    el('title', { type: 'text' }, feed.title),
    el('subtitle', { type: 'text' }, feed.subtitle),
    el('updated', {}, updated ?? new Date(0).toISOString()),
    el('author', {}, el('name', {}, author), el('uri', {}, base)),
    el('link', { rel: 'alternate', type: 'text/html', href: links.alternate }),
    el('link', { rel: 'self', type: ATOM_TYPE, href: links.self }),
    el('link', { rel: 'first', type: ATOM_TYPE, href: links.first }),
    el('link', { rel: 'last', type: ATOM_TYPE, href: links.last }),
    links.prev && el('link', { rel: 'prev', type: ATOM_TYPE, href: links.prev }),
    links.next && el('link', { rel: 'next', type: ATOM_TYPE, href: links.next }),
    el('generator', { uri: base }, 'svc'),
    ...datasets.map((pkg) => entry(config, base, pkg, addresses)),
  );
  return xmlDocument(root);
}
