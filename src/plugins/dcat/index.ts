// dcat: linked data (ckanext-dcat's endpoints and actions). The catalog and every dataset as DCAT
// RDF (DCAT-AP 3 by default, DCAT-AP 2, DCAT-US 3, schema.org, Croissant) in Turtle, N3,
// N-Triples, JSON-LD and RDF/XML; content negotiation on /catalog, /dataset/{id} and /.
import type { FastifyPluginAsync } from 'fastify';
import type { Plugin } from '../plugin.ts';
import type { Services } from '../../actions/context.ts';
import '../../dcat/dcat-ap.ts';
import '../../dcat/dcat-us.ts';
import { registerJsonLdProfiles } from '../../dcat/jsonld-profiles.ts';
import { dcatActions } from './actions.ts';
import { dcatParseAction } from './parse-action.ts';
import { datasetAlternates, dcatRoutes } from './routes.ts';
import { dcatSettings } from './settings.ts';
import { addDatasetHeadLinks } from '../../web/head-links.ts';

let siteText = { title: 'svc', description: '' };
registerJsonLdProfiles(() => siteText);

const routes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => dcatRoutes(app, services);
// The content negotiation hook must see the web pages' routes: not encapsulated.
Object.assign(routes, { [Symbol.for('skip-override')]: true });

export const dcatPlugin: Plugin = {
  name: 'dcat',
  setup(services) {
    siteText = { title: services.config.str('svc.site_title') || 'svc', description: services.config.str('svc.site_description') };
    services.registry.defineAll([...dcatActions, dcatParseAction]);
    const settings = dcatSettings(services);
    if (settings.endpoints) addDatasetHeadLinks(services, (pkg) => datasetAlternates(settings.siteUrl, pkg.name));
  },
  routes,
};
