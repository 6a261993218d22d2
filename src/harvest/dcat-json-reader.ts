// A `data.json` catalog (Project Open Data v1.1, DCAT-US) as a harvest source: one document, each
// dataset object by its identifier. Objects whose accessLevel is non-public are skipped (not
// errors: the publisher lists them on purpose, and a dataset that becomes non-public is deleted
// here like one that disappeared). A DCAT-US 3 document written as JSON-LD (@context and @graph)
// is read as RDF with the dcat_us_3 profile.
import { isPublicDataJson, mapDataJsonDataset } from './dcat-json.ts';
import { dcatRdfReader } from './dcat-reader.ts';
import { isoTime, recallGuids, rememberGuids, stableJson } from './records.ts';
import type { HarvestSourceSpec, ReadOptions, RemoteDataset, SourceReader } from './types.ts';
import { HarvestSourceError } from './types.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

type Document = { kind: 'pod'; datasets: Json[] } | { kind: 'jsonld' };

async function readDocument(source: HarvestSourceSpec, options: Omit<ReadOptions, 'since'>): Promise<Document> {
  const res = await options.fetch(source.url, { accept: 'application/json, application/ld+json;q=0.9, */*;q=0.1', signal: options.signal });
  if (res.status < 200 || res.status >= 300) throw new HarvestSourceError(`${source.url} answered HTTP ${res.status}`, res.status);
  let doc: unknown;
  try {
    doc = JSON.parse(res.text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new HarvestSourceError(`${res.url} is not a JSON document: ${(e as Error).message}`);
  }
  if (Array.isArray(doc)) return { kind: 'pod', datasets: doc.filter(isObject) };
  if (isObject(doc) && Array.isArray(doc.dataset)) return { kind: 'pod', datasets: doc.dataset.filter(isObject) };
  if (isObject(doc) && ('@graph' in doc || '@context' in doc)) return { kind: 'jsonld' };
  throw new HarvestSourceError(`${res.url} is not a data.json catalog: it has no "dataset" list`);
}

function asJsonLd(source: HarvestSourceSpec): HarvestSourceSpec {
  const profiles = Array.isArray(source.config.profiles) && source.config.profiles.length ? source.config.profiles : ['dcat_us_3'];
  return { ...source, config: { ...source.config, rdf_format: 'jsonld', profiles } };
}

function identifierOf(d: Json): string | undefined {
  const id = d.identifier ?? d['@id'];
  return typeof id === 'string' && id.trim() ? id.trim() : undefined;
}

/** One data.json dataset object as a remote record (an error record when it cannot be imported). */
export function dataJsonRecord(d: Json, position: number): RemoteDataset {
  const content = stableJson(d);
  const guid = identifierOf(d);
  const landing = typeof d.landingPage === 'string' && /^https?:\/\//i.test(d.landingPage) ? d.landingPage : null;
  const remoteUrl = landing ?? (guid && /^https?:\/\//i.test(guid) ? guid : null);
  const modified = isoTime(d.modified);
  if (!guid)
    return { guid: `#${position + 1}`, remoteUrl, modified, content, dataset: null, error: `dataset ${position + 1} has no identifier` };
  const { dataset, organization } = mapDataJsonDataset(d);
  if (!dataset.title) return { guid, remoteUrl, modified, content, dataset: null, error: `the dataset ${guid} has no title`, organization };
  return { guid, remoteUrl, modified, content, dataset, organization };
}

export const dcatJsonReader: SourceReader = {
  async *read(source, options) {
    const doc = await readDocument(source, options);
    if (doc.kind === 'jsonld') {
      yield* dcatRdfReader.read(asJsonLd(source), options);
      return;
    }
    const seen = new Set<string>();
    const identified = new Set<string>();
    for (const [i, d] of doc.datasets.entries()) {
      if (!isPublicDataJson(d)) continue;
      const record = dataJsonRecord(d, i);
      if (seen.has(record.guid)) {
        yield {
          ...record,
          guid: `${record.guid}#${i + 1}`,
          dataset: null,
          error: `the identifier ${record.guid} is used by an earlier dataset of the catalog`,
        };
        continue;
      }
      seen.add(record.guid);
      if (identifierOf(d)) identified.add(record.guid);
      yield record;
    }
    rememberGuids(options.signal, source, identified);
  },
  async listGuids(source, options) {
    const read = recallGuids(options.signal, source);
    if (read) return read;
    const doc = await readDocument(source, options);
    if (doc.kind === 'jsonld') return dcatRdfReader.listGuids(asJsonLd(source), options);
    const guids = new Set<string>();
    for (const d of doc.datasets) {
      const id = identifierOf(d);
      if (id && isPublicDataJson(d)) guids.add(id);
    }
    return guids;
  },
};
