// The limits of the HTTP server itself: header size, how long a client may take to send its
// headers and its whole request, which proxies are trusted, and the answers to requests that break
// those limits before any route runs (always the envelope, the connection then closed).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../context.ts';
import { bodyTooLarge, closeAfterAnswer, envelopeError, rawErrorAnswer, sendErrorEnvelope } from './envelope.ts';

/** Route parameters (action names, ids, file names) up to this length; longer ones are still answered, as unknown. */
const MAX_PARAM_LENGTH = 2000;

export function serverOptions(services: Services): FastifyHttpOptions<Server> {
  const { config } = services;
  const headersTimeout = config.int('svc.headers_timeout') * 1000;
  const requestTimeout = Math.max(config.int('svc.request_timeout') * 1000, headersTimeout);
  const trusted = config.list('svc.trust_proxy');
  return {
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    requestTimeout,
    http: {
      maxHeaderSize: config.int('svc.max_header_size') * 1024,
      headersTimeout,
      // Node checks both timeouts at this interval (30 s by default, longer than a short timeout).
      connectionsCheckingInterval: Math.max(250, Math.min(30_000, Math.floor(headersTimeout / 2))),
    },
    ...(trusted.length ? { trustProxy: trusted } : {}),
    frameworkErrors: (error, rawRequest, rawReply) => {
      const [request, reply] = [rawRequest as FastifyRequest, rawReply as FastifyReply];
      if (request.url.startsWith('/api/')) return sendErrorEnvelope(reply, request, services, error);
      const err = envelopeError(error, services);
      return reply.code(err.status).type('text/plain; charset=utf-8').send(err.message);
    },
    clientErrorHandler: (connectionError, socket) => {
      const error = connectionError as unknown as Error & { code?: string; rawPacket?: Buffer };
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const headerSize = config.int('svc.max_header_size');
      const [status, message] =
        error.code === 'HPE_HEADER_OVERFLOW'
          ? [
              431,
              `Bad request - the request line and headers are larger than the limit of ${headerSize} KB (send long parameters as a JSON body with POST)`,
            ]
          : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [408, 'Bad request - the request was not received in time']
            : [400, 'Bad request - the request is not valid HTTP'];
      const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      if (socket.writable && !response?.headersSent) socket.write(rawErrorAnswer(services, status, message, error.rawPacket));
      socket.destroy();
    },
  };
}

/**
 * Refuses a body whose declared size is over the limit before reading any of it (a multipart
 * upload may carry a resource file of up to svc.max_resource_size besides its fields).
 */
export function declaredSizeCheck(services: Services) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const declared = Number(request.headers['content-length']);
    if (!Number.isFinite(declared)) return;
    const { config } = services;
    const multipart = /^\s*multipart\//i.test(request.headers['content-type'] ?? '');
    const limitMb = config.int('svc.max_body_size') + (multipart ? config.int('svc.max_resource_size') : 0);
    if (declared <= limitMb * 1024 * 1024) return;
    if (request.url.startsWith('/api/')) return sendErrorEnvelope(reply, request, services, bodyTooLarge(services, limitMb));
    closeAfterAnswer(request, reply);
    return reply.code(413).type('text/plain; charset=utf-8').send('The request body is larger than the limit.');
  };
}

/**
 * Closes the connection of a client that stops sending in the middle of its body (the whole
 * request's limit, svc.request_timeout, is long enough for large uploads on slow links).
 */
export function bodyIdleCheck(services: Services) {
  return (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const { raw } = request;
    const socket = raw.socket;
    const length = request.headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
    // (complete is undefined for in-process requests: nothing to time.)
    if (!socket || raw.complete !== false || !hasBody) return done();
    const onIdle = () => socket.destroy();
    socket.setTimeout(services.config.int('svc.body_idle_timeout') * 1000);
    socket.once('timeout', onIdle);
    raw.once('end', () => {
      socket.setTimeout(0);
      socket.off('timeout', onIdle);
    });
    done();
  };
}
