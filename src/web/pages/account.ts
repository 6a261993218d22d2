// Signing in and out, and registering. A session starts only after a successful sign-in; the
// anonymous CSRF cookie is replaced by the session (tokens of forms made before do not carry over).
import type { WebContext, WebRouter } from '../router.ts';
import { localPath } from '../router.ts';
import { CSRF_COOKIE, SESSION_COOKIE, checkLogin, endSession, loginAccount, startSession } from '../../auth/sessions.ts';
import { signInFailed, signInSucceeded, signInWait } from '../sign-in-limits.ts';
import { ValidationError } from '../../errors.ts';

/** Starts a session for the user and sets its cookie on the response. */
export async function beginSession(ctx: WebContext, userId: string): Promise<void> {
  const raw = await startSession(ctx.services.db, ctx.services.config, userId);
  ctx.setCookie(SESSION_COOKIE, raw, ctx.services.config.int('svc.auth.session_timeout'));
}

async function signIn(ctx: WebContext, userId: string, cameFrom: string) {
  await beginSession(ctx, userId);
  ctx.clearCookie(CSRF_COOKIE);
  return ctx.redirect(cameFrom);
}

export function accountPages(web: WebRouter): void {
  web.get('/user/login', async (ctx) => {
    if (ctx.user) return ctx.redirect('/dashboard');
    return ctx.render('user/login.njk', { came_from: localPath(ctx.query.came_from, '/dashboard') });
  });

  web.post('/user/login', async (ctx) => {
    const login = String(ctx.form.login ?? '').trim();
    const password = String(ctx.form.password ?? '');
    const cameFrom = localPath(ctx.form.came_from, '/dashboard');
    if (!login || !password) return ctx.render('user/login.njk', { came_from: cameFrom, login, error: ctx.t('login.failed') }, 401);
    const found = await loginAccount(ctx.services.db, login);
    const address = ctx.request.ip;
    const waitMs = await signInWait(ctx.services.db, found.account, address);
    if (waitMs > 0) {
      const minutes = Math.ceil(waitMs / 60_000);
      ctx.reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      return ctx.render('user/login.njk', { came_from: cameFrom, login, error: ctx.t('login.too_many', { minutes }) }, 429);
    }
    const user = await checkLogin(ctx.services.db, login, password, found);
    if (!user) {
      await signInFailed(ctx.services.db, found.account, address);
      return ctx.render('user/login.njk', { came_from: cameFrom, login, error: ctx.t('login.failed') }, 401);
    }
    await signInSucceeded(ctx.services.db, found.account);
    return signIn(ctx, user.id, cameFrom);
  });

  web.post('/user/logout', async (ctx) => {
    await endSession(ctx.services.db, ctx.request.cookies[SESSION_COOKIE]);
    ctx.clearCookie(SESSION_COOKIE);
    ctx.clearCookie(CSRF_COOKIE);
    return ctx.redirect('/', { kind: 'info', text: ctx.t('logout.done') });
  });

  web.get('/user/register', async (ctx) => {
    if (!(await ctx.may('user_create')))
      return ctx.render('errors/error.njk', { status: 403, title: ctx.t('error.403.title'), message: ctx.t('register.closed') }, 403);
    return ctx.render('user/register.njk', { form: {} });
  });

  web.post('/user/register', async (ctx) => {
    const form = ctx.form;
    const errors: Record<string, string[]> = {};
    if (form.password1 !== form.password2) errors.password2 = [ctx.t('register.passwords_differ')];
    const data = { name: form.name, fullname: form.fullname, email: form.email, password: form.password1 };
    try {
      if (Object.keys(errors).length) throw new ValidationError(errors);
      const user = await ctx.call('user_create', data);
      // A sysadmin creating an account stays signed in as themselves.
      if (ctx.user)
        return ctx.redirect(`/user/${encodeURIComponent(user.name)}`, {
          kind: 'success',
          text: ctx.t('register.created', { name: user.name }),
        });
      return signIn(ctx, user.id, '/dashboard');
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const fieldErrors = { ...(e.errors as Record<string, string[]>), ...errors };
      if (fieldErrors.password) fieldErrors.password1 = fieldErrors.password;
      return ctx.render('user/register.njk', { form: { ...form, password1: '', password2: '' }, errors: fieldErrors }, 400);
    }
  });
}
