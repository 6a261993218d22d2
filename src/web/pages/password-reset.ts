// Password reset by e-mail: a request form that answers the same whether the account exists or not,
// and the form behind the mailed link. Off (with a page that says so) when no SMTP server is set.
import type { WebRouter } from '../router.ts';
import { createResetKey, resetPassword, resetTarget, userOfResetKey } from '../../auth/password-reset.ts';
import { passwordProblem } from '../../auth/passwords.ts';
import { mailConfigured, sendMail } from '../../mail/send.ts';
import { siteUrl } from '../../config/site-url.ts';
import { field } from './manage-forms.ts';

export function passwordResetPages(web: WebRouter): void {
  const { services } = web;

  web.get('/user/reset', async (ctx) => ctx.render('people/reset-request.njk', { available: mailConfigured(services.config) }));

  web.post('/user/reset', async (ctx) => {
    if (!mailConfigured(services.config)) return ctx.render('people/reset-request.njk', { available: false }, 400);
    const login = field(ctx.form, 'login').trim();
    const user = login ? await resetTarget(services.db, login) : undefined;
    if (user) {
      const key = await createResetKey(services.db, services.config, user);
      const link = `${siteUrl(services.config)}/user/reset/${encodeURIComponent(user.id)}?key=${encodeURIComponent(key)}`;
      try {
        await sendMail(services.config, {
          to: user.email!,
          subject: ctx.t('reset.mail.subject', { site: services.config.str('svc.site_title') }),
          text: ctx.t('reset.mail.text', { name: user.fullname || user.name, site: services.config.str('svc.site_title'), link }),
        });
      } catch (e) {
        services.logger.error({ err: e }, 'password reset mail not sent');
        return ctx.render('people/reset-request.njk', { available: true, error: ctx.t('reset.mail_failed') }, 500);
      }
    }
    // The same answer whether the account exists or not.
    return ctx.redirect('/user/login', { kind: 'info', text: ctx.t('reset.sent') });
  });

  web.get('/user/reset/:id', async (ctx) => {
    const user = await userOfResetKey(services.db, ctx.params.id, ctx.query.key);
    if (!user) return ctx.render('people/reset-form.njk', { invalid: true }, 400);
    return ctx.render('people/reset-form.njk', { id: user.id, key: ctx.query.key });
  });

  web.post('/user/reset/:id', async (ctx) => {
    const key = field(ctx.form, 'key');
    const user = await userOfResetKey(services.db, ctx.params.id, key);
    if (!user) return ctx.render('people/reset-form.njk', { invalid: true }, 400);
    const password = field(ctx.form, 'password1');
    const problem = password !== field(ctx.form, 'password2') ? ctx.t('register.passwords_differ') : passwordProblem(password);
    if (problem) return ctx.render('people/reset-form.njk', { id: user.id, key, errors: { password1: [problem] } }, 400);
    await resetPassword(services.db, user, password);
    return ctx.redirect('/user/login', { kind: 'success', text: ctx.t('reset.done') });
  });
}
