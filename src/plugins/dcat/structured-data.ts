// structured_data: a schema.org Dataset in every dataset page and a DataCatalog on the home page
// (<script type="application/ld+json">), for Google Dataset Search and other search engines
// (ckanext-dcat's plugin of the same name). The pages describe only what the visitor was shown.
import type { Plugin } from '../plugin.ts';
import { plainDescription, schemaOrgCatalog, schemaOrgDataset } from '../../dcat/schema-org.ts';
import { addJsonLdSource } from '../../web/json-ld.ts';
import { datasetAddress, siteInfo } from './page-address.ts';

export const structuredDataPlugin: Plugin = {
  name: 'structured_data',
  setup(services) {
    addJsonLdSource(services, (page) => {
      if (page.page === 'dataset') return schemaOrgDataset(page.pkg, datasetAddress(services, page.pkg));
      return schemaOrgCatalog(
        siteInfo(services),
        page.datasets.map((d) => ({
          name: d.title || d.name,
          url: datasetAddress(services, d).datasetUrl,
          description: plainDescription(d.notes, 300),
        })),
      );
    });
  },
};
