// Downloads of uploaded resource files: GET /dataset/{id}/resource/{resource_id}/download[/{filename}].
// Same bytes as uploaded, the resource's content type, the dataset's privacy (403/404), and
// single byte ranges (206, 416), from the file store (local disk, or the object store: streamed
// through, or a 302 to a presigned URL; 503 while the store is down).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Identity, Services } from '../context.ts';
import { readContext } from '../actions/read-context.ts';
import { canReadPackage } from '../auth/authz.ts';
import { ActionError } from '../errors.ts';
import { openFileStore, StorageUnavailableError } from '../files/store.ts';
import { resourceUrl } from '../model/package-dict.ts';
import { findPackage } from '../model/packages.ts';
import { findResource, guessMimetype } from '../model/resources.ts';
import { requestIdentity } from './request-identity.ts';

function fail(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).type('text/plain; charset=utf-8').send(message);
}

/** Parses a single "bytes=" range; undefined = serve everything, 'unsatisfiable' = 416. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}

async function download(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const { id, resource_id: resourceId } = request.params as { id: string; resource_id: string };
  let identity: Identity;
  try {
    identity = await requestIdentity(services, request);
  } catch (e) {
    if (e instanceof ActionError) return fail(reply, e.status, e.message);
    throw e;
  }
  // No id holds a NUL (the database could not even compare one).
  if (id.includes('\u0000') || resourceId.includes('\u0000')) return fail(reply, 404, 'Resource not found');
  const res = await findResource(services.db, resourceId);
  if (!res || res.state !== 'active') return fail(reply, 404, 'Resource not found');
  const pkg = await findPackage(services.db, res.package_id);
  if (!pkg || (pkg.id !== id && pkg.name !== id)) return fail(reply, 404, 'Resource not found');
  if (!(await canReadPackage(readContext(services, identity), pkg))) return fail(reply, 403, 'Not authorized to download resource');
  if (res.url_type !== 'upload' || res.url.includes('/')) {
    const url = resourceUrl(services.config, res);
    if (!url) return fail(reply, 404, 'No download is available');
    return reply.redirect(url, 302);
  }
  const type = res.mimetype || guessMimetype(res.url) || 'application/octet-stream';
  try {
    const store = await openFileStore(services.config);
    const presigned = await store.downloadUrl(res.id, { contentType: type });
    if (presigned) return reply.redirect(presigned, 302);
    const stored = await store.stat(res.id);
    if (!stored) return fail(reply, 404, 'Resource data not found');
    const size = stored.size;
    reply.header('Accept-Ranges', 'bytes');
    reply.header('Content-Type', type);
    const range = parseRange(request.headers.range, size);
    if (range === 'unsatisfiable') {
      reply.header('Content-Range', `bytes */${size}`);
      return fail(reply.header('Content-Type', 'text/plain; charset=utf-8'), 416, 'Requested range not satisfiable');
    }
    if (range) {
      const bytes = await store.read(res.id, range);
      reply.code(206);
      reply.header('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      reply.header('Content-Length', String(range.end - range.start + 1));
      return reply.send(bytes);
    }
    const bytes = await store.read(res.id);
    reply.header('Content-Length', String(size));
    return reply.send(bytes);
  } catch (e) {
    if (!(e instanceof StorageUnavailableError)) throw e;
    reply.removeHeader('Accept-Ranges');
    return fail(reply.header('Retry-After', '30'), 503, e.message);
  }
}

/** The download routes of one app instance (registered by buildApp). */
export const downloadRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const handler = (request: FastifyRequest, reply: FastifyReply) => download(services, request, reply);
  // Sent as stored: byte ranges count the file's own bytes.
  const options = { compress: false as const };
  app.get('/dataset/:id/resource/:resource_id/download', options, handler);
  app.get('/dataset/:id/resource/:resource_id/download/:filename', options, handler);
};
