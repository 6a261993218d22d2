// Croissant 1.0 (https://docs.mlcommons.org/croissant/docs/croissant-spec.html) of a dataset dict
// as a JSON-LD object: the schema.org Dataset properties, each resource a cr:FileObject, and each
// data store table a cr:RecordSet whose cr:Fields are typed from its data dictionary and read
// from the table's CSV dump. Pure: the caller gives the tables (datastore_info of each resource).
import type { DatastoreField } from '../datastore/backend.ts';
import { type Dict, fieldText, fieldValue, isHttpUrl, listOf, textOf } from './dataset-values.ts';
import { type DatasetAddress, absoluteUrl, compact, datasetProperties, plainDescription } from './schema-org.ts';

export const CROISSANT_CONFORMS_TO = 'http://mlcommons.org/croissant/1.0';

/** The context every Croissant 1.0 document carries (the specification's term list). */
export const CROISSANT_CONTEXT = {
  '@vocab': 'https://schema.org/',
  sc: 'https://schema.org/',
  cr: 'http://mlcommons.org/croissant/',
  rai: 'http://mlcommons.org/croissant/RAI/',
  dct: 'http://purl.org/dc/terms/',
  citeAs: 'cr:citeAs',
  column: 'cr:column',
  conformsTo: 'dct:conformsTo',
  data: { '@id': 'cr:data', '@type': '@json' },
  dataType: { '@id': 'cr:dataType', '@type': '@vocab' },
  examples: { '@id': 'cr:examples', '@type': '@json' },
  extract: 'cr:extract',
  field: 'cr:field',
  fileProperty: 'cr:fileProperty',
  fileObject: 'cr:fileObject',
  fileSet: 'cr:fileSet',
  format: 'cr:format',
  includes: 'cr:includes',
  isLiveDataset: 'cr:isLiveDataset',
  jsonPath: 'cr:jsonPath',
  key: 'cr:key',
  md5: 'cr:md5',
  parentField: 'cr:parentField',
  path: 'cr:path',
  recordSet: 'cr:recordSet',
  references: 'cr:references',
  regex: 'cr:regex',
  repeated: 'cr:repeated',
  replace: 'cr:replace',
  separator: 'cr:separator',
  source: 'cr:source',
  subField: 'cr:subField',
  transform: 'cr:transform',
} as const;

/** A data store table of one of the dataset's resources, with its data dictionary. */
export interface DatastoreTable {
  resourceId: string;
  fields: DatastoreField[];
}

/** Croissant data types (schema.org classes) of the PostgreSQL types the data store reports. */
const DATA_TYPES: Record<string, string> = {
  int2: 'sc:Integer',
  int4: 'sc:Integer',
  int8: 'sc:Integer',
  int: 'sc:Integer',
  integer: 'sc:Integer',
  bigint: 'sc:Integer',
  smallint: 'sc:Integer',
  float4: 'sc:Float',
  float8: 'sc:Float',
  float: 'sc:Float',
  real: 'sc:Float',
  'double precision': 'sc:Float',
  numeric: 'sc:Float',
  decimal: 'sc:Float',
  money: 'sc:Float',
  bool: 'sc:Boolean',
  boolean: 'sc:Boolean',
  date: 'sc:Date',
  timestamp: 'sc:DateTime',
  timestamptz: 'sc:DateTime',
  time: 'sc:Time',
  timetz: 'sc:Time',
};

/** The Croissant data type of a column type; arrays (`_int4`, `int4[]`) are repeated values of their element type. */
export function croissantDataType(pgType: string): { dataType: string; repeated: boolean } {
  const t = pgType.trim().toLowerCase();
  const element = t.startsWith('_') ? t.slice(1) : t.endsWith('[]') ? t.slice(0, -2) : t;
  return { dataType: DATA_TYPES[element] ?? 'sc:Text', repeated: element !== t };
}

/** The checksum property of a resource's hash: 32 hex digits are MD5, 64 are SHA-256. */
function checksum(hash: unknown): Dict {
  const value = textOf(hash)
    ?.replace(/^(md5|sha-?256):/i, '')
    .toLowerCase();
  if (value && /^[0-9a-f]{64}$/.test(value)) return { sha256: value };
  if (value && /^[0-9a-f]{32}$/.test(value)) return { md5: value };
  return {};
}

function fileObject(r: Dict, address: DatasetAddress): Dict | undefined {
  const contentUrl = absoluteUrl(r.download_url, address.site.url) ?? absoluteUrl(r.url, address.site.url);
  if (!contentUrl || !r.id) return undefined;
  return compact({
    '@type': 'cr:FileObject',
    '@id': `${address.datasetUrl}/resource/${r.id}`,
    name: textOf(r.name) ?? r.id,
    description: plainDescription(r.description, 500),
    contentUrl,
    encodingFormat: textOf(r.mimetype) ?? textOf(r.format) ?? 'application/octet-stream',
    contentSize: typeof r.size === 'number' ? String(r.size) : undefined,
    ...checksum(r.hash),
  });
}

/** The data store table of a resource as a CSV file (its dump) and the record set read from it. */
function tableNodes(table: DatastoreTable, resource: Dict | undefined, address: DatasetAddress): { file: Dict; recordSet: Dict } {
  const { site, datasetUrl } = address;
  const dumpUrl = `${site.url}/datastore/dump/${encodeURIComponent(table.resourceId)}`;
  const label = textOf(resource?.name) ?? table.resourceId;
  const file = {
    '@type': 'cr:FileObject',
    '@id': dumpUrl,
    name: `${label} (data store table, CSV)`,
    contentUrl: dumpUrl,
    encodingFormat: 'text/csv',
  };
  const setId = `${datasetUrl}/resource/${table.resourceId}/records`;
  const fields = table.fields.map((f) => {
    const { dataType, repeated } = croissantDataType(f.type);
    const info = f.info ?? {};
    return compact({
      '@type': 'cr:Field',
      '@id': `${setId}/${encodeURIComponent(f.id)}`,
      name: f.id,
      description: textOf(info.notes) ?? textOf(info.label),
      dataType,
      repeated: repeated || undefined,
      source: { fileObject: { '@id': dumpUrl }, extract: { column: f.id } },
    });
  });
  const keys = table.fields.filter((f) => f.schema?.uniquekey).map((f) => ({ '@id': `${setId}/${encodeURIComponent(f.id)}` }));
  const recordSet = compact({
    '@type': 'cr:RecordSet',
    '@id': setId,
    name: label,
    description: plainDescription(resource?.description, 500),
    key: keys.length === 1 ? keys[0] : keys,
    field: fields,
  });
  return { file, recordSet };
}

function liveFlag(value: unknown): boolean | undefined {
  const text = textOf(value)?.toLowerCase();
  if (text === undefined) return undefined;
  if (['true', 'yes', 'on', '1'].includes(text)) return true;
  if (['false', 'no', 'off', '0'].includes(text)) return false;
  return undefined;
}

/** The Croissant 1.0 description of a dataset; `tables` are the data store tables of its resources. */
export function croissantDataset(pkg: Dict, address: DatasetAddress, tables: DatastoreTable[] = []): Dict {
  const resources = (pkg.resources ?? []) as Dict[];
  const byId = new Map(resources.map((r) => [r.id, r]));
  const files = resources.map((r) => fileObject(r, address)).filter((f): f is Dict => !!f);
  const sets = tables.filter((t) => t.fields.length > 0).map((t) => tableNodes(t, byId.get(t.resourceId), address));
  const common = datasetProperties(pkg, address);
  return {
    '@context': CROISSANT_CONTEXT,
    '@type': 'sc:Dataset',
    conformsTo: CROISSANT_CONFORMS_TO,
    ...common,
    ...compact({
      citeAs: fieldText(pkg, 'cite_as'),
      sdLicense: fieldText(pkg, 'structured_data_license'),
      isLiveDataset: liveFlag(fieldValue(pkg, 'is_live_dataset')),
      sameAs: listOf(fieldValue(pkg, 'same_as')).filter(isHttpUrl),
      distribution: [...files, ...sets.map((s) => s.file)],
      recordSet: sets.map((s) => s.recordSet),
    }),
  };
}
