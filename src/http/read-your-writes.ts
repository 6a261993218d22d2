// Read-your-writes with read replicas: an answer to a request that wrote carries the primary's WAL
// position after the write (X-SVC-Read-After; for a browser also a short-lived cookie), and this
// process remembers it for the caller's API credential for as long as a serving replica may lack
// it. A later request of the same caller (the header sent back, the cookie, or the same credential)
// reads on a replica only once the replica has replayed that position (src/db/replicas.ts).
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../context.ts';
import { credentialFrom } from '../auth/identity.ts';
import { formatLsn, parseLsn } from '../db/replicas.ts';
import { currentRequest } from '../metrics/request-context.ts';

const READ_AFTER_HEADER = 'x-svc-read-after';
const READ_AFTER_COOKIE = 'svc_read_after';
/** Credentials remembered at most (the oldest go first). */
const MAX_REMEMBERED = 10_000;
/** Beyond the lag limit: a serving replica was measured up to a few checks ago. */
const MARGIN_SECONDS = 5;

const cookiePattern = new RegExp(`(?:^|;\\s*)${READ_AFTER_COOKIE}=([0-9A-Fa-f]{1,8}%2F[0-9A-Fa-f]{1,8}|[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})`);

const later = (a: bigint | null, b: bigint | null) => (a === null ? b : b === null || a > b ? a : b);

export function registerReadYourWrites(app: FastifyInstance, services: Services): void {
  const reads = services.reads;
  if (!reads) return;
  const rememberSeconds = Math.ceil(services.config.get<number>('svc.database_replica_max_lag')) + MARGIN_SECONDS;
  const headerName = services.config.str('apikey_header_name');
  const remembered = new Map<string, { lsn: bigint; until: number }>();
  const credentialKey = (headers: Parameters<typeof credentialFrom>[0]) => {
    const credential = credentialFrom(headers, headerName);
    return credential ? createHash('sha256').update(credential).digest('base64url') : null;
  };

  app.addHook('onRequest', (request, _reply, done) => {
    const scope = currentRequest();
    if (scope) {
      const sent = request.headers[READ_AFTER_HEADER];
      let after = parseLsn(Array.isArray(sent) ? sent[0] : sent);
      const cookie = cookiePattern.exec(request.headers.cookie ?? '');
      if (cookie) after = later(after, parseLsn(decodeURIComponent(cookie[1])));
      const key = credentialKey(request.headers);
      const memory = key ? remembered.get(key) : undefined;
      if (memory && memory.until > Date.now()) after = later(after, memory.lsn);
      else if (memory) remembered.delete(key!);
      scope.readAfter = after;
    }
    done();
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const wrote = currentRequest()?.wroteAt;
    if (wrote === undefined) return payload;
    const text = formatLsn(wrote);
    reply.header(READ_AFTER_HEADER, text);
    const key = credentialKey(request.headers);
    if (key) {
      remembered.delete(key);
      remembered.set(key, { lsn: wrote, until: Date.now() + rememberSeconds * 1000 });
      if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
    } else {
      reply.setCookie(READ_AFTER_COOKIE, text, { path: '/', httpOnly: true, sameSite: 'lax', maxAge: rememberSeconds });
    }
    return payload;
  });
}
