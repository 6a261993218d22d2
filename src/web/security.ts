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
 * Whether a state-changing request comes from a page of this site. The browser's Sec-Fetch-Site
 * says so where it is sent (pages cannot set it); else the Origin (or Referer) header is compared
 * with the origin of site_url and the one the request was sent to (`protocol` and `host` as
 * Fastify reads them: X-Forwarded-* only from a trusted proxy). "Origin: null" (a sandboxed or
 * no-referrer page elsewhere) is refused; the site's own pages send a real one (Referrer-Policy
 * same-origin). A request with none of these headers (not a browser) passes: the CSRF token still
 * has to match.
 */
export function fromThisSite(
  headers: { origin?: string; referer?: string; 'sec-fetch-site'?: string },
  siteUrl: string,
  own: { protocol: string; host: string },
): boolean {
  const fetchSite = headers['sec-fetch-site'];
  if (fetchSite === 'same-origin' || fetchSite === 'none') return true;
  if (fetchSite === 'same-site' || fetchSite === 'cross-site') return false;
  const claimed = headers.origin ?? (headers.referer === undefined ? undefined : (originOf(headers.referer) ?? 'null'));
  if (claimed === undefined) return true;
  const allowed = [originOf(siteUrl), originOf(`${own.protocol}://${own.host}`)];
  return claimed !== 'null' && allowed.includes(claimed.toLowerCase().replace(/\/$/, ''));
}
