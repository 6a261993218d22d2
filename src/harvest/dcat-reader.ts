// A DCAT RDF catalog (Turtle, RDF/XML, JSON-LD, N-Triples) as a harvest source: the catalog's
// document, then each next page its hydra paging names (each page once, a bounded number), every
// dcat:Dataset parsed by the site's DCAT profiles into a dataset dict. A catalog cannot be asked
// for its changes only: every run reads it whole, and the run compares contents.
import { createHash } from 'node:crypto';
import { parseDcat, NoParsingProfileError, type ParseResult } from '../dcat/parse/index.ts';
import { formatByName, RdfSyntaxError, type RdfFormat } from '../dcat/parse/read-rdf.ts';
import { UnknownProfileError } from '../dcat/profiles.ts';
import { DEFAULT_LICENSES } from '../model/licenses.ts';
import { isoTime, recallGuids, rememberGuids, stableJson, textOf } from './records.ts';
import type { HarvestSourceSpec, ReadOptions, RemoteDataset, SourceReader } from './types.ts';
import { HarvestSourceError } from './types.ts';

/** Pages followed at most in one run: a catalog that pages on past this is not read to its end. */
export const MAX_DCAT_PAGES = 5000;

const ACCEPT = 'text/turtle, application/rdf+xml;q=0.9, application/ld+json;q=0.9, application/n-triples;q=0.8, text/n3;q=0.5, */*;q=0.1';

/** The document's format: what the server says it is, else the source's rdf_format, else guessed. */
function formatOf(contentType: string | null, source: HarvestSourceSpec): RdfFormat | undefined {
  const declared = contentType ? formatByName(contentType) : undefined;
  if (declared) return declared;
  const configured = typeof source.config.rdf_format === 'string' ? source.config.rdf_format : '';
  return configured ? formatByName(configured) : undefined;
}

async function readPage(url: string, source: HarvestSourceSpec, options: Omit<ReadOptions, 'since'>): Promise<ParseResult> {
  const res = await options.fetch(url, { accept: ACCEPT, signal: options.signal });
  if (res.status < 200 || res.status >= 300) throw new HarvestSourceError(`${url} answered HTTP ${res.status}`, res.status);
  const configured = Array.isArray(source.config.profiles) && source.config.profiles.length ? source.config.profiles : null;
  try {
    return await parseDcat(res.text, {
      format: formatOf(res.contentType, source),
      baseIRI: res.url,
      licenses: options.dcat?.licenses ?? DEFAULT_LICENSES,
      target: options.dcat?.target,
      datasetType: options.dcat?.datasetType,
      language: options.dcat?.language,
      profiles: configured ?? options.dcat?.profiles,
      profilesAreDefault: !configured,
    });
  } catch (e) {
    if (e instanceof RdfSyntaxError) throw new HarvestSourceError(`${res.url} is not a DCAT document that can be read: ${e.message}`);
    if (e instanceof UnknownProfileError || e instanceof NoParsingProfileError)
      throw new HarvestSourceError(`the source's profiles cannot read DCAT: ${e.message}`);
    // Whatever else stops the mapping of a page stops the job, with the page named.
    throw new HarvestSourceError(`the DCAT datasets of ${res.url} could not be read: ${(e as Error).message}`);
  }
}

/** The pages of a catalog in order, each parsed; a page seen before ends the walk. */
async function* catalogPages(source: HarvestSourceSpec, options: Omit<ReadOptions, 'since'>): AsyncGenerator<ParseResult> {
  const visited = new Set<string>();
  let url: string | undefined = source.url;
  while (url && !visited.has(url)) {
    if (visited.size >= MAX_DCAT_PAGES)
      throw new HarvestSourceError(`${source.url} has more than ${MAX_DCAT_PAGES} pages: the catalog was not read to its end`);
    options.signal.throwIfAborted();
    visited.add(url);
    const page = await readPage(url, source, options);
    yield page;
    let next: string | undefined;
    try {
      next = page.nextPage ? new URL(page.nextPage, url).href : undefined;
    } catch {
      throw new HarvestSourceError(`${url} names a next page that is not a URL: ${page.nextPage}`);
    }
    url = next;
  }
}

/** One parsed dataset as a remote record: its identity, where it is seen, and what can be imported. */
export function dcatRecord(dataset: Record<string, unknown>): RemoteDataset {
  const uri = textOf(dataset, 'uri');
  const identifier = textOf(dataset, 'identifier');
  const content = stableJson(dataset);
  const landingPage = typeof dataset.url === 'string' && /^https?:\/\//i.test(dataset.url) ? dataset.url : undefined;
  const guid = uri ?? identifier;
  const remoteUrl = landingPage ?? (uri && /^https?:\/\//i.test(uri) ? uri : null);
  const modified = isoTime(textOf(dataset, 'modified')) ?? isoTime(textOf(dataset, 'issued'));
  if (!guid) {
    return {
      guid: `sha256:${createHash('sha256').update(content).digest('hex')}`,
      remoteUrl,
      modified,
      content,
      dataset: null,
      error: 'the dataset has neither a URI nor a dct:identifier: it cannot be followed from one run to the next',
    };
  }
  if (!textOf(dataset, 'title'))
    return { guid, remoteUrl, modified, content, dataset: null, error: `the dataset ${guid} has no dct:title` };
  return { guid, remoteUrl, modified, content, dataset };
}

export const dcatRdfReader: SourceReader = {
  async *read(source, options) {
    const seen = new Set<string>();
    const identified = new Set<string>();
    for await (const page of catalogPages(source, options)) {
      for (const dataset of page.datasets) {
        const record = dcatRecord(dataset as Record<string, unknown>);
        // A dataset listed on two pages (the catalog changed while we read) is read once.
        if (seen.has(record.guid)) continue;
        seen.add(record.guid);
        if (!record.guid.startsWith('sha256:')) identified.add(record.guid);
        yield record;
      }
    }
    rememberGuids(options.signal, source, identified);
  },
  async listGuids(source, options) {
    const read = recallGuids(options.signal, source);
    if (read) return read;
    const guids = new Set<string>();
    for await (const page of catalogPages(source, options)) {
      for (const dataset of page.datasets) {
        const d = dataset as Record<string, unknown>;
        const guid = textOf(d, 'uri') ?? textOf(d, 'identifier');
        if (guid) guids.add(guid);
      }
    }
    return guids;
  },
};
