// Dataset types as CKAN serves them: each custom schema's dataset_type has its pages under
// /<type> (search, /new, /<name>, /edit/<name>, resources) like /dataset for the type "dataset".
// A dataset of any type is also shown at /dataset/<name> (CKAN 2.11 shows it with its type's page).
import type { Services } from '../../context.ts';
import type { DatasetSchema } from '../../scheming/types.ts';
import type { WebRouter } from '../router.ts';

/** First path segments other pages own: a dataset type named like one gets no pages of its own. */
const RESERVED = new Set([
  'api',
  'dataset',
  'organization',
  'group',
  'user',
  'dashboard',
  'ckan-admin',
  'about',
  'static',
  'datastore',
  'custom.css',
  'uploads',
  'revision',
  'feeds',
  'harvest',
  'catalog',
  'healthz',
  'readyz',
  'metrics',
]);

/** The schema of a dataset type, if one is configured. */
export function datasetSchema(services: Services, type: unknown): DatasetSchema | undefined {
  return services.scheming?.datasets.get(typeof type === 'string' && type ? type : 'dataset');
}

const routedCache = new WeakMap<Services, Set<string>>();

/** Types served under their own address (every configured type but "dataset" and the reserved names). */
export function routedTypes(services: Services): string[] {
  const cached = routedCache.get(services);
  if (cached) return [...cached];
  const types = [...(services.scheming?.datasets.keys() ?? [])];
  const routed = types.filter((type) => type !== 'dataset' && !RESERVED.has(type) && /^[A-Za-z0-9_-]+$/.test(type));
  for (const type of types)
    if (type !== 'dataset' && !routed.includes(type))
      services.logger.warn(
        { dataset_type: type },
        'dataset type has no pages of its own: its name is taken by other pages (it stays under /dataset)',
      );
  routedCache.set(services, new Set(routed));
  return routed;
}

/** The address prefix of a type's pages: /<type> for a routed type, else /dataset. */
export function typeRoot(services: Services, type: unknown): string {
  const routed = routedCache.get(services);
  return typeof type === 'string' && routed?.has(type) ? `/${type}` : '/dataset';
}

/**
 * A router registering a type's pages: each '/dataset...' address of the dataset pages becomes
 * '/<type>...', and the pages see the type as ctx.datasetType.
 */
export function typedRouter(web: WebRouter, type: string): WebRouter {
  const url = (u: string) => u.replace(/^\/dataset(?=\/|$)/, `/${type}`);
  return {
    services: web.services,
    handler: (page) => web.handler((ctx) => page(Object.assign(ctx, { datasetType: type }))),
    get: (u, page) => web.get(url(u), (ctx) => page(Object.assign(ctx, { datasetType: type }))),
    post: (u, page, opts) => web.post(url(u), (ctx) => page(Object.assign(ctx, { datasetType: type })), opts),
  };
}
