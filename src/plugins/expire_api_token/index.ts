// expire_api_token: api_token_create takes expires_in and unit; the token stops working after that.
import { Type } from '@sinclair/typebox';
import type { Plugin } from '../plugin.ts';
import { p } from '../../validation/params.ts';
import { defineAction } from '../../actions/registry.ts';
import { oneOf } from '../../validation/validators.ts';

const UNIT_SECONDS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };
const UNIT_CODES: Record<string, string> = { '1': 'seconds', '60': 'minutes', '3600': 'hours', '86400': 'days' };
const UNITS = Object.keys(UNIT_SECONDS);

export const expireApiTokenPlugin: Plugin = {
  name: 'expire_api_token',
  setup(services) {
    const def = services.registry.get('api_token_create');
    services.registry.define(
      defineAction({
        ...def,
        description: def.description,
        params: {
          ...def.params,
          expires_in: p.positive('(expire_api_token) the token expires after this many units'),
          // CKAN sends the unit as a number of seconds (1, 60, 3600, 86400); names are accepted too.
          unit: p
            .custom<string>(
              '(expire_api_token) seconds, minutes, hours or days (or 1, 60, 3600, 86400)',
              [(v: unknown) => UNIT_CODES[String(v)] ?? v, oneOf(UNITS)],
              Type.Union([...UNITS.map((u) => Type.Literal(u)), ...Object.keys(UNIT_CODES).map((c) => Type.Literal(Number(c)))]),
            )
            .default('days'),
        },
        handler: (ctx, params) => {
          const expiresAt = params.expires_in ? new Date(Date.now() + params.expires_in * UNIT_SECONDS[params.unit] * 1000) : undefined;
          return def.handler(ctx, expiresAt ? { ...params, expires_at: expiresAt } : params);
        },
      }),
    );
  },
};
