// Reads documents from a harvest source: only http and https; every address checked when the
// connection is made (after DNS resolution, on every redirect) with the loader's rule, under its
// own option; a time limit per request; a size limit on the decoded body (a small gzip can
// unpack to gigabytes); a few retries with growing pauses when the server fails (5xx, 429) or the
// network does, then the job fails with the HTTP status. 4xx answers are returned as they are:
// a CKAN API says what was wrong in its JSON body, and the reader words the error.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Config } from '../config/load.ts';
import { siteUrl } from '../config/site-url.ts';
import { describeNetworkError, FetchError, isPrivateAddress, safeLookup, systemResolve, type LookupAll } from '../loader/fetch.ts';
import { SVC_VERSION } from '../version.ts';
import { type HarvestFetch, HarvestSourceError } from './types.ts';

const PRIVATE_OPTION = 'svc.harvest.allow_private_urls';

export interface HarvestFetchOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  /** Further tries after a 5xx, 429 or network failure (default 3). */
  retries?: number;
  /** The first pause before a retry; each next one doubles (default 500 ms). */
  retryDelayMs?: number;
  maxRedirects?: number;
  /** Name resolution (tests inject one); default the system resolver. */
  resolve?: LookupAll;
  /** Which addresses are refused (default the loader's isPrivateAddress). */
  isBlocked?: (address: string) => boolean;
}

/** The harvest limits from the configuration. */
export function harvestFetchOptions(config: Config): HarvestFetchOptions {
  return {
    allowPrivate: config.bool(PRIVATE_OPTION),
    timeoutMs: config.int('svc.harvest.timeout') * 1000,
    maxBytes: config.int('svc.harvest.max_size') * 1024 * 1024,
    userAgent: config.str('svc.harvest.user_agent') || `svc-harvest/${SVC_VERSION} (+${siteUrl(config)})`,
  };
}

function isLocalName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * Whether a source URL may be harvested, before any request: an http(s) URL whose host is not
 * written as a refused address or a localhost name. Returns the error message, or null when fine.
 * (Names are resolved only when fetching; the fetch refuses them then.)
 */
export function checkSourceUrl(url: string, allowPrivate: boolean): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `"${url}" is not a valid URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `only http and https sources can be harvested (not ${u.protocol.replace(':', '')})`;
  if (allowPrivate) return null;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if ((net.isIP(host) && isPrivateAddress(host)) || isLocalName(host))
    return `${host} is a private, loopback, link-local or reserved address (set ${PRIVATE_OPTION} to allow)`;
  return null;
}

/** A transient failure: worth another try. */
class RetryableError extends HarvestSourceError {}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** A HarvestFetch with the given limits. */
export function createHarvestFetch(opts: HarvestFetchOptions): HarvestFetch {
  const lookup = safeLookup(opts.resolve ?? systemResolve, opts.allowPrivate, opts.isBlocked ?? isPrivateAddress, PRIVATE_OPTION);
  const isBlocked = opts.isBlocked ?? isPrivateAddress;
  const retries = opts.retries ?? 3;
  const baseDelay = opts.retryDelayMs ?? 500;
  const maxRedirects = opts.maxRedirects ?? 5;

  async function once(url: string, accept: string, signal?: AbortSignal) {
    let current: URL;
    try {
      current = new URL(url);
    } catch {
      throw new HarvestSourceError(`"${url}" is not a valid URL`);
    }
    if (signal?.aborted) throw signal.reason;
    const deadline = new AbortController();
    const timeoutError = new HarvestSourceError(
      `${current.host} did not answer within ${Math.round(opts.timeoutMs / 1000)} s (svc.harvest.timeout)`,
    );
    const timer = setTimeout(() => deadline.abort(timeoutError), opts.timeoutMs);
    const onAbort = () => deadline.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort);
    try {
      for (let redirects = 0; ; redirects++) {
        if (current.protocol !== 'http:' && current.protocol !== 'https:')
          throw new HarvestSourceError(`only http and https URLs can be harvested (not ${current.protocol.replace(':', '')})`);
        const literal = current.hostname.replace(/^\[|\]$/g, '');
        if (!opts.allowPrivate && net.isIP(literal) && isBlocked(literal))
          throw new HarvestSourceError(
            `refused to connect to ${literal}: a private, loopback, link-local or reserved address (set ${PRIVATE_OPTION} to allow)`,
          );
        const res = await request(current, accept, lookup, opts.userAgent, deadline.signal);
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          if (redirects >= maxRedirects) throw new HarvestSourceError(`too many redirects from ${url} (more than ${maxRedirects})`);
          current = new URL(res.headers.location, current);
          continue;
        }
        if (status >= 500 || status === 429) {
          res.resume();
          throw new RetryableError(`${current.href} answered HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`, status);
        }
        const text = await readBody(res, opts.maxBytes, current, deadline.signal);
        const type = res.headers['content-type'];
        return { status, url: current.href, contentType: typeof type === 'string' ? type : null, text };
      }
    } catch (e) {
      if (deadline.signal.aborted) throw deadline.signal.reason;
      throw e;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return async (url, init = {}) => {
    const accept = init.accept ?? '*/*';
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(url, accept, init.signal);
      } catch (e) {
        if (init.signal?.aborted) throw init.signal.reason;
        if (!(e instanceof RetryableError)) throw e;
        if (attempt >= retries) throw new HarvestSourceError(`${e.message} (${retries + 1} ${retries ? 'tries' : 'try'})`, e.status);
        await sleep(baseDelay * 2 ** attempt, init.signal);
      }
    }
  };
}

/** The configured HarvestFetch. */
export function harvestFetch(config: Config): HarvestFetch {
  return createHarvestFetch(harvestFetchOptions(config));
}

function describe(e: NodeJS.ErrnoException, url: URL): HarvestSourceError {
  if (e instanceof HarvestSourceError) return e;
  if (e instanceof FetchError) return new HarvestSourceError(e.message);
  const message =
    e.code === 'EAI_AGAIN' ? `could not resolve the host name ${url.hostname} (try again later)` : describeNetworkError(e, url);
  return e.code && RETRYABLE_CODES.has(e.code) ? new RetryableError(message) : new HarvestSourceError(message);
}

function request(url: URL, accept: string, lookup: net.LookupFunction, userAgent: string, signal: AbortSignal) {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = mod.get(
      url,
      {
        lookup,
        signal,
        agent: false,
        headers: { 'user-agent': userAgent, accept, 'accept-encoding': 'gzip, deflate, br' },
      },
      resolve,
    );
    req.on('error', (e) => reject(signal.aborted ? signal.reason : describe(e as NodeJS.ErrnoException, url)));
  });
}

function decoder(res: http.IncomingMessage): Readable {
  switch (String(res.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return res.pipe(zlib.createGunzip());
    case 'deflate':
      return res.pipe(zlib.createInflate());
    case 'br':
      return res.pipe(zlib.createBrotliDecompress());
    default:
      return res;
  }
}

function charsetOf(contentType: string | undefined): string {
  const m = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '');
  if (!m) return 'utf-8';
  try {
    new TextDecoder(m[1]);
    return m[1];
  } catch {
    return 'utf-8';
  }
}

async function readBody(res: http.IncomingMessage, maxBytes: number, url: URL, signal: AbortSignal): Promise<string> {
  const limitMessage = `${url.href} is larger than the limit of ${maxBytes} bytes (svc.harvest.max_size)`;
  const declared = Number(res.headers['content-length']);
  if (!res.headers['content-encoding'] && Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new HarvestSourceError(limitMessage);
  }
  const body = decoder(res);
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body) {
      if (signal.aborted) throw signal.reason;
      bytes += (chunk as Buffer).length;
      if (bytes > maxBytes) throw new HarvestSourceError(limitMessage);
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    res.destroy();
    if (signal.aborted) throw signal.reason;
    if (e instanceof HarvestSourceError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (err.code?.startsWith('Z_')) throw new HarvestSourceError(`${url.href} sent a body that could not be decompressed`);
    throw describe(err, url);
  }
  return new TextDecoder(charsetOf(res.headers['content-type'])).decode(Buffer.concat(chunks));
}
