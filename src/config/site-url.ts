import type { Config } from './load.ts';

/** The public base URL: svc.site_url, else http://HOST:PORT. No trailing slash. */
export function siteUrl(config: Config): string {
  const configured = config.str('svc.site_url');
  if (configured) return configured.replace(/\/+$/, '');
  return `http://${config.str('svc.host')}:${config.int('svc.port')}`;
}
