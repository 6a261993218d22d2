// What every response and form post is held to: the Content-Security-Policy of every response: no inline scripts or styles anywhere. Images,
// media and framed web pages may come from other sites (resource previews show them).
export const CONTENT_SECURITY_POLICY: Record<string, string[]> = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:', 'https:', 'http:'],
  mediaSrc: ["'self'", 'https:', 'http:'],
  frameSrc: ["'self'", 'https:', 'http:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'self'"],
};

/** The origin (scheme://host[:port]) of a URL, or undefined when it is not one. */
function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether a state-changing request comes from a page of this site, by its Origin (else Referer)
 * header: the origin of site_url, or the one the request was sent to (`protocol` and `host` as
 * Fastify reads them: X-Forwarded-* only from a trusted proxy). A request with neither header
 * (not a browser, or one that sends none) passes: the CSRF token still has to match.
 */
export function fromThisSite(
  headers: { origin?: string; referer?: string },
  siteUrl: string,
  own: { protocol: string; host: string },
): boolean {
  const claimed = headers.origin ?? (headers.referer === undefined ? undefined : (originOf(headers.referer) ?? 'null'));
  if (claimed === undefined) return true;
  const allowed = [originOf(siteUrl), originOf(`${own.protocol}://${own.host}`)];
  return claimed !== 'null' && allowed.includes(claimed.toLowerCase().replace(/\/$/, ''));
}
