// dcat_parse: a DCAT document given as text -> the dataset dicts it describes (ckanext-dcat's
// RDF parser as an action), nothing stored. What a harvester would create, for a look first.
import { Type } from '@sinclair/typebox';
import { declareOption } from '../../config/options.ts';
import { defineAction } from '../../actions/registry.ts';
import { anyone } from '../../auth/rules.ts';
import { ValidationError } from '../../errors.ts';
import { DEFAULT_LICENSES } from '../../model/licenses.ts';
import { p } from '../../validation/params.ts';
import { Invalid, type Validator } from '../../validation/validate.ts';
import type { Services } from '../../actions/context.ts';
import { profileList, UnknownProfileError } from '../../dcat/profiles.ts';
import { DEFAULT_PARSE_PROFILES, NoParsingProfileError, parseDcat } from '../../dcat/parse/index.ts';
import { FORMAT_CHOICES, formatByName, RdfSyntaxError } from '../../dcat/parse/read-rdf.ts';
import type { TargetFields } from '../../dcat/parse/shape.ts';
import { dcatOption } from './settings.ts';

const MAX_SIZE_OPTION = 'svc.dcat.parse.max_size';

declareOption({
  name: MAX_SIZE_OPTION,
  type: 'int',
  default: 10,
  validate: (v: number) => (v > 0 ? undefined : 'must be a positive number'),
  description: 'Largest DCAT document dcat_parse reads, in MB (UTF-8); a larger one is a Validation Error on `data`',
});

const withinSize: Validator = (v: string, field) => {
  const mb = field.context.config.int(MAX_SIZE_OPTION) as number;
  if (Buffer.byteLength(v, 'utf8') > mb * 1024 * 1024) throw new Invalid(`Must be at most ${mb} MB (${MAX_SIZE_OPTION})`);
  return v;
};

const knownFormat: Validator = (v: string) => {
  const format = formatByName(v);
  if (!format) throw new Invalid(`Unknown format "${v.slice(0, 100)}"; one of ${FORMAT_CHOICES.join(', ')}`);
  return format;
};

/** The fields of the dataset type's schema (scheming shape), or none (legacy extras). */
function targetFields(services: Services, datasetType: string): TargetFields {
  const schema = services.scheming?.datasets.get(datasetType);
  return {
    dataset: new Set(schema?.dataset_fields.map((f) => f.field_name) ?? []),
    resource: new Set(schema?.resource_fields.map((f) => f.field_name) ?? []),
  };
}

const knownDatasetType: Validator = (v: string, field) => {
  const scheming = (field.context.services as Services).scheming;
  if (v !== 'dataset' && scheming && !scheming.datasets.has(v) && !scheming.datasetFallback)
    throw new Invalid(`Unknown dataset type "${v.slice(0, 100)}"`);
  return v;
};

export const dcatParseAction = defineAction({
  name: 'dcat_parse',
  sideEffectFree: true,
  auth: anyone,
  description:
    'Parse a DCAT document (a catalog page or one dataset, in Turtle, RDF/XML, JSON-LD, N-Triples or N3) into the dataset dicts ' +
    "it describes, with the catalog and its hydra paging; nothing is stored. DCAT fields the dataset type's schema defines are " +
    'top-level fields; the others are extras named as in ckanext-dcat (contact_name, publisher_uri, temporal_start, ...). ' +
    'Remote JSON-LD contexts are not fetched and RDF/XML with a DOCTYPE is refused.',
  params: {
    data: p.text('the document').required().maxLength(Number.POSITIVE_INFINITY).use(withinSize),
    format: p
      .string(`its format (${FORMAT_CHOICES.join(', ')} or a media type); guessed from the first characters when absent`)
      .ignoreEmpty()
      .use(knownFormat),
    profiles: p.stringList(
      `profiles to apply, comma or space separated (default svc.dcat.rdf.profiles, else ${DEFAULT_PARSE_PROFILES.join(', ')})`,
      { split: true },
    ),
    dataset_type: p
      .string('the dataset type the dicts are for: its schema decides which fields are top-level')
      .default('dataset')
      .use(knownDatasetType),
  },
  returns: {
    description: 'datasets (dataset dicts), catalog (uri, title, description, homepage, ...), next_page, total_items and paging (hydra)',
    rtype: 'dictionary',
    schema: Type.Object({
      datasets: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      catalog: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      next_page: Type.Optional(Type.String()),
      total_items: Type.Optional(Type.Integer()),
      paging: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      format: Type.String(),
    }),
  },
  handler: async (ctx, prm) => {
    const datasetType = prm.dataset_type;
    try {
      const result = await parseDcat(prm.data, {
        format: prm.format as ReturnType<typeof formatByName>,
        profiles: prm.profiles ? profileList(prm.profiles) : dcatOption<string[]>(ctx.services, 'svc.dcat.rdf.profiles'),
        profilesAreDefault: !prm.profiles,
        target: targetFields(ctx.services, datasetType),
        datasetType: datasetType === 'dataset' ? undefined : datasetType,
        licenses: DEFAULT_LICENSES,
      });
      return {
        datasets: result.datasets,
        catalog: result.catalog,
        next_page: result.nextPage,
        total_items: result.totalItems,
        paging: result.paging,
        format: result.format,
      };
    } catch (e) {
      if (e instanceof RdfSyntaxError) throw new ValidationError({ data: [`Error parsing the RDF file: ${e.message}`] });
      if (e instanceof UnknownProfileError || e instanceof NoParsingProfileError) throw new ValidationError({ profiles: [e.message] });
      throw e;
    }
  },
});
