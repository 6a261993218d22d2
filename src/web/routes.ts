// The web interface: static assets, then each area's pages (src/web/pages/*.ts), then the
// not-found page for any other address outside the API.
import type { FastifyInstance } from 'fastify';
import { assetRoutes } from './assets.ts';
import { createRenderer } from './render.ts';
import { createWebRouter, type WebDeps } from './router.ts';
import { NotFoundError } from '../errors.ts';
import { homePages } from './pages/home.ts';
import { accountPages } from './pages/account.ts';
import { managePages } from './pages/manage.ts';

import { catalogPages } from './pages/catalog.ts';
import { peoplePages } from './pages/people.ts';
import { passwordResetPages } from './pages/password-reset.ts';
import { resourcePages } from './pages/resource.ts';
import { chartViewFormPages } from './pages/chart-view-form.ts';
import { feedPages } from './pages/feeds.ts';
import { datasetChangesPages } from './pages/dataset-changes.ts';
import { dataApiPages } from './pages/data-api.ts';
import { datasetPages } from './pages/catalog-dataset.ts';
import { datasetFormPages } from './pages/manage-datasets.ts';
import { resourceFormPages } from './pages/manage-resources.ts';
import { harvestPages } from './pages/harvest.ts';
import { routedTypes, typeRoot, typedRouter } from './scheming/dataset-types.ts';

/** The areas with pages of datasets: registered again under /<type> for each custom dataset type. */
const DATASET_AREAS = [datasetPages, datasetFormPages, resourceFormPages, resourcePages, chartViewFormPages];
const AREAS = [homePages, accountPages, catalogPages, managePages, resourcePages, peoplePages, passwordResetPages, feedPages, harvestPages];

export async function webRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const assets = assetRoutes(app);
  const types = routedTypes(deps.services);
  const router = createWebRouter(app, deps, createRenderer(assets, { datasetRoot: (pkg) => typeRoot(deps.services, pkg?.type) }));
  app.get('/custom.css', async (_request, reply) =>
    reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=60')
      .send(deps.services.config.str('svc.site_custom_css')),
  );
  for (const area of AREAS) area(router);
  chartViewFormPages(router);
  datasetChangesPages(router);
  dataApiPages(router);
  // Each custom dataset type's own pages: search, forms, dataset and resource pages under /<type>.
  for (const type of types) for (const area of DATASET_AREAS) area(typedRouter(router, type));
  const notFound = router.handler(async () => {
    throw new NotFoundError('page');
  });
  // (Addresses under /api/ have their own: the Action API's envelope.)
  app.setNotFoundHandler((request, reply) => notFound(request, reply));
  app.setErrorHandler((error, request, reply) =>
    router.handler(async () => {
      throw deps.requestError(error);
    })(request, reply),
  );
}
