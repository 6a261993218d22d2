// license_list: the licences a dataset's license_id may name.
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from './registry.ts';
import { listOf } from './result-schemas.ts';
import { anyone } from '../auth/rules.ts';
import { DEFAULT_LICENSES, licenseListEntry } from '../model/licenses.ts';

export const licenseActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'license_list',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the list of licenses available for datasets on the site.',
    returns: {
      description: 'the licenses',
      rtype: 'list of dictionaries',
      schema: listOf(Type.Object({ id: Type.String(), title: Type.String(), url: Type.String() }, { additionalProperties: true })),
    },
    handler: () => DEFAULT_LICENSES.map(licenseListEntry),
  }),
];
