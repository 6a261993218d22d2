// A Project Open Data / DCAT-US `data.json` dataset (v1.1, and the DCAT-US 3 JSON that keeps its
// shape) as a dataset dict: what CKAN has a field for goes there, the rest becomes extras named as
// ckanext-dcat names them for DCAT (issued, modified, identifier, temporal_start, ...).
import { DEFAULT_LICENSES } from '../model/licenses.ts';
import type { RemoteOrganization } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** A value that may be one string or a list of them (data.json allows both in places). */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return v.trim() ? [v.trim()] : [];
  if (Array.isArray(v))
    return v.flatMap((x) => (typeof x === 'string' && x.trim() ? [x.trim()] : isObject(x) && text(x['@id']) ? [String(x['@id'])] : []));
  return [];
}

/** CKAN's munge_title_to_name: a URL-safe name from a title. */
export function nameFromTitle(title: string): string {
  const name = title
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
  return (name.length < 2 ? `${name}__`.slice(0, 2) : name).slice(0, 100);
}

function agentName(v: unknown): string | undefined {
  if (typeof v === 'string') return text(v);
  if (!isObject(v)) return undefined;
  return text(v.name) ?? text(v['foaf:name']) ?? text(v.fn);
}

function mailOf(v: unknown): string | undefined {
  const m = text(v);
  return m?.replace(/^mailto:/i, '');
}

function licenseOf(value: string): string | undefined {
  const norm = (u: string) =>
    u
      .replace(/^https?:\/\//i, '')
      .replace(/\/+$/, '')
      .toLowerCase();
  const v = norm(value);
  return DEFAULT_LICENSES.find((l) => (l.url && norm(l.url) === v) || l.id.toLowerCase() === value.toLowerCase())?.id;
}

/** data.json's spatial: a GeoJSON geometry, a "W,S,E,N" box, or a place name. */
function spatialExtras(spatial: unknown): { key: string; value: string }[] {
  if (isObject(spatial) && typeof spatial.type === 'string') return [{ key: 'spatial', value: JSON.stringify(spatial) }];
  // DCAT-US 3: a dct:Location object with a bbox, a GeoJSON geometry, or a name.
  if (isObject(spatial)) {
    if (isObject(spatial.geometry) && typeof spatial.geometry.type === 'string')
      return [{ key: 'spatial', value: JSON.stringify(spatial.geometry) }];
    const bbox = Array.isArray(spatial.bbox) ? spatial.bbox.join(',') : spatial.bbox;
    if (bbox !== undefined) return spatialExtras(bbox);
    return spatialExtras(spatial.prefLabel ?? spatial.name);
  }
  const s = text(spatial);
  if (!s) return [];
  const box = s.split(',').map((x) => Number(x.trim()));
  if (box.length === 4 && box.every(Number.isFinite)) {
    const [w, south, e, n] = box;
    const ring = [
      [w, south],
      [e, south],
      [e, n],
      [w, n],
      [w, south],
    ];
    return [{ key: 'spatial', value: JSON.stringify({ type: 'Polygon', coordinates: [ring] }) }];
  }
  if (s.startsWith('{')) {
    try {
      const geo = JSON.parse(s);
      if (isObject(geo) && typeof geo.type === 'string') return [{ key: 'spatial', value: JSON.stringify(geo) }];
    } catch {
      // a place name that starts with a brace: kept as text below
    }
  }
  return [{ key: 'spatial_text', value: s }];
}

function resourceOf(d: Json): Json | null {
  const url = text(d.downloadURL) ?? text(d.accessURL);
  if (!url) return null;
  const r: Json = { url };
  const set = (k: string, v: unknown) => v !== undefined && (r[k] = v);
  set('name', text(d.title));
  set('description', text(d.description));
  set('download_url', text(d.downloadURL));
  set('access_url', text(d.accessURL));
  set('mimetype', text(d.mediaType));
  const format = text(d.format) ?? text(d.mediaType)?.split('/').pop()?.toUpperCase();
  set('format', format);
  const size = Number(d.byteSize);
  if (d.byteSize !== undefined && Number.isInteger(size) && size >= 0) r.size = size;
  set('conforms_to', text(d.conformsTo));
  set('described_by', text(d.describedBy));
  return r;
}

export interface DataJsonRecord {
  dataset: Json;
  organization: RemoteOrganization | null;
}

/** Whether the object is one the catalog publishes (accessLevel public or restricted public, or unsaid). */
export function isPublicDataJson(d: Json): boolean {
  const level = text(d.accessLevel)?.toLowerCase();
  return level !== 'non-public';
}

/** One data.json dataset object as a dataset dict, and its publisher as an organization hint. */
export function mapDataJsonDataset(d: Json): DataJsonRecord {
  const dataset: Json = {};
  const extras: { key: string; value: string }[] = [];
  const extra = (key: string, value: string | undefined) => value && extras.push({ key, value });
  dataset.title = text(d.title);
  const notes = text(d.description);
  if (notes) dataset.notes = notes;
  const landing = text(d.landingPage);
  if (landing) dataset.url = landing;
  const keywords = Array.isArray(d.keyword)
    ? strings(d.keyword)
    : (text(d.keyword)
        ?.split(',')
        .map((k) => k.trim()) ?? []);
  const tags = [...new Set(keywords.filter(Boolean))];
  if (tags.length) dataset.tags = tags.map((name) => ({ name }));

  const contacts = Array.isArray(d.contactPoint) ? d.contactPoint : [d.contactPoint];
  const contact = contacts.find(isObject);
  const maintainer = agentName(contact);
  if (maintainer) dataset.maintainer = maintainer;
  const email = mailOf(contact?.hasEmail ?? contact?.['vcard:hasEmail']);
  if (email) dataset.maintainer_email = email;

  const license = text(d.license);
  const licenseId = license ? licenseOf(license) : undefined;
  if (licenseId) dataset.license_id = licenseId;
  else extra('license', license);

  extra('identifier', text(d.identifier));
  extra('issued', text(d.issued));
  extra('modified', text(d.modified));
  extra('access_level', text(d.accessLevel));
  extra('rights', text(d.rights));
  extra('frequency', text(d.accrualPeriodicity));
  extra('conforms_to', text(d.conformsTo));
  extra('described_by', text(d.describedBy));
  extra('is_part_of', text(d.isPartOf));
  extra('data_quality', typeof d.dataQuality === 'boolean' ? String(d.dataQuality) : text(d.dataQuality));
  for (const [key, source] of [
    ['language', d.language],
    ['theme', d.theme],
    ['documentation', d.references],
    ['bureau_code', d.bureauCode],
    ['program_code', d.programCode],
  ] as const) {
    const list = strings(source);
    if (list.length) extra(key, JSON.stringify(list));
  }
  // DCAT-US 3 writes a period as an object.
  const period = isObject(d.temporal) ? d.temporal : undefined;
  const temporal = period
    ? [text(period.startDate) ?? text(period.start), text(period.endDate) ?? text(period.end)].join('/')
    : text(d.temporal);
  if (temporal?.includes('/')) {
    const [start, end] = temporal.split('/');
    extra('temporal_start', start?.trim());
    extra('temporal_end', end?.trim());
  } else extra('temporal', temporal);
  extras.push(...spatialExtras(d.spatial));

  const publisher = agentName(d.publisher);
  extra('publisher_name', publisher);
  if (isObject(d.publisher)) extra('publisher_email', mailOf(d.publisher.mbox ?? d.publisher.hasEmail));
  if (extras.length) dataset.extras = extras;

  const resources = (Array.isArray(d.distribution) ? d.distribution : []).filter(isObject).map(resourceOf);
  dataset.resources = resources.filter((r): r is Json => r !== null);

  const organization = publisher ? { name: nameFromTitle(publisher), title: publisher } : null;
  return { dataset, organization };
}
