// expire_api_token: api_token_create takes expires_in and unit; the token stops working after that.
import type { Plugin } from '../plugin.ts';
import { defaultValue, ignoreMissing, oneOf, positiveInteger } from '../../validation/validators.ts';

const UNIT_SECONDS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };
const UNIT_CODES: Record<string, string> = { '1': 'seconds', '60': 'minutes', '3600': 'hours', '86400': 'days' };

export const expireApiTokenPlugin: Plugin = {
  name: 'expire_api_token',
  setup(services) {
    const def = services.registry.get('api_token_create');
    services.registry.define({
      ...def,
      schema: {
        ...def.schema,
        expires_in: [ignoreMissing, positiveInteger],
        // CKAN sends the unit as a number of seconds (1, 60, 3600, 86400); names are accepted too.
        unit: [defaultValue('days'), (v: unknown) => UNIT_CODES[String(v)] ?? v, oneOf(Object.keys(UNIT_SECONDS))],
      },
      help: def.help + '\n:param expires_in: (expire_api_token) the token expires after this many units (optional)\n:param unit: seconds, minutes, hours or days (default days)',
      handler: (ctx, p: Record<string, any>) => {
        if (p.expires_in) p.expires_at = new Date(Date.now() + p.expires_in * UNIT_SECONDS[p.unit] * 1000);
        return def.handler(ctx, p);
      },
    });
  },
};
