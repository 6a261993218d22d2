// Downloads a linked file for the loader, safely: only http and https; every address is checked when
// the connection is made (after DNS resolution, on every redirect), so a name that resolves to a
// private, loopback, link-local, multicast or metadata address is refused unless allowed; a size
// limit and a time limit; errors that say what happened.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import dns from 'node:dns';
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

export class FetchError extends Error {}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface FetchOptions {
  maxBytes: number;
  timeoutMs: number;
  allowPrivate: boolean;
  maxRedirects?: number;
  /** Name resolution (tests inject one); default the system resolver. */
  resolve?: LookupAll;
  signal?: AbortSignal;
  onBytes?: (n: number) => void;
  /** Which addresses are refused (default isPrivateAddress; tests narrow it to try redirects). */
  isBlocked?: (address: string) => boolean;
}

export interface FetchResult {
  bytes: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  contentType: string | null;
  finalUrl: string;
}

const blocked = new net.BlockList();
for (const [net4, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net4, bits, 'ipv4');
for (const [net6, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
  ['100::', 64],
] as const)
  blocked.addSubnet(net6, bits, 'ipv6');

/** Whether an address is loopback, private, link-local (cloud metadata), multicast or reserved. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

export const systemResolve: LookupAll = (hostname) =>
  new Promise((resolve, reject) => {
    dns.lookup(hostname, { all: true }, (err, addrs) => (err ? reject(err) : resolve(addrs)));
  });

/** A connect-time lookup that only hands out allowed addresses (`option` is named in the refusal). */
export function safeLookup(
  resolve: LookupAll,
  allowPrivate: boolean,
  isBlocked: (a: string) => boolean,
  option = 'svc.loader.allow_private_urls',
): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    resolve(hostname).then(
      (addrs) => {
        const family = typeof options === 'object' ? options.family : undefined;
        let ok = addrs.filter((a) => !family || a.family === family);
        if (!allowPrivate) {
          const refused = ok.filter((a) => isBlocked(a.address));
          ok = ok.filter((a) => !isBlocked(a.address));
          if (!ok.length) {
            const shown = refused.map((a) => a.address).join(', ') || 'none';
            return callback(
              new FetchError(
                `refused to connect to ${hostname} (${shown}): a private, loopback, link-local or reserved address (set ${option} to allow)`,
              ),
            );
          }
        }
        if (!ok.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
        if (typeof options === 'object' && options.all) callback(null, ok);
        else callback(null, ok[0].address, ok[0].family);
      },
      (err) => callback(err),
    );
  }) as net.LookupFunction;
}

/** What a failed connection means, in words (the host, not the error code). */
export function describeNetworkError(e: NodeJS.ErrnoException, url: URL): string {
  if (e instanceof FetchError) return e.message;
  switch (e.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `could not resolve the host name ${url.hostname}`;
    case 'ECONNREFUSED':
      return `the connection to ${url.host} was refused`;
    case 'ECONNRESET':
      return `the connection to ${url.host} was reset`;
    default:
      return `could not fetch ${url.href}: ${e.message}`;
  }
}

/** Downloads url into dest; follows redirects (each one checked again). */
export async function fetchToFile(url: string, dest: string, opts: FetchOptions): Promise<FetchResult> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new FetchError(`"${url}" is not a valid URL`);
  }
  const resolve = opts.resolve ?? systemResolve;
  const isBlocked = opts.isBlocked ?? isPrivateAddress;
  const lookup = safeLookup(resolve, opts.allowPrivate, isBlocked);
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new FetchError(`the download timed out after ${Math.round(opts.timeoutMs / 1000)} s (svc.loader.timeout)`)),
    opts.timeoutMs,
  );
  const onAbort = () => deadline.abort(opts.signal!.reason);
  opts.signal?.addEventListener('abort', onAbort);
  try {
    for (let redirects = 0; ; redirects++) {
      if (current.protocol !== 'http:' && current.protocol !== 'https:') {
        throw new FetchError(`only http and https URLs can be loaded (not ${current.protocol.replace(':', '')})`);
      }
      // An address written in the URL is not looked up: check it here.
      const literal = current.hostname.replace(/^\[|\]$/g, '');
      if (net.isIP(literal) && !opts.allowPrivate && isBlocked(literal)) {
        throw new FetchError(
          `refused to connect to ${literal}: a private, loopback, link-local or reserved address (set svc.loader.allow_private_urls to allow)`,
        );
      }
      const res = await request(current, lookup, deadline.signal);
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (redirects >= (opts.maxRedirects ?? 5)) throw new FetchError(`too many redirects (more than ${opts.maxRedirects ?? 5})`);
        current = new URL(res.headers.location, current);
        continue;
      }
      if (status < 200 || status >= 300) {
        res.resume();
        throw new FetchError(`the server answered HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''} for ${current.href}`);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        res.destroy();
        throw new FetchError(`the file is ${declared} bytes, more than the limit of ${opts.maxBytes} bytes (svc.loader.max_size)`);
      }
      const hash = createHash('sha256');
      let bytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          bytes += chunk.length;
          if (bytes > opts.maxBytes)
            return cb(new FetchError(`the file is larger than the limit of ${opts.maxBytes} bytes (svc.loader.max_size)`));
          hash.update(chunk);
          opts.onBytes?.(chunk.length);
          cb(null, chunk);
        },
      });
      try {
        await pipeline(res, counter, fs.createWriteStream(dest), { signal: deadline.signal });
      } catch (e) {
        if (deadline.signal.aborted) throw deadline.signal.reason;
        if (e instanceof FetchError) throw e;
        throw new FetchError(describeNetworkError(e as NodeJS.ErrnoException, current));
      }
      const type = res.headers['content-type'];
      return { bytes, sha256: hash.digest('hex'), contentType: typeof type === 'string' ? type : null, finalUrl: current.href };
    }
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

function request(url: URL, lookup: net.LookupFunction, signal: AbortSignal): Promise<http.IncomingMessage> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.get(url, { lookup, signal, agent: false, headers: { 'user-agent': 'svc-loader', accept: '*/*' } }, resolve);
    req.on('error', (e) => reject(signal.aborted ? signal.reason : new FetchError(describeNetworkError(e as NodeJS.ErrnoException, url))));
  });
}
