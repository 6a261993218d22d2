// The site-wide variables of every page, from the runtime configuration (config_option_update
// changes them without a restart).
import type { Config } from '../config/load.ts';
import type { Translate } from './i18n.ts';

const DEFAULT_LOGO = '/base/images/svc-logo.png';

export function siteVariables(config: Config, t: Translate): Record<string, unknown> {
  const logo = config.str('svc.site_logo');
  return {
    site: {
      title: config.str('svc.site_title') || t('site.default_title'),
      description: config.str('svc.site_description'),
      // The configured default names CKAN's logo path; svc ships its own picture for it.
      logo: logo && logo !== DEFAULT_LOGO ? logo : null,
      about: config.str('svc.site_about'),
      intro: config.str('svc.site_intro_text'),
      has_custom_css: !!config.str('svc.site_custom_css'),
      url: config.str('svc.site_url'),
      create_user_via_web: config.bool('svc.auth.create_user_via_web'),
    },
  };
}
