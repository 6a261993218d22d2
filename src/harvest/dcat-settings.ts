// How a DCAT source's documents become dataset dicts on this site: as dcat_parse does it, with the
// site's default profiles, the dataset type's schema fields and the licence register.
import type { Services } from '../actions/context.ts';
import { optionDeclaration } from '../config/options.ts';
import { DEFAULT_LICENSES } from '../model/licenses.ts';
import { dcatOption } from '../plugins/dcat/settings.ts';
import type { ReadOptions } from './types.ts';

/** ReadOptions.dcat for this site (a source's config.profiles still wins over the profiles). */
export function dcatReadSettings(services: Services, datasetType = 'dataset'): NonNullable<ReadOptions['dcat']> {
  const schema = services.scheming?.datasets.get(datasetType);
  const profiles = optionDeclaration('svc.dcat.rdf.profiles') ? dcatOption<string[]>(services, 'svc.dcat.rdf.profiles') : undefined;
  return {
    profiles: profiles?.length ? profiles : undefined,
    licenses: DEFAULT_LICENSES,
    target: {
      dataset: new Set(schema?.dataset_fields.map((f) => f.field_name) ?? []),
      resource: new Set(schema?.resource_fields.map((f) => f.field_name) ?? []),
    },
    datasetType: datasetType === 'dataset' ? undefined : datasetType,
  };
}
