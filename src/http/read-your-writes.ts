// Read-your-writes with read replicas: an answer to a request that wrote carries the primary's WAL
// position after the write (X-SVC-Read-After; for a browser also a short-lived cookie), and this
// process remembers it for the caller's API credential for as long as a serving replica may lack
// it. A later request of the same caller (the header sent back, the cookie, or the same credential)
// reads on a replica only once the replica has replayed that position (src/db/replicas.ts).
// The data store's database has its own positions (X-SVC-Datastore-Read-After, svc_ds_read_after):
// it is another PostgreSQL cluster, or may be, and its read URL may be a streaming replica.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../context.ts';
import { credentialFrom } from '../auth/identity.ts';
import { formatLsn, parseLsn } from '../db/replicas.ts';
import { currentRequest, type RequestScope } from '../metrics/request-context.ts';

/** Credentials remembered at most (the oldest go first). */
const MAX_REMEMBERED = 10_000;
/** Beyond the lag limit: a serving replica was measured up to a few checks ago. */
const MARGIN_SECONDS = 5;

/** One database's read-your-writes: where its position travels, and which part of the request scope holds it. */
interface Channel {
  header: string;
  cookie: string;
  state: (scope: RequestScope) => { readAfter?: bigint | null; wroteAt?: bigint };
}

const CATALOG: Channel = { header: 'x-svc-read-after', cookie: 'svc_read_after', state: (scope) => scope };
const DATASTORE: Channel = {
  header: 'x-svc-datastore-read-after',
  cookie: 'svc_ds_read_after',
  state: (scope) => (scope.datastore ??= {}),
};

const later = (a: bigint | null, b: bigint | null) => (a === null ? b : b === null || a > b ? a : b);

export function registerReadYourWrites(app: FastifyInstance, services: Services): void {
  if (services.reads) registerChannel(app, services, CATALOG);
  if (services.datastoreReads) registerChannel(app, services, DATASTORE);
}

function registerChannel(app: FastifyInstance, services: Services, channel: Channel): void {
  const rememberSeconds = Math.ceil(services.config.get<number>('svc.database_replica_max_lag')) + MARGIN_SECONDS;
  const headerName = services.config.str('apikey_header_name');
  const remembered = new Map<string, { lsn: bigint; until: number }>();
  const credentialKey = (headers: Parameters<typeof credentialFrom>[0]) => {
    const credential = credentialFrom(headers, headerName);
    return credential ? createHash('sha256').update(credential).digest('base64url') : null;
  };
  const cookiePattern = new RegExp(`(?:^|;\\s*)${channel.cookie}=([0-9A-Fa-f]{1,8}%2F[0-9A-Fa-f]{1,8}|[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})`);

  app.addHook('onRequest', (request, _reply, done) => {
    const scope = currentRequest();
    if (scope) {
      const sent = request.headers[channel.header];
      let after = parseLsn(Array.isArray(sent) ? sent[0] : sent);
      const cookie = cookiePattern.exec(request.headers.cookie ?? '');
      if (cookie) after = later(after, parseLsn(decodeURIComponent(cookie[1])));
      const key = credentialKey(request.headers);
      const memory = key ? remembered.get(key) : undefined;
      if (memory && memory.until > Date.now()) after = later(after, memory.lsn);
      else if (memory) remembered.delete(key!);
      channel.state(scope).readAfter = after;
    }
    done();
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const scope = currentRequest();
    const wrote = scope ? channel.state(scope).wroteAt : undefined;
    if (wrote === undefined) return payload;
    const text = formatLsn(wrote);
    reply.header(channel.header, text);
    const key = credentialKey(request.headers);
    if (key) {
      remembered.delete(key);
      remembered.set(key, { lsn: wrote, until: Date.now() + rememberSeconds * 1000 });
      if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
    } else {
      reply.setCookie(channel.cookie, text, { path: '/', httpOnly: true, sameSite: 'lax', maxAge: rememberSeconds });
    }
    return payload;
  });
}
