// The Fastify app: routes HTTP to actions and turns results and errors into CKAN's envelope.
// It knows nothing about datasets.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import cookie from '@fastify/cookie';
import helmet from 'helmet';
import type { Identity, Services } from '../context.ts';
import { ANONYMOUS } from '../context.ts';
import { callAction } from '../actions/registry.ts';
import { databaseErrorAsValidation } from '../actions/call-errors.ts';
import { ActionError, BadRequestError, InternalError } from '../errors.ts';
import { discardFiles, requestData } from './request-data.ts';
import { sweepUploadTmp, uploadTmpDir } from '../files/storage.ts';
import { siteUrl } from '../config/site-url.ts';
import { sameReading, stringifyWithRaw } from '../json/array-text.ts';
import { webRoutes } from '../web/routes.ts';
import { CONTENT_SECURITY_POLICY } from '../web/security.ts';
import { apiDocsRoutes } from './api-docs.ts';
import { downloadRoutes } from './downloads.ts';
import { requestIdentity } from './request-identity.ts';
import { CSRF_FIELD } from '../auth/sessions.ts';
import { availablePlugins } from '../plugins/index.ts';

export { requestIdentity };

declare module 'fastify' {
  interface FastifyRequest {
    actionName?: string;
    identity?: Identity;
  }
}

export function helpUrl(services: Services, name: string): string {
  return `${siteUrl(services.config)}/api/3/action/help_show?name=${encodeURIComponent(name)}`;
}

export function envelopeError(e: unknown, services: Services): ActionError {
  if (e instanceof ActionError) return e;
  // A value the database refused on a route that is not an action call (they map their own).
  const refused = databaseErrorAsValidation(e, {});
  if (refused instanceof ActionError) return refused;
  const code = (e as { code?: string; statusCode?: number })?.code;
  const status = (e as { statusCode?: number })?.statusCode;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
    return new BadRequestError(
      `Bad request - the request body is larger than the limit of ${services.config.int('svc.max_body_size')} MB`,
      413,
    );
  }
  if (
    code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ||
    code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' ||
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
  ) {
    return new BadRequestError(`Bad request - ${(e as Error).message}`);
  }
  if (status && status >= 400 && status < 500) return new BadRequestError(`Bad request - ${(e as Error).message}`, status);
  services.logger.error({ err: e }, 'unhandled error');
  return new InternalError();
}

function sendEnvelope(
  reply: FastifyReply,
  request: FastifyRequest,
  services: Services,
  name: string,
  status: number,
  body: Record<string, unknown>,
) {
  const json = stringifyWithRaw({ help: helpUrl(services, name), ...body });
  const callback = request.method === 'GET' ? new URLSearchParams(request.url.split('?')[1] ?? '').get('callback') : null;
  if (callback && status === 200) {
    // Only names a browser could call: no markup, no statement injection.
    const safe = callback.replace(/[^\w$.[\]]/g, '');
    const script = typeof json === 'string' ? `${safe}(${json});` : Buffer.concat([Buffer.from(`${safe}(`), json, Buffer.from(');')]);
    return reply.code(200).type('application/javascript;charset=utf-8').send(script);
  }
  return reply.code(status).type('application/json;charset=utf-8').send(json);
}

async function handleAction(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const name = (request.params as { name: string }).name;
  request.actionName = name;
  let files = {};
  try {
    if (!services.registry.has(name)) throw new BadRequestError(`Bad request - Action name not known: ${name}`);
    const def = services.registry.get(name);
    if (request.method === 'GET' && !def.sideEffectFree) {
      throw new BadRequestError('Bad request - JSON Error: Invalid request. Please use POST method for your request');
    }
    const parsed = await requestData(request, {
      sideEffectFree: def.sideEffectFree,
      lazyLists: def.lazyLists,
      maxFileBytes: services.config.int('svc.max_resource_size') * 1024 * 1024,
      tmpDir: uploadTmpDir(services.config),
    });
    files = parsed.files;
    // JSONP calls run as anonymous (CKAN): a page on another site must not act with the visitor's credentials.
    const hasCallback = request.method === 'GET' && new URLSearchParams(request.url.split('?')[1] ?? '').has('callback');
    const formToken = parsed.data[CSRF_FIELD];
    delete parsed.data[CSRF_FIELD];
    const identity = hasCallback ? ANONYMOUS : await requestIdentity(services, request, { api: true, formToken });
    request.identity = identity;
    const [pathPart, query = ''] = request.url.split('?');
    const call = (data: Record<string, unknown>) =>
      callAction(services, name, data, {
        identity,
        files: parsed.files,
        request: { method: request.method, path: pathPart, query },
        rawJsonAnswer: true,
      });
    let result: unknown;
    try {
      result = await call(parsed.data);
    } catch (e) {
      // A guessed end of a large list that was wrong fails the call (nothing is kept): read the
      // body exactly and, when that gives other parameters, call again with them.
      const exact = parsed.reread?.();
      if (!exact || sameReading(exact, parsed.data)) throw e;
      result = await call(exact);
    }
    return sendEnvelope(reply, request, services, name, 200, { success: true, result: result === undefined ? null : result });
  } catch (e) {
    const err = envelopeError(e, services);
    return sendEnvelope(reply, request, services, name, err.status, { success: false, error: err.toJSON() });
  } finally {
    discardFiles(files);
  }
}

export async function buildApp(services: Services): Promise<FastifyInstance> {
  // Upload temp files a previous process left behind when it stopped mid-request.
  const swept = sweepUploadTmp(services.config);
  if (swept) services.logger.info({ files: swept }, 'removed stale upload temp files');
  const bodyLimit = services.config.int('svc.max_body_size') * 1024 * 1024;
  const app = Fastify({ logger: false, bodyLimit, routerOptions: { ignoreTrailingSlash: true } });
  // Any body that is not a form is read raw and parsed as JSON by us, whatever its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
  await app.register(formbody, { bodyLimit });
  await app.register(multipart, { limits: { fileSize: services.config.int('svc.max_resource_size') * 1024 * 1024, fieldSize: bodyLimit } });
  await app.register(cookie);
  // helmet's middleware is made once here (the Fastify plugin makes it again for every request).
  const securityHeaders = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    crossOriginEmbedderPolicy: false,
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  });
  app.addHook('onRequest', (request, reply, done) => securityHeaders(request.raw, reply.raw, (err) => done(err as Error | undefined)));

  app.addHook('onResponse', async (request, reply) => {
    services.logger.info(
      {
        method: request.method,
        url: request.routeOptions.url ?? request.url.split('?')[0],
        action: request.actionName,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        user: request.identity?.user?.id,
      },
      'request',
    );
  });

  app.setErrorHandler((error, request, reply) => {
    const err = envelopeError(error, services);
    const name = request.actionName ?? (request.params as { name?: string })?.name ?? 'unknown';
    return sendEnvelope(reply, request, services, name, err.status, { success: false, error: err.toJSON() });
  });

  for (const prefix of ['/api/3/action/:name', '/api/action/:name']) {
    app.route({ method: ['GET', 'POST'], url: prefix, handler: (req, reply) => handleAction(services, req, reply) });
  }
  app.get('/api', async () => ({ version: 3 }));
  app.get('/api/3', async () => ({ version: 3 }));
  await app.register(apiDocsRoutes, { services });

  // Routes belong to this app instance: the downloads, then those of the enabled plugins.
  await app.register(downloadRoutes, { services });
  await app.register(webRoutes, { services, requestData, requestIdentity, discardFiles });
  for (const name of services.config.list('svc.plugins')) {
    const routes = availablePlugins[name]?.routes;
    if (routes) await app.register(routes, { services });
  }
  return app;
}
