// dcat_dataset_show, dcat_catalog_show, dcat_catalog_search: the DCAT documents as action results
// (text in the given format), with ckanext-dcat's parameters.
import { Type } from '@sinclair/typebox';
import { defineAction, type ActionDefinition } from '../../actions/registry.ts';
import { anyone } from '../../auth/rules.ts';
import { profileList } from '../../dcat/profiles.ts';
import { RDF_FORMATS, type RdfFormat, rdfFormat } from '../../dcat/serialize.ts';
import { p } from '../../validation/params.ts';
import { Invalid } from '../../validation/validate.ts';
import { catalogDocument, datasetDocument } from './output.ts';

const FORMAT_NAMES = [...Object.keys(RDF_FORMATS), 'turtle', 'json-ld', 'pretty-xml', 'ntriples'];

const formatParam = () =>
  p
    .custom<RdfFormat>(
      `the RDF serialisation: ${FORMAT_NAMES.join(', ')}`,
      [
        (v: unknown) => {
          const format = typeof v === 'string' ? rdfFormat(v.trim()) : undefined;
          if (!format) throw new Invalid(`Unknown RDF format; use one of ${FORMAT_NAMES.join(', ')}`);
          return format;
        },
      ],
      Type.String(),
    )
    .default('xml');

const profilesParam = () =>
  p.custom<string[]>(
    'RDF profiles to apply, comma separated (default svc.dcat.rdf.profiles): euro_dcat_ap_3, euro_dcat_ap_2, dcat_us_3, schemaorg, croissant',
    [(v: unknown) => profileList(Array.isArray(v) ? v.map(String) : String(v))],
    Type.Union([Type.String(), Type.Array(Type.String())]),
  );

const catalogParams = {
  format: formatParam(),
  page: p.positive('the page of the catalog, from 1 (svc.dcat.datasets_per_page datasets each)').default(1),
  modified_since: p.datetime('only datasets modified since this ISO 8601 date or time'),
  q: p.text('a search query (package_search q)').ignoreEmpty(),
  fq: p.text('a filter query (package_search fq)').ignoreEmpty(),
  profiles: profilesParam(),
};

const textResult = { description: 'the RDF document as text', rtype: 'string', schema: Type.String() };

const catalogHandler = (ctx: Parameters<typeof catalogDocument>[0], prm: Record<string, any>) =>
  catalogDocument(ctx, prm.format, { page: prm.page, modified_since: prm.modified_since, q: prm.q, fq: prm.fq, profiles: prm.profiles });

export const dcatActions: ActionDefinition<any, any>[] = [
  defineAction({
    name: 'dcat_dataset_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return a dataset as a DCAT RDF document (the dataset must be readable by the caller, as package_show).',
    params: {
      id: p.string('the id or name of the dataset').required(),
      format: formatParam(),
      profiles: profilesParam(),
    },
    returns: textResult,
    handler: (ctx, prm) => datasetDocument(ctx, prm.id, prm.format, prm.profiles),
  }),
  defineAction({
    name: 'dcat_catalog_show',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return one page of the catalog (public datasets, newest first) as a DCAT RDF document with hydra paging.',
    params: catalogParams,
    returns: textResult,
    handler: catalogHandler,
  }),
  defineAction({
    name: 'dcat_catalog_search',
    sideEffectFree: true,
    auth: anyone,
    description: 'Return the catalog datasets matching q and fq, one page, as a DCAT RDF document with hydra paging.',
    params: catalogParams,
    returns: textResult,
    handler: catalogHandler,
  }),
];
