// A response body that does not change while the server runs (the API document, Swagger UI's
// files), kept in memory with an ETag and compressed once per encoding instead of on every request.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

type Encoding = 'br' | 'gzip';

/** Smaller bodies are sent as they are (compressing them saves nothing worth the work). */
const MIN_COMPRESSED_BYTES = 1024;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** The best encoding the client accepts (brotli, then gzip), or undefined for the bytes as they are. */
export function acceptedEncoding(header: string | string[] | undefined): Encoding | undefined {
  const accepted = new Map<string, number>();
  for (const part of String(header ?? '').split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(token, q === undefined ? 1 : Number(q));
  }
  const quality = (e: string) => accepted.get(e) ?? accepted.get('*') ?? 0;
  return (['br', 'gzip'] as const).find((e) => quality(e) > 0);
}

export class CachedBody {
  readonly etag: string;
  private readonly encoded = new Map<Encoding, Promise<Buffer>>();

  constructor(
    readonly body: Buffer,
    readonly type: string,
  ) {
    // Weak: the compressed and plain answers share it (they are the same content).
    this.etag = `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  }

  /** Compressed in the thread pool, once; the event loop is not held. */
  private compressed(encoding: Encoding): Promise<Buffer> {
    let result = this.encoded.get(encoding);
    if (!result) {
      result =
        encoding === 'br'
          ? brotli(this.body, {
              params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 6, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: this.body.length },
            })
          : gzip(this.body, { level: 9 });
      this.encoded.set(encoding, result);
    }
    return result;
  }

  async send(request: FastifyRequest, reply: FastifyReply, cacheControl: string): Promise<FastifyReply> {
    reply.type(this.type).header('etag', this.etag).header('cache-control', cacheControl).header('vary', 'accept-encoding');
    const known = String(request.headers['if-none-match'] ?? '')
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''));
    if (known.includes(this.etag.slice(2)) || known.includes('*')) return reply.code(304).send();
    const encoding = this.body.length >= MIN_COMPRESSED_BYTES ? acceptedEncoding(request.headers['accept-encoding']) : undefined;
    if (!encoding) return reply.send(this.body);
    // Content-Encoding set here: the compression hook leaves the answer as it is.
    return reply.header('content-encoding', encoding).send(await this.compressed(encoding));
  }
}
