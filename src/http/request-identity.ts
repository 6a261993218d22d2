// Who is calling an HTTP route; shared by the action routes, the plugins' own routes and the web pages.
import type { FastifyRequest } from 'fastify';
import type { Identity, Services } from '../context.ts';
import { ANONYMOUS } from '../context.ts';
import { credentialFrom, resolveIdentity } from '../auth/identity.ts';
import { CSRF_HEADER, SESSION_COOKIE, csrfTokenMatches, sessionUser } from '../auth/sessions.ts';
import { BadRequestError } from '../errors.ts';
import { siteUrl } from '../config/site-url.ts';
import { fromThisSite } from '../web/security.ts';

export interface IdentityOptions {
  /** An Action API call: the session cookie counts only with svc.auth.enable_cookie_auth_in_api, and a POST needs the CSRF token. */
  api?: boolean;
  /** The CSRF token sent in the body's `_csrf_token` field (forms and multipart posts). */
  formToken?: unknown;
}

/** Who is calling; a bad credential is an Authorization Error (never silently anonymous). */
export async function requestIdentity(services: Services, request: FastifyRequest, opts: IdentityOptions = {}): Promise<Identity> {
  const credential = credentialFrom(request.headers, services.config.str('apikey_header_name'));
  if (credential) return resolveIdentity(services, credential);
  const session = request.cookies?.[SESSION_COOKIE];
  if (!session || (opts.api && !services.config.bool('svc.auth.enable_cookie_auth_in_api'))) return ANONYMOUS;
  const user = await sessionUser(services.db, session);
  if (!user) return ANONYMOUS;
  if (opts.api && request.method !== 'GET') {
    const header = request.headers[CSRF_HEADER];
    const token = Array.isArray(header) ? header[0] : (header ?? opts.formToken);
    if (!(await csrfTokenMatches(services.db, services.config, session, token)))
      throw new BadRequestError('Bad request - The CSRF token is missing or invalid.', 403);
    const sent = {
      origin: request.headers.origin,
      referer: request.headers.referer,
      'sec-fetch-site': request.headers['sec-fetch-site'] as string | undefined,
    };
    if (!fromThisSite(sent, siteUrl(services.config), { protocol: request.protocol, host: request.host }))
      throw new BadRequestError('Bad request - a signed-in call from a page of another site (Origin) is refused.', 403);
  }
  return { user, sysadmin: user.sysadmin, via: 'session' };
}
