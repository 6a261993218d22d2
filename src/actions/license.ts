// license_list: the licences a dataset's license_id may name.
import type { ActionDefinition } from './registry.ts';
import { anyone } from '../auth/rules.ts';
import { DEFAULT_LICENSES, licenseListEntry } from '../model/licenses.ts';

export const licenseActions: ActionDefinition<any, any>[] = [
  {
    name: 'license_list',
    sideEffectFree: true,
    auth: anyone,
    help: 'Return the list of licenses available for datasets on the site.\n\n:rtype: list of dictionaries',
    handler: () => DEFAULT_LICENSES.map(licenseListEntry),
  },
];
