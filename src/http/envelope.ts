// CKAN's envelope for every answer under /api/: {help, success, result} or {help, success: false, error},
// also for requests that never reach an action (no such route, other methods, malformed addresses,
// unreadable headers, oversized bodies).
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../context.ts';
import { databaseErrorAsValidation } from '../actions/call-errors.ts';
import { ActionError, BadRequestError, InternalError, NotFoundError } from '../errors.ts';
import { siteUrl } from '../config/site-url.ts';
import { stringifyWithRaw } from '../json/array-text.ts';

/** Action names echoed in messages are cut to this length. */
const ECHOED_NAME_LENGTH = 100;

export function helpUrl(services: Services, name: string): string {
  return `${siteUrl(services.config)}/api/3/action/help_show?name=${encodeURIComponent(name)}`;
}

export function echoedName(name: string): string {
  return name.length > ECHOED_NAME_LENGTH ? `${name.slice(0, ECHOED_NAME_LENGTH)}...` : name;
}

/** 413; `limitMb`: the limit that applied (default svc.max_body_size). */
export function bodyTooLarge(services: Services, limitMb = services.config.int('svc.max_body_size')): BadRequestError {
  return new BadRequestError(`Bad request - the request body is larger than the limit of ${limitMb} MB`, 413);
}

export function envelopeError(e: unknown, services: Services): ActionError {
  if (e instanceof ActionError) return e;
  // A value the database refused on a route that is not an action call (they map their own).
  const refused = databaseErrorAsValidation(e, {});
  if (refused instanceof ActionError) return refused;
  const code = (e as { code?: string; statusCode?: number })?.code;
  const status = (e as { statusCode?: number })?.statusCode;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return bodyTooLarge(services);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new BadRequestError('Bad request - the Content-Type header is not a media type that can be read (type/subtype)', 415);
  }
  if (code === 'FST_ERR_BAD_URL') return new BadRequestError('Bad request - the address is not valid URL encoding');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new BadRequestError(`Bad request - ${(e as Error).message}`);
  }
  if (status && status >= 400 && status < 500) return new BadRequestError(`Bad request - ${(e as Error).message}`, status);
  services.logger.error({ err: e }, 'unhandled error');
  return new InternalError();
}

/** The action a request under /api/ names, for the envelope's help link. */
export function requestedAction(request: FastifyRequest): string {
  const fromRoute = request.actionName ?? (request.params as { name?: string } | undefined)?.name;
  if (fromRoute) return fromRoute;
  return actionInPath(request.url) ?? 'unknown';
}

function actionInPath(url: string): string | undefined {
  const m = /^\/api\/(?:3\/)?action\/([^/?#]+)/.exec(url);
  if (!m) return undefined;
  try {
    return echoedName(decodeURIComponent(m[1]));
  } catch {
    return undefined;
  }
}

/** How long a refused client may still send (and have it discarded) after the answer, so it reads the answer. */
const LINGER_MS = 2000;

/**
 * An answer before the body has arrived (refused at its declared size, an upload over the limit):
 * the connection is closed instead of reading the rest of the body only to throw it away. Not at
 * once: closing a socket with unread data resets it, and the client would lose the answer.
 */
export function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  // Node ends a "Connection: close" answer's socket with destroySoon().
  const socket = request.raw.socket as Socket & { destroySoon?: () => void };
  if (!socket) return;
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

export function sendEnvelope(
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
  if (request.raw.complete === false) closeAfterAnswer(request, reply);
  return reply.code(status).type('application/json;charset=utf-8').send(json);
}

/** The error envelope for any error (ActionError or not). */
export function sendErrorEnvelope(reply: FastifyReply, request: FastifyRequest, services: Services, e: unknown, name?: string) {
  const err = envelopeError(e, services);
  return sendEnvelope(reply, request, services, name ?? requestedAction(request), err.status, { success: false, error: err.toJSON() });
}

/** No route for this address under /api/: 404. */
export function apiNotFound(request: FastifyRequest): NotFoundError {
  const path = request.url.split('?')[0];
  return new NotFoundError(`no such address ${echoedName(path)}`);
}

/**
 * A whole HTTP/1.1 answer written on the socket, for errors the HTTP parser meets before any
 * request exists (headers too large, malformed request line, timeouts).
 */
export function rawErrorAnswer(services: Services, status: number, message: string, rawPacket?: Buffer): string {
  const firstLine = rawPacket?.subarray(0, 2048).toString('latin1').split('\r\n')[0] ?? '';
  const name = actionInPath(firstLine.split(' ')[1] ?? '') ?? 'unknown';
  const body = JSON.stringify({ help: helpUrl(services, name), success: false, error: { __type: 'Bad Request', message } });
  const reason = status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json;charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
