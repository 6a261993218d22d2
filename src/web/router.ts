// How a web page runs: the visitor's identity (session cookie), the CSRF check of every form post,
// actions called in-process with that identity, and errors shown as pages in the site's layout.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Identity, Services, UploadedFile } from '../context.ts';
import type { UserRow } from '../model/users.ts';
import { callAction, callerMay } from '../actions/registry.ts';
import { ActionError, AuthorizationError, BadRequestError, NotFoundError, ValidationError } from '../errors.ts';
import { CSRF_COOKIE, CSRF_FIELD, SESSION_COOKIE, csrfToken, csrfTokenMatches, newCookieValue } from '../auth/sessions.ts';
import { uploadTmpDir } from '../files/storage.ts';
import type { Renderer } from './render.ts';
import { translator, type Translate } from './i18n.ts';
import { siteVariables } from './site.ts';
import { fromThisSite } from './security.ts';
import { siteUrl } from '../config/site-url.ts';
import { feedHeadLinks } from './head-links.ts';
import { LOCALE_COOKIE, localeLinks, offeredLocales, pageLocale, prefixLinks, withLocalePrefix } from './locale.ts';

export interface FormData {
  data: Record<string, unknown>;
  files: Record<string, UploadedFile>;
}

/** What the http layer lends the pages (the web layer does not reach into it). */
export interface WebDeps {
  services: Services;
  requestData: (request: FastifyRequest, opts: { sideEffectFree: boolean; maxFileBytes: number; tmpDir?: string }) => Promise<FormData>;
  requestIdentity: (services: Services, request: FastifyRequest) => Promise<Identity>;
  discardFiles: (files: Record<string, UploadedFile>) => void;
  /** An error met before a page ran (an unreadable body, a bad address) as the error the pages show. */
  requestError: (error: unknown) => ActionError;
}

export interface Flash {
  kind: 'success' | 'error' | 'info';
  text: string;
}

export interface WebContext {
  services: Services;
  request: FastifyRequest;
  reply: FastifyReply;
  identity: Identity;
  user: UserRow | null;
  t: Translate;
  /** The page's locale (fr, de, ...: see locale.ts); t speaks it. */
  locale: string;
  /** Route parameters. */
  params: Record<string, string>;
  /** The dataset type whose pages these are ('dataset', or a custom schema's type at /<type>). */
  datasetType: string;
  /** The query string; repeated keys are lists. */
  query: Record<string, string | string[]>;
  /** A form post's fields (CSRF already checked) and uploaded files. */
  form: Record<string, unknown>;
  files: Record<string, UploadedFile>;
  csrfToken: string;
  /** Calls an action as the visitor. */
  call<T = any>(action: string, data?: Record<string, unknown>): Promise<T>;
  /** Whether the visitor passes an auth function (to show or hide a button). */
  may(authName: string, params?: Record<string, unknown>): Promise<boolean>;
  render(template: string, vars?: Record<string, unknown>, status?: number): FastifyReply;
  redirect(url: string, flash?: Flash): FastifyReply;
  setCookie(name: string, value: string, maxAgeSeconds?: number): void;
  clearCookie(name: string): void;
}

export type PageHandler = (ctx: WebContext) => Promise<FastifyReply | undefined>;

export interface WebRouter {
  /** A Fastify handler running a page (for handlers Fastify calls itself, such as not-found). */
  handler(page: PageHandler): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  get(url: string, handler: PageHandler): void;
  post(url: string, handler: PageHandler, opts?: { upload?: boolean }): void;
  services: Services;
}

const FLASH_COOKIE = 'svc_flash';

/** Values one query parameter of a page may repeat (facet filters); more is a 400 page, not a slow search. */
export const MAX_REPEATED_VALUES = 100;

/** The query string: repeated keys are lists; a key repeated too often is named in the error. */
function queryValues(raw: string): { query: Record<string, string | string[]>; tooMany?: string } {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    // Own properties only: a key such as __proto__ is a parameter like any other, never the prototype.
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    if (prev === undefined) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else if (!Array.isArray(prev)) out[k] = [prev, v];
    else if (prev.length < MAX_REPEATED_VALUES) prev.push(v);
    else return { query: {}, tooMany: k };
  }
  return { query: out };
}

/** A came_from address that stays on this site. */
export function localPath(value: unknown, fallback = '/'): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : fallback;
}

export function createWebRouter(app: FastifyInstance, deps: WebDeps, render: Renderer): WebRouter {
  const { services } = deps;
  // Secure when the site is https, or the request came over https (as a trusted proxy reports it).
  const cookieOptions = (request: FastifyRequest) => ({
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: services.config.str('svc.site_url').startsWith('https:') || request.protocol === 'https',
  });

  async function run(request: FastifyRequest, reply: FastifyReply, handler: PageHandler, post: boolean): Promise<FastifyReply> {
    const offered = offeredLocales(services.config);
    const chosen = pageLocale(services.config, request.originalUrl, request.cookies[LOCALE_COOKIE], request.headers['accept-language']);
    if (request.method === 'GET' && chosen.fromAddress) {
      // A prefix is the visitor's choice: remembered for addresses without one.
      if (request.cookies[LOCALE_COOKIE] !== chosen.fromAddress)
        reply.setCookie(LOCALE_COOKIE, chosen.fromAddress, { ...cookieOptions(request), maxAge: 365 * 24 * 3600 });
      // The default locale has no prefix of its own.
      if (!chosen.prefix) return reply.code(303).header('location', localPath(request.url)).send();
    }
    if (!chosen.fromAddress) reply.header('vary', 'Accept-Language, Cookie');
    const t = translator(chosen.locale);
    let identity: Identity;
    try {
      identity = await deps.requestIdentity(services, request);
    } catch {
      identity = { user: null, sysadmin: false }; // a bad Authorization header on a page: treat as a visitor
    }
    const session = request.cookies[SESSION_COOKIE];
    let anonymousBasis = request.cookies[CSRF_COOKIE];
    if (!identity.user && !anonymousBasis) {
      anonymousBasis = newCookieValue();
      reply.setCookie(CSRF_COOKIE, anonymousBasis, cookieOptions(request));
    }
    const basis = identity.user && session ? session : anonymousBasis!;
    const token = await csrfToken(services.db, services.config, basis);
    let flash: Flash | undefined;
    if (request.cookies[FLASH_COOKIE]) {
      try {
        flash = JSON.parse(request.cookies[FLASH_COOKIE]!);
      } catch {}
      reply.clearCookie(FLASH_COOKIE, { path: '/' });
    }
    const [pathPart, rawQuery = ''] = request.url.split('?');
    const { query, tooMany } = queryValues(rawQuery);
    const ctx: WebContext = {
      services,
      request,
      reply,
      identity,
      user: identity.user,
      t,
      locale: chosen.locale,
      params: (request.params ?? {}) as Record<string, string>,
      datasetType: 'dataset',
      query,
      form: {},
      files: {},
      csrfToken: token,
      call: (action, data = {}) =>
        callAction(services, action, data, {
          identity,
          files: ctx.files,
          request: { method: request.method, path: pathPart, query: rawQuery },
          web: true,
        }) as Promise<any>,
      may: (authName, params = {}) => callerMay(services, identity, authName, params),
      render(template, vars = {}, status = 200) {
        const base = siteUrl(services.config);
        // The switcher keeps the query; the alternates for search engines name the page (the default's without prefix).
        const languages = localeLinks(offered, chosen.locale, request.url);
        const html = render(template, {
          ...siteVariables(services.config, t),
          locale: chosen.locale,
          locale_default: offered[0],
          languages,
          alternates: localeLinks(offered, chosen.locale, pathPart!).map((l) => ({
            lang: l.lang,
            href: `${base}${l.locale === offered[0] ? pathPart : l.href}`,
          })),
          alternate_default: `${base}${pathPart}`,
          feed_links: status === 200 ? feedHeadLinks(base, pathPart!, query, t) : [],
          user: identity.user,
          sysadmin: identity.sysadmin,
          csrf_token: token,
          csrf_field: CSRF_FIELD,
          current_path: pathPart,
          current_url: request.url,
          flash,
          t,
          ...vars,
        });
        return reply
          .code(status)
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(prefixLinks(html, chosen.prefix, offered));
      },
      redirect(url, message) {
        if (message) reply.setCookie(FLASH_COOKIE, JSON.stringify(message), { ...cookieOptions(request), maxAge: 60 });
        return reply
          .code(303)
          .header('location', withLocalePrefix(url, chosen.prefix, offered))
          .send();
      },
      setCookie: (name, value, maxAge) => reply.setCookie(name, value, { ...cookieOptions(request), ...(maxAge ? { maxAge } : {}) }),
      clearCookie: (name) => reply.clearCookie(name, { path: '/' }),
    };
    try {
      if (tooMany !== undefined) {
        const message = t('error.too_many_values', { name: tooMany, max: MAX_REPEATED_VALUES });
        return ctx.render('errors/error.njk', { status: 400, title: t('error.400.title'), message }, 400);
      }
      if (post) {
        const headers = {
          origin: request.headers.origin,
          referer: request.headers.referer,
          'sec-fetch-site': request.headers['sec-fetch-site'] as string | undefined,
        };
        if (!fromThisSite(headers, siteUrl(services.config), { protocol: request.protocol, host: request.host })) {
          return ctx.render('errors/error.njk', { status: 403, title: t('error.csrf.title'), message: t('error.cross_site.text') }, 403);
        }
        const parsed = await deps.requestData(request, {
          sideEffectFree: false,
          maxFileBytes: services.config.int('svc.max_resource_size') * 1024 * 1024,
          tmpDir: uploadTmpDir(services.config),
        });
        ctx.form = parsed.data;
        ctx.files = parsed.files;
        if (!(await csrfTokenMatches(services.db, services.config, basis, ctx.form[CSRF_FIELD]))) {
          return ctx.render('errors/error.njk', { status: 403, title: t('error.csrf.title'), message: t('error.csrf.text') }, 403);
        }
        delete ctx.form[CSRF_FIELD];
      }
      const result = await handler(ctx);
      return result ?? reply;
    } catch (e) {
      return errorPage(ctx, e);
    } finally {
      deps.discardFiles(ctx.files);
    }
  }

  function errorPage(ctx: WebContext, e: unknown): FastifyReply {
    const { t } = ctx;
    if (e instanceof NotFoundError)
      return ctx.render('errors/error.njk', { status: 404, title: t('error.404.title'), message: t('error.404.text') }, 404);
    if (e instanceof AuthorizationError) {
      if (!ctx.user && ctx.request.method === 'GET') return ctx.redirect(`/user/login?came_from=${encodeURIComponent(ctx.request.url)}`);
      return ctx.render('errors/error.njk', { status: 403, title: t('error.403.title'), message: t('error.403.text') }, 403);
    }
    if (e instanceof ValidationError || e instanceof ActionError) {
      const err = e as ActionError;
      // A malformed request keeps its status (413, 415, ...); other refusals are a 400 page.
      const status = err.status >= 500 ? 500 : e instanceof BadRequestError ? err.status : 400;
      return ctx.render('errors/error.njk', { status: err.status, title: t('error.400.title'), message: err.message }, status);
    }
    services.logger.error({ err: e, url: ctx.request.url }, 'web page failed');
    return ctx.render('errors/error.njk', { status: 500, title: t('error.500.title'), message: t('error.500.text') }, 500);
  }

  return {
    services,
    handler: (page) => (request, reply) => run(request, reply, page, false),
    get(url, handler) {
      app.get(url, (request, reply) => run(request, reply, handler, false));
    },
    post(url, handler) {
      app.post(url, (request, reply) => run(request, reply, handler, true));
    },
  };
}
