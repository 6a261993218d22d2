// The Fastify app: routes HTTP to actions and turns results and errors into CKAN's envelope.
// It knows nothing about datasets.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import cookie from '@fastify/cookie';
import compress from '@fastify/compress';
import helmet from 'helmet';
import type { Identity, Services } from '../context.ts';
import { ANONYMOUS } from '../context.ts';
import { callAction } from '../actions/registry.ts';
import { BadRequestError } from '../errors.ts';
import { discardFiles, requestData } from './request-data.ts';
import { sweepUploadTmp, uploadTmpDir } from '../files/storage.ts';
import { closeFileStore, openFileStore, prestageUploads, releaseUploads } from '../files/store.ts';
import { sameReading } from '../json/array-text.ts';
import { webRoutes } from '../web/routes.ts';
import { localePrefixRewriter } from '../web/locale.ts';
import { CONTENT_SECURITY_POLICY } from '../web/security.ts';
import { apiDocsRoutes } from './api-docs.ts';
import { downloadRoutes } from './downloads.ts';
import { registerOperations, requestIdOptions } from './operations.ts';
import { registerReadYourWrites } from './read-your-writes.ts';
import { requestIdentity } from './request-identity.ts';
import { CSRF_FIELD } from '../auth/sessions.ts';
import { availablePlugins } from '../plugins/index.ts';
import { apiNotFound, echoedName, envelopeError, helpUrl, sendEnvelope, sendErrorEnvelope } from './envelope.ts';
import { bodyIdleCheck, declaredSizeCheck, serverOptions } from './server-limits.ts';

export { requestIdentity, envelopeError, helpUrl };

declare module 'fastify' {
  interface FastifyRequest {
    actionName?: string;
    identity?: Identity;
  }
}

async function handleAction(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const name = (request.params as { name: string }).name;
  request.actionName = name;
  let files = {};
  try {
    if (!services.registry.has(name)) throw new BadRequestError(`Bad request - Action name not known: ${echoedName(name)}`);
    const def = services.registry.get(name);
    // HEAD is answered as GET (without the body): the same rules.
    const asGet = request.method === 'GET' || request.method === 'HEAD';
    if (asGet && !def.sideEffectFree) {
      throw new BadRequestError('Bad request - JSON Error: Invalid request. Please use POST method for your request');
    }
    const parsed = await requestData(request, {
      sideEffectFree: def.sideEffectFree,
      lazyLists: def.lazyLists,
      maxFileBytes: services.config.int('svc.max_resource_size') * 1024 * 1024,
      tmpDir: uploadTmpDir(services.config),
    });
    files = parsed.files;
    // Uploads go to an object store before the action's transaction opens (the transfer holds no lock).
    await prestageUploads(services.config, files);
    // JSONP calls run as anonymous (CKAN): a page on another site must not act with the visitor's credentials.
    const hasCallback = asGet && new URLSearchParams(request.url.split('?')[1] ?? '').has('callback');
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
    await releaseUploads(services.config, files).catch(() => undefined);
    discardFiles(files);
  }
}

/** The Action API under /api/: actions, versions, and the envelope for everything else there. */
async function actionRoutes(app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  for (const url of ['/3/action/:name', '/action/:name']) {
    app.route({ method: ['GET', 'POST'], url, handler: (req, reply) => handleAction(services, req, reply) });
    // CKAN routes only GET and POST to an action.
    app.route({
      method: ['PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url,
      handler: (req, reply) => {
        reply.header('allow', 'GET, POST');
        return sendErrorEnvelope(
          reply,
          req,
          services,
          new BadRequestError(`Bad request - the method ${req.method} is not allowed: use GET or POST`, 405),
        );
      },
    });
  }
  app.get('/', async () => ({ version: 1 })); // as CKAN: the unversioned address names API version 1
  app.get('/3', async () => ({ version: 3 }));
  app.setNotFoundHandler((request, reply) => sendErrorEnvelope(reply, request, services, apiNotFound(request)));
}

export async function buildApp(services: Services): Promise<FastifyInstance> {
  // Upload temp files a previous process left behind when it stopped mid-request.
  const swept = sweepUploadTmp(services.config);
  if (swept) services.logger.info({ files: swept }, 'removed stale upload temp files');
  await (await openFileStore(services.config)).check();
  const bodyLimit = services.config.int('svc.max_body_size') * 1024 * 1024;
  const app = Fastify({
    ...serverOptions(services),
    ...requestIdOptions(services),
    rewriteUrl: localePrefixRewriter(services.config),
    logger: false,
    bodyLimit,
  });
  registerOperations(app, services);
  registerReadYourWrites(app, services);
  // Any body that is not a form is read raw and parsed as JSON by us, whatever its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
  await app.register(formbody, { bodyLimit });
  await app.register(multipart, { limits: { fileSize: services.config.int('svc.max_resource_size') * 1024 * 1024, fieldSize: bodyLimit } });
  await app.register(cookie);
  // Answers compressed when the client accepts it (request bodies are read as sent).
  await app.register(compress, { globalDecompression: false, customTypes: /^text\/(?!event-stream)|json|javascript|xml|svg/ });
  // helmet's middleware is made once here (the Fastify plugin makes it again for every request).
  const securityHeaders = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    crossOriginEmbedderPolicy: false,
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    // Other sites get no referrer; this site's own form posts then carry a real Origin (checked).
    referrerPolicy: { policy: 'same-origin' },
  });
  app.addHook('onRequest', (request, reply, done) => securityHeaders(request.raw, reply.raw, (err) => done(err as Error | undefined)));

  app.addHook('onResponse', async (request, reply) => {
    services.logger.info(
      {
        reqId: request.id,
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

  app.addHook('onClose', async () => closeFileStore(services.config));
  app.addHook('onRequest', declaredSizeCheck(services));
  app.addHook('onRequest', bodyIdleCheck(services));
  app.setErrorHandler((error, request, reply) => sendErrorEnvelope(reply, request, services, error));

  await app.register(actionRoutes, { services, prefix: '/api' });
  await app.register(apiDocsRoutes, { services });

  // Routes belong to this app instance: the downloads, then those of the enabled plugins.
  await app.register(downloadRoutes, { services });
  await app.register(webRoutes, { services, requestData, requestIdentity, discardFiles, requestError: (e) => envelopeError(e, services) });
  for (const name of services.config.list('svc.plugins')) {
    const routes = availablePlugins[name]?.routes;
    if (routes) await app.register(routes, { services });
  }
  return app;
}
