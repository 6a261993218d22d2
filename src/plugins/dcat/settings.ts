// The options of the dcat plugin (svc.dcat.*). ckanext-dcat's names (ckanext.dcat.*) in svc.ini are
// read too, so a CKAN configuration works unchanged; the svc.* name wins when both are given.
import { convertOption } from '../../config/load.ts';
import { declareOption, optionDeclaration } from '../../config/options.ts';
import { siteUrl } from '../../config/site-url.ts';
import type { Services } from '../../actions/context.ts';
import type { UriSettings } from '../../dcat/documents.ts';

const CATALOG_ENDPOINT_DEFAULT = '/catalog.{_format}';

declareOption({
  name: 'svc.dcat.base_uri',
  type: 'string',
  default: '',
  validate: (v: string) => (v === '' || /^https?:\/\/\S+$/i.test(v) ? undefined : 'must be an http:// or https:// URI'),
  description:
    'Base of the URIs of the catalog, datasets and distributions in the DCAT output (ckanext.dcat.base_uri); empty: svc.site_url',
});
declareOption({
  name: 'svc.dcat.rdf.profiles',
  type: 'list',
  default: ['euro_dcat_ap_3'],
  description:
    'RDF profiles of the DCAT output when a request names none (ckanext.dcat.rdf.profiles): euro_dcat_ap_3, euro_dcat_ap_2, dcat_us_3, schemaorg, croissant',
});
declareOption({
  name: 'svc.dcat.datasets_per_page',
  type: 'int',
  default: 100,
  validate: (v: number) => (v >= 1 && v <= 1000 ? undefined : 'must be between 1 and 1000'),
  description: 'Datasets in one page of the DCAT catalog endpoint (ckanext.dcat.datasets_per_page)',
});
declareOption({
  name: 'svc.dcat.enable_rdf_endpoints',
  type: 'bool',
  default: true,
  description: 'Serve /catalog.{format} and /dataset/{id}.{format} (ckanext.dcat.enable_rdf_endpoints)',
});
declareOption({
  name: 'svc.dcat.catalog_endpoint',
  type: 'string',
  default: CATALOG_ENDPOINT_DEFAULT,
  validate: (v: string) => (v.startsWith('/') && v.includes('{_format}') ? undefined : 'must start with / and contain {_format}'),
  description: 'Path of the DCAT catalog endpoint, with the {_format} placeholder (ckanext.dcat.catalog_endpoint)',
});
declareOption({
  name: 'svc.dcat.enable_content_negotiation',
  type: 'bool',
  default: true,
  description:
    'Answer /dataset/{id} and /catalog with RDF when the Accept header prefers an RDF media type over HTML (ckanext.dcat.enable_content_negotiation)',
});
declareOption({
  name: 'svc.dcat.groups_as_themes',
  type: 'bool',
  default: false,
  description: "A dataset's groups become dcat:theme values (their URIs under the base URI) in the DCAT output",
});

/** An option of the plugin: the svc.dcat.* value, else the ckanext.dcat.* one from svc.ini, else the default. */
export function dcatOption<T>(services: Services, name: string): T {
  const decl = optionDeclaration(name)!;
  const value = services.config.get<T>(name);
  if (JSON.stringify(value) !== JSON.stringify(decl.default)) return value;
  let ckan: unknown;
  try {
    ckan = services.config.get(name.replace(/^svc\.dcat\./, 'ckanext.dcat.'));
  } catch {
    return value; // not in svc.ini
  }
  return convertOption(decl, ckan) as T;
}

export interface DcatSettings extends UriSettings {
  profiles: string[];
  perPage: number;
  endpoints: boolean;
  contentNegotiation: boolean;
  catalogEndpoint: string;
}

export function dcatSettings(services: Services): DcatSettings {
  const site = siteUrl(services.config);
  const base = dcatOption<string>(services, 'svc.dcat.base_uri');
  return {
    siteUrl: site,
    baseUri: (base || site).replace(/\/+$/, ''),
    groupsAsThemes: dcatOption<boolean>(services, 'svc.dcat.groups_as_themes'),
    profiles: dcatOption<string[]>(services, 'svc.dcat.rdf.profiles'),
    perPage: dcatOption<number>(services, 'svc.dcat.datasets_per_page'),
    endpoints: dcatOption<boolean>(services, 'svc.dcat.enable_rdf_endpoints'),
    contentNegotiation: dcatOption<boolean>(services, 'svc.dcat.enable_content_negotiation'),
    catalogEndpoint: dcatOption<string>(services, 'svc.dcat.catalog_endpoint'),
  };
}
