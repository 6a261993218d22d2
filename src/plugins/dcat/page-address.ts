// The addresses the schema.org and Croissant descriptions use: the site (svc.site_url, its title
// and description) and a dataset's page (/dataset/<name>, or /<type>/<name> for a routed type).
import type { Services } from '../../context.ts';
import { siteUrl } from '../../config/site-url.ts';
import type { DatasetAddress, SiteInfo } from '../../dcat/schema-org.ts';
import { translator } from '../../web/i18n.ts';
import { typeRoot } from '../../web/scheming/dataset-types.ts';
import { siteVariables } from '../../web/site.ts';

export function siteInfo(services: Services): SiteInfo {
  const { site } = siteVariables(services.config, translator(services.config.str('svc.locale_default'))) as {
    site: { title: string; description: string };
  };
  return { url: siteUrl(services.config), title: site.title, description: site.description || undefined };
}

export function datasetAddress(services: Services, pkg: Record<string, any>): DatasetAddress {
  const site = siteInfo(services);
  return { site, datasetUrl: `${site.url}${typeRoot(services, pkg.type)}/${encodeURIComponent(String(pkg.name))}` };
}
