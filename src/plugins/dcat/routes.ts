// The DCAT endpoints, with ckanext-dcat's paths and parameters: /catalog.{format} (paged),
// /dataset/{id}.{format}, and content negotiation on /catalog, /dataset/{id} and the home page
// (an Accept header preferring an RDF media type over HTML gets RDF). Each answer is an action call
// as the visitor, so validation, authorization and private datasets are the actions' own.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../actions/context.ts';
import { callAction } from '../../actions/registry.ts';
import { ActionError, AuthorizationError, NotFoundError, ValidationError } from '../../errors.ts';
import { requestIdentity } from '../../http/request-identity.ts';
import { negotiateRdf, RDF_FORMATS, type RdfFormat } from '../../dcat/serialize.ts';
import { dcatSettings } from './settings.ts';
import type { HeadLink } from '../../web/head-links.ts';

const CATALOG_PARAMS = ['page', 'modified_since', 'q', 'fq', 'profiles'] as const;

function queryOf(request: FastifyRequest, keys: readonly string[]): Record<string, string> {
  const qs = new URLSearchParams(request.url.split('?')[1] ?? '');
  const out: Record<string, string> = {};
  for (const key of keys) {
    const v = qs.get(key);
    if (v !== null) out[key] = v;
  }
  return out;
}

function errorText(e: ValidationError): string {
  return Object.entries(e.errors)
    .map(([field, v]) => `${field}: ${Array.isArray(v) ? v.join(' ') : typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('\n');
}

/** Calls a dcat action as the visitor and sends its document; bad parameters are a 400 naming them, an unreadable dataset a 404. */
async function answer(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  action: string,
  input: Record<string, unknown>,
  format: RdfFormat,
) {
  try {
    const identity = await requestIdentity(services, request);
    const text = (await callAction(services, action, { ...input, format }, { identity })) as string;
    return reply.header('vary', 'Accept').type(`${RDF_FORMATS[format].mediaType}; charset=utf-8`).send(text);
  } catch (e) {
    if (e instanceof ValidationError) return reply.code(400).type('text/plain; charset=utf-8').send(errorText(e));
    if (e instanceof NotFoundError || e instanceof AuthorizationError) {
      return reply
        .code(404)
        .type('text/plain; charset=utf-8')
        .send(action === 'dcat_dataset_show' ? 'Dataset not found' : e.message);
    }
    if (e instanceof ActionError) return reply.code(e.status).type('text/plain; charset=utf-8').send(e.message);
    throw e;
  }
}

const unknownFormat = (reply: FastifyReply, format: string) =>
  reply
    .code(404)
    .type('text/plain; charset=utf-8')
    .send(`Unknown RDF format "${format}": use one of ${Object.keys(RDF_FORMATS).join(', ')}`);

/** The catalog endpoint as a route path: '/catalog.{_format}' -> '/catalog.:format'. */
function routePath(endpoint: string): string {
  return endpoint.replace('{_format}', ':format');
}

export async function dcatRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const settings = dcatSettings(services);
  const catalog = (request: FastifyRequest, reply: FastifyReply, format: RdfFormat) =>
    answer(services, request, reply, 'dcat_catalog_show', queryOf(request, CATALOG_PARAMS), format);
  const dataset = (request: FastifyRequest, reply: FastifyReply, id: string, format: RdfFormat) =>
    answer(services, request, reply, 'dcat_dataset_show', { id, ...queryOf(request, ['profiles']) }, format);

  if (settings.endpoints) {
    app.get(routePath(settings.catalogEndpoint), async (request, reply) => {
      const name = (request.params as { format: string }).format;
      const format = RDF_FORMATS[name as RdfFormat] ? (name as RdfFormat) : undefined;
      return format ? catalog(request, reply, format) : unknownFormat(reply, name);
    });
    app.get('/dataset/:id.:format', async (request, reply) => {
      const { id, format: name } = request.params as { id: string; format: string };
      const format = RDF_FORMATS[name as RdfFormat] ? (name as RdfFormat) : undefined;
      return format ? dataset(request, reply, id, format) : unknownFormat(reply, name);
    });
    // /catalog without an extension: the format the Accept header prefers, Turtle when it names none.
    app.get('/catalog', async (request, reply) => catalog(request, reply, negotiateRdf(request.headers.accept) ?? 'ttl'));
  }

  if (settings.contentNegotiation) {
    // The dataset page and the home page belong to the web pages: an RDF Accept is answered before they run.
    app.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET') return;
      const path = request.url.split('?')[0];
      const home = path === '/';
      const page = /^\/dataset\/([a-z0-9_-]+|[0-9a-f-]{36})$/.exec(path);
      if (!home && !page) return;
      const format = negotiateRdf(request.headers.accept);
      if (!format) return;
      return home ? catalog(request, reply, format) : dataset(request, reply, page![1], format);
    });
  }
}

/** The dataset page's `<link rel="alternate">` entries: one per RDF format. */
export function datasetAlternates(siteUrl: string, name: string): HeadLink[] {
  const formats: RdfFormat[] = ['xml', 'ttl', 'jsonld', 'n3', 'nt'];
  return formats.map((f) => ({
    rel: 'alternate',
    type: RDF_FORMATS[f].mediaType,
    href: `${siteUrl}/dataset/${encodeURIComponent(name)}.${f}`,
  }));
}
