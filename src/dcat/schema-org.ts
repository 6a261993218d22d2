// schema.org descriptions (https://schema.org/Dataset, /DataCatalog) of datasets as JSON-LD
// objects: what Google Dataset Search reads from the pages, and the `schemaorg` profile of the
// DCAT endpoints. Pure functions: the caller gives the dataset dict and the addresses.
// The context is written inline (no remote context to fetch), with https://schema.org/ terms.
import { markdownExcerpt } from '../web/markdown.ts';
import { type Dict, fieldText, fieldValue, isHttpUrl, isoUtc, listOf, objectsOf, textOf } from './dataset-values.ts';
import { geometryExtent } from './geo-extent.ts';

export const SCHEMA_ORG = 'https://schema.org/';

/** The inline context of our schema.org JSON-LD: schema.org terms, addresses as IRIs. */
export const SCHEMA_ORG_CONTEXT = {
  '@vocab': SCHEMA_ORG,
  url: { '@type': '@id' },
  contentUrl: { '@type': '@id' },
  sameAs: { '@type': '@id' },
} as const;

/** The catalog the datasets are in (the site). */
export interface SiteInfo {
  /** Absolute address of the site, no trailing slash. */
  url: string;
  title: string;
  description?: string;
}

export interface DatasetAddress {
  site: SiteInfo;
  /** Absolute address of the dataset's page. */
  datasetUrl: string;
}

/** Google reads at most 5000 characters of a description, and wants at least 50. */
const DESCRIPTION_MAX = 5000;

/** Drops undefined values and empty lists, so the JSON-LD holds only what is known. */
export function compact<T extends Dict>(o: T): T {
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) delete o[k];
  }
  return o;
}

/** One value, or a list when there are several (schema.org allows both). */
const oneOrMany = <T>(list: T[]): T | T[] | undefined => (list.length === 0 ? undefined : list.length === 1 ? list[0] : list);

/** An address on the site for a user-entered link: absolute http(s) kept, a same-site path made absolute. */
export function absoluteUrl(url: unknown, site: string): string | undefined {
  const u = textOf(url);
  if (!u) return undefined;
  if (/^\/(?![/\\])\S*$/.test(u)) return `${site}${u}`;
  return isHttpUrl(u) ? u : undefined;
}

export function plainDescription(notes: unknown, max = DESCRIPTION_MAX): string | undefined {
  return markdownExcerpt(textOf(notes), max) || undefined;
}

/** schema.org Person or Organization of an agent ({uri, name, email, url, type, identifier}). */
export function agentNode(agent: Dict, fallbackType: 'Person' | 'Organization' = 'Organization'): Dict | undefined {
  const name = textOf(agent.name);
  const uri = textOf(agent.uri);
  if (!name && !uri) return undefined;
  const type = textOf(agent.type) ?? '';
  const isPerson = /person/i.test(type) || (!/organi[sz]ation|publishertype|agent/i.test(type) && fallbackType === 'Person');
  const email = textOf(agent.email)?.replace(/^mailto:/i, '');
  return compact({
    '@type': isPerson ? 'Person' : 'Organization',
    '@id': uri && isHttpUrl(uri) ? uri : undefined,
    name: name ?? uri,
    email,
    url: isHttpUrl(agent.url) ? agent.url : undefined,
    identifier: textOf(agent.identifier),
  });
}

/** The agents of a role: the scheming list (`creator`), else the legacy extras (`creator_name`, ...). */
export function roleAgents(pkg: Dict, role: 'creator' | 'publisher' | 'contact'): Dict[] {
  const listed = objectsOf(fieldValue(pkg, role), 'name');
  if (listed.length) return listed;
  const legacy: Dict = {};
  for (const part of ['uri', 'name', 'email', 'url', 'type', 'identifier']) legacy[part] = fieldText(pkg, `${role}_${part}`);
  legacy.identifier ??= fieldText(pkg, `${role}_id`);
  return legacy.name || legacy.uri || legacy.email ? [legacy] : [];
}

/** The organization as schema.org Organization: its page as @id and url. */
function organizationNode(pkg: Dict, site: string): Dict | undefined {
  const org = pkg.organization as Dict | null | undefined;
  if (!org?.name) return undefined;
  const page = `${site}/organization/${encodeURIComponent(org.name)}`;
  return compact({ '@type': 'Organization', '@id': page, name: textOf(org.title) ?? org.name, url: page });
}

/** The contact points: the scheming/legacy contact, else maintainer, else author (CKAN's fallbacks). */
function contactPoints(pkg: Dict): Dict[] {
  let contacts = roleAgents(pkg, 'contact');
  if (!contacts.length) {
    for (const who of ['maintainer', 'author']) {
      const name = textOf(pkg[who]);
      const email = textOf(pkg[`${who}_email`]);
      if (name || email) {
        contacts = [{ name, email }];
        break;
      }
    }
  }
  return contacts
    .map((c) =>
      compact({
        '@type': 'ContactPoint',
        contactType: 'customer service',
        name: textOf(c.name),
        email: textOf(c.email)?.replace(/^mailto:/i, ''),
        url: isHttpUrl(c.url) ? c.url : isHttpUrl(c.uri) ? c.uri : undefined,
        identifier: textOf(c.identifier),
      }),
    )
    .filter((c) => c.name || c.email || c.url);
}

function creators(pkg: Dict, site: string): Dict[] {
  const listed = roleAgents(pkg, 'creator')
    .map((a) => agentNode(a))
    .filter((a): a is Dict => !!a);
  if (listed.length) return listed;
  const author = textOf(pkg.author);
  if (author) return [compact({ '@type': 'Person', name: author, email: textOf(pkg.author_email) })];
  const org = organizationNode(pkg, site);
  return org ? [org] : [];
}

function publishers(pkg: Dict, site: string): Dict[] {
  const listed = roleAgents(pkg, 'publisher')
    .map((a) => agentNode(a))
    .filter((a): a is Dict => !!a);
  const out = listed.length ? listed : [organizationNode(pkg, site)].filter((a): a is Dict => !!a);
  const contacts = contactPoints(pkg);
  if (out.length && contacts.length) out[0] = { ...out[0], contactPoint: oneOrMany(contacts) };
  return out;
}

/** An ISO 8601 interval of a {start, end} period; an open end is `..` (as Google's guidelines write it). */
function period(p: Dict): string | undefined {
  const start = textOf(p.start);
  const end = textOf(p.end);
  if (start && end) return `${start}/${end}`;
  if (start) return `${start}/..`;
  if (end) return `../${end}`;
  return undefined;
}

export function temporalCoverage(pkg: Dict): string | string[] | undefined {
  const periods = objectsOf(fieldValue(pkg, 'temporal_coverage'));
  if (!periods.length) {
    const legacy = { start: fieldText(pkg, 'temporal_start'), end: fieldText(pkg, 'temporal_end') };
    if (legacy.start || legacy.end) periods.push(legacy);
  }
  return oneOrMany(periods.map(period).filter((p): p is string => !!p));
}

/** A schema.org GeoShape box ("south west north east") or GeoCoordinates of a geometry. */
function geoOf(...geometries: unknown[]): Dict | undefined {
  for (const g of geometries) {
    if (!g) continue;
    const e = geometryExtent(g);
    if (!e) continue;
    if (e.west === e.east && e.south === e.north) return { '@type': 'GeoCoordinates', latitude: e.south, longitude: e.west };
    return { '@type': 'GeoShape', box: `${e.south} ${e.west} ${e.north} ${e.east}` };
  }
  return undefined;
}

export function spatialCoverage(pkg: Dict): Dict | Dict[] | undefined {
  const places = objectsOf(fieldValue(pkg, 'spatial_coverage'));
  if (!places.length) {
    const legacy: Dict = {
      uri: fieldText(pkg, 'spatial_uri'),
      text: fieldText(pkg, 'spatial_text'),
      geom: fieldValue(pkg, 'spatial'),
      bbox: fieldValue(pkg, 'spatial_bbox'),
      centroid: fieldValue(pkg, 'spatial_centroid'),
    };
    if (legacy.uri || legacy.text || legacy.geom || legacy.bbox || legacy.centroid) places.push(legacy);
  }
  const nodes = places
    .map((p) => {
      const uri = textOf(p.uri);
      return compact({
        '@type': 'Place',
        '@id': uri && isHttpUrl(uri) ? uri : undefined,
        name: textOf(p.text),
        geo: geoOf(p.bbox, p.geom, p.centroid),
      });
    })
    .filter((p) => Object.keys(p).length > 1);
  return oneOrMany(nodes);
}

/** Languages as BCP 47 text: an EU authority URI (…/language/ENG) gives its lower-case code. */
function languages(value: unknown): string[] {
  return listOf(value)
    .map((l) => textOf(l))
    .filter((l): l is string => !!l)
    .map((l) => /\/authority\/language\/([A-Z]{3})$/.exec(l)?.[1]?.toLowerCase() ?? l);
}

function licenseOf(pkg: Dict): string | undefined {
  if (isHttpUrl(pkg.license_url)) return pkg.license_url;
  const license = fieldText(pkg, 'license');
  if (license) return license;
  if (isHttpUrl(pkg.license_id)) return pkg.license_id;
  return textOf(pkg.license_title) ?? textOf(pkg.license_id);
}

/** The schema.org DataDownload of a resource (undefined when it has no address to download from). */
export function dataDownload(r: Dict, address: DatasetAddress): Dict | undefined {
  const contentUrl = absoluteUrl(r.download_url, address.site.url) ?? absoluteUrl(r.url, address.site.url);
  if (!contentUrl) return undefined;
  return compact({
    '@type': 'DataDownload',
    '@id': r.id ? `${address.datasetUrl}/resource/${r.id}` : undefined,
    name: textOf(r.name),
    description: plainDescription(r.description, 500),
    contentUrl,
    encodingFormat: textOf(r.mimetype) ?? textOf(r.format),
    contentSize: typeof r.size === 'number' || (typeof r.size === 'string' && /^\d+$/.test(r.size)) ? String(r.size) : undefined,
    license: isHttpUrl(r.license) ? r.license : (textOf(r.license) ?? textOf(r.rights)),
    inLanguage: oneOrMany(languages(r.language)),
    datePublished: isoUtc(r.issued ?? r.created),
    dateModified: isoUtc(r.modified ?? r.last_modified ?? r.metadata_modified),
  });
}

/** The catalog node a dataset is included in. */
export function dataCatalogRef(site: SiteInfo): Dict {
  return compact({ '@type': 'DataCatalog', '@id': `${site.url}/`, name: site.title, description: site.description, url: `${site.url}/` });
}

/** The properties every schema.org view of a dataset shares (Croissant adds its own to these). */
export function datasetProperties(pkg: Dict, address: DatasetAddress): Dict {
  const { site, datasetUrl } = address;
  const identifiers = [fieldText(pkg, 'identifier') ?? fieldText(pkg, 'guid') ?? pkg.id, ...listOf(fieldValue(pkg, 'alternate_identifier'))]
    .map((x) => textOf(x))
    .filter((x): x is string => !!x);
  const name = textOf(pkg.title) ?? pkg.name;
  const groups = (pkg.groups ?? []) as Dict[];
  const about = [
    ...groups.map((g) =>
      compact({
        '@type': 'Thing',
        name: textOf(g.display_name) ?? textOf(g.title) ?? g.name,
        url: `${site.url}/group/${encodeURIComponent(g.name)}`,
      }),
    ),
    ...listOf(fieldValue(pkg, 'theme'))
      .filter(isHttpUrl)
      .map((uri) => ({ '@id': uri })),
  ];
  return compact({
    '@id': datasetUrl,
    name,
    description: plainDescription(pkg.notes) ?? name,
    url: datasetUrl,
    identifier: oneOrMany(identifiers),
    keywords: ((pkg.tags ?? []) as Dict[]).map((tag) => textOf(tag.display_name) ?? tag.name).filter(Boolean),
    license: licenseOf(pkg),
    creator: oneOrMany(creators(pkg, site.url)),
    publisher: oneOrMany(publishers(pkg, site.url)),
    version: fieldText(pkg, 'version') ?? fieldText(pkg, 'dcat_version'),
    inLanguage: oneOrMany(languages(fieldValue(pkg, 'language'))),
    temporalCoverage: temporalCoverage(pkg),
    spatialCoverage: spatialCoverage(pkg),
    about: oneOrMany(about),
    conditionsOfAccess: fieldText(pkg, 'access_rights'),
    dateCreated: isoUtc(pkg.metadata_created),
    datePublished: isoUtc(fieldValue(pkg, 'issued') ?? pkg.metadata_created),
    dateModified: isoUtc(fieldValue(pkg, 'modified') ?? pkg.metadata_modified),
    includedInDataCatalog: dataCatalogRef(site),
  });
}

/** The schema.org Dataset of a dataset dict, with the properties Google's Dataset rich results require and recommend. */
export function schemaOrgDataset(pkg: Dict, address: DatasetAddress): Dict {
  const maintainer = textOf(pkg.maintainer);
  return {
    '@context': SCHEMA_ORG_CONTEXT,
    '@type': 'Dataset',
    ...datasetProperties(pkg, address),
    ...compact({
      maintainer: maintainer ? compact({ '@type': 'Person', name: maintainer, email: textOf(pkg.maintainer_email) }) : undefined,
      citation: fieldText(pkg, 'cite_as'),
      isAccessibleForFree: true,
      distribution: ((pkg.resources ?? []) as Dict[]).map((r) => dataDownload(r, address)).filter(Boolean),
    }),
  };
}

/** The schema.org DataCatalog of the site, listing datasets (name and page) the visitor sees. */
export function schemaOrgCatalog(site: SiteInfo, datasets: { name: string; url: string; description?: string }[]): Dict {
  return {
    '@context': SCHEMA_ORG_CONTEXT,
    ...dataCatalogRef(site),
    ...compact({
      dataset: datasets.map((d) => compact({ '@type': 'Dataset', '@id': d.url, name: d.name, url: d.url, description: d.description })),
    }),
  };
}
