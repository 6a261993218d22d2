// Who is calling an HTTP route; shared by the action routes and the plugins' own routes.
import type { FastifyRequest } from 'fastify';
import type { Identity, Services } from '../context.ts';
import { ANONYMOUS } from '../context.ts';
import { credentialFrom, resolveIdentity } from '../auth/identity.ts';

/** Who is calling; a bad credential is an Authorization Error (never silently anonymous). */
export async function requestIdentity(services: Services, request: FastifyRequest): Promise<Identity> {
  const credential = credentialFrom(request.headers, services.config.str('apikey_header_name'));
  return credential ? resolveIdentity(services, credential) : ANONYMOUS;
}
